package e2e

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/tests/harness"
)

// libraryDoc makes a knowledge base called base holding one document.
func libraryDoc(t *testing.T, baseURL, base, name, text string) {
	t.Helper()
	var b struct{ ID int64 }
	harness.API(t, baseURL, "Library.CreateBase", &b, map[string]any{"name": base, "description": ""})
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("base", fmt.Sprint(b.ID))
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write([]byte(text))
	mw.Close()
	resp, err := harness.AdminClient(t, baseURL).Post(baseURL+"/api/library/documents", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("upload %s: %d", name, resp.StatusCode)
	}
}

// TestMentionEnterChoosesInChromium: "@sco" with scones.md offered, then
// Enter, is the reference (it was sent as "@sco"), and its chip names the
// base it came from; "@" alone and Enter is still sent as written.
func TestMentionEnterChoosesInChromium(t *testing.T) {
	a := serveChatApp(t)
	a.llm.SetDefault(fakellm.Stream("Noted."))
	libraryDoc(t, a.base, "Recipes", "scones.md", "Scones want cold butter.\n")
	a.open(t, "")
	n := len(a.llm.Requests())
	a.click("#composer-input")
	a.typeInBox("bake @sco")
	a.waitJS(`[...document.querySelectorAll('#composer-menu .composer-menu-item.is-active')].some((e) => e.innerText.includes('scones.md'))`)
	a.typeInBox(kb.Enter)
	a.waitJS(`document.querySelector('#composer-input').value === 'bake @scones.md '`)
	// The chip says where it came from (not only in its title).
	a.waitJS(`document.querySelector('.composer .attach-chip .attach-detail')?.innerText.includes('Recipes')`)
	if got := len(a.llm.Requests()); got != n {
		t.Fatalf("Enter on the @ menu sent %d requests", got-n)
	}
	a.typeInBox(kb.Enter)
	a.waitJS(`[...document.querySelectorAll('.msg-user')].some((m) => m.innerText.includes('bake @scones.md'))`)
	a.waitReplyIdle()

	// "@" alone: nothing is highlighted, Enter sends it. (The chat's
	// page reads the bases again first; the menu opens once it has them.)
	a.waitJS(`!!document.querySelector('#composer-knowledge')`)
	a.typeInBox("@")
	a.waitJS(`!!document.querySelector('#composer-menu')`)
	if a.bool(`!!document.querySelector('#composer-menu .is-active')`) {
		t.Error("a bare @ highlights an item")
	}
	a.typeInBox(kb.Enter)
	a.waitJS(`[...document.querySelectorAll('.msg-user')].some((m) => m.querySelector('.msg-text, .msg-content')?.innerText.trim() === '@')`)
}

// TestMentionBeforeTheBasesInChromium: an @ typed before the page knows
// the library's bases offers the documents once they are known, without
// another key (it offered nothing until the next one).
func TestMentionBeforeTheBasesInChromium(t *testing.T) {
	a := serveChatApp(t)
	libraryDoc(t, a.base, "Recipes", "scones.md", "Scones want cold butter.\n")
	// Library.Bases answers only once the test says so.
	a.open(t, `(() => {
		const orig = window.fetch;
		window.fetch = (url, ...rest) => String(url).endsWith('/api/Library.Bases')
			? new Promise((res) => { const tick = () => window.__bases ? res(orig(url, ...rest)) : setTimeout(tick, 20); tick(); })
			: orig(url, ...rest);
	})()`)
	a.click("#composer-input")
	a.typeInBox("bake @sco")
	if a.bool(`!!document.querySelector('#composer-knowledge')`) {
		t.Fatal("the bases were known before the test let them through")
	}
	a.js(`window.__bases = true`)
	a.waitJS(`!!document.querySelector('#composer-knowledge')`)
	a.waitJS(`[...document.querySelectorAll('#composer-menu .composer-menu-item.is-active')].some((e) => e.innerText.includes('scones.md'))`)
}

// TestMeterAfterASlowReplyInChromium: the context meter shows the
// reply's usage once it ends, also when the reply took longer than the
// page's look at the chat when it started (it kept the estimate).
func TestMeterAfterASlowReplyInChromium(t *testing.T) {
	a := newChatApp(t)
	a.llm.SetDefault(fakellm.Func(func(r fakellm.Request) fakellm.Reply {
		if strings.Contains(string(r.Body), "You write titles") {
			return fakellm.Stream("Slow replies")
		}
		return fakellm.NewStream().Content("A quick answer.").Usage(90, 9).Reply()
	}))
	a.send("A first question")
	a.waitReplyIdle()
	a.waitJS(`document.querySelector('#context-meter-text')?.innerText.startsWith('99 / ')`)

	a.llm.Enqueue(fakellm.NewStream().Content("A slow ", "answer, ", "at last.").Usage(5000, 21).Reply().Every(1500 * time.Millisecond))
	a.send("A second question")
	a.waitJS(lastReply + `.includes('A slow')`)
	// While it is written the meter estimates (the newest message is no
	// finished reply).
	a.waitJS(`document.querySelector('#context-meter-text').innerText.startsWith('~')`)
	a.waitJS(lastReply + `.includes('at last.')`)
	a.waitReplyIdle()
	a.waitJS(`document.querySelector('#context-meter-text').innerText.startsWith('5,021 / ')`)

	// Two exchanges are all a compaction keeps: Compact says so plainly,
	// not as a failure ("Could not compact this chat: there is nothing…").
	a.click("#compact-button")
	a.waitJS(`[...document.querySelectorAll('.toast')].some((t) => !t.classList.contains('is-error') && t.innerText.includes('Nothing to compact yet: the last 2 exchanges are always sent as they are.'))`)
}

// TestComposerTourInChromium walks issue 16's screens as a person would
// and saves each in both themes, wide and phone-narrow, for a look: the
// new-chat screen's cards, the slash menu, the @ menu, the chips, the
// mirror over a long wrapped message, the help dialog's commands, a
// compacted chat and its meter, versions, Settings → Suggestions.
func TestComposerTourInChromium(t *testing.T) {
	a := serveChatApp(t)
	a.llm.SetDefault(fakellm.Func(func(r fakellm.Request) fakellm.Reply {
		if strings.Contains(string(r.Body), "You write titles") {
			return fakellm.Stream("Keeping lembas")
		}
		return fakellm.NewStream().Content("An answer about keeping lembas fresh on a long road.").Usage(90, 9).Reply()
	}))
	// The document is there before the page opens: a page reads the
	// bases once, and one made after it is not offered until a reload.
	libraryDoc(t, a.base, "Recipes", "scones.md", "Scones want cold butter.\n")
	a.open(t, "")

	// settled: no transition is running (the sidebar slides away at the
	// narrow width).
	const settled = `document.getAnimations().every((x) => x.playState !== 'running')`
	// looks saves the page in both themes at the wide and the narrow width.
	looks := func(name string, narrow bool) {
		for _, theme := range []string{"moria", "shire"} {
			a.js(fmt.Sprintf(`document.documentElement.dataset.theme = %q, true`, theme))
			a.shot(name + "-" + theme)
			if narrow {
				a.do(chromedp.EmulateViewport(390, 844))
				a.waitJS(settled)
				a.shot(name + "-" + theme + "-narrow")
				a.do(chromedp.EmulateViewport(1280, 800))
				a.waitJS(settled)
			}
		}
		a.js(`document.documentElement.dataset.theme = 'moria', true`)
	}

	a.waitJS(`document.querySelectorAll('#suggestions .suggestion-card').length === 4`)
	looks("new-chat", true)

	a.click("#composer-input")
	a.typeInBox("/")
	a.waitJS(`!!document.querySelector('#composer-menu')`)
	looks("slash-menu", true)
	a.keys(kb.Escape)
	a.setValue("#composer-input", "")

	// @ offers documents once the page knows the bases (the Knowledge
	// control shows then).
	a.waitJS(`!!document.querySelector('#composer-knowledge')`)
	a.typeInBox("@sco")
	a.waitJS(`[...document.querySelectorAll('#composer-menu .composer-menu-label')].some((e) => e.innerText.includes('scones.md'))`)
	looks("at-menu", true)
	a.typeInBox(kb.Enter)
	a.waitJS(`!!document.querySelector('.composer .attach-chip')`)
	long := strings.Repeat("a long sentence that wraps across the composer's width, ", 4) + "see @scones.md and " + strings.Repeat("more words again ", 12) + "/compact"
	a.typeInBox(long)
	looks("chips-mirror", true)
	a.setValue("#composer-input", "")

	a.typeInBox("/help" + kb.Enter)
	a.waitJS(`!!document.querySelector('dialog[open], .dialog')`)
	// It opens at its top, on its title (it opened scrolled to its
	// first link, the title and the shortcuts out of sight).
	a.waitJS(`document.activeElement?.id === 'shortcuts-title'`)
	if got := a.js(`document.querySelector('#shortcuts-dialog').scrollTop`); got != float64(0) {
		t.Errorf("the help dialog opens scrolled by %v", got)
	}
	looks("help", true)
	a.keys(kb.Escape)

	// A chat of three exchanges, compacted.
	var models []struct{ ID int }
	harness.API(t, a.base, "Models.Picker", &models)
	harness.API(t, a.base, "Models.Update", nil, models[0].ID, map[string]any{"contextLength": 32768})
	a.setValue("#composer-input", "")
	for i := range 3 {
		a.send(fmt.Sprintf("Question %d: ", i+1) + strings.Repeat("how is lembas kept? ", 20))
		a.waitJS(fmt.Sprintf(`document.querySelectorAll('.msg-assistant').length === %d`, i+1))
		a.waitReplyIdle()
	}
	a.waitJS(`!!document.querySelector('#context-meter-text')`)
	// A few hundred tokens of 32k is not "0%", which reads as empty.
	a.waitJS(`document.querySelector('#context-meter-text').innerText.endsWith('· <1%')`)
	looks("meter-before", false)
	a.llm.Enqueue(fakellm.Stream("The reader asked how **lembas** is kept; it is kept wrapped in leaves."))
	a.click("#compact-button")
	a.waitJS(`!!document.querySelector('.compact-summary')`)
	a.waitJS(`document.querySelector('#context-meter-text').innerText.includes('→')`)
	t.Logf("meter after compaction: %q", a.str(`document.querySelector('#context-meter-text').innerText`))
	a.js(`document.querySelector('.chat-scroll').dispatchEvent(new WheelEvent('wheel', {bubbles: true}))`)
	a.js(`document.querySelector('.compact-summary').scrollIntoView({block: 'center'})`)
	looks("compacted", true)
	// On a phone the summary's date stays on one line.
	a.do(chromedp.EmulateViewport(390, 844))
	a.waitJS(settled)
	if !a.bool(`(() => { const w = document.querySelector('.compact-summary-when');
		return w.getBoundingClientRect().height < 1.5 * parseFloat(getComputedStyle(w).lineHeight); })()`) {
		t.Errorf("the summary's date wraps on a phone: %vpx high", a.js(`document.querySelector('.compact-summary-when').getBoundingClientRect().height`))
	}
	a.do(chromedp.EmulateViewport(1280, 800))
	a.waitJS(settled)

	// Versions: regenerate three times, then back one; a reload keeps it.
	for i := 1; i <= 3; i++ {
		a.llm.Enqueue(fakellm.Stream(fmt.Sprintf("answer version %d", i+1)))
		a.clickXPath(`//article[contains(@class,'msg-assistant')][last()]//button[contains(., 'Regenerate')]`)
		a.waitJS(lastReply + fmt.Sprintf(`.includes('answer version %d')`, i+1))
		a.waitReplyIdle()
	}
	a.click(`.msg-assistant:last-of-type .msg-versions button[aria-label="Previous version"], .msg-assistant .msg-versions button[aria-label="Previous version"]`)
	a.waitJS(lastReply + `.includes('answer version 3')`)
	a.do(chromedp.Reload())
	a.waitJS(lastReply + `.includes('answer version 3')`)
	a.waitJS(versionsOf("assistant", "3/4"))
	a.llm.Enqueue(fakellm.Stream("edited answer"))
	a.clickXPath(`(//article[contains(@class,'msg-user')])[last()]//button[contains(., 'Edit')]`)
	a.waitJS(`!!document.querySelector('.msg-edit textarea')`)
	a.setValue(".msg-edit textarea", "Question 3, edited")
	a.clickXPath(`//form[contains(@class,'msg-edit')]//button[@type='submit']`)
	a.waitJS(lastReply + `.includes('edited answer')`)
	a.waitReplyIdle()
	a.waitJS(versionsOf("user", "2/2"))
	looks("versions", true)

	a.do(chromedp.Navigate(a.base + "/#/settings/suggestions"))
	a.waitJS(`document.querySelectorAll('#suggestion-list .model-row').length === 4`)
	looks("settings-suggestions", true)
	a.click(`#suggestion-list .model-row`)
	a.waitJS(`!!document.querySelector('#suggestion-save')`)
	// The form's buttons sit inside its padding, as other settings forms' do
	// (they touched the card's edge: a footer class no CSS knew).
	inset := a.js(`(() => { const f = document.querySelector('#suggestion-form').getBoundingClientRect();
		const b = document.querySelector('#suggestion-save').getBoundingClientRect();
		return Math.min(f.right - b.right, f.bottom - b.bottom); })()`)
	if n, _ := inset.(float64); n < 8 {
		t.Errorf("Save is %vpx from the form's edge", inset)
	}
	looks("settings-suggestion-detail", true)
}
