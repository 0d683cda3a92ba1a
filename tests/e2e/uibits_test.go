package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/tests/harness"
)

// Small pieces of the UI that nothing else drives: the composer's warning
// about images for a model without vision, keyboard shortcuts, the dictate
// button without a microphone, and automatic reading aloud.

// newUIBitsApp is newChatApp with a hook that runs before the connection
// is made (to set the fake endpoint's models, say) and an optional script
// that runs in every document before the page's own.
func newUIBitsApp(t *testing.T, before func(a *chatApp), initScript string) *chatApp {
	a := serveChatApp(t)
	// Titles get a reply of their own, so that no test's reply is used up
	// naming the chat.
	a.llm.SetDefault(fakellm.Func(func(r fakellm.Request) fakellm.Reply {
		if strings.Contains(string(r.Body), "You write titles") {
			return fakellm.Stream("A title")
		}
		return fakellm.Stream("An answer.")
	}))
	if before != nil {
		before(a)
	}
	a.open(t, initScript)
	return a
}

// keys presses one key with modifiers where the focus is.
func (a *chatApp) keys(key string, mods ...chromedp.Modifier) {
	a.t.Helper()
	a.do(chromedp.KeyEvent(key, chromedp.KeyModifiers(mods...)))
}

// toastSays is a condition: a toast shows text.
func toastSays(text string) string {
	return fmt.Sprintf(`[...document.querySelectorAll('.toast')].some((t) => t.innerText.includes(%q))`, text)
}

// pickerModels returns the chat picker's models by name.
func pickerModels(t *testing.T, base string) map[string]int64 {
	var list []struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
	harness.API(t, base, "Models.Picker", &list)
	out := map[string]int64{}
	for _, m := range list {
		out[m.Name] = m.ID
	}
	return out
}

// waitUntil polls a Go condition (the server's or the fake endpoint's
// state) for at most 20 seconds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s", what)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestUIBitsVisionWarning: an image in the composer of a chat whose model is
// not marked vision gets a warning that it will not be sent; choosing a
// vision model takes the warning away and sends the image.
func TestUIBitsVisionWarning(t *testing.T) {
	a := newUIBitsApp(t, func(a *chatApp) {
		a.llm.SetModels(fakellm.Reply{Body: `{"object":"list","data":[{"id":"blind-owl","object":"model"},{"id":"seeing-eye","object":"model"}]}`})
	}, "")
	models := pickerModels(t, a.base)
	if models["blind-owl"] == 0 || models["seeing-eye"] == 0 {
		t.Fatalf("models: %v", models)
	}
	harness.API(t, a.base, "Models.Update", nil, models["seeing-eye"], map[string]any{"capabilities": map[string]any{"vision": true}})
	harness.API(t, a.base, "Prefs.Set", nil, map[string]any{"defaultModel": models["blind-owl"]})
	// The page loaded its models before one was marked vision.
	a.do(chromedp.Reload())
	a.waitJS(`!!document.querySelector('#composer-input') && document.querySelector('.picker-trigger .picker-name')?.innerText === 'blind-owl'`)

	const warning = `(document.querySelector('.composer .composer-warning')?.innerText ?? '')`
	const chips = `document.querySelectorAll('.composer .attach-chip')`
	const ready = `document.querySelectorAll('.composer .attach-chip.is-ready')`
	removeAll := func() {
		a.js(`[...document.querySelectorAll('.composer .attach-chip .attach-remove')].forEach((b) => b.click()), true`)
		a.waitJS(chips + `.length === 0`)
	}

	t.Run("a PDF alone gets no warning", func(t *testing.T) {
		a.t = t
		a.do(chromedp.SetUploadFiles(chromedp.CSS(`#composer-file`), []string{fixturePath("text.pdf")}))
		// The warning is drawn with the chips: once the chip is ready,
		// the render that would show it has happened.
		a.waitJS(ready + `.length === 1`)
		if w := a.str(warning); w != "" {
			t.Errorf("warning for a PDF: %q", w)
		}
		removeAll()
	})

	t.Run("an image for a model without vision is warned about", func(t *testing.T) {
		a.t = t
		a.do(chromedp.SetUploadFiles(chromedp.CSS(`#composer-file`), []string{fixturePath("opaque.png")}))
		a.waitJS(ready + `.length === 1`)
		a.waitJS(warning + `.includes('cannot see images')`)
		if role := a.str(`document.querySelector('.composer .composer-warning').getAttribute('role') ?? ''`); role != "status" {
			t.Errorf("the warning's role is %q, want status (announced)", role)
		}
		if v := a.js(`(() => { const w = document.querySelector('.composer .composer-warning'); return w.getClientRects().length > 0 && getComputedStyle(w).visibility !== 'hidden'; })()`); v != true {
			t.Error("the warning is not visible")
		}
		a.shot("vision-warning")
		// Removing the image removes the warning.
		removeAll()
		if w := a.str(warning); w != "" {
			t.Errorf("warning left after the image was removed: %q", w)
		}
	})

	t.Run("choosing a vision model takes the warning away", func(t *testing.T) {
		a.t = t
		a.do(chromedp.SetUploadFiles(chromedp.CSS(`#composer-file`), []string{fixturePath("opaque.png")}))
		a.waitJS(ready + `.length === 1`)
		a.waitJS(warning + `.includes('cannot see images')`)
		a.click(".picker-trigger")
		a.waitJS(`[...document.querySelectorAll('.picker-option .picker-option-name')].some((n) => n.innerText === 'seeing-eye')`)
		a.js(`[...document.querySelectorAll('.picker-option')].find((o) => o.querySelector('.picker-option-name').innerText === 'seeing-eye').click(), true`)
		a.waitJS(`document.querySelector('.picker-trigger .picker-name')?.innerText === 'seeing-eye'`)
		a.waitJS(`!document.querySelector('.composer .composer-warning')`)
		if n := a.js(ready + `.length`); n != float64(1) {
			t.Errorf("the image chip went away with the model change: %v chips", n)
		}
		a.send("What is in this picture?")
		a.waitReplyIdle()
		var body string
		for _, r := range a.llm.Requests() {
			if r.Path == "/v1/chat/completions" && r.JSON["stream"] == true && strings.Contains(string(r.Body), "What is in this picture?") {
				body = string(r.Body)
			}
		}
		if !strings.Contains(body, `"seeing-eye"`) || !strings.Contains(body, "image_url") {
			t.Errorf("the request to the vision model has no image: %.600s", body)
		}
	})

	t.Run("a chat on a vision model never warns", func(t *testing.T) {
		a.t = t
		// The chat just sent is on seeing-eye.
		a.waitJS(`location.hash.startsWith('#/chat/')`)
		a.do(chromedp.SetUploadFiles(chromedp.CSS(`#composer-file`), []string{fixturePath("opaque.png")}))
		a.waitJS(ready + `.length === 1`)
		if w := a.str(warning); w != "" {
			t.Errorf("warning for a vision model: %q", w)
		}
		removeAll()
	})
	a.t = t
	a.pe.check(t)
}

// TestUIBitsShortcuts: "?" opens the list of shortcuts except while
// typing; Settings → Keyboard refuses keys another action has and keeps a
// valid change, which then works.
func TestUIBitsShortcuts(t *testing.T) {
	a := newUIBitsApp(t, nil, "")
	const dialog = `document.querySelector('#shortcuts-dialog')`
	// row is the keys the help dialog shows for an action label, as "Ctrl+Shift+O".
	row := func(label string) string {
		return a.str(fmt.Sprintf(`(() => { const r = [...document.querySelectorAll('#shortcuts-dialog tr')].find((r) => r.querySelector('th')?.innerText.trim() === %q);
			return r ? [...r.querySelectorAll('kbd')].map((k) => k.innerText.trim()).join('+') : ''; })()`, label))
	}

	t.Run("question mark in the message box is typed", func(t *testing.T) {
		a.t = t
		a.waitJS(`document.activeElement?.id === 'composer-input'`)
		a.do(chromedp.SendKeys(chromedp.CSS("#composer-input"), "Why?"))
		a.waitJS(`document.querySelector('#composer-input').value === 'Why?'`)
		// The key handler runs, and would have asked for the dialog,
		// before the key event is reported done.
		if a.js(`!!`+dialog) == true {
			t.Error("typing ? in the message box opened the shortcuts dialog")
		}
	})

	t.Run("question mark elsewhere lists the actions", func(t *testing.T) {
		a.t = t
		a.js(`document.activeElement.blur(), true`)
		a.keys("?")
		a.waitJS(dialog + `?.open === true`)
		if s := a.str(`document.querySelector('#composer-input').value`); s != "Why?" {
			t.Errorf("the message box changed to %q", s)
		}
		want := map[string]string{
			"New chat": "Ctrl+Shift+O", "Search chats": "Ctrl+K", "Focus the message box": "Shift+Escape",
			"Stop the reply": "Ctrl+Shift+X", "Show or hide the sidebar": "Ctrl+Shift+S", "Show the shortcuts and commands": "Ctrl+/",
		}
		for label, keys := range want {
			if got := row(label); got != keys {
				t.Errorf("help lists %q with %q, want %q", label, got, keys)
			}
		}
		if got := row("Quick chat"); got != "" {
			t.Errorf("the browser's help lists the desktop's quick chat (%q)", got)
		}
		a.shot("shortcuts-help")
		a.keys(kb.Escape)
		a.waitJS(`!` + dialog)
	})

	// u drives a's tab, for adminUI's helpers: setting a.t sets u.t.
	u := &adminUI{tab: a.tab, base: a.base, stopped: new(bool)}
	shortcuts := func() map[string]string {
		var p struct{ Shortcuts map[string]string }
		harness.API(t, a.base, "Prefs.Get", &p)
		return p.Shortcuts
	}
	const newChatRow = `document.querySelector('#keys-newChat')`

	t.Run("keys another action has are refused", func(t *testing.T) {
		a.t = t
		a.do(chromedp.Navigate(a.base + "/#/settings/keyboard"))
		a.waitJS(`!!` + newChatRow)
		u.clickXPath(button(`//tr[@id='keys-newChat']`, "Change"))
		a.waitJS(newChatRow + `?.querySelector('.keys-capture')?.innerText.includes('Press the new keys')`)
		a.keys("k", chromedp.ModifierCtrl)
		a.waitJS(`!!` + newChatRow + `?.querySelector('.error-note[role=alert]')`)
		msg := a.str(newChatRow + `?.querySelector('.error-note').innerText`)
		if !strings.Contains(msg, "Ctrl+K") || !strings.Contains(msg, "Search chats") {
			t.Errorf("refusal reads %q", msg)
		}
		a.shot("shortcuts-refused")
		// Keys that would fire while typing are refused too.
		a.keys("j")
		a.waitJS(newChatRow + `?.querySelector('.error-note')?.innerText.includes('would fire while typing')`)
		if m := shortcuts(); len(m) != 0 {
			t.Errorf("a refused binding was stored: %v", m)
		}
		if k := a.str(`document.querySelector('#keys-searchChats td').innerText.replace(/\s+/g, '')`); k != "Ctrl+K" {
			t.Errorf("search chats now shows %q", k)
		}
	})

	t.Run("a valid change is kept and works", func(t *testing.T) {
		a.t = t
		// Still capturing after the refusals.
		a.keys("y", chromedp.ModifierCtrl, chromedp.ModifierShift)
		a.waitJS(`!` + newChatRow + `?.querySelector('.keys-capture') && ` + newChatRow + `?.querySelector('td').innerText.replace(/\s+/g, '') === 'Ctrl+Shift+Y'`)
		if a.js(`!!`+newChatRow+`?.querySelector('.error-note')`) == true {
			t.Error("the refusal is still shown after a valid change")
		}
		waitUntil(t, "Prefs.Get to have newChat on Ctrl+Shift+Y", func() bool { return shortcuts()["newChat"] == "Ctrl+Shift+Y" })
		if m := shortcuts(); len(m) != 1 {
			t.Errorf("stored shortcuts: %v", m)
		}
		// The refused keys still belong to search.
		a.keys("k", chromedp.ModifierCtrl)
		a.waitJS(`document.activeElement?.id === 'chat-search'`)
		// The old keys do nothing now: the handler runs before the key
		// event is reported done, and navigating is synchronous.
		a.keys("o", chromedp.ModifierCtrl, chromedp.ModifierShift)
		if h := a.str(`location.hash`); h != "#/settings/keyboard" {
			t.Errorf("the old keys still open a new chat: %s", h)
		}
		a.keys("y", chromedp.ModifierCtrl, chromedp.ModifierShift)
		a.waitJS(`location.hash === '#/'`)
		a.waitJS(`document.activeElement?.id === 'composer-input'`)
	})

	t.Run("the change lasts and the help shows it", func(t *testing.T) {
		a.t = t
		a.do(chromedp.Reload())
		a.waitJS(`!!document.querySelector('#composer-input')`)
		a.js(`document.activeElement.blur(), true`)
		a.keys("/", chromedp.ModifierCtrl)
		a.waitJS(dialog + `?.open === true`)
		if got := row("New chat"); got != "Ctrl+Shift+Y" {
			t.Errorf("help lists New chat with %q after a reload", got)
		}
		a.keys(kb.Escape)
		a.waitJS(`!` + dialog)
		a.do(chromedp.Navigate(a.base + "/#/settings/keyboard"))
		a.waitJS(`!!` + newChatRow)
		a.keys("y", chromedp.ModifierCtrl, chromedp.ModifierShift)
		a.waitJS(`location.hash === '#/'`)
	})
	a.t = t
	a.pe.check(t)
}

// micScript replaces the microphone before the page loads, as
// localStorage's uibits-mic says: "none" (no mediaDevices at all, as in the
// desktop app), "notfound" or "denied" (getUserMedia refuses), or nothing
// (the browser's own).
const micScript = `(() => {
	let mode = '';
	try { mode = localStorage.getItem('uibits-mic') || ''; } catch { return; }
	window.__gumCalls = 0;
	if (mode === 'none') {
		Object.defineProperty(Navigator.prototype, 'mediaDevices', { get: () => undefined, configurable: true });
		return;
	}
	if (mode && navigator.mediaDevices) {
		navigator.mediaDevices.getUserMedia = () => {
			window.__gumCalls++;
			return Promise.reject(mode === 'denied'
				? new DOMException('Permission denied', 'NotAllowedError')
				: new DOMException('Requested device not found', 'NotFoundError'));
		};
	}
})();`

// TestUIBitsDictateWithoutMicrophone: with dictation set up but no
// microphone, the dictate button says so instead of doing nothing.
func TestUIBitsDictateWithoutMicrophone(t *testing.T) {
	voice := fakellm.New(t)
	voice.SetRoute("POST", "/v1/audio/transcriptions", fakellm.Reply{Body: `{"text":"never heard"}`})
	a := newUIBitsApp(t, func(a *chatApp) {
		harness.API(t, a.base, "Audio.SetSettings", nil, map[string]any{"sttUrl": voice.URL(), "sttModel": "whisper-1"})
	}, micScript)
	const btn = `document.querySelector('#composer-dictate')`

	// open reloads the page with the microphone in mode.
	open := func(t *testing.T, mode string) {
		a.t = t
		a.js(fmt.Sprintf(`localStorage.setItem('uibits-mic', %q), true`, mode))
		a.do(chromedp.Reload())
		a.waitJS(`!!document.querySelector('#composer-input') && !!` + btn)
		// Typed over whatever draft the last page left.
		a.fill("#composer-input", "Keep me")
	}
	// idle checks the button is back to plain "Dictate", recording nothing.
	idle := func(t *testing.T) {
		t.Helper()
		a.waitJS(btn + `.getAttribute('aria-pressed') === 'false' && !` + btn + `.classList.contains('is-recording') && !` + btn + `.disabled`)
		if s := a.str(`document.querySelector('#composer-input').value`); s != "Keep me" {
			t.Errorf("the message box changed to %q", s)
		}
	}

	for _, c := range []struct{ mode, says string }{
		{"notfound", "No microphone was found."},
		{"denied", "Microphone access was refused."},
	} {
		t.Run("getUserMedia "+c.mode, func(t *testing.T) {
			open(t, c.mode)
			if l := a.str(btn + `.getAttribute('aria-label')`); l != "Dictate" {
				t.Errorf("before the click the button reads %q", l)
			}
			a.click("#composer-dictate")
			a.waitJS(`window.__gumCalls === 1`)
			a.waitJS(toastSays(c.says))
			if a.js(`[...document.querySelectorAll('.toast.is-error')].some((t) => t.innerText.includes(`+fmt.Sprintf("%q", c.says)+`))`) != true {
				t.Error("the microphone's failure is not shown as an error")
			}
			idle(t)
			a.shot("dictate-" + c.mode)
		})
	}

	t.Run("no mediaDevices at all", func(t *testing.T) {
		open(t, "none")
		label := a.str(btn + `.getAttribute('aria-label')`)
		if !strings.HasPrefix(label, "Dictation unavailable:") || !strings.Contains(label, "no microphone access") {
			t.Errorf("the button reads %q", label)
		}
		if title := a.str(btn + `.title`); title != label {
			t.Errorf("title %q, label %q", title, label)
		}
		if a.js(btn+`.classList.contains('is-unavailable')`) != true {
			t.Error("the button does not look unavailable")
		}
		a.click("#composer-dictate")
		a.waitJS(toastSays("no microphone access"))
		idle(t)
	})

	t.Run("headless Chromium's own microphone", func(t *testing.T) {
		open(t, "")
		a.click("#composer-dictate")
		// Headless Chromium has no capture device and no one to grant
		// access: whichever way it refuses, the button must say so.
		a.waitJS(toastSays("No microphone was found.") + ` || ` + toastSays("Microphone access was refused.") + ` || ` + toastSays("The microphone cannot be used here."))
		idle(t)
	})

	for _, r := range voice.Requests() {
		if r.Path == "/v1/audio/transcriptions" {
			t.Errorf("something was sent to be transcribed")
		}
	}
	a.t = t
	a.pe.check(t)
}

// TestUIBitsAutoReadOnlyNewReplies: with automatic reading on, opening a
// chat whose reply finished long ago reads nothing; a reply seen finishing
// is read once, and not again when its chat is reopened.
func TestUIBitsAutoReadOnlyNewReplies(t *testing.T) {
	voice := fakellm.New(t)
	voice.SetRoute("POST", "/v1/audio/speech", fakellm.Reply{Header: http.Header{"Content-Type": {"audio/wav"}}, Body: silentWAV()})
	a := newUIBitsApp(t, func(a *chatApp) {
		// Fast replies, on purpose: they are usually over before the page
		// has Chats.Send's answer, and must still be read.
		a.llm.SetDefault(fakellm.Func(func(r fakellm.Request) fakellm.Reply {
			body := string(r.Body)
			switch {
			case strings.Contains(body, "You write titles"):
				return fakellm.Stream("A title")
			case strings.Contains(body, "Third question"):
				return fakellm.Stream("Third ", "answer ", "here.")
			case strings.Contains(body, "Second question"):
				return fakellm.Stream("Second ", "answer ", "here.")
			}
			return fakellm.Stream("Old ", "answer, ", "long finished.")
		}))
		harness.API(t, a.base, "Audio.SetSettings", nil, map[string]any{"ttsUrl": voice.URL(), "ttsVoice": "nova"})
	}, "")
	// The old chat, finished, and then automatic reading switched on (the
	// page learns of it when it is reloaded).
	models := pickerModels(t, a.base)
	var turn struct {
		Chat struct {
			ID int64 `json:"id"`
		} `json:"chat"`
	}
	harness.API(t, a.base, "Chats.Send", &turn, map[string]any{"modelId": models["tiny-qwen35"], "content": "First question"})
	chatID := turn.Chat.ID
	waitUntil(t, "the old reply to finish", func() bool {
		var p struct {
			Messages []struct {
				Role, Status, Content string
			} `json:"messages"`
		}
		harness.API(t, a.base, "Chats.Messages", &p, chatID, 0, 50)
		n := len(p.Messages)
		return n == 2 && p.Messages[1].Status == "final" && strings.Contains(p.Messages[1].Content, "long finished")
	})
	var mine struct{ AutoRead bool }
	harness.API(t, a.base, "Audio.SetMine", &mine, map[string]any{"autoRead": true})
	if !mine.AutoRead {
		t.Fatal("automatic reading did not switch on")
	}

	// read counts the speech requests whose input contains text.
	read := func(text string) int {
		n := 0
		for _, r := range voice.Requests() {
			if in, _ := r.JSON["input"].(string); r.Path == "/v1/audio/speech" && strings.Contains(in, text) {
				n++
			}
		}
		return n
	}
	chatHash := fmt.Sprintf("#/chat/%d", chatID)
	openOld := func() {
		a.waitJS(`location.hash === '` + chatHash + `'`)
		a.waitJS(`[...document.querySelectorAll('.msg-assistant')].some((m) => m.innerText.includes('long finished'))`)
		a.waitJS(`!![...document.querySelectorAll('.msg-assistant .msg-read')].pop()`)
	}

	t.Run("opening a finished chat reads nothing", func(t *testing.T) {
		a.t = t
		// A fresh page, so that it knows automatic reading is on.
		a.do(chromedp.Navigate(a.base+"/"+chatHash), chromedp.Reload())
		openOld()
		// Anything read on opening would be asked for before the reply
		// sent next finishes; that one is the sign that all is in.
		a.send("Second question")
		a.waitJS(lastReply + `.includes('Second answer here.')`)
		a.waitReplyIdle()
		waitUntil(t, "the second answer to be read aloud", func() bool { return read("Second answer here.") > 0 })
		if n := read("long finished"); n != 0 {
			t.Errorf("the old reply was read %d times on opening the chat", n)
		}
	})

	t.Run("reopening reads nothing again", func(t *testing.T) {
		a.t = t
		// Away and back within the page, then a reload.
		a.clickXPath(`//*[self::a or self::button][contains(., 'New chat')]`)
		a.waitJS(`location.hash === '#/' || location.hash === ''`)
		a.do(chromedp.Navigate(a.base + "/" + chatHash))
		openOld()
		a.waitJS(lastReply + `.includes('Second answer here.')`)
		a.do(chromedp.Reload())
		a.waitJS(lastReply + `.includes('Second answer here.')`)
		a.waitJS(`!![...document.querySelectorAll('.msg-assistant .msg-read')].pop()`)
		a.send("Third question")
		a.waitJS(lastReply + `.includes('Third answer here.')`)
		a.waitReplyIdle()
		waitUntil(t, "the third answer to be read aloud", func() bool { return read("Third answer here.") > 0 })
		if n := read("long finished"); n != 0 {
			t.Errorf("the old reply was read %d times", n)
		}
		if n := read("Second answer here."); n != 1 {
			t.Errorf("the second reply was read %d times, want once (when it finished)", n)
		}
		if n := read("Third answer here."); n != 1 {
			t.Errorf("the third reply was read %d times, want once", n)
		}
	})
	a.t = t
	a.pe.check(t)
}
