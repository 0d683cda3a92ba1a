package e2e

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/tests/harness"
)

// chatApp is a server with a connection to a fake endpoint, open in
// Chromium as its administrator.
type chatApp struct {
	*tab
	base string
	llm  *fakellm.Server
	srv  *harness.Proc
}

func newChatApp(t *testing.T) *chatApp {
	a := serveChatApp(t)
	a.open(t, "")
	return a
}

// serveChatApp starts a server and a fake endpoint but opens no page yet,
// so that a test can set up either first.
func serveChatApp(t *testing.T) *chatApp {
	harness.Require(t, "chromium")
	bin := harness.Build(t, "", "CGO_ENABLED=0")
	srv, base := harness.Serve(t, bin, t.TempDir())
	return &chatApp{base: base, llm: fakellm.New(t), srv: srv}
}

// open connects the server to the fake endpoint and opens the app, signed
// in, once the composer shows. initScript, when not empty, runs in every
// document before the page's own scripts.
func (a *chatApp) open(t *testing.T, initScript string) {
	t.Helper()
	harness.API(t, a.base, "Connections.Create", nil, map[string]any{"name": "Fake", "baseUrl": a.llm.URL()})
	ctx := harness.Browser(t)
	harness.BrowserAdmin(t, ctx, a.base)
	a.tab = newTab(t, ctx, "chat")
	if initScript != "" {
		if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
			page.AddScriptToEvaluateOnNewDocumentParams{Source: initScript}); err != nil {
			t.Fatalf("init script: %v", err)
		}
	}
	a.do(chromedp.EmulateViewport(1280, 800), chromedp.Navigate(a.base+"/"))
	a.waitJS(`!!document.querySelector('#composer-input')`)
}

// lastReply is the last assistant message's text.
const lastReply = `(() => { const m = [...document.querySelectorAll('.msg-assistant')].pop(); return m ? m.innerText : ''; })()`

func (a *chatApp) waitReplyIdle() {
	a.waitJS(`(() => { const m = [...document.querySelectorAll('.msg-assistant')].pop(); return !!m && !m.classList.contains('is-streaming'); })()`)
}

func TestChatInChromium(t *testing.T) {
	a := newChatApp(t)
	// Titles read like titles (this test's first screenshot is in the
	// README); every other request gets the fake's usual reply.
	a.llm.SetDefault(fakellm.Func(func(r fakellm.Request) fakellm.Reply {
		if strings.Contains(string(r.Body), "You write titles") {
			return fakellm.Stream("Code and a little maths")
		}
		return fakellm.Fixture("stream-no-reasoning")
	}))
	// Each step drives the tab as its own subtest, so that a failure is
	// reported there (driven with the parent's t, it read "subtest may
	// have called FailNow on a parent test" and stopped every later step).
	run := func(name string, step func(t *testing.T)) {
		t.Run(name, func(st *testing.T) {
			a.t = st
			defer func() { a.t = t }()
			step(st)
		})
	}

	run("send and stream with reasoning, code and math", func(t *testing.T) {
		a.llm.Enqueue(fakellm.NewStream().Reasoning("Considering ", "the question.").
			Content("Here is code:\n\n", "```go\nfunc main() {}\n```\n\n", "and math $x^2$ ", "done.").Reply().Every(30 * time.Millisecond))
		a.send("Hello there")
		a.waitJS(`location.hash.startsWith('#/chat/')`)
		a.waitJS(`document.querySelector('.msg-user')?.innerText.includes('Hello there')`)
		a.waitReplyIdle()
		a.waitJS(lastReply + `.includes('done.')`)
		if n := a.js(`document.querySelectorAll('.msg-assistant .code-block').length`); n != float64(1) {
			t.Errorf("code blocks: %v", n)
		}
		a.waitJS(`!!document.querySelector('.msg-assistant .katex')`)
		a.waitJS(`document.querySelector('.msg-assistant details.reasoning')?.innerText.includes('Reasoning')`)
		a.shotAs("chat-reply.png") // in the README
		// The open chat is read: its row loses the unread dot once the
		// reply is in, even when the reply finished during a MarkRead.
		a.waitJS(`!!document.querySelector('.chat-row.is-active') && !document.querySelector('.chat-row.is-active.is-unread')`)
	})

	run("stop keeps what arrived", func(t *testing.T) {
		a.llm.Enqueue(fakellm.Stream("partial ", "words ", "never ", "finished").StallAfter(3))
		a.send("Tell me a long story")
		a.waitJS(lastReply + `.includes('words')`)
		a.waitJS(`/stop/i.test(document.querySelector('#composer-button')?.innerText || '')`)
		a.click("#composer-button")
		a.waitReplyIdle()
		a.waitJS(`/stopped/i.test(` + lastReply + `)`)
	})

	run("reload mid-reply reattaches", func(t *testing.T) {
		var pieces []string
		for i := 1; i <= 40; i++ {
			pieces = append(pieces, fmt.Sprintf("w%02d ", i))
		}
		a.llm.Enqueue(fakellm.Stream(pieces...).Every(50 * time.Millisecond))
		a.send("Count slowly")
		a.waitJS(lastReply + `.includes('w05')`)
		a.do(chromedp.Reload())
		a.waitJS(`!!document.querySelector('.msg-assistant')`)
		a.waitReplyIdle()
		a.waitJS(lastReply + `.includes('w40')`)
		if got := a.js(lastReply).(string); !strings.Contains(got, "w01 w02") {
			t.Errorf("reattached reply lost its start: %q", got)
		}
	})

	run("regenerate shows a new version", func(t *testing.T) {
		// Several times over: the new reply usually gets the deleted one's
		// id, and an instant reply's frames used to go to the old one.
		for _, answer := range []string{"a fresh answer", "a second try", "a third try"} {
			a.llm.Enqueue(fakellm.Stream(answer))
			a.clickXPath(`//article[contains(@class,'msg-assistant')][last()]//button[contains(., 'Regenerate')]`)
			a.waitJS(lastReply + `.includes('` + answer + `')`)
			a.waitReplyIdle()
		}
	})

	run("endpoint error is shown in plain words", func(t *testing.T) {
		a.llm.Enqueue(fakellm.Status(http.StatusUnauthorized, ""))
		a.send("Will this fail?")
		a.waitReplyIdle()
		a.waitJS(`/key/i.test(` + lastReply + `)`)
	})

	run("length cut-off offers Continue", func(t *testing.T) {
		a.llm.Enqueue(fakellm.NewStream().Content("cut").Finish("length").Reply())
		a.send("Be long")
		a.waitReplyIdle()
		a.llm.Enqueue(fakellm.Stream(" off here"))
		a.clickXPath(`//article[contains(@class,'msg-assistant')][last()]//button[contains(., 'Continue')]`)
		a.waitJS(lastReply + `.includes('cut off here')`)
		a.waitReplyIdle()
	})

	run("edit starts a new version", func(t *testing.T) {
		before := a.js(`document.querySelectorAll('.msg').length`).(float64)
		if before < 4 {
			t.Fatalf("only %v messages", before)
		}
		a.llm.Enqueue(fakellm.Stream("answer to the edit"))
		a.clickXPath(`(//article[contains(@class,'msg-user')])[1]//button[contains(., 'Edit')]`)
		a.waitJS(`!!document.querySelector('.msg-edit textarea')`)
		a.js(`(() => { const ta = document.querySelector('.msg-edit textarea'); const set = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set; set.call(ta, 'Edited first turn'); ta.dispatchEvent(new Event('input', {bubbles: true})); return true; })()`)
		a.clickXPath(`//form[contains(@class,'msg-edit')]//button[@type='submit']`)
		a.waitJS(`document.querySelectorAll('.msg').length === 2`)
		a.waitJS(lastReply + `.includes('answer to the edit')`)
		a.waitReplyIdle()
	})

	run("switch chats and come back", func(t *testing.T) {
		hash := a.js(`location.hash`).(string)
		a.llm.Enqueue(fakellm.Stream("second chat reply"))
		a.clickXPath(`//*[self::a or self::button][contains(., 'New chat')]`)
		a.waitJS(`!location.hash.startsWith('` + hash + `')`)
		// The new chat's screen replaces the old one (and its composer):
		// wait for it, or the click may land on a node on its way out.
		a.waitJS(`document.querySelectorAll('.msg').length === 0 && !!document.querySelector('#composer-input:not([disabled])')`)
		a.send("A second chat")
		a.waitJS(lastReply + `.includes('second chat reply')`)
		a.do(chromedp.Navigate(a.base + "/" + hash))
		a.waitJS(`document.querySelector('.msg-user')?.innerText.includes('Edited first turn')`)
	})

	run("search jumps to the message", func(t *testing.T) {
		a.do(harness.Click(chromedp.CSS("#chat-search")), chromedp.SendKeys(chromedp.CSS("#chat-search"), "second"))
		a.waitJS(`document.querySelectorAll('.search-hit').length > 0`)
		a.click(".search-hit")
		a.waitJS(`document.querySelector('.msg-user')?.innerText.includes('A second chat')`)
	})
	run("the last open chat reopens", func(t *testing.T) {
		hash := a.js(`location.hash`).(string)
		if !strings.HasPrefix(hash, "#/chat/") {
			t.Fatalf("not on a chat: %q", hash)
		}
		id := strings.TrimPrefix(hash, "#/chat/")
		deadline := time.Now().Add(10 * time.Second)
		for {
			var prefs struct{ LastChat int64 }
			harness.API(t, a.base, "Prefs.Get", &prefs)
			if fmt.Sprint(prefs.LastChat) == id {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("lastChat is %d, want %s", prefs.LastChat, id)
			}
			time.Sleep(100 * time.Millisecond)
		}
		a.do(chromedp.Navigate(a.base + "/"))
		a.waitJS(`location.hash === '` + hash + `'`)
	})

	run("settings chosen before the first message apply", func(t *testing.T) {
		a.clickXPath(`//*[self::a or self::button][contains(., 'New chat')]`)
		a.waitJS(`!location.hash.startsWith('#/chat/')`)
		a.click(`button[aria-label="Chat settings"]`)
		a.waitJS(`!!document.querySelector('#chat-system-prompt')`)
		a.do(chromedp.SendKeys(chromedp.CSS("#chat-system-prompt"), "Answer like a hobbit."),
			harness.Click(chromedp.Search(`//form[.//textarea[@id='chat-system-prompt']]//button[@type='submit']`)))
		a.waitJS(`!document.querySelector('#chat-system-prompt')`)
		a.llm.Enqueue(fakellm.Stream("Second breakfast."))
		a.send("What is for breakfast?")
		a.waitJS(lastReply + `.includes('Second breakfast.')`)
		found := false
		for _, r := range a.llm.Requests() {
			if strings.Contains(string(r.Body), "Answer like a hobbit.") && strings.Contains(string(r.Body), "What is for breakfast?") {
				found = true
			}
		}
		if !found {
			t.Error("the system prompt chosen before the first message was not sent")
		}
	})
	a.pe.check(t, "status of 401", "status of 409")
}

// TestModelOutputCannotRunScript streams XSS payloads as model output and
// checks that nothing runs.
func TestModelOutputCannotRunScript(t *testing.T) {
	a := serveChatApp(t)
	a.open(t, idleScript)
	payloads, err := os.ReadFile(harness.RepoRoot() + "/testdata/xss/payloadbox-xss-payload-list.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(payloads), "\n")
	var sample []string
	for i := 0; i < len(lines); i += max(1, len(lines)/150) {
		sample = append(sample, lines[i])
	}
	sample = append(sample,
		"[click](javascript:window.__pwned=1)", "[x](&#106;avascript:window.__pwned=1)",
		"<img src=x onerror=\"window.__pwned=1\">", "![remote](https://evil.example/p.png)",
		`<a id="go">go</a>`, "# location", "<svg onload=window.__pwned=1>",
		"```\"><script>window.__pwned=1</script>\n```")
	// Loads and failures of what the reply embeds are when injected
	// handlers would run: note each element's, and look only once all of
	// them have had theirs and the app has nothing left to do (a fixed
	// half second was too short on a loaded machine to prove anything).
	a.js(`(() => {
	  window.__pwned = 0; window.alert = window.confirm = window.prompt = () => { window.__pwned = 2; };
	  window.__settled = new WeakSet();
	  const mark = (e) => { if (e.target instanceof Element) window.__settled.add(e.target); };
	  document.addEventListener('load', mark, true);
	  document.addEventListener('error', mark, true);
	  return true; })()`)
	a.llm.Enqueue(fakellm.Stream(strings.Join(sample, "\n\n")))
	a.send("Show me hostile output")
	a.waitReplyIdle()
	a.waitJS(`[...document.querySelectorAll('.msg-assistant [src]')].every((el) => !el.getAttribute('src') || window.__settled.has(el))`)
	waitIdle(t, a.ctx)
	if v := a.js(`window.__pwned`); v != float64(0) {
		t.Fatalf("model output ran script: __pwned = %v", v)
	}
	if v := a.js(`document.querySelectorAll('.msg-assistant script, .msg-assistant iframe, .msg-assistant [onerror], .msg-assistant [onload]').length`); v != float64(0) {
		t.Errorf("dangerous elements in the reply: %v", v)
	}
	if v := a.js(`typeof window.go`); v != "undefined" {
		t.Errorf("model output clobbered window.go: %v", v)
	}
	if v := a.js(`[...document.querySelectorAll('.msg-assistant img')].filter(i => /^https?:/.test(i.getAttribute('src') || '')).length`); v != float64(0) {
		t.Errorf("remote images loaded: %v", v)
	}
}
