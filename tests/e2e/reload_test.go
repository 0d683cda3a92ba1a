package e2e

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/backend/fakellm"
)

// holdMessages runs in the page: while window.holdMessages is set, each
// Chats.Messages answer is kept (window.held counts them) until
// window.letGo() is called. watchRestart sets window.restarted when the
// composer's Stop button or a streaming reply shows up.
const holdMessages = `(() => {
  let open;
  const gate = new Promise((r) => { open = r; });
  window.letGo = () => open();
  window.held = 0;
  const f = window.fetch;
  window.fetch = async function (url, ...rest) {
    const res = await f.call(this, url, ...rest);
    if (window.holdMessages && String(url).includes('Chats.Messages')) {
      window.held++;
      await gate;
    }
    return res;
  };
  window.watchRestart = () => {
    window.restarted = false;
    new MutationObserver(() => {
      if (document.querySelector('#composer-button.is-stop, .msg-assistant.is-streaming')) window.restarted = true;
    }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['class'] });
  };
  return true;
})()`

// TestStaleReloadKeepsAReplyFinished: a page of messages read while a
// reply was streaming can arrive after the reply's final frame (the event
// stream and the answer race on a loaded machine). It used to start the
// finished reply again: a new streaming state, the Stop button back until
// Chats.Live and another reload said otherwise, and an Enter pressed
// meanwhile was dropped (TestChatMemoryInChromium hung on it under load).
func TestStaleReloadKeepsAReplyFinished(t *testing.T) {
	a := serveChatApp(t)
	a.open(t, idleScript)
	answer := make(chan struct{})
	a.llm.Enqueue(fakellm.Func(func(fakellm.Request) fakellm.Reply {
		<-answer
		return fakellm.Stream("The answer ", "came ", "late.")
	}))
	t.Cleanup(func() {
		select {
		case <-answer:
		default:
			close(answer)
		}
	})
	a.js(holdMessages)
	a.send("Are you there?")
	// The reply's row says streaming until the endpoint answers.
	a.waitJS(`location.hash.startsWith('#/chat/') && !!document.querySelector('.msg-assistant.is-streaming')`)
	a.js(`(() => { window.holdMessages = true; window.dispatchEvent(new Event('lembas:resync')); return true; })()`)
	a.waitJS(`window.held === 1`)
	close(answer)
	a.waitJS(lastReply + `.includes('late.') && !document.querySelector('.msg-assistant.is-streaming, #composer-button.is-stop')`)
	a.js(`(() => { window.watchRestart(); window.letGo(); return true; })()`)
	waitIdle(t, a.ctx)
	if a.js(`window.restarted`) != false {
		t.Error("a page of messages read while the reply streamed started the finished reply again")
	}
	// Nothing is left streaming: the next message goes.
	a.llm.Enqueue(fakellm.Stream("Still here."))
	a.do(chromedp.Evaluate[chromedp.Void](`window.holdMessages = false`))
	a.send("And now?")
	a.waitJSFor(lastReply+`.includes('Still here.')`, 30*time.Second)
	a.pe.check(t)
}
