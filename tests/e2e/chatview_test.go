package e2e

import (
	"encoding/json"
	"testing"
)

// TestChatSidePanelSlot: the chat screen has a place for a panel beside
// it (a terminal, the library): ChatView's side is drawn in an aside to
// the right of the chat's column, at the chat's full height, and without
// one the chat is drawn alone, filling the main column.
func TestChatSidePanelSlot(t *testing.T) {
	a := serveChatApp(t)
	a.open(t, "")
	if a.bool(`!!document.querySelector('.chat-with-side, .chat-side')`) {
		t.Fatal("the chat screen has a side panel while none was given")
	}
	if !a.bool(`document.querySelector('.main-chat > .chat-alone > .chat-view') !== null`) {
		t.Fatal("the chat view is not alone in the main column")
	}
	if w := a.js(`document.querySelector('.chat-view').getBoundingClientRect().width - document.querySelector('.main-chat').getBoundingClientRect().width`); w != float64(0) {
		t.Errorf("the chat alone is %v px narrower than the main column", w)
	}
	// A second chat screen, with a side panel, in a box the size of the
	// main column.
	a.await(`Promise.all([import(` + appModule("../vendor/htm-preact/standalone.module.js") + `), import(` + appModule("./chat/chat.js") + `)]).then(([p, c]) => {
		const box = document.createElement('div');
		box.id = 'side-test';
		box.className = 'main-chat';
		document.body.append(box);
		p.render(p.h(c.ChatView, {side: p.h('p', {id: 'side-probe'}, 'Side')}), box);
		return 'drawn';
	})`)
	a.waitJS(`!!document.querySelector('#side-test .chat-with-side > aside.chat-side > #side-probe')`)
	a.waitJS(`!!document.querySelector('#side-test .chat-with-side > .chat-view .chat-composer')`)
	var g struct {
		Chat, Side struct{ Left, Right, Top, Bottom float64 }
	}
	raw := a.str(`(() => {
		const r = (e) => { const b = e.getBoundingClientRect(); return {Left: b.left, Right: b.right, Top: b.top, Bottom: b.bottom}; };
		return JSON.stringify({Chat: r(document.querySelector('#side-test .chat-view')), Side: r(document.querySelector('#side-test .chat-side'))});
	})()`)
	if err := json.Unmarshal([]byte(raw), &g); err != nil {
		t.Fatal(err)
	}
	if g.Side.Left < g.Chat.Right-1 || g.Side.Right <= g.Side.Left {
		t.Errorf("the side panel is not right of the chat: chat %+v, side %+v", g.Chat, g.Side)
	}
	if g.Side.Top != g.Chat.Top || g.Side.Bottom != g.Chat.Bottom {
		t.Errorf("the side panel is not as high as the chat: chat %+v, side %+v", g.Chat, g.Side)
	}
	a.shot("side")
	// Closing the panel and opening it again keeps the chat's column: the
	// transcript and the composer (and what is typed in it) are the same
	// elements, not drawn anew.
	a.await(`Promise.all([import(` + appModule("../vendor/htm-preact/standalone.module.js") + `), import(` + appModule("./chat/chat.js") + `)]).then(([p, c]) => {
		const box = document.querySelector('#side-test');
		window.__sideView = box.querySelector('.chat-view');
		window.__sideInput = box.querySelector('#composer-input, .chat-composer');
		p.render(p.h(c.ChatView, {}), box);
		return 'closed';
	})`)
	a.waitJS(`!document.querySelector('#side-test .chat-side') && !!document.querySelector('#side-test > .chat-alone > .chat-view')`)
	a.await(`Promise.all([import(` + appModule("../vendor/htm-preact/standalone.module.js") + `), import(` + appModule("./chat/chat.js") + `)]).then(([p, c]) => {
		p.render(p.h(c.ChatView, {side: p.h('p', {id: 'side-probe'}, 'Side')}), document.querySelector('#side-test'));
		return 'opened';
	})`)
	a.waitJS(`!!document.querySelector('#side-test .chat-with-side > aside.chat-side > #side-probe')`)
	if !a.bool(`document.querySelector('#side-test .chat-view') === window.__sideView && document.querySelector('#side-test #composer-input, #side-test .chat-composer') === window.__sideInput`) {
		t.Error("closing and opening the side panel drew the chat anew")
	}
	a.await(`import(` + appModule("../vendor/htm-preact/standalone.module.js") + `).then((p) => { p.render(null, document.querySelector('#side-test')); return 'gone'; })`)
	a.pe.check(t)
}
