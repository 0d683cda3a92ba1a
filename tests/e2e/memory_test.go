package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/heapprofiler"
	"github.com/chromedp/cdproto/memory"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/backend/fakellm"
)

// driveReplies is js/benchdrive.js's loop, run in the page: n replies
// through the real composer, perChat to a chat, each chat started from the
// new-chat route.
const driveReplies = `(async (n, perChat, offset) => {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const until = async (cond, ms = 30000) => {
    const started = Date.now();
    for (;;) {
      const v = cond();
      if (v) return v;
      if (Date.now() - started > ms) throw new Error('timed out at ' + location.hash);
      await sleep(10);
    }
  };
  for (let i = 0; i < n; i++) {
    if ((offset + i) % perChat === 0) {
      location.hash = '#/';
      await until(() => location.hash === '#/' && !document.querySelector('.msg'));
    }
    const box = await until(() => {
      const el = document.querySelector('#composer-input');
      return el && !el.disabled ? el : null;
    });
    const before = document.querySelectorAll('.msg-assistant').length;
    const setValue = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value').set;
    setValue.call(box, 'Bench message ' + (offset + i + 1));
    box.dispatchEvent(new Event('input', { bubbles: true }));
    await sleep(20);
    box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', code: 'Enter', keyCode: 13, bubbles: true, cancelable: true }));
    await until(() => {
      const all = document.querySelectorAll('.msg-assistant');
      const m = all[all.length - 1];
      return all.length > before && m && !m.classList.contains('is-streaming') && !document.querySelector('#composer-button.is-stop');
    });
  }
  // Let the last reloads and chat-list refreshes land.
  await sleep(800);
  return true;
})`

// memSample is what the page holds after a forced garbage collection.
type memSample struct {
	heapMB    float64
	nodes     int64 // every DOM node alive, in the document or not
	attached  int64 // nodes in the document
	listeners int64
	documents int64
}

func (s memSample) detached() int64 { return s.nodes - s.attached }

func (s memSample) String() string {
	return fmt.Sprintf("JS heap %.2f MB, %d nodes (%d in the document, %d detached), %d listeners, %d documents",
		s.heapMB, s.nodes, s.attached, s.detached(), s.listeners, s.documents)
}

func sampleMemory(t *testing.T, ctx context.Context) memSample {
	t.Helper()
	// Twice: what the first collection finalises can free more.
	for range 2 {
		if _, err := chromedp.Call(ctx, heapprofiler.CollectGarbage, cdp.Empty{}); err != nil {
			t.Fatalf("collect garbage: %v", err)
		}
	}
	h, err := chromedp.Call(ctx, runtime.GetHeapUsage, cdp.Empty{})
	if err != nil {
		t.Fatalf("heap usage: %v", err)
	}
	d, err := chromedp.Call(ctx, memory.GetDOMCounters, cdp.Empty{})
	if err != nil {
		t.Fatalf("DOM counters: %v", err)
	}
	attached, err := chromedp.Run(ctx, chromedp.Evaluate[int64](`(() => {
	  let n = 1; const w = document.createTreeWalker(document, NodeFilter.SHOW_ALL);
	  while (w.nextNode()) n++;
	  return n; })()`))
	if err != nil {
		t.Fatalf("count nodes: %v", err)
	}
	return memSample{heapMB: h.UsedSize / 1e6, nodes: d.Nodes, attached: attached, listeners: d.JsEventListeners, documents: d.Documents}
}

// TestChatMemoryInChromium streams replies through the composer, a few to
// a chat as the desktop benchmark does, and compares what the page holds
// after a forced garbage collection once N chats and once 2N chats have
// been visited. Only the chat list grows with the chats visited; the
// transcript on screen is the same size. So DOM nodes outside the document
// must not grow, listeners only by the new rows', and the JS heap only a
// little. The vendored Preact and htm used to keep chats that were left
// (js/vnodes.js): between 4 and 8 chats of 5 replies, +100 detached nodes
// and +44 listeners (+1,000 and +100 with 10 replies a chat); now +5 and +5.
//
// LEMBAS_HEAP_SNAPSHOT=DIR writes a heap snapshot at each step, for Chrome's
// DevTools (Memory → Load).
func TestChatMemoryInChromium(t *testing.T) {
	a := newChatApp(t)
	a.llm.SetDefault(fakellm.Stream(memoryReplyParts()...).Every(2 * time.Millisecond))
	const perChat, chats = 5, 4
	drive := func(n, offset int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(a.ctx, time.Duration(n)*5*time.Second+30*time.Second)
		defer cancel()
		expr := fmt.Sprintf("%s(%d, %d, %d)", driveReplies, n, perChat, offset)
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr, chromedp.EvalAwaitPromise)); err != nil {
			a.shot("memory-failure")
			t.Fatalf("driving replies %d to %d: %v", offset+1, offset+n, err)
		}
	}
	start := sampleMemory(t, a.ctx)
	t.Logf("start: %v", start)
	var at [2]memSample
	for i := range at {
		drive(perChat*chats, perChat*chats*i)
		at[i] = sampleMemory(t, a.ctx)
		t.Logf("after %d chats: %v", chats*(i+1), at[i])
		if dir := os.Getenv("LEMBAS_HEAP_SNAPSHOT"); dir != "" {
			writeHeapSnapshot(t, a.ctx, filepath.Join(dir, fmt.Sprintf("chats-%d.heapsnapshot", chats*(i+1))))
		}
	}
	n, n2 := at[0], at[1]
	if got := n2.detached() - n.detached(); got > 50 {
		t.Errorf("detached DOM nodes grew by %d between %d and %d chats (want ≤ 50): something keeps chats that were left", got, chats, 2*chats)
	}
	// A sidebar row has a listener or two; a whole chat view has dozens.
	if got := n2.listeners - n.listeners; got > 3*chats {
		t.Errorf("event listeners grew by %d between %d and %d chats (want ≤ %d)", got, chats, 2*chats, 3*chats)
	}
	if n2.documents > n.documents {
		t.Errorf("documents grew from %d to %d", n.documents, n2.documents)
	}
	if got := n2.heapMB - n.heapMB; got > 1 {
		t.Errorf("JS heap grew by %.2f MB between %d and %d chats (want ≤ 1 MB)", got, chats, 2*chats)
	}
	a.pe.check(t)
}

// memoryReplyParts is the desktop benchmark's reply: a heading, 38 words
// and a code block.
func memoryReplyParts() []string {
	parts := []string{"## A short answer\n\n"}
	for i := range 38 {
		parts = append(parts, fmt.Sprintf("word%d ", i))
	}
	return append(parts, "\n\n```go\nfmt.Println(\"done\")\n```\n")
}

// writeHeapSnapshot saves the page's heap snapshot to path.
func writeHeapSnapshot(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	var (
		mu  sync.Mutex
		buf strings.Builder
	)
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	chromedp.Listen(lctx, func(ev any) {
		if c, ok := ev.(*heapprofiler.EventAddHeapSnapshotChunk); ok {
			mu.Lock()
			buf.WriteString(c.Chunk)
			mu.Unlock()
		}
	})
	if _, err := chromedp.Call(ctx, heapprofiler.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("heap profiler: %v", err)
	}
	if _, err := chromedp.Call(ctx, heapprofiler.TakeHeapSnapshot, heapprofiler.TakeHeapSnapshotParams{}); err != nil {
		t.Fatalf("heap snapshot: %v", err)
	}
	// The chunks are sent before the answer, but the listener may still be
	// handling the last ones (a debugging aid: no need to be exact).
	time.Sleep(time.Second)
	mu.Lock()
	defer mu.Unlock()
	if err := os.WriteFile(path, []byte(buf.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("heap snapshot %s (%d bytes)", path, buf.Len())
}
