package e2e

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/sshx/sshtest"
	"github.com/llembas/lembas/tests/harness"
)

// agentChat is an agent chat on a real sshd, made through the API as a
// person would make one: a profile with a key LLeMbas generated (its
// public key authorized on the server), the host key scanned and accepted,
// and a first message sent with the chat's agent settings.
type agentChat struct {
	base string
	llm  *fakellm.Server
	srv  *harness.Proc
	ssh  *sshtest.Server
	id   int
}

func newAgentChat(tb testing.TB) *agentChat {
	tb.Helper()
	harness.Require(tb, "chromium")
	sshd := sshtest.Start(tb)
	if sshd.Password == "" && os.Getenv("CI") != "true" {
		tb.Skip("an sshd not run as root may not open a PTY")
	}
	bin := harness.Build(tb, "", "CGO_ENABLED=0")
	srv, base := harness.Serve(tb, bin, tb.TempDir())
	llm := fakellm.New(tb)
	llm.SetDefault(fakellm.Func(func(r fakellm.Request) fakellm.Reply { return fakellm.Stream("Ready when you are.") }))
	harness.API(tb, base, "Connections.Create", nil, map[string]any{"name": "Fake", "baseUrl": llm.URL()})

	var p struct {
		ID        int    `json:"id"`
		PublicKey string `json:"publicKey"`
	}
	harness.API(tb, base, "Agent.CreateProfile", &p, map[string]any{
		"name": "test host", "host": sshd.Host, "port": sshd.Port, "username": sshd.User, "auth": "key",
	})
	sshd.AuthorizeKey(p.PublicKey)
	var scan struct {
		Fingerprint string `json:"fingerprint"`
	}
	harness.API(tb, base, "Agent.ScanHostKey", &scan, p.ID)
	harness.API(tb, base, "Agent.AcceptHostKey", nil, p.ID, scan.Fingerprint)

	var models []struct{ ID int }
	harness.API(tb, base, "Models.Picker", &models)
	if len(models) == 0 {
		tb.Fatal("no models")
	}
	var turn struct{ Chat struct{ ID int } }
	harness.API(tb, base, "Chats.Send", &turn, map[string]any{
		"modelId": models[0].ID, "content": "Hello",
		"agent": map[string]any{"profile": p.ID, "dir": sshd.Home, "mode": "manual"},
	})
	if turn.Chat.ID == 0 {
		tb.Fatal("Chats.Send made no chat")
	}
	return &agentChat{base: base, llm: llm, srv: srv, ssh: sshd, id: turn.Chat.ID}
}

// termBuffer is the text of the terminal in the page's panel, scrollback
// included (xterm's buffer, not the drawn rows).
var termBuffer = `(async () => { const h = document.querySelector('.term-panel .term-host'); if (!h) return ''; const m = await import(` + appModule("./terminal/term.js") + `); return m.bufferText(h); })()`

// openChat opens the agent chat in tab p, signed in as the administrator.
func (c *agentChat) openChat(p *tab) {
	p.t.Helper()
	p.do(chromedp.EmulateViewport(1280, 800), chromedp.Navigate(c.base+"/#/chat/"+strconv.Itoa(c.id)))
	p.waitJS(`!!document.querySelector('#composer-input')`)
}

// openPanel clicks Terminal (unless the panel is open) and waits until
// the terminal is connected.
func openPanel(p *tab) {
	p.t.Helper()
	p.waitJS(`!!document.querySelector('.term-toggle')`)
	if !p.bool(`!!document.querySelector('.term-panel')`) {
		p.click(".term-toggle")
	}
	p.waitJSFor(`!!document.querySelector('.term-state.is-open')`, 60*time.Second)
}

// typeInTerminal types text into the panel's terminal with real key
// events, then Enter.
func typeInTerminal(p *tab, text string) {
	p.t.Helper()
	p.click(".term-panel .term-host")
	p.waitJS(`document.activeElement && document.activeElement.classList.contains('xterm-helper-textarea')`)
	p.do(pressKeys(text + "\r"))
}

// waitTerm waits until the terminal's text holds want.
func waitTerm(p *tab, want string) {
	p.t.Helper()
	p.await(`import(` + appModule("./terminal/term.js") + `).then((m) => { window.__termMod = m; return 'ok'; })`)
	p.waitJSFor(`(() => { const h = document.querySelector('.term-panel .term-host'); return !!h && window.__termMod.bufferText(h).includes(`+strconv.Quote(want)+`); })()`, 30*time.Second)
}

var pidLine = regexp.MustCompile(`(?m)^pid-(\d+)\s*$`)

// shellPID asks the shell for its PID through the terminal.
func shellPID(p *tab, tag string) string {
	p.t.Helper()
	typeInTerminal(p, "echo pid-$$; echo done-"+tag)
	waitTerm(p, "\ndone-"+tag)
	m := pidLine.FindAllStringSubmatch(p.await(termBuffer), -1)
	if len(m) == 0 {
		p.t.Fatalf("no PID in the terminal:\n%s", p.await(termBuffer))
	}
	return m[len(m)-1][1]
}

// TestTerminalPanelInChromium: an agent chat's terminal panel on a real
// sshd: what is typed runs and its output shows; a reload finds the same
// shell with its scrollback; two tabs share it; closing the panel detaches
// and reopening finds the shell still there; the theme reaches xterm.
func TestTerminalPanelInChromium(t *testing.T) {
	c := newAgentChat(t)
	ctx := harness.Browser(t)
	harness.BrowserAdmin(t, ctx, c.base)
	a := newTab(t, ctx, "one")
	run := func(name string, step func(t *testing.T)) {
		t.Run(name, func(st *testing.T) {
			a.t = st
			defer func() { a.t = t }()
			step(st)
		})
	}
	c.openChat(a)
	var pid string

	run("plain chats have no terminal, agent chats do", func(t *testing.T) {
		a.waitJS(`!!document.querySelector('.term-toggle')`)
		if a.bool(`[...document.querySelectorAll('script[type=module], link[rel=modulepreload]')].some((s) => /xterm|terminal\/term\.js/.test(s.src || s.href))`) {
			t.Error("xterm is preloaded by the page")
		}
		if a.bool(`performance.getEntriesByType('resource').some((e) => /xterm/.test(e.name))`) {
			t.Error("xterm was loaded before the panel opened")
		}
	})

	run("type a command and see its output", func(t *testing.T) {
		openPanel(a)
		typeInTerminal(a, "echo lembas-$((6*7))")
		waitTerm(a, "\nlembas-42")
		pid = shellPID(a, "first")
		a.shot("terminal")
	})

	run("send the last command and its output to the chat", func(t *testing.T) {
		typeInTerminal(a, "echo said-$((40+2)); false")
		waitTerm(a, "\nsaid-42")
		a.click(".term-panel .term-send")
		a.waitJS(`document.querySelector('#composer-input').value.includes('Exit status 1.')`)
		got := a.str(`document.querySelector('#composer-input').value`)
		if want := "```console\n$ echo said-$((40+2)); false\nsaid-42\n```\nExit status 1.\n"; got != want {
			t.Errorf("composer holds:\n%s\nwant:\n%s", got, want)
		}
		a.js(`(() => { const ta = document.querySelector('#composer-input'); ta.value = ''; ta.dispatchEvent(new Event('input', { bubbles: true })); })()`)
	})

	run("a reload finds the same shell and its scrollback", func(t *testing.T) {
		a.do(chromedp.Reload())
		a.waitJS(`!!document.querySelector('#composer-input')`)
		// The panel was open in this tab: it opens again by itself.
		a.waitJSFor(`!!document.querySelector('.term-state.is-open')`, 60*time.Second)
		waitTerm(a, "\nlembas-42")
		if got := shellPID(a, "reload"); got != pid {
			t.Errorf("shell PID after a reload = %s, want %s (a new shell)", got, pid)
		}
	})

	run("two tabs share the shell", func(t *testing.T) {
		tctx, cancel := chromedp.NewContext(ctx)
		defer cancel()
		b := newTab(t, tctx, "two")
		c.openChat(b)
		openPanel(b)
		waitTerm(b, "\nlembas-42")
		typeInTerminal(b, "echo from-tab-$((1+1))")
		waitTerm(b, "\nfrom-tab-2")
		waitTerm(a, "\nfrom-tab-2")
		typeInTerminal(a, "echo back-from-$((0+1))")
		waitTerm(b, "\nback-from-1")
		b.pe.check(t)
	})

	run("closing the panel detaches, reopening finds the shell", func(t *testing.T) {
		typeInTerminal(a, "sleep 3; echo slept-$((2+3))")
		a.click(`.term-panel button[aria-label="Close the terminal"]`)
		a.waitJS(`!document.querySelector('.term-panel') && document.querySelector('.term-toggle').getAttribute('aria-pressed') === 'false'`)
		a.waitJS(`document.activeElement === document.querySelector('.term-toggle')`)
		openPanel(a)
		waitTerm(a, "\nslept-5")
		if got := shellPID(a, "reopen"); got != pid {
			t.Errorf("shell PID after closing and reopening = %s, want %s", got, pid)
		}
	})

	run("the theme reaches xterm", func(t *testing.T) {
		bg := `getComputedStyle(document.querySelector('.term-panel .xterm-scrollable-element') || document.querySelector('.term-panel .xterm-viewport')).backgroundColor`
		want := map[string]string{"moria": "rgb(24, 27, 31)", "shire": "rgb(247, 241, 225)"}
		for _, theme := range []string{"shire", "moria", "shire"} {
			a.js(`(() => { const s = document.querySelector('#theme-select'); s.value = ` + strconv.Quote(theme) + `; return s.dispatchEvent(new Event('change', { bubbles: true })); })()`)
			a.waitJS(`document.documentElement.dataset.theme === ` + strconv.Quote(theme))
			a.waitJS(bg + ` === ` + strconv.Quote(want[theme]))
		}
		a.shot("terminal-shire")
	})

	// On a phone the panel goes under the chat, the width of the screen,
	// and the terminal fits it.
	run("on a phone the panel is under the chat", func(t *testing.T) {
		a.do(chromedp.EmulateViewport(390, 800))
		a.waitJS(`(() => { const p = document.querySelector('.term-panel'), c = document.querySelector('.chat-with-side > .chat-view'); if (!p || !c) return false;
			const r = p.getBoundingClientRect(), q = c.getBoundingClientRect(); return r.top >= q.bottom - 1 && r.width > 300 && r.height > 150; })()`)
		a.await(`import(` + appModule("./terminal/term.js") + `).then((m) => { window.__termMod = m; return 'ok'; })`)
		typeInTerminal(a, "echo cols-$(tput cols)")
		waitTerm(a, "\ncols-")
		m := regexp.MustCompile(`(?m)^cols-(\d+)\s*$`).FindStringSubmatch(a.await(termBuffer))
		if m == nil {
			t.Fatalf("no cols line:\n%s", a.await(termBuffer))
		}
		if n, _ := strconv.Atoi(m[1]); n < 20 || n > 50 {
			t.Errorf("the shell has %d columns on a 390 px screen", n)
		}
		a.shot("terminal-phone")
		a.do(chromedp.EmulateViewport(1280, 800))
	})
	a.pe.check(t)
}

// BenchmarkTerminalEcho measures keystroke to echo through the terminal
// panel in Chromium, to a real sshd on loopback: each key is typed into
// xterm (as a key press would reach it) and timed in the page until the
// chunk written to the terminal holds its echo, one key at a time, 200
// keys per run at a bash prompt. Reports terminal_echo_p99_ms and p50_ms.
func BenchmarkTerminalEcho(b *testing.B) {
	c := newAgentChat(b)
	ctx := harness.Browser(b)
	harness.BrowserAdmin(b, ctx, c.base)
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		b.Helper()
		tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		if err := chromedp.Do(tctx, actions...); err != nil {
			b.Fatalf("%s: %v", what, err)
		}
	}
	wait := func(what, cond string) {
		b.Helper()
		tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		if _, err := chromedp.Run(tctx, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
			b.Fatalf("%s: %v", what, err)
		}
	}
	run("open the chat", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(c.base+"/#/chat/"+strconv.Itoa(c.id)))
	wait("the Terminal button", `!!document.querySelector('.term-toggle')`)
	run("open the panel", harness.Click(chromedp.CSS(".term-toggle")))
	wait("the terminal connects", `!!document.querySelector('.term-state.is-open')`)
	const keys = 200
	measure := `(async () => {
		const m = await import(` + appModule("./terminal/term.js") + `);
		const host = document.querySelector('.term-panel .term-host');
		const dec = new TextDecoder();
		const times = [];
		const letters = 'abcdefghijklmnopqrstuvwxyz';
		for (let i = 0; i < ` + strconv.Itoa(keys) + `; i++) {
			if (i % 40 === 0) {
				// A fresh, empty line: Ctrl-U, and wait for the prompt to settle.
				m.input(host, '\x15');
				await new Promise((r) => setTimeout(r, 100));
			}
			const ch = letters[i % letters.length];
			const t0 = performance.now();
			await new Promise((resolve, reject) => {
				const timer = setTimeout(() => { off(); reject(new Error('no echo of ' + ch)); }, 10000);
				const off = m.probe(host, (bytes) => {
					if (dec.decode(bytes).includes(ch)) { clearTimeout(timer); off(); resolve(); }
				});
				m.input(host, ch);
			});
			times.push(performance.now() - t0);
		}
		m.input(host, '\x15');
		times.sort((x, y) => x - y);
		const q = (p) => times[Math.min(times.length - 1, Math.ceil(p * times.length) - 1)];
		return JSON.stringify({ p50: q(0.5), p99: q(0.99) });
	})()`
	var p50s, p99s []float64
	b.ResetTimer()
	for range b.N {
		tctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		raw, err := chromedp.Run(tctx, chromedp.Evaluate[string](measure, chromedp.EvalAwaitPromise))
		cancel()
		if err != nil {
			b.Fatalf("measure: %v", err)
		}
		var p50, p99 float64
		if _, err := fmt.Sscanf(strings.NewReplacer(`{"p50":`, "", `,"p99":`, " ", "}", "").Replace(raw), "%g %g", &p50, &p99); err != nil {
			b.Fatalf("measure: %q: %v", raw, err)
		}
		p50s, p99s = append(p50s, p50), append(p99s, p99)
	}
	b.StopTimer()
	b.ReportMetric(median(p99s), "terminal_echo_p99_ms")
	b.ReportMetric(median(p50s), "p50_ms")
}
