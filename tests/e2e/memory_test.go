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
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/heapprofiler"
	"github.com/chromedp/cdproto/memory"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/backend/fakellm"
)

// driveReplies is js/dev/benchdrive.js's loop, run in the page: n replies
// through the real composer, perChat to a chat, each chat started from the
// new-chat route.
const driveReplies = `(async (n, perChat, offset) => {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const until = async (cond, ms = 30000) => {
    const started = Date.now();
    for (;;) {
      const v = cond();
      if (v) return v;
      if (Date.now() - started > ms) {
        const all = document.querySelectorAll('.msg-assistant');
        const m = all[all.length - 1];
        throw new Error('timed out at ' + location.hash + ': ' + all.length + ' replies, the last ' +
          (m ? JSON.stringify(m.className + ' ' + m.innerText.slice(0, 80)) : 'missing') +
          (document.querySelector('#composer-button.is-stop') ? ', a Stop button' : ''));
      }
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
    // Enter reads the text the composer last drew: wait until it has.
    await until(() => !document.querySelector('#composer-button').disabled);
    box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', code: 'Enter', keyCode: 13, bubbles: true, cancelable: true }));
    await until(() => {
      const all = document.querySelectorAll('.msg-assistant');
      const m = all[all.length - 1];
      return all.length > before && m && !m.classList.contains('is-streaming') && !document.querySelector('#composer-button.is-stop');
    });
  }
  return true;
})`

// idleScript runs before the app in every document and counts what the app
// still has to do: timeouts and intervals of up to 10 s, animation frames
// and fetches not answered yet. window.lembasBusy() names them, or returns
// ” when there are none. A memory sample taken while a reload, a chat-list
// refresh or a frame is still to come counts what it is about to change.
const idleScript = `(() => {
  const timers = new Set();
  let frames = 0, fetches = 0;
  const st = window.setTimeout, ct = window.clearTimeout;
  const si = window.setInterval, ci = window.clearInterval;
  const raf = window.requestAnimationFrame, caf = window.cancelAnimationFrame;
  const short = (ms) => !(Number(ms) > 10000);
  window.setTimeout = function (fn, ms, ...args) {
    const id = st.call(window, (...a) => { timers.delete(id); if (typeof fn === 'function') fn(...a); }, ms, ...args);
    if (short(ms)) timers.add(id);
    return id;
  };
  window.clearTimeout = function (id) { timers.delete(id); return ct.call(window, id); };
  window.setInterval = function (fn, ms, ...args) {
    const id = si.call(window, fn, ms, ...args);
    if (short(ms)) timers.add(id);
    return id;
  };
  window.clearInterval = function (id) { timers.delete(id); return ci.call(window, id); };
  const pendingFrames = new Set();
  window.requestAnimationFrame = function (fn) {
    const id = raf.call(window, (t) => { pendingFrames.delete(id); fn(t); });
    pendingFrames.add(id);
    return id;
  };
  window.cancelAnimationFrame = function (id) { pendingFrames.delete(id); return caf.call(window, id); };
  const f = window.fetch;
  window.fetch = function (...args) {
    fetches++;
    return f.apply(this, args).finally(() => { fetches--; });
  };
  window.lembasBusy = () => [
    timers.size ? timers.size + ' timers' : '',
    pendingFrames.size ? pendingFrames.size + ' animation frames' : '',
    fetches ? fetches + ' fetches' : '',
  ].filter(Boolean).join(', ');
})()`

// memSample is what the page holds once it is idle and garbage collection
// frees nothing more.
type memSample struct {
	heapMB    float64
	nodes     int64 // every DOM node alive, in the document or not
	attached  int64 // nodes in the document
	listeners int64
	documents int64
	// chatTrees are the detached trees holding a chat's turns or view:
	// what a chat that was left and is still kept looks like.
	chatTrees []string
}

func (s memSample) detached() int64 { return s.nodes - s.attached }

func (s memSample) String() string {
	return fmt.Sprintf("JS heap %.2f MB, %d nodes (%d in the document, %d detached), %d listeners, %d documents, %d detached chat trees",
		s.heapMB, s.nodes, s.attached, s.detached(), s.listeners, s.documents, len(s.chatTrees))
}

// waitIdle waits until the app has nothing left to do (idleScript) at two
// looks a quarter of a second apart: an event from the server can start
// new work after the first.
func waitIdle(t *testing.T, ctx context.Context) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	quiet := 0
	for {
		busy, err := chromedp.Run(ctx, chromedp.Evaluate[string](`window.lembasBusy()`))
		if err != nil {
			t.Fatalf("idle check: %v", err)
		}
		if busy != "" {
			quiet = 0
		} else if quiet++; quiet == 2 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page never went idle: still %s", busy)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// sampleMemory waits until the page is idle, then collects garbage until
// the DOM counters stop changing: one collection can leave garbage that only
// the next one frees (finalisers, weak references, wrappers of nodes), so
// a single one counted more or less depending on when the collector had
// last run on its own.
func sampleMemory(t *testing.T, ctx context.Context) memSample {
	t.Helper()
	waitIdle(t, ctx)
	var prev memory.GetDOMCountersResult
	var d memory.GetDOMCountersResult
	for i := 0; ; i++ {
		if _, err := chromedp.Call(ctx, heapprofiler.CollectGarbage, cdp.Empty{}); err != nil {
			t.Fatalf("collect garbage: %v", err)
		}
		c, err := chromedp.Call(ctx, memory.GetDOMCounters, cdp.Empty{})
		if err != nil {
			t.Fatalf("DOM counters: %v", err)
		}
		d = c
		if i > 0 && d == prev {
			break
		}
		if i == 20 {
			t.Fatalf("the DOM counters still change after %d garbage collections: %+v then %+v", i, prev, d)
		}
		prev = d
	}
	h, err := chromedp.Call(ctx, runtime.GetHeapUsage, cdp.Empty{})
	if err != nil {
		t.Fatalf("heap usage: %v", err)
	}
	attached, err := chromedp.Run(ctx, chromedp.Evaluate[int64](`(() => {
	  let n = 1; const w = document.createTreeWalker(document, NodeFilter.SHOW_ALL);
	  while (w.nextNode()) n++;
	  return n; })()`))
	if err != nil {
		t.Fatalf("count nodes: %v", err)
	}
	det, err := chromedp.Call(ctx, dom.GetDetachedDomNodes, cdp.Empty{})
	if err != nil {
		t.Fatalf("detached nodes: %v", err)
	}
	var chatTrees []string
	for _, n := range det.DetachedNodes {
		if what := chatNode(n.TreeNode); what != "" {
			chatTrees = append(chatTrees, what)
		}
	}
	return memSample{heapMB: h.UsedSize / 1e6, nodes: d.Nodes, attached: attached, listeners: d.JsEventListeners, documents: d.Documents, chatTrees: chatTrees}
}

// chatNode describes n, or the first node under it, that belongs to a
// chat's view, or returns "" when none does.
func chatNode(n *cdp.Node) string {
	if n == nil {
		return ""
	}
	attr := func(name string) string {
		for i := 0; i+1 < len(n.Attributes); i += 2 {
			if n.Attributes[i] == name {
				return n.Attributes[i+1]
			}
		}
		return ""
	}
	for _, c := range strings.Fields(attr("class")) {
		switch c {
		case "msg", "msg-body", "chat-view", "chat-scroll", "chat-inner", "transcript":
			return fmt.Sprintf("<%s class=%q id=%q>", n.LocalName, attr("class"), attr("id"))
		}
	}
	for _, c := range n.Children {
		if s := chatNode(c); s != "" {
			return s
		}
	}
	return ""
}

// TestChatMemoryInChromium streams replies through the composer, a few to
// a chat as the desktop benchmark does, then leaves the last chat for the
// new-chat screen and compares what the page holds, once idle and after
// garbage collection, when N chats and when 2N chats have been visited.
// Every chat has been left at both points, so no detached node may belong
// to a chat; only the chat list grows, so detached nodes must not grow,
// listeners only by the new rows', and the JS heap only a little.
//
// The vendored Preact and htm used to keep chats that were left
// (js/core/vnodes.js): between 4 and 8 chats of 5 replies, +100 detached nodes
// and +44 listeners (+1,000 and +100 with 10 replies a chat). Then a static
// part of a template drawn only briefly (the "Gathering the pages" and
// "Waiting for the first words" lines) kept the chat it was first drawn
// in: the first chat always, and on a loaded machine sometimes a later one
// too (+473 detached nodes and +41 listeners between 4 and 8 chats).
//
// LEMBAS_HEAP_SNAPSHOT=DIR writes a heap snapshot at each step, for Chrome's
// DevTools (Memory → Load).
func TestChatMemoryInChromium(t *testing.T) {
	a := serveChatApp(t)
	a.open(t, idleScript)
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
		// Leave the last chat too: then both samples show the same screen
		// and every chat visited is one that was left.
		a.do(chromedp.Evaluate[chromedp.Void](`location.hash = '#/'`))
		a.waitJS(`location.hash === '#/' && !document.querySelector('.msg') && !!document.querySelector('#composer-input')`)
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
	for i, s := range at {
		if len(s.chatTrees) > 0 {
			t.Errorf("after %d chats, all of them left, %d detached trees of a chat are still alive, e.g. %s", chats*(i+1), len(s.chatTrees), s.chatTrees[0])
		}
	}
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
