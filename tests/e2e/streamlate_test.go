package e2e

import (
	"context"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/tests/harness"
)

// TestReplyEndingBeforeTheStreamOpens: a page reloaded during a reply reads
// the chat (the reply still streaming) and asks for the reply's snapshot
// before its event stream is open; a reply that ends in that moment sends
// its last frame to no one. The page showed the whole text with Stop for
// ever (seen in CI on a busy machine). The stream's request is held here
// until the reply has ended on the server, so the moment is certain.
func TestReplyEndingBeforeTheStreamOpens(t *testing.T) {
	a := serveChatApp(t)
	// Without a SharedWorker the tab opens its own stream, whose request
	// this page's Fetch domain can hold (a worker's it cannot).
	a.open(t, `delete window.SharedWorker;`)
	var pieces []string
	for i := 1; i <= 30; i++ {
		pieces = append(pieces, "w"+strconv.Itoa(i)+" ")
	}
	a.llm.Enqueue(fakellm.Stream(pieces...).Every(100 * time.Millisecond))
	a.send("Count slowly")
	a.waitJS(lastReply + `.includes('w3 ')`)
	m := regexp.MustCompile(`\d+`).FindString(a.str(`location.hash`))
	chatID, err := strconv.Atoi(m)
	if err != nil {
		t.Fatalf("no chat id in the hash: %v", err)
	}

	var mu sync.Mutex
	var held []fetch.RequestID
	if err := chromedp.Listen(a.ctx, func(ev any) {
		if e, ok := ev.(*fetch.EventRequestPaused); ok {
			mu.Lock()
			held = append(held, e.RequestID)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatalf("listen: %v", err)
	}
	if _, err := chromedp.Call(a.ctx, fetch.Enable, fetch.EnableParams{
		Patterns: []*fetch.RequestPattern{{URLPattern: "*/api/events*"}},
	}); err != nil {
		t.Fatalf("fetch.Enable: %v", err)
	}
	a.do(chromedp.Reload())
	// The page shows the reply as running, from the chat and its snapshot.
	a.waitJS(`(() => { const m = [...document.querySelectorAll('.msg-assistant')].pop(); return !!m && m.classList.contains('is-streaming'); })()`)
	a.srv.WaitOutput(t, `method=Chats\.Live`, 60*time.Second)

	// The reply ends on the server while the page's stream is held.
	deadline := time.Now().Add(60 * time.Second)
	for {
		var r struct {
			Messages []struct {
				Role   string `json:"role"`
				Status string `json:"status"`
			} `json:"messages"`
		}
		harness.API(t, a.base, "Chats.Messages", &r, chatID, 0, 10)
		n := len(r.Messages)
		if n > 0 && r.Messages[n-1].Role == "assistant" && r.Messages[n-1].Status != "streaming" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reply did not end on the server: %+v", r.Messages)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Now the stream opens: the page must find out that the reply ended.
	mu.Lock()
	ids := append([]fetch.RequestID(nil), held...)
	mu.Unlock()
	if len(ids) == 0 {
		t.Fatal("the page's event stream request was never held")
	}
	ctx, cancel := context.WithTimeout(a.ctx, 20*time.Second)
	defer cancel()
	for _, id := range ids {
		if _, err := chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: id}); err != nil {
			t.Fatalf("release the event stream: %v", err)
		}
	}
	if _, err := chromedp.Call(ctx, fetch.Disable, cdp.Empty{}); err != nil {
		t.Fatalf("fetch.Disable: %v", err)
	}
	a.waitReplyIdle()
	a.waitJS(lastReply + `.includes('w30')`)
	a.pe.check(t)
}
