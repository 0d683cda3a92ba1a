package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/llembas/lembas/tests/harness"
)

// pressKeys types text where the focus is as a keyboard does: each key is
// one keyDown carrying its text, then keyUp, so that a page which
// handles the keydown (and prevents its default) gets no keypress or
// input for it, as with a real key. chromedp.KeyEvent sends the text in a
// separate "char" event, which Chromium delivers even when the keydown
// was handled: xterm handles a key on keydown, and every character went
// to the shell twice.
func pressKeys(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, r := range text {
			evs := kb.Encode(r)
			down, up := *evs[0], *evs[len(evs)-1]
			if len(evs) == 3 {
				down.Text, down.UnmodifiedText = evs[1].Text, evs[1].UnmodifiedText
			}
			for _, ev := range []input.DispatchKeyEventParams{down, up} {
				if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, ev); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// fakeSocket replaces the page's WebSocket with one that is the terminal
// server's protocol in a few lines: on connect it sends
// window.__fake.scrollback (binary) and ready, and echoes every binary
// frame back, as a shell at a prompt would (window.__fake.refuse: it
// sends that error instead and closes; window.__fake.unreachable: it
// fails before opening, as an unreachable server's does). Each socket is kept in
// window.__fake.sockets; drop() ends one as a lost network does, and
// say(obj) sends a text frame.
const fakeSocket = `(() => {
  const fake = window.__fake = { sockets: [], scrollback: '' };
  class FakeSocket {
    constructor(url) {
      this.url = url;
      this.readyState = 0;
      this.binaryType = 'blob';
      this.sent = [];
      fake.sockets.push(this);
      setTimeout(() => {
        if (this.readyState !== 0) return;
        if (fake.unreachable) {
          this.drop();
          return;
        }
        this.readyState = 1;
        if (fake.refuse) {
          this.say({ type: 'error', message: fake.refuse });
          this.close();
          return;
        }
        if (fake.scrollback) this.bin(fake.scrollback);
        this.say({ type: 'ready', marks: true, cols: 80, rows: 24 });
      }, 20);
    }
    bin(s) {
      if (this.readyState === 1 && this.onmessage) this.onmessage({ data: new TextEncoder().encode(s).buffer });
    }
    say(o) {
      if (this.readyState === 1 && this.onmessage) this.onmessage({ data: JSON.stringify(o) });
    }
    send(d) {
      if (typeof d === 'string') {
        this.sent.push(JSON.parse(d));
        return;
      }
      this.sent.push(Array.from(d));
      this.bin(new TextDecoder().decode(d));
    }
    close() {
      if (this.readyState === 3) return;
      this.readyState = 3;
      if (this.onclose) this.onclose({ code: 1000 });
    }
    drop() {
      if (this.readyState === 3) return;
      this.readyState = 3;
      if (this.onclose) this.onclose({ code: 1006 });
    }
  }
  FakeSocket.CONNECTING = 0;
  FakeSocket.OPEN = 1;
  FakeSocket.CLOSING = 2;
  FakeSocket.CLOSED = 3;
  window.WebSocket = FakeSocket;
  // Terminal.LastCommand answers window.__fake.last.
  const fetch0 = window.fetch;
  window.fetch = (url, opts) => String(url).endsWith('/api/Terminal.LastCommand')
    ? (fake.asked = (fake.asked || 0) + 1, Promise.resolve(new Response(JSON.stringify(fake.last), { headers: { 'Content-Type': 'application/json' } })))
    : fetch0(url, opts);
})()`

// TestTerminalInChromiumFakeSocket drives term.js (the terminal the panel
// opens) in the real page, CSP included, against a fake socket: what the
// real server cannot be made to do on cue (drop a viewer, lose the
// network) and what a person would only see (a terminal fitted to its
// box, colours that follow the theme).
func TestTerminalInChromiumFakeSocket(t *testing.T) {
	a := serveChatApp(t)
	a.open(t, fakeSocket)
	run := func(name string, step func(t *testing.T)) {
		t.Run(name, func(st *testing.T) {
			a.t = st
			defer func() { a.t = t }()
			step(st)
		})
	}
	a.js(`window.__fake.scrollback = 'earlier output\r\n$ '`)
	// A box of a known size, hidden at first as a panel inside a hidden
	// ancestor would be.
	a.await(`(async () => {
		const wrap = document.createElement('div');
		wrap.id = 'term-wrap';
		wrap.hidden = true;
		const host = document.createElement('div');
		host.className = 'term-host';
		host.style.width = '420px';
		host.style.height = '300px';
		wrap.append(host);
		document.body.prepend(wrap);
		const m = await import(` + appModule("./terminal/term.js") + `);
		window.__term = m;
		window.__states = [];
		window.__sess = await m.attach(host, 7, (s) => window.__states.push(s));
		return 'attached';
	})()`)
	const host = `document.querySelector('#term-wrap .term-host')`
	const buffer = `window.__term.bufferText(` + host + `)`
	const state = `(window.__states[window.__states.length - 1] || {}).state`

	run("connects to the chat's socket and shows the scrollback", func(t *testing.T) {
		a.waitJS(state + ` === 'open'`)
		a.waitJS(buffer + `.includes('earlier output')`)
		if u := a.str(`window.__fake.sockets[0].url`); !strings.HasSuffix(strings.SplitN(u, "?", 2)[0], "/api/terminal/7") || !strings.HasPrefix(u, "ws://") {
			t.Errorf("socket URL %q", u)
		}
	})

	run("fits once it is shown, and says its size", func(t *testing.T) {
		if c := a.js(`document.querySelector('#term-wrap .xterm') ? window.__fake.sockets[0].sent.filter((m) => m.type === 'resize').length : -1`); c == float64(-1) {
			t.Fatal("no terminal in the box")
		}
		a.js(`document.getElementById('term-wrap').hidden = false`)
		// 420 px of 13-14 px monospace is well under 80 columns.
		a.waitJS(`(() => { const r = window.__fake.sockets[0].sent.filter((m) => m.type === 'resize').pop(); return !!r && r.cols > 20 && r.cols < 70 && r.rows > 5 && r.rows < 24; })()`)
		// And again when the box changes size, with no window resize.
		before := a.js(`window.__fake.sockets[0].sent.filter((m) => m.type === 'resize').pop().cols`)
		a.js(host + `.style.width = '620px'`)
		a.waitJS(`window.__fake.sockets[0].sent.filter((m) => m.type === 'resize').pop().cols > ` + jsNum(before))
	})

	run("typing sends UTF-8 bytes and shows the echo", func(t *testing.T) {
		a.js(`window.__term.input(` + host + `, 'héllo')`)
		a.waitJS(buffer + `.includes('héllo')`)
		got := a.str(`JSON.stringify(window.__fake.sockets[0].sent.filter((m) => Array.isArray(m)).flat())`)
		if got != "[104,195,169,108,108,111]" {
			t.Errorf("bytes sent: %s", got)
		}
	})

	// The server refuses an input frame over 1 MiB and closes the socket:
	// a long paste must go in pieces, all of it, in order.
	run("a long paste goes in pieces of at most 64 KiB", func(t *testing.T) {
		a.js(`window.__fake.sockets[0].sent.length = 0`)
		a.js(`window.__term.input(` + host + `, 'x'.repeat(300 * 1024))`)
		a.waitJS(`window.__fake.sockets[0].sent.filter((m) => Array.isArray(m)).reduce((n, m) => n + m.length, 0) === 300 * 1024`)
		if big := a.js(`Math.max(...window.__fake.sockets[0].sent.filter((m) => Array.isArray(m)).map((m) => m.length))`); big.(float64) > 64*1024 {
			t.Errorf("a frame of %v bytes was sent", big)
		}
	})

	// The shell's keys are the shell's: Ctrl+K (kill to the end of the
	// line) goes to it, not to the app's "Search chats".
	run("keys the app binds go to the shell while it has focus", func(t *testing.T) {
		a.click("#term-wrap .term-host")
		a.waitJS(`document.activeElement && document.activeElement.classList.contains('xterm-helper-textarea')`)
		a.do(chromedp.KeyEvent("k", chromedp.KeyModifiers(chromedp.ModifierCtrl)))
		a.waitJS(`window.__fake.sockets[0].sent.some((m) => Array.isArray(m) && m.length === 1 && m[0] === 11)`)
		if a.bool(`document.activeElement && document.activeElement.id === 'chat-search'`) {
			t.Error("Ctrl+K in the terminal moved to the chat search")
		}
		// A key typed once is sent once.
		a.js(`window.__fake.sockets[0].sent.length = 0`)
		a.do(pressKeys("xY\r"))
		a.waitJS(`window.__fake.sockets[0].sent.filter((m) => Array.isArray(m)).length >= 3`)
		if got := a.str(`JSON.stringify(window.__fake.sockets[0].sent.filter((m) => Array.isArray(m)).flat())`); got != "[120,89,13]" {
			t.Errorf("typing xY and Enter sent %s", got)
		}
	})

	run("a 24-bit colour is drawn under the CSP", func(t *testing.T) {
		a.js(`window.__fake.sockets[0].bin('\x1b[38;2;200;30;40mTRUECOLOR\x1b[0m\r\n')`)
		a.waitJS(`[...document.querySelectorAll('#term-wrap .xterm-rows span')].some((s) => s.textContent.includes('TRUECOLOR') && getComputedStyle(s).color === 'rgb(200, 30, 40)')`)
	})

	run("the theme is pushed to xterm", func(t *testing.T) {
		bg := `getComputedStyle(document.querySelector('#term-wrap .xterm-scrollable-element') || document.querySelector('#term-wrap .xterm-viewport')).backgroundColor`
		a.js(`document.documentElement.dataset.theme = 'moria'`)
		a.waitJS(bg + ` === 'rgb(24, 27, 31)'`)
		a.js(`document.documentElement.dataset.theme = 'shire'`)
		a.waitJS(bg + ` === 'rgb(247, 241, 225)'`)
		a.shot("terminal-shire")
		a.js(`document.documentElement.dataset.theme = 'moria'`)
		a.waitJS(bg + ` === 'rgb(24, 27, 31)'`)
	})

	run("a lost connection comes back with the scrollback, not doubled", func(t *testing.T) {
		a.js(`window.__fake.scrollback = 'the scrollback again\r\n$ '`)
		a.js(`window.__fake.sockets[0].drop()`)
		a.waitJS(`window.__fake.sockets.length === 2 && ` + state + ` === 'open'`)
		a.waitJS(buffer + `.includes('the scrollback again')`)
		if a.bool(buffer + `.includes('earlier output')`) {
			t.Errorf("the old screen was kept under the scrollback:\n%s", a.str(buffer))
		}
	})

	run("a slow viewer dropped by the server comes back", func(t *testing.T) {
		a.js(`window.__fake.sockets[1].say({ type: 'closed', reason: 'slow' }); window.__fake.sockets[1].close()`)
		a.waitJS(`window.__fake.sockets.length === 3 && ` + state + ` === 'open'`)
	})

	run("a shell that ended stays closed until Reconnect", func(t *testing.T) {
		a.js(`window.__fake.sockets[2].say({ type: 'closed', reason: 'exited' }); window.__fake.sockets[2].close()`)
		a.waitJS(state + ` === 'closed' && window.__states[window.__states.length - 1].message === 'The shell ended.'`)
		if n := a.js(`window.__fake.sockets.length`); n != float64(3) {
			t.Errorf("%v sockets after the shell ended; want no new one", n)
		}
		a.js(`window.__sess.reconnect()`)
		a.waitJS(`window.__fake.sockets.length === 4 && ` + state + ` === 'open'`)
	})

	run("a command and its output as a block no output can close", func(t *testing.T) {
		got := a.await(`import(` + appModule("./terminal/panel.js") + `).then((m) => m.commandBlock({ command: 'cat notes.md', output: 'a\n` + "```" + `\nb\n\n', exit: 2 }))`)
		want := "````console\n$ cat notes.md\na\n```\nb\n````\nExit status 2.\n"
		if got != want {
			t.Errorf("block:\n%s\nwant:\n%s", got, want)
		}
		got = a.await(`import(` + appModule("./terminal/panel.js") + `).then((m) => m.commandBlock({ command: 'true', output: '', exit: 0 }))`)
		if want := "```console\n$ true\n```\n"; got != want {
			t.Errorf("block:\n%s\nwant:\n%s", got, want)
		}
	})

	run("dispose detaches", func(t *testing.T) {
		a.js(`window.__sess.dispose()`)
		a.waitJS(`window.__fake.sockets[3].readyState === 3`)
		if a.bool(`!!document.querySelector('#term-wrap .xterm')`) {
			t.Error("the terminal is still in the box")
		}
	})
	// The panel as the chat screen draws it in its side slot: its state
	// in words, Reconnect once the shell ended, Close.
	run("the panel says where it stands", func(t *testing.T) {
		a.js(`window.__fake.scrollback = 'user@host:~$ '`)
		a.await(`Promise.all([import(` + appModule("../vendor/htm-preact/standalone.module.js") + `), import(` + appModule("./chat/chat.js") + `), import(` + appModule("./terminal/panel.js") + `)]).then(([p, c, t]) => {
			const box = document.createElement('div');
			box.id = 'panel-test';
			box.className = 'main-chat';
			box.style.position = 'fixed';
			box.style.inset = '0';
			box.style.zIndex = '100';
			box.style.background = 'var(--bg)';
			document.body.append(box);
			window.__closed = 0;
			p.render(p.h(c.ChatView, {side: p.h(t.TerminalPanel, {chatId: 9, onClose: () => { window.__closed++; }})}), box);
			return 'drawn';
		})`)
		const panelState = `document.querySelector('#panel-test .term-state').textContent.trim()`
		a.waitJS(panelState + ` === 'Connected'`)
		n := int(a.js(`window.__fake.sockets.length`).(float64))
		a.waitJS(`(` + panelTerm + `).includes('user@host')`)
		a.shot("panel")
		a.js(`window.__fake.sockets[` + strconv.Itoa(n-1) + `].say({ type: 'closed', reason: 'exited' })`)
		a.waitJS(panelState + ` === 'Disconnected — The shell ended.'`)
		a.click("#panel-test .term-reconnect")
		a.waitJS(panelState + ` === 'Connected' && window.__fake.sockets.length === ` + strconv.Itoa(n+1))
		// A shell without marks: nothing is sent, and the page says so.
		a.js(`window.__fake.last = { marks: false, command: '', output: '', exit: 0 }`)
		a.click("#panel-test .term-send")
		a.waitJS(toastSays("This shell has no command marks; nothing was sent."))
		if v := a.str(`document.querySelector('#panel-test #composer-input').value`); v != "" {
			t.Errorf("the composer holds %q after a shell without marks", v)
		}
		a.js(`window.__fake.last = { marks: true, command: 'ls', output: 'a  b\n', exit: 0 }`)
		a.click("#panel-test .term-send")
		if !a.within(5*time.Second, "document.querySelector('#panel-test #composer-input').value === '```console\\n$ ls\\na  b\\n```\\n'") {
			t.Fatalf("composer: %q; toasts: %s; asked %v, last %s", a.str(`document.querySelector('#panel-test #composer-input').value`), a.str(`[...document.querySelectorAll('.toast')].map((t) => t.innerText).join(' | ')`), a.js(`window.__fake.asked`), a.str(`JSON.stringify(window.__fake.last)`))
		}
		a.click(`#panel-test button[aria-label="Close the terminal"]`)
		a.waitJS(`window.__closed === 1`)
		a.await(`import(` + appModule("../vendor/htm-preact/standalone.module.js") + `).then((p) => { p.render(null, document.querySelector('#panel-test')); return 'gone'; })`)
		a.waitJS(`window.__fake.sockets[` + strconv.Itoa(n) + `].readyState === 3`)
	})
	// A panel that never connected says so — with the server's error when
	// it sent one — not that a connection was lost; Reconnect tries again.
	run("a panel that never connected says it could not connect", func(t *testing.T) {
		mount := func(refuse string, unreachable bool) {
			a.js(`window.__fake.refuse = ` + jsString(refuse) + `; window.__fake.unreachable = ` + strconv.FormatBool(unreachable))
			a.await(`Promise.all([import(` + appModule("../vendor/htm-preact/standalone.module.js") + `), import(` + appModule("./terminal/panel.js") + `)]).then(([p, t]) => {
				const box = document.querySelector('#panel-test');
				p.render(null, box);
				p.render(p.h(t.TerminalPanel, {chatId: 9, onClose: () => {}}), box);
				return 'drawn';
			})`)
		}
		const panelState = `document.querySelector('#panel-test .term-state')?.textContent.trim()`
		mount("The host key of Build box is not accepted yet.", false)
		a.waitJS(panelState + ` === 'Could not connect — The host key of Build box is not accepted yet.'`)
		a.shot("panel-could-not-connect")
		a.js(`window.__fake.refuse = ''`)
		a.click("#panel-test .term-reconnect")
		a.waitJS(panelState + ` === 'Connected'`)
		mount("", true)
		a.waitJSFor(panelState+` === 'Could not connect — The server could not be reached.'`, 90*time.Second)
		a.js(`window.__fake.unreachable = false`)
		a.await(`import(` + appModule("../vendor/htm-preact/standalone.module.js") + `).then((p) => { p.render(null, document.querySelector('#panel-test')); return 'gone'; })`)
	})
	a.pe.check(t)
}

// panelTerm is the text of the panel's terminal in #panel-test.
var panelTerm = `window.__term.bufferText(document.querySelector('#panel-test .term-host'))`

func jsNum(v any) string {
	f, _ := v.(float64)
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// TestTerminalDesktopLinkInChromium drives link.js's desktop transport (the
// Terminal facade and `terminal` events) in a page told it is the desktop
// app, against a fake Wails bridge: events that arrive before Open says
// which viewer is ours are kept for it, other viewers' are not ours, bytes
// travel as base64 both ways, keys typed while an Input call is out go
// with the next one, in order, close detaches, and a resync of the
// terminal topic (the window fell behind) ends the link as a slow one.
func TestTerminalDesktopLinkInChromium(t *testing.T) {
	harness.Require(t, "chromium")
	bin := harness.Build(t, "", "CGO_ENABLED=0")
	_, base := harness.Serve(t, bin, t.TempDir())
	ctx := harness.Browser(t)
	a := newTab(t, ctx, "desktop")
	a.do(chromedp.Navigate(base + "/offline.html"))
	got := a.await(`(async () => {
		const meta = document.createElement('meta');
		meta.name = 'lembas-transport';
		meta.content = 'desktop';
		document.head.append(meta);
		const calls = [];
		let emit = null;
		let slow = null; // the first Input call waits for this
		const send = (data) => emit({ topic: 'terminal', data });
		window.runtime = { EventsOn: (name, fn) => { emit = fn; } };
		window.go = { main: { Bridge: { Call: async (method, args) => {
			calls.push([method, ...args]);
			if (method === 'Terminal.Open') {
				await new Promise((r) => setTimeout(r, 50));
				send({ viewer: 'v0', data: btoa('not ours') });
				send({ viewer: 'v1', data: btoa(String.fromCharCode(...new TextEncoder().encode('scroll\u00e9'))) });
				send({ viewer: 'v1', type: 'ready', marks: true, cols: 80, rows: 24 });
				return { result: { viewer: 'v1' } };
			}
			if (method === 'Terminal.Input' && calls.filter((c) => c[0] === method).length === 1) {
				await new Promise((r) => { slow = r; });
			}
			return { result: null };
		} } } };
		const { openLink } = await import('/js/terminal/link.js');
		const seen = { data: '', ready: null, closed: null };
		const dec = new TextDecoder();
		const link = openLink('5', 80, 24, {
			data: (b) => { seen.data += dec.decode(b, { stream: true }); },
			ready: (m) => { seen.ready = m; },
			closed: (r) => { seen.closed = r; },
			lost: () => { seen.lost = true; },
			error: (m) => { seen.error = m; },
		});
		const enc = new TextEncoder();
		link.send(enc.encode('a'));
		const until = async (cond) => { for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 20)); };
		await until(() => !!slow);
		link.send(enc.encode('b'));
		link.send(enc.encode('\u00e7'));
		slow();
		await until(() => calls.filter((c) => c[0] === 'Terminal.Input').length === 2);
		link.resize(100, 30);
		send({ viewer: 'v1', type: 'closed', reason: 'slow' });
		await until(() => seen.closed !== null);
		link.close();
		// The window fell behind on the terminal topic (a resync naming
		// it): bytes are lost, so the link is done as a slow one is, and
		// its viewer closed. A resync of another topic is not ours.
		const seen2 = { closed: null, data: '' };
		openLink('5', 80, 24, {
			data: (b) => { seen2.data += dec.decode(b); }, ready: () => {}, lost: () => {}, error: () => {},
			closed: (r) => { seen2.closed = r; },
		});
		await until(() => calls.filter((c) => c[0] === 'Terminal.Open').length === 2);
		await until(() => seen2.data.includes('scroll'));
		emit({ topic: 'resync', data: { reason: 'overflow', topic: 'gen' } });
		await new Promise((r) => setTimeout(r, 100));
		const otherTopic = seen2.closed;
		emit({ topic: 'resync', data: { reason: 'overflow', topic: 'terminal' } });
		await until(() => seen2.closed !== null);
		send({ viewer: 'v1', data: btoa('after') });
		await new Promise((r) => setTimeout(r, 100));
		const resync = { other: otherTopic, closed: seen2.closed, close: calls.filter((c) => c[0] === 'Terminal.Close').length, after: seen2.data.includes('after') };
		const inputs = calls.filter((c) => c[0] === 'Terminal.Input').map((c) => c[1] + ':' + new TextDecoder().decode(Uint8Array.from(atob(c[2]), (ch) => ch.charCodeAt(0))));
		return JSON.stringify({ open: calls[0], inputs, resize: calls.find((c) => c[0] === 'Terminal.Resize'), data: seen.data,
			marks: seen.ready && seen.ready.marks, closed: seen.closed, lost: !!seen.lost, resync });
	})()`)
	want := `{"open":["Terminal.Open",5,80,24],"inputs":["v1:a","v1:bç"],"resize":["Terminal.Resize","v1",100,30],"data":"scrollé","marks":true,"closed":"slow","lost":false,"resync":{"other":null,"closed":"slow","close":1,"after":false}}`
	if got != want {
		t.Errorf("desktop link:\n got %s\nwant %s", got, want)
	}
	a.pe.check(t)
}
