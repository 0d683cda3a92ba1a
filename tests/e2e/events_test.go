package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/tests/harness"
)

// usable is true once a tab has loaded the app: the chat list counted and
// the composer there.
const usable = `!!document.querySelector('#composer-input') && !!document.querySelector('.sidebar') &&
	![...document.querySelectorAll('.loading-line')].some((e) => /Counting the chats/.test(e.textContent))`

// TestEightTabsShareOneEventStream: a browser allows six HTTP/1.1
// connections per host, and each tab used to hold one for its own event
// stream, so the sixth tab stayed on "Counting the chats…" for minutes and
// the seventh did not load at all. The tabs of one browser now share one
// stream (a SharedWorker): eight tabs in one profile all load, each
// follows a reply, and closing the tab that started the stream leaves the
// others following.
func TestEightTabsShareOneEventStream(t *testing.T) {
	a := newChatApp(t)
	a.llm.Enqueue(fakellm.Stream("first answer"))
	a.send("Hello")
	a.waitJS(lastReply + `.includes('first answer')`)
	a.waitReplyIdle()
	hash := a.str(`location.hash`)
	if !regexp.MustCompile(`^#/chat/\d+$`).MatchString(hash) {
		t.Fatalf("after sending, the page is at %q", hash)
	}

	// Eight more tabs; the first page leaves the app, so that the first of
	// these starts the shared stream and can be closed alone (closing the
	// browser's first tab would close them all).
	a.do(chromedp.Navigate("about:blank"))
	var tabs []*tab
	for i := 1; i <= 8; i++ {
		ctx, cancel := chromedp.NewContext(a.ctx) // a new tab in the same browser, same profile
		t.Cleanup(cancel)
		tb := newTab(t, ctx, fmt.Sprintf("tab%d", i))
		tb.do(chromedp.EmulateViewport(1280, 800), chromedp.Navigate(a.base+"/"+hash))
		tabs = append(tabs, tb)
	}
	for _, tb := range tabs {
		tb.waitJSFor(usable+` && `+lastReply+`.includes('first answer')`, 90*time.Second)
	}
	if n := openStreams(a.srv); n != 1 {
		t.Errorf("eight tabs hold %d event streams, want 1", n)
	}

	// A reply that stalls after a few words: every tab must show them
	// while it streams, which only the events can tell a tab that did not
	// send it.
	a.llm.Enqueue(fakellm.Stream("partial ", "words ", "never ", "finished").StallAfter(3))
	tabs[7].send("Tell me a long story")
	for _, tb := range tabs {
		tb.waitJSFor(lastReply+`.includes('partial words')`, 60*time.Second)
	}
	tabs[7].waitJS(`/stop/i.test(document.querySelector('#composer-button')?.innerText || '')`)
	tabs[7].click("#composer-button")
	for _, tb := range tabs {
		tb.waitJSFor(`/stopped/i.test(`+lastReply+`)`, 60*time.Second)
	}

	// The first tab started the shared stream; closing it must leave the
	// others following.
	if err := chromedp.Cancel(tabs[0].ctx); err != nil {
		t.Fatalf("close the first tab: %v", err)
	}
	tabs = tabs[1:]
	a.llm.Enqueue(fakellm.Stream("after ", "the ", "first ", "tab ", "closed"))
	tabs[0].send("Still there?")
	for _, tb := range tabs {
		tb.waitJSFor(lastReply+`.includes('first tab closed')`, 60*time.Second)
	}
	for _, tb := range tabs {
		tb.pe.check(t)
	}
}

// TestCrashedTabIsDropped: a tab that crashes never says bye, so the shared
// worker pings its tabs and drops one that has answered none of its last
// two pings; the tabs left go on following. A tab that was only frozen is
// dropped too, and joins again when it wakes. The test pings every 200 ms
// (the app every 30 s) and reads how many tabs the worker counts from the
// pings it sends.
func TestCrashedTabIsDropped(t *testing.T) {
	const fast = `window.__lembasEventsPingMs = 200;`
	a := serveChatApp(t)
	a.open(t, fast)
	a.llm.Enqueue(fakellm.Stream("first answer"))
	a.send("Hello")
	a.waitJS(lastReply + `.includes('first answer')`)
	a.waitReplyIdle()
	hash := a.str(`location.hash`)
	another := func(name string) (*tab, context.Context) {
		ctx, cancel := chromedp.NewContext(a.ctx) // another tab, same profile
		t.Cleanup(cancel)
		if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
			page.AddScriptToEvaluateOnNewDocumentParams{Source: fast}); err != nil {
			t.Fatalf("init script: %v", err)
		}
		tb := newTab(t, ctx, name)
		tb.do(chromedp.EmulateViewport(1280, 800), chromedp.Navigate(a.base+"/"+hash))
		tb.waitJS(lastReply + `.includes('first answer')`)
		return tb, ctx
	}

	_, ctx := another("crashed")
	a.waitJSFor(`window.__lembasEventsPorts === 2`, 60*time.Second)
	// A crash runs no pagehide: the tab never says bye.
	crashCtx, stop := context.WithTimeout(ctx, 10*time.Second)
	chromedp.Call(crashCtx, page.Crash, cdp.Empty{}) // returns an error: the tab is gone
	stop()
	a.waitJSFor(`window.__lembasEventsPorts === 1`, 60*time.Second)

	c, ctx := another("frozen")
	a.waitJSFor(`window.__lembasEventsPorts === 2`, 60*time.Second)
	if _, err := chromedp.Call(ctx, page.SetWebLifecycleState,
		page.SetWebLifecycleStateParams{State: page.SetWebLifecycleStateStateFrozen}); err != nil {
		t.Fatalf("freeze: %v", err)
	}
	a.waitJSFor(`window.__lembasEventsPorts === 1`, 60*time.Second)
	if _, err := chromedp.Call(ctx, page.SetWebLifecycleState,
		page.SetWebLifecycleStateParams{State: page.SetWebLifecycleStateStateActive}); err != nil {
		t.Fatalf("wake: %v", err)
	}
	// Awake, it is pinged again (on the port it joined with anew) and
	// follows the chat. Freezing hid it, and a hidden page draws the
	// reply's text only when shown: the new turn is what it must show.
	if _, err := chromedp.Call(ctx, page.BringToFront, cdp.Empty{}); err != nil {
		t.Fatalf("bring to front: %v", err)
	}
	c.js(`window.__lembasEventsPorts = 0`)
	c.waitJSFor(`window.__lembasEventsPorts === 2`, 60*time.Second)
	a.waitJSFor(`window.__lembasEventsPorts === 2`, 60*time.Second)
	a.llm.Enqueue(fakellm.Stream("still ", "here"))
	a.send("Anyone there?")
	a.waitJS(lastReply + `.includes('still here')`)
	c.waitJSFor(`document.querySelectorAll('.msg-user').length === 2`, 60*time.Second)
	a.pe.check(t)
	c.pe.check(t)
}

// openStreams counts the event streams the server has open, from its log.
func openStreams(p *harness.Proc) int {
	log := p.Stderr()
	return strings.Count(log, `msg="event stream open"`) - strings.Count(log, `msg="event stream closed"`)
}

// TestSignedInAgainKeepsTheTabs: a person signs out and back in (a new
// session). The shared stream still runs on the old session until the
// server ends it at a heartbeat as signed out; the tabs, signed in as that
// person again, must carry on with a new stream rather than all show the
// sign-in screen.
func TestSignedInAgainKeepsTheTabs(t *testing.T) {
	a := newChatApp(t)
	ctx2, cancel := chromedp.NewContext(a.ctx)
	t.Cleanup(cancel)
	b := newTab(t, ctx2, "second")
	b.do(chromedp.EmulateViewport(1280, 800), chromedp.Navigate(a.base+"/"))
	b.waitJS(`!!document.querySelector('#composer-input')`)
	if n := openStreams(a.srv); n != 1 {
		t.Errorf("two tabs hold %d event streams, want 1", n)
	}

	// Signed in again (a new session in the browser's cookie), then the
	// old session signed out, as signing out and in again in one tab does,
	// without the moment between in which a tab's call would be refused.
	again := harness.Login(t, a.base, harness.AdminUser, harness.AdminPassword)
	harness.BrowserSession(t, a.ctx, a.base, again)
	resp, err := harness.AdminClient(t, a.base).Post(a.base+"/api/auth/logout", "application/json", strings.NewReader("{}"))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("sign the old session out: %v %v", resp, err)
	}
	resp.Body.Close()

	// The old session's stream ends at the next heartbeat (15 s).
	a.srv.WaitOutput(t, `msg="event stream closed" user=\d+ why=signed-out`, 60*time.Second)
	deadline := time.Now().Add(60 * time.Second)
	for openStreams(a.srv) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d event streams open after the old session's ended, want 1", openStreams(a.srv))
		}
		time.Sleep(200 * time.Millisecond)
	}
	// (The harness's own session was the one signed out.)
	harness.APIAs(t, again, a.base, "Prefs.Set", nil, map[string]any{"theme": "moria"})
	for _, tb := range []*tab{a.tab, b} {
		tb.waitJS(`document.documentElement.dataset.theme === 'moria' && !!document.querySelector('#composer-input') && !document.querySelector('.auth')`)
	}
}

// TestConnectionLostAndBack: when the server goes away mid-reply, the page
// says it cannot reach it (instead of sitting at the reply's Stop button
// as if all were well), keeps trying, and once the server is back on the
// same address and data directory shows the reply as the server left it.
//
// Both ways a tab follows events: through the shared worker, and its own
// stream in a browser without SharedWorker.
func TestConnectionLostAndBack(t *testing.T) {
	t.Run("shared", func(t *testing.T) { connectionLostAndBack(t, "") })
	t.Run("own stream", func(t *testing.T) { connectionLostAndBack(t, `delete window.SharedWorker;`) })
}

func connectionLostAndBack(t *testing.T, initScript string) {
	harness.Require(t, "chromium")
	bin := harness.Build(t, "", "CGO_ENABLED=0")
	dir := t.TempDir()
	p, base := harness.Serve(t, bin, dir)
	llm := fakellm.New(t)
	a := &chatApp{base: base, llm: llm}
	a.open(t, initScript)
	if shared := a.bool(`typeof SharedWorker === 'function'`); shared != (initScript == "") {
		t.Fatalf("SharedWorker there: %v", shared)
	}

	a.llm.Enqueue(fakellm.Stream("partial ", "words ", "never ", "finished").StallAfter(3))
	a.send("Tell me a long story")
	a.waitJS(lastReply + `.includes('partial words')`)
	a.waitJS(`/stop/i.test(document.querySelector('#composer-button')?.innerText || '')`)
	if a.bool(`!!document.querySelector('.conn-status.is-lost')`) {
		t.Fatal("the page says the server is lost while it is there")
	}

	// Stop the server as its operator would.
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	p.Wait(t, 30*time.Second)

	a.waitJSFor(`/Can't reach the server/.test(document.querySelector('.conn-status[role=status]')?.innerText || '')`, 60*time.Second)
	a.shot("lost")
	// It covers nothing, on a wide screen or a phone's: it pushes the
	// chat down, and the header's and the composer's controls stay clear.
	for _, w := range []int64{1280, 390} {
		a.do(chromedp.EmulateViewport(w, 800))
		a.waitJS(`(() => {
			const s = document.querySelector('.conn-status').getBoundingClientRect();
			const clear = (el) => { const b = el.getBoundingClientRect();
				return s.bottom <= b.top || s.top >= b.bottom || s.right <= b.left || s.left >= b.right; };
			const controls = [...document.querySelectorAll('#main button, #main select, #main textarea, .topbar button')]
				.filter((el) => el.getClientRects().length > 0);
			return s.height > 0 && controls.length > 2 && controls.every(clear);
		})()`)
	}
	a.waitJS(`document.querySelector('.sidebar').getBoundingClientRect().right <= 0`) // slid away
	a.shot("lost-phone")
	a.do(chromedp.EmulateViewport(1280, 800))

	// Back on the same address and data directory: the page finds it, the
	// notice goes, and the reply shows what the server kept of it (written
	// as interrupted at shutdown) instead of streaming for ever.
	addr := strings.TrimPrefix(base, "http://")
	p2 := harness.Start(t, bin, harness.Env(dir), "--serve", "--addr", addr)
	p2.WaitOutput(t, `serving at http://`, 30*time.Second)
	a.waitJSFor(`!document.querySelector('.conn-status.is-lost')`, 90*time.Second)
	a.waitReplyIdle()
	a.waitJS(`!/stop/i.test(document.querySelector('#composer-button')?.innerText || '')`)
	if got := a.str(lastReply); !strings.Contains(got, "partial words") {
		t.Errorf("after the server came back the reply reads %q", got)
	}
	a.shot("back")

	// The stream is followed again: a new reply arrives.
	a.llm.Enqueue(fakellm.Stream("welcome ", "back"))
	a.send("Are you back?")
	a.waitJS(lastReply + `.includes('welcome back')`)
}

// TestReplyCatchesUpAfterTheConnectionIsCut: the network between the
// browser and a running server goes away mid-reply while the reply goes
// on. When it comes back, the page shows what was written meanwhile at
// once, from Chats.Live: the frames it missed are gone, and the next one
// may be a long way off (here, none comes until the reply is stopped).
func TestReplyCatchesUpAfterTheConnectionIsCut(t *testing.T) {
	a := serveChatApp(t)
	harness.API(t, a.base, "Connections.Create", nil, map[string]any{"name": "Fake", "baseUrl": a.llm.URL()})
	cut := newCutter(t, strings.TrimPrefix(a.base, "http://"))
	ctx := harness.Browser(t)
	harness.BrowserAdmin(t, ctx, a.base) // cookies go by host, not port: the proxy's address gets it too
	a.tab = newTab(t, ctx, "chat")
	a.do(chromedp.EmulateViewport(1280, 800), chromedp.Navigate("http://"+cut.addr+"/"))
	a.waitJS(`!!document.querySelector('#composer-input')`)

	gate := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(open)
	// role, "partial ", "words ", held until the gate opens, "more ",
	// "words ", then nothing until the client goes away.
	a.llm.Enqueue(fakellm.NewStream().Content("partial ", "words ").
		Event(fakellm.Event{Comment: "held", After: gate}).
		Content("more ", "words ").Reply().StallAfter(6))
	a.send("Tell me a long story")
	a.waitJS(lastReply + `.includes('partial words')`)
	id := strings.TrimPrefix(a.str(`location.hash`), "#/chat/")

	cut.cut()
	a.waitJSFor(`/Can't reach the server/.test(document.querySelector('.conn-status')?.innerText || '')`, 60*time.Second)
	open()
	chatID, err := strconv.Atoi(id)
	if err != nil {
		t.Fatalf("chat id %q: %v", id, err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		var page json.RawMessage
		harness.API(t, a.base, "Chats.Messages", &page, chatID, 0, 50)
		if strings.Contains(string(page), "more words") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never wrote the rest of the reply: %s", page)
		}
		time.Sleep(200 * time.Millisecond)
	}

	cut.restore()
	a.waitJSFor(`!document.querySelector('.conn-status.is-lost')`, 60*time.Second)
	a.waitJSFor(lastReply+`.includes('partial words more words') && !!document.querySelector('.msg-assistant.is-streaming')`, 40*time.Second)
	a.click("#composer-button")
	a.waitReplyIdle()
	a.waitJS(`/stopped/i.test(` + lastReply + `)`)
	// Calls made while the network was cut fail, and say so in the log.
	a.pe.check(t, "net::ERR_CONNECTION_REFUSED", "net::ERR_CONNECTION_RESET", "net::ERR_EMPTY_RESPONSE")
}

// cutter is a TCP proxy in front of the server that a test can cut (close
// every connection and refuse new ones) and restore on the same address:
// the network going away while the server runs on.
type cutter struct {
	t      *testing.T
	addr   string
	target string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
}

func newCutter(t *testing.T, target string) *cutter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &cutter{t: t, addr: ln.Addr().String(), target: target, conns: map[net.Conn]bool{}}
	c.serve(ln)
	t.Cleanup(c.cut)
	return c
}

func (c *cutter) serve(ln net.Listener) {
	c.mu.Lock()
	c.ln = ln
	c.mu.Unlock()
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", c.target)
			if err != nil {
				in.Close()
				continue
			}
			if !c.track(in, out) {
				in.Close()
				out.Close()
				return
			}
			go func() { io.Copy(out, in); out.Close() }()
			go func() { io.Copy(in, out); in.Close() }()
		}
	}()
}

func (c *cutter) track(conns ...net.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ln == nil {
		return false
	}
	for _, n := range conns {
		c.conns[n] = true
	}
	return true
}

func (c *cutter) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ln != nil {
		c.ln.Close()
		c.ln = nil
	}
	for n := range c.conns {
		n.Close()
	}
	clear(c.conns)
}

func (c *cutter) restore() {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ln, err := net.Listen("tcp", c.addr)
		if err == nil {
			c.serve(ln)
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("listen again on %s: %v", c.addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestEventStreamIsTheSignedInUsers: the shared stream reconnects with
// whatever session cookie the browser holds by then, which may be another
// person's. A stream that the server says belongs to someone else than the
// tabs it serves relays nothing and signs those tabs out.
func TestEventStreamIsTheSignedInUsers(t *testing.T) {
	a := newChatApp(t)
	a.await(`(async () => {
		const { openStream } = await import('/js/core/eventstream.js');
		const st = await (await fetch('/api/auth/state')).json();
		const got = { wrong: [], wrongOut: false, right: [], rightState: '' };
		window.lembasProbe = got;
		openStream('/api/events', st.user.id + 1000, {
			onEvent: (e) => got.wrong.push(e.topic), onState: () => {}, onSignedOut: () => { got.wrongOut = true; },
		});
		openStream('/api/events', st.user.id, {
			onEvent: (e) => got.right.push(e.topic), onState: (s) => { got.rightState = s; }, onSignedOut: () => {},
		});
		return 'started';
	})()`)
	a.waitJS(`window.lembasProbe.wrongOut && window.lembasProbe.rightState === 'open'`)
	harness.API(t, a.base, "Prefs.Set", nil, map[string]any{"theme": "moria"})
	a.waitJS(`window.lembasProbe.right.includes('prefs')`)
	if n := a.js(`window.lembasProbe.wrong.length`).(float64); n != 0 {
		t.Errorf("another user's stream relayed %v events: %v", n, a.js(`window.lembasProbe.wrong`))
	}
}
