package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/tests/harness"
)

// The composer's slash commands, menu and mirror (chat/commands.js,
// chat/composer.js), driven by typing as a person does. The bugs they
// guard against are the reference notes': a menu that never appeared on
// the first `/` typed, a command chosen from the menu left in the box, Tab
// not completing, and a message that starts with a slash being eaten.

const (
	boxValue  = `document.querySelector('#composer-input').value`
	menuShown = `!!document.querySelector('#composer-menu')`
	menuItems = `[...document.querySelectorAll('#composer-menu .composer-menu-label')].map((e) => e.innerText.trim()).join('|')`
)

// typeInBox types keys into the composer (which has the focus) as a
// keyboard does (pressKeys: chromedp's own typing delivers a key's text
// even when its keydown was handled, so Enter that chose from the menu
// still put a new line in the box, which no browser does).
func (a *chatApp) typeInBox(keys string) {
	a.t.Helper()
	a.waitJS(`document.activeElement?.id === 'composer-input'`)
	a.do(pressKeys(keys))
}

// sendBox types a message into the composer and presses Enter.
func (a *chatApp) sendBox(text string) {
	a.t.Helper()
	a.click("#composer-input")
	a.typeInBox(text + kb.Enter)
}

// lastUserContent is the content of the last user turn the fake endpoint
// was sent (the last request that was not for a title).
func lastUserContent(t *testing.T, llm *fakellm.Server) (string, map[string]any) {
	t.Helper()
	reqs := llm.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if strings.Contains(string(reqs[i].Body), "You write titles") {
			continue
		}
		var body struct {
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		var raw map[string]any
		if json.Unmarshal(reqs[i].Body, &body) != nil || json.Unmarshal(reqs[i].Body, &raw) != nil {
			continue
		}
		for j := len(body.Messages) - 1; j >= 0; j-- {
			if body.Messages[j].Role == "user" {
				if s, ok := body.Messages[j].Content.(string); ok {
					return s, raw
				}
				b, _ := json.Marshal(body.Messages[j].Content)
				return string(b), raw
			}
		}
	}
	return "", nil
}

func TestSlashCommandsInChromium(t *testing.T) {
	a := newUIBitsApp(t, func(a *chatApp) {
		a.llm.SetModels(fakellm.Reply{Body: `{"object":"list","data":[{"id":"old-oak","object":"model"},{"id":"quick-beam","object":"model"}]}`})
	}, "")
	models := pickerModels(t, a.base)
	if models["old-oak"] == 0 || models["quick-beam"] == 0 {
		t.Fatalf("models: %v", models)
	}
	for _, id := range models {
		harness.API(t, a.base, "Models.Update", nil, id, map[string]any{"capabilities": map[string]any{"tools": true}})
	}
	a.do(chromedp.Reload())
	a.waitJS(`!!document.querySelector('#composer-input')`)
	run := func(name string, step func(t *testing.T)) {
		t.Run(name, func(st *testing.T) {
			a.t = st
			defer func() { a.t = t }()
			step(st)
		})
	}
	a.click("#composer-input")

	run("the first slash opens the menu", func(t *testing.T) {
		a.typeInBox("/")
		a.waitJS(menuShown)
		for _, want := range []string{"/new", "/help", "/theme", "/model"} {
			if got := a.str(menuItems); !strings.Contains(got, want) {
				t.Errorf("menu %q lacks %s", got, want)
			}
		}
		a.typeInBox("he")
		a.waitJS(menuItems + ` === '/help'`)
		a.shot("menu")
		a.typeInBox(kb.Escape)
		a.waitJS(`!` + menuShown)
		if v := a.str(boxValue); v != "/he" {
			t.Errorf("Escape changed the box: %q", v)
		}
		a.fill("#composer-input", "")
	})

	run("Tab completes and runs the only command, leaving the box empty", func(t *testing.T) {
		a.typeInBox("/hel")
		a.waitJS(menuItems + ` === '/help'`)
		a.typeInBox(kb.Tab)
		a.waitJS(`document.querySelector('#shortcuts-dialog')?.open === true`)
		if v := a.str(boxValue); v != "" {
			t.Errorf("the box after choosing /help: %q", v)
		}
		if !a.bool(`document.querySelector('#commands-table')?.innerText.includes('/compact')`) {
			t.Errorf("the help dialog does not list the commands: %s", a.str(`document.querySelector('#shortcuts-dialog').innerText`))
		}
		a.do(pressKeys(kb.Escape))
		a.waitJS(`!document.querySelector('#shortcuts-dialog')`)
		a.click("#composer-input")
	})

	run("Tab completes a command that takes an argument, then its value", func(t *testing.T) {
		a.click("#composer-input")
		a.typeInBox("/th")
		a.waitJS(menuItems + ` === '/theme moria|shire'`)
		a.typeInBox(kb.Tab)
		a.waitJS(boxValue + ` === '/theme '`)
		a.waitJS(menuItems + ` === 'moria|shire'`)
		a.typeInBox("sh")
		a.waitJS(menuItems + ` === 'shire'`)
		a.typeInBox(kb.Tab)
		a.waitJS(`document.documentElement.dataset.theme === 'shire'`)
		a.waitJS(boxValue + ` === ''`)
	})

	run("arrow keys and Enter choose from the menu", func(t *testing.T) {
		a.typeInBox("/theme ")
		a.waitJS(menuItems + ` === 'moria|shire'`)
		a.typeInBox(kb.ArrowDown)
		a.waitJS(`document.querySelector('#composer-menu .is-active')?.innerText.includes('moria')`)
		a.typeInBox(kb.Enter)
		a.waitJS(`document.documentElement.dataset.theme === 'moria'`)
		a.waitJS(boxValue + ` === ''`)
	})

	run("a chosen command is clicked off the menu too", func(t *testing.T) {
		a.typeInBox("/theme ")
		a.waitJS(menuItems + ` === 'moria|shire'`)
		a.clickXPath(`//ul[@id='composer-menu']//li[contains(., 'shire')]`)
		a.waitJS(`document.documentElement.dataset.theme === 'shire'`)
		a.waitJS(boxValue + ` === ''`)
		a.typeInBox("/theme moria" + kb.Enter)
		a.waitJS(`document.documentElement.dataset.theme === 'moria'`)
		a.waitJS(boxValue + ` === ''`)
	})

	run("typed model command switches the model", func(t *testing.T) {
		a.typeInBox("/model quick" + kb.Enter)
		a.waitJS(`document.querySelector('.picker-trigger .picker-name')?.innerText === 'quick-beam'`)
		a.waitJS(boxValue + ` === ''`)
		a.typeInBox("/model nothing-like-it" + kb.Enter)
		a.waitJS(toastSays("No model is called"))
		if v := a.str(boxValue); v != "/model nothing-like-it" {
			t.Errorf("a command that failed lost its text: %q", v)
		}
		a.fill("#composer-input", "")
	})

	run("a message that starts with a slash is sent as written", func(t *testing.T) {
		a.sendBox("/unknown thing")
		a.waitJS(`location.hash.startsWith('#/chat/')`)
		a.waitReplyIdle()
		a.waitJS(`document.querySelector('.msg-user')?.innerText.includes('/unknown thing')`)
		if got, _ := lastUserContent(t, a.llm); got != "/unknown thing" {
			t.Errorf("sent %q", got)
		}
		a.sendBox("//help me")
		a.waitJS(`[...document.querySelectorAll('.msg-user .msg-text')].pop()?.textContent === '/help me'`)
		a.waitReplyIdle()
		if got, _ := lastUserContent(t, a.llm); got != "/help me" {
			t.Errorf("// sent %q, want /help me", got)
		}
		if a.bool(`!!document.querySelector('#shortcuts-dialog')`) {
			t.Error("//help ran /help")
		}
		// A command that takes nothing, followed by words, is a message.
		a.sendBox("/new year plans")
		a.waitJS(`[...document.querySelectorAll('.msg-user .msg-text')].pop()?.textContent === '/new year plans'`)
		a.waitReplyIdle()
		// Half a command is a message too: only an exact match runs.
		a.sendBox("/hel")
		a.waitJS(`[...document.querySelectorAll('.msg-user .msg-text')].pop()?.textContent === '/hel'`)
		a.waitReplyIdle()
	})

	run("effort goes out with the next request", func(t *testing.T) {
		a.typeInBox("/effort high" + kb.Enter)
		a.waitJS(toastSays("Reasoning effort: high"))
		a.waitJS(boxValue + ` === ''`)
		n := len(a.llm.Requests())
		a.sendBox("think hard")
		waitUntil(t, "the request", func() bool { return len(a.llm.Requests()) > n })
		a.waitReplyIdle()
		if _, raw := lastUserContent(t, a.llm); raw["reasoning_effort"] != "high" {
			t.Errorf("reasoning_effort %v", raw["reasoning_effort"])
		}
		a.typeInBox("/effort off" + kb.Enter)
		a.waitJS(toastSays("Reasoning effort: the default"))
		a.sendBox("think less")
		a.waitJS(`[...document.querySelectorAll('.msg-user .msg-text')].pop()?.textContent === 'think less'`)
		a.waitReplyIdle()
		if _, raw := lastUserContent(t, a.llm); raw["reasoning_effort"] != nil {
			t.Errorf("after /effort off: reasoning_effort %v", raw["reasoning_effort"])
		}
		a.typeInBox("/effort extreme" + kb.Enter)
		a.waitJS(toastSays("Unknown effort"))
		a.fill("#composer-input", "")
	})

	run("tools off and on", func(t *testing.T) {
		a.waitJS(`document.querySelector('#composer-tools')?.checked === true`)
		a.click("#composer-input")
		a.typeInBox("/tools off" + kb.Enter)
		a.waitJS(`document.querySelector('#composer-tools')?.checked === false`)
		a.waitJS(boxValue + ` === ''`)
		a.typeInBox("/tools on" + kb.Enter)
		a.waitJS(`document.querySelector('#composer-tools')?.checked === true`)
		a.typeInBox("/tools maybe" + kb.Enter)
		a.waitJS(toastSays("Use /tools on or /tools off"))
		a.fill("#composer-input", "")
	})

	// The box stays usable while a reply is written: /stop there stops it,
	// and what arrived is kept.
	run("stop from the box stops the reply", func(t *testing.T) {
		a.llm.Enqueue(fakellm.Stream("Kept words ", "never these").StallAfter(2)) // the role, the first words
		a.sendBox("a long story please")
		a.waitJS(`!!document.querySelector('#composer-button.is-stop')`)
		a.waitJS(lastReply + `.includes('Kept words')`)
		a.click("#composer-input")
		a.typeInBox("/stop" + kb.Enter)
		a.waitJS(`!document.querySelector('#composer-button.is-stop')`)
		a.waitJS(boxValue + ` === ''`)
		a.waitReplyIdle()
		if got := a.str(lastReply); !strings.Contains(got, "Kept words") || strings.Contains(got, "never these") {
			t.Errorf("the stopped reply: %q", got)
		}
		if got, _ := lastUserContent(t, a.llm); got == "/stop" {
			t.Error("/stop was sent as a message")
		}
	})

	// /compact is the chat screen's compaction (compact.js compactChat):
	// the earlier turns are summarised and the summary block appears.
	run("compact summarises the earlier turns", func(t *testing.T) {
		if a.js(`!!document.querySelector('.compact-summary')`) != false {
			t.Fatal("a summary before /compact")
		}
		a.typeInBox("/comp")
		a.waitJS(menuItems + ` === '/compact'`)
		a.typeInBox(kb.Tab)
		a.waitJS(`!!document.querySelector('.compact-summary .compact-undo')`)
		a.waitJS(boxValue + ` === ''`)
	})

	run("sidebar and search from the menu", func(t *testing.T) {
		a.typeInBox("/sidebar" + kb.Enter)
		a.waitJS(`document.querySelector('.shell').classList.contains('is-sidebar-hidden')`)
		a.click("#composer-input")
		a.typeInBox("/sidebar" + kb.Enter)
		a.waitJS(`!document.querySelector('.shell').classList.contains('is-sidebar-hidden')`)
		a.click("#composer-input")
		a.typeInBox("/search" + kb.Enter)
		a.waitJS(`document.activeElement?.id === 'chat-search'`)
	})

	run("new chat from the menu", func(t *testing.T) {
		a.click("#composer-input")
		a.typeInBox("/ne")
		a.waitJS(menuItems + ` === '/new'`)
		a.typeInBox(kb.Enter) // nothing highlighted: "/ne" is a message…
		a.waitJS(`[...document.querySelectorAll('.msg-user .msg-text')].pop()?.textContent === '/ne'`)
		if a.bool(menuShown) {
			t.Error("the menu stays open over an empty box after sending")
		}
		a.waitReplyIdle()
		a.typeInBox("/ne")
		a.waitJS(menuItems + ` === '/new'`)
		a.typeInBox(kb.ArrowDown) // …a highlighted item is chosen
		a.typeInBox(kb.Enter)
		a.waitJS(`location.hash === '#/new' || location.hash === '#/' || location.hash === ''`)
		a.waitJS(`!!document.querySelector('#composer-input') && ` + boxValue + ` === ''`)
	})
}

// TestComposerMirrorAligned: the mirror's token backgrounds sit on the
// textarea's own characters over a long message with wrapped lines and
// tokens, before and after the box scrolls. Where a character is in the
// textarea is read from the textarea itself (caretPositionFromPoint at a
// token's painted rectangle), never from the mirror.
func TestComposerMirrorAligned(t *testing.T) {
	a := newUIBitsApp(t, nil, "")
	// An `@` trigger as the references' slice registers one, so that tokens
	// are marked anywhere in the text, not only at its start.
	a.await(`(async () => {
		const u = [...document.querySelectorAll('script[type=module], link[rel=modulepreload]')].map((e) => e.src || e.href).find((h) => /\/js\/chat\/composer\.js$/.test(h));
		const m = await import(u || './js/chat/composer.js');
		m.registerTrigger('@', { items: () => [], choose() {} });
		return 'ok';
	})()`)
	var b strings.Builder
	b.WriteString("/model ")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "line %d has some words to wrap around @file%d.go and a rather long tail of words that goes on past the edge @x%d\n", i, i, i)
		if i%7 == 3 {
			b.WriteString("\n\t@tabbed\tafter a tab @averyveryverylongreferencewithoutanyspacesthatmustwrapsomewhereinthemiddleofitselfwhenthelineisfull.txt\n")
		}
	}
	text := b.String()
	a.click("#composer-input")
	a.bool(fmt.Sprintf(`(() => {
		const ta = document.querySelector('#composer-input');
		Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set.call(ta, %q);
		ta.dispatchEvent(new Event('input', { bubbles: true }));
		return true;
	})()`, text))
	a.waitJS(`document.querySelectorAll('.composer__mirror .composer__token').length > 80`)

	// check returns the tokens whose painted rectangles do not land on
	// their characters in the textarea (only those in view are checked).
	check := `(() => {
		const ta = document.querySelector('#composer-input');
		const mirror = document.querySelector('.composer__mirror');
		const tr = ta.getBoundingClientRect();
		const text = ta.value;
		const bad = [];
		let seen = 0, checked = 0;
		if (mirror.scrollTop !== ta.scrollTop) bad.push('scrollTop ' + mirror.scrollTop + ' vs ' + ta.scrollTop);
		let from = 0;
		for (const span of mirror.querySelectorAll('.composer__token')) {
			const word = span.textContent;
			const at = text.indexOf(word, from);
			from = at + word.length;
			seen++;
			const rects = [...span.getClientRects()];
			const first = rects[0], last = rects[rects.length - 1];
			const probes = [[first.left + 3, (first.top + first.bottom) / 2, at], [last.right - 1, (last.top + last.bottom) / 2, at + word.length]];
			for (const [x, y, want] of probes) {
				if (y < tr.top + 4 || y > tr.bottom - 4) continue;
				const p = document.caretPositionFromPoint(x, y);
				if (!p) { bad.push('no caret at ' + word); continue; }
				checked++;
				if (p.offsetNode !== ta) bad.push(word + ': the point is on ' + (p.offsetNode.nodeName + ' ' + (p.offsetNode.parentElement?.className || p.offsetNode.className || '')) + ' at ' + Math.round(x) + ',' + Math.round(y));
				else if (Math.abs(p.offset - want) > 1) bad.push(word + ': ' + p.offset + ' vs ' + want);
			}
		}
		return JSON.stringify({ bad: bad.slice(0, 10), seen, checked });
	})()`
	type result struct {
		Bad     []string
		Seen    int
		Checked int
	}
	measure := func(when string) {
		var r result
		if err := json.Unmarshal([]byte(a.str(check)), &r); err != nil {
			t.Fatal(err)
		}
		if r.Checked < 4 || len(r.Bad) > 0 {
			a.shot("mirror-" + when)
			t.Errorf("%s: %d tokens, %d probes, misplaced: %v", when, r.Seen, r.Checked, r.Bad)
		}
	}
	if !a.bool(`typeof document.caretPositionFromPoint === 'function' && document.caretPositionFromPoint(1, 1) !== undefined`) {
		t.Skip("this Chromium has no caretPositionFromPoint")
	}
	a.bool(`document.querySelector('#composer-input').scrollTop = 0, true`)
	measure("top")
	if !a.bool(`(() => { const ta = document.querySelector('#composer-input'); return ta.scrollHeight > ta.clientHeight * 2; })()`) {
		t.Fatal("the message does not make the box scroll")
	}
	a.bool(`(() => { const ta = document.querySelector('#composer-input'); ta.scrollTop = ta.scrollHeight / 2; ta.dispatchEvent(new Event('scroll')); return true; })()`)
	a.waitJS(`document.querySelector('.composer__mirror').scrollTop === document.querySelector('#composer-input').scrollTop`)
	measure("middle")
	a.shot("mirror")
	a.bool(`(() => { const ta = document.querySelector('#composer-input'); ta.scrollTop = ta.scrollHeight; ta.dispatchEvent(new Event('scroll')); return true; })()`)
	a.waitJS(`document.querySelector('.composer__mirror').scrollTop === document.querySelector('#composer-input').scrollTop`)
	measure("bottom")
	// A narrow window wraps everything differently.
	a.do(chromedp.EmulateViewport(420, 800))
	a.bool(`(() => { const ta = document.querySelector('#composer-input'); ta.scrollTop = 0; ta.dispatchEvent(new Event('scroll')); return true; })()`)
	a.waitJS(`document.querySelector('.composer__mirror').scrollTop === 0`)
	// The sidebar slides away when the window narrows: measure once it has.
	a.waitJS(`(() => { const ta = document.querySelector('#composer-input'), r = ta.getBoundingClientRect();
		return [[r.left + 2, r.top + 8], [r.left + 2, r.bottom - 8], [r.right - 24, r.top + 8]].every(([x, y]) => document.elementFromPoint(x, y) === ta); })()`)
	measure("narrow")
}

// TestSlashCommandsInAgentChat: an agent chat offers /mode and /terminal
// (and no /tools, which its replies do not have), and both act.
func TestSlashCommandsInAgentChat(t *testing.T) {
	c := newAgentChat(t)
	ctx := harness.Browser(t)
	harness.BrowserAdmin(t, ctx, c.base)
	a := &chatApp{tab: newTab(t, ctx, "agent"), base: c.base, llm: c.llm}
	c.openChat(a.tab)
	a.waitJS(`!!document.querySelector('#agent-mode')`)
	a.click("#composer-input")
	a.typeInBox("/")
	a.waitJS(menuShown)
	got := a.str(menuItems)
	for _, want := range []string{"/mode mode", "/terminal", "/compact", "/stop"} {
		if !strings.Contains(got, want) {
			t.Errorf("menu %q lacks %s", got, want)
		}
	}
	if strings.Contains(got, "/tools") {
		t.Errorf("an agent chat offers /tools: %q", got)
	}
	a.typeInBox("mode pl")
	a.waitJS(menuItems + ` === 'plan'`)
	a.typeInBox(kb.Tab)
	a.waitJS(`document.querySelector('#agent-mode')?.value === 'plan'`)
	a.waitJS(boxValue + ` === ''`)
	a.typeInBox("/mode auto" + kb.Enter)
	a.waitJS(`document.querySelector('#agent-mode')?.value === 'auto'`)
	a.typeInBox("/terminal" + kb.Enter)
	a.waitJS(`!!document.querySelector('.term-panel')`)
	a.waitJS(boxValue + ` === ''`)
	// The terminal takes the focus once it is connected: wait for that
	// before typing in the box again.
	a.waitJSFor(`!!document.querySelector('.term-state.is-open')`, 60*time.Second)
	a.click("#composer-input")
	a.typeInBox("/terminal" + kb.Enter)
	a.waitJS(`!document.querySelector('.term-panel')`)
}

// TestComposerMenuChoiceTakesTypedToken: the menu on screen can be the
// answer for a shorter token than the one typed (the last key's answer is
// still on its way, as a slow Agent.ProjectFiles is); choosing from it
// replaces the whole token, and the late answer does not reopen the menu.
func TestComposerMenuChoiceTakesTypedToken(t *testing.T) {
	a := newUIBitsApp(t, nil, "")
	a.await(`(async () => {
		const u = [...document.querySelectorAll('script[type=module], link[rel=modulepreload]')].map((e) => e.src || e.href).find((h) => /\/js\/chat\/composer\.js$/.test(h));
		const m = await import(u || './js/chat/composer.js');
		window.__late = [];
		m.registerTrigger('%', {
			label: 'Test',
			// One letter answers at once; more wait until the test lets them go.
			items: (q) => (q.length <= 1 ? [{ key: 'x', text: '%xyz', label: 'xyz' }]
				: new Promise((ok) => window.__late.push(() => ok([{ key: 'x', text: '%xyz', label: 'xyz' }])))),
			choose: (it, ctx) => ctx.replace(it.text + ' '),
		});
		return 'ok';
	})()`)
	a.click("#composer-input")
	a.typeInBox("see %a")
	a.waitJS(menuItems + ` === 'xyz'`)
	a.typeInBox("bc")
	a.waitJS(`window.__late.length === 2`)
	a.js(`(() => { const li = document.querySelector('#composer-menu .composer-menu-item'); li.dispatchEvent(new PointerEvent('pointerdown', { bubbles: true, cancelable: true })); return true; })()`)
	a.waitJS(boxValue + ` === 'see %xyz '`)
	a.js(`(() => { window.__late.forEach((f) => f()); return true; })()`)
	a.waitJS(`window.__late.length === 2 && !` + menuShown)
	if v := a.str(boxValue); v != "see %xyz " {
		t.Fatalf("the box holds %q", v)
	}
}
