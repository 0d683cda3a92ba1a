package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/tests/harness"
)

// TestStylesMatchEarlierStylesheets compares, on every screen, the computed
// style of every element (and its ::before, ::after, ::placeholder and
// ::backdrop) under the stylesheets the server serves now with those of an
// earlier frontend: for a change to the CSS that must change nothing a
// user sees, such as splitting or reordering files. It runs only when
// LEMBAS_CSS_BEFORE names the earlier frontend directory, e.g.
//
//	git archive main frontend | tar -x -C /tmp/before
//	LEMBAS_CSS_BEFORE=/tmp/before/frontend go test -run TestStylesMatchEarlier ./tests/e2e/
//
// On each screen the page's stylesheet links that differ from the earlier
// page's (index.html, or 404.html for the 404 page) are replaced in place
// by <style> elements holding the earlier files' text (CSP bypassed), in
// the earlier order; links both lists share at the start and end (tokens,
// KaTeX, the highlighter) stay. Transitions are finished and animations
// paused at their start before each snapshot. Both themes, a wide window
// and a phone.
func TestStylesMatchEarlierStylesheets(t *testing.T) {
	before := os.Getenv("LEMBAS_CSS_BEFORE")
	if before == "" {
		t.Skip("LEMBAS_CSS_BEFORE is not set")
	}
	harness.Require(t, "chromium")
	bin := harness.Build(t, "", "CGO_ENABLED=0")
	for _, vp := range []struct {
		name string
		w, h int64
	}{{"wide", 1280, 800}, {"phone", 390, 844}} {
		t.Run(vp.name, func(t *testing.T) {
			c := &cssCheck{before: before, phone: vp.w < 720}
			llm := fakellm.New(t)
			llm.SetDefault(noAutoTitles())
			var userID, groupID int
			_, base := harness.Serve(t, bin, t.TempDir())
			userID, groupID = seedHousehold(t, base, nil)
			harness.API(t, base, "Folders.Create", nil, "Quests")

			ctx := harness.Browser(t)
			harness.BrowserAdmin(t, ctx, base)
			u := &adminUI{tab: newTab(t, ctx, "css-"+vp.name), base: base, stopped: new(bool)}
			c.open(u, vp.w, vp.h, base+"/")

			// No connection yet: the first-run card.
			u.waitJS(`!!document.querySelector('.firstrun') && !document.querySelector('.firstrun .loading-line')`)
			c.compare(t, u, "firstrun", "index.html")

			// A chat with a reply: reasoning, code, inline and display math.
			harness.API(t, base, "Connections.Create", nil, map[string]any{"name": "Fake", "baseUrl": llm.URL()})
			llm.Enqueue(fakellm.NewStream().Reasoning("The user asks for code.").
				Content("Here is **code**:\n\n", "```go\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n```\n\n",
					"and math $x^2$ and\n\n$$\\int_0^1 x\\,dx$$\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n> quoted\n\n- one\n- two\n").Reply())
			u.do(chromedp.Reload())
			u.waitJS(`!!document.querySelector('#composer-input') && !document.querySelector('.firstrun')`)
			u.send("Show me code and maths")
			u.waitJS(`(() => { const m = [...document.querySelectorAll('.msg-assistant')].pop(); return !!m && !m.classList.contains('is-streaming') && !!m.querySelector('.katex'); })()`)
			u.js(`document.activeElement.blur(), true`)
			c.compare(t, u, "chat", "index.html")

			u.click(`button[aria-label="Chat settings"]`)
			u.waitJS(`!!document.querySelector('.settings-popover')`)
			c.compare(t, u, "chat-settings", "index.html")
			u.do(chromedp.KeyEvent(kb.Escape))
			u.waitJS(`!document.querySelector('.settings-popover')`)

			u.click(`.picker-trigger`)
			u.waitJS(`!!document.querySelector('.picker-popover')`)
			c.compare(t, u, "model-picker", "index.html")
			u.do(chromedp.KeyEvent(kb.Escape))
			u.waitJS(`!document.querySelector('.picker-popover')`)

			if c.phone {
				u.click(`#sidebar-toggle`)
				u.waitJS(`!!document.querySelector('.shell.is-sidebar-open')`)
			}
			u.click(`.chat-row .row-menu`)
			u.waitJS(`!!document.querySelector('.menu')`)
			c.compare(t, u, "sidebar-menu", "index.html")
			u.do(chromedp.KeyEvent(kb.Escape))
			u.waitJS(`!document.querySelector('.menu')`)
			if c.phone && u.bool(`!!document.querySelector('.shell.is-sidebar-open')`) {
				u.click(`#sidebar-toggle`)
			}
			u.waitJS(`!document.querySelector('.shell.is-sidebar-open')`)

			showToasts(u.tab)
			c.compare(t, u, "toasts", "index.html")
			u.js(`document.querySelectorAll('.toast button').forEach((b) => b.click()), true`)
			u.waitJS(`document.querySelectorAll('.toast').length === 0`)

			u.do(chromedp.KeyEvent("?"))
			u.waitJS(`document.querySelector('#shortcuts-dialog')?.open === true`)
			c.compare(t, u, "shortcuts", "index.html")
			u.do(chromedp.KeyEvent(kb.Escape))
			u.waitJS(`!document.querySelector('#shortcuts-dialog')`)

			// Quick chat and the folded sidebar are desktop states; their
			// classes are set here by hand.
			u.js(`document.querySelector('.shell').classList.add('is-quick'), true`)
			c.compare(t, u, "quick-class", "index.html")
			u.js(`document.querySelector('.shell').classList.remove('is-quick'), document.querySelector('.shell').classList.add('is-sidebar-hidden'), true`)
			c.compare(t, u, "sidebar-hidden-class", "index.html")
			u.js(`document.querySelector('.shell').classList.remove('is-sidebar-hidden'), true`)

			pages := []struct{ name, hash, ready string }{
				{"connections", "settings/connections", `document.querySelectorAll('.conn-row').length === 1`},
				{"connection-form", "settings/connections/new", `!!document.querySelector('#conn-new-url')`},
				{"models", "settings/models", `document.querySelectorAll('.model-row').length > 0`},
				{"users", "settings/users", `document.querySelectorAll('#users-list > li').length === 2`},
				{"user-create", "settings/users/new", `!!document.querySelector('.models-detail-pane form')`},
				{"user", fmt.Sprintf("settings/users/%d", userID), `!!document.querySelector('.models-detail-pane .card')`},
				{"groups", "settings/groups", `document.querySelectorAll('.model-list > li').length === 1`},
				{"group-create", "settings/groups/new", `!!document.querySelector('.models-detail-pane form')`},
				{"group", fmt.Sprintf("settings/groups/%d", groupID), `!!document.querySelector('.models-detail-pane form')`},
				{"permissions", "settings/permissions", `!!document.querySelector('#main input[type=checkbox]')`},
				{"instance", "settings/instance", `!!document.querySelector('#main form, #main .card')`},
				{"prompts", "settings/prompts", `!!document.querySelector('#prompt-preview')`},
				{"account", "settings/account", `!!document.querySelector('#main .card')`},
				{"voice", "settings/voice", `!!document.querySelector('#main .card')`},
				{"keyboard", "settings/keyboard", `!!document.querySelector('#keys-table')`},
				{"about", "settings/about", `!!document.querySelector('#info-rows')`},
			}
			for _, p := range pages {
				u.js(fmt.Sprintf(`location.hash = %q, true`, "#/"+p.hash))
				u.waitJS(p.ready)
				u.waitJS(`!document.querySelector('#main .loading-line')`)
				c.compare(t, u, p.name, "index.html")
				if p.name == "models" {
					u.click(`.model-row .model-row-main`)
					u.waitJS(`!!document.querySelector('.model-detail')`)
					u.waitJS(`!document.querySelector('#main .loading-line')`)
					c.compare(t, u, "model-detail", "index.html")
				}
			}

			var chats []struct{ ID int }
			harness.API(t, base, "Chats.List", &chats)
			for _, ch := range chats {
				harness.API(t, base, "Chats.Trash", nil, ch.ID)
			}
			u.js(`location.hash = '#/trash', true`)
			u.waitJS(`document.querySelectorAll('.trash-row').length === 1 && !document.querySelector('#main .loading-line')`)
			c.compare(t, u, "trash", "index.html")

			// Signed out: the sign-in screen.
			out := &adminUI{tab: newTab(t, harness.Browser(t), "css-out-"+vp.name), base: base, stopped: new(bool)}
			c.open(out, vp.w, vp.h, base+"/")
			out.waitJS(`!!document.querySelector('#login-form')`)
			c.compare(t, out, "sign-in", "index.html")
			c.open(out, vp.w, vp.h, base+"/no/such/page")
			out.waitJS(`!!document.querySelector('.lost')`)
			c.compare(t, out, "404", "404.html")

			// A fresh server: the first administrator's sign-up.
			_, bare := harness.ServeBare(t, bin, t.TempDir())
			first := &adminUI{tab: newTab(t, harness.Browser(t), "css-first-"+vp.name), base: bare, stopped: new(bool)}
			c.open(first, vp.w, vp.h, bare+"/")
			first.waitJS(`!!document.querySelector('.auth form')`)
			c.compare(t, first, "first-sign-up", "index.html")
			t.Logf("%d screens × 2 themes compared, %d element styles each way", c.screens, c.styles)
		})
	}
}

type cssCheck struct {
	before  string
	phone   bool
	screens int
	styles  int
}

// open navigates u to url at w×h with the page's CSP bypassed, so that the
// earlier stylesheets can go in as <style> elements.
func (c *cssCheck) open(u *adminUI, w, h int64, url string) {
	u.t.Helper()
	if _, err := chromedp.Call(u.ctx, page.SetBypassCSP, page.SetBypassCSPParams{Enabled: true}); err != nil {
		u.t.Fatalf("bypass CSP: %v", err)
	}
	u.do(chromedp.EmulateViewport(w, h), chromedp.Navigate(url))
	u.js(cssCheckJS)
}

var stylesheetLink = regexp.MustCompile(`<link rel="stylesheet" href="([^"]+)">`)

// earlier returns the stylesheet links of the earlier page and the text of
// each that the earlier frontend directory holds.
func (c *cssCheck) earlier(t *testing.T, pageFile string) (hrefs []string, texts map[string]string) {
	b, err := os.ReadFile(filepath.Join(c.before, pageFile))
	if err != nil {
		t.Fatal(err)
	}
	texts = map[string]string{}
	for _, m := range stylesheetLink.FindAllStringSubmatch(string(b), -1) {
		hrefs = append(hrefs, m[1])
		if f, err := os.ReadFile(filepath.Join(c.before, strings.TrimPrefix(m[1], "/"))); err == nil {
			texts[m[1]] = string(f)
		}
	}
	if len(hrefs) == 0 {
		t.Fatalf("no stylesheet links in %s", pageFile)
	}
	return hrefs, texts
}

// compare snapshots the screen as served, under the earlier stylesheets,
// and as served again, in both themes, and fails on any difference.
func (c *cssCheck) compare(t *testing.T, u *adminUI, screen, pageFile string) {
	t.Helper()
	hrefs, texts := c.earlier(t, pageFile)
	arg, _ := json.Marshal(map[string]any{"hrefs": hrefs, "texts": texts})
	u.js(cssCheckJS)
	for _, theme := range []string{"moria", "shire"} {
		u.js(fmt.Sprintf(`document.documentElement.dataset.theme = %q, true`, theme))
		ctx, cancel := context.WithTimeout(u.ctx, 3*time.Minute)
		res, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`window.__cssCheck.run(%s)`, arg), chromedp.EvalAwaitPromise))
		cancel()
		if err != nil {
			t.Fatalf("%s (%s): the comparison did not finish: %v", screen, theme, err)
		}
		var r struct {
			Diffs []string
			Count int
			Error string
		}
		if err := json.Unmarshal([]byte(res), &r); err != nil {
			t.Fatalf("%s: %v (%s)", screen, err, res)
		}
		if r.Error != "" {
			t.Fatalf("%s (%s): %s", screen, theme, r.Error)
		}
		if r.Count == 0 {
			t.Fatalf("%s (%s): nothing compared", screen, theme)
		}
		for _, d := range r.Diffs {
			t.Errorf("%s (%s): %s", screen, theme, d)
		}
		c.styles += r.Count
		c.shot(t, u, screen+"-"+theme)
	}
	c.screens++
}

// shot saves what the viewport shows: a full-page screenshot resizes the
// page, which closes an open menu.
func (c *cssCheck) shot(t *testing.T, u *adminUI, name string) {
	ctx, cancel := context.WithTimeout(u.ctx, stepTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	f := filepath.Join(harness.ArtifactDir(t), strings.ReplaceAll(t.Name(), "/", "-")+"-"+u.name+"-"+name+".png")
	if err := os.WriteFile(f, png, 0o644); err != nil {
		t.Error(err)
	}
}

// cssCheckJS defines window.__cssCheck.run({hrefs, texts}): snapshot,
// swap the differing links for the earlier <style>s, snapshot, swap back,
// snapshot; it resolves to JSON {Diffs, Count, Error}.
const cssCheckJS = `window.__cssCheck = window.__cssCheck || {
	settle() {
		for (const a of document.getAnimations()) {
			if (a instanceof CSSTransition) a.finish(); else { a.pause(); a.currentTime = 0; }
		}
	},
	// snap returns one string per element and pseudo-element: its
	// computed properties in order (pseudo-elements only where drawn). Custom properties come from tokens.css
	// and are inherited, so only the root's are kept.
	snap() {
		this.settle();
		const els = [document.documentElement, document.body, ...document.body.querySelectorAll('*')];
		const names = [], rows = [];
		for (const e of els) {
			const name = e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
				(typeof e.className === 'string' && e.className.trim() ? '.' + e.className.trim().split(/\s+/).join('.') : '');
			const pseudos = ['', '::before', '::after'];
			if (e.matches('input, textarea')) pseudos.push('::placeholder');
			if (e.matches('dialog')) pseudos.push('::backdrop');
			const root = e === document.documentElement;
			for (const p of pseudos) {
				const s = getComputedStyle(e, p || null);
				// A ::before or ::after with no content is not drawn.
				if ((p === '::before' || p === '::after') && s.content === 'none') continue;
				const row = [];
				for (let i = 0; i < s.length; i++) {
					const k = s[i];
					if (!root && k.startsWith('--')) continue;
					row.push(k + ': ' + s.getPropertyValue(k));
				}
				names.push(name + p);
				rows.push(row.join('\n'));
			}
		}
		return { names, rows };
	},
	diff(a, b, label) {
		const out = [];
		if (a.names.join('|') !== b.names.join('|')) return ['the page changed between snapshots (' + label + ')'];
		for (let i = 0; i < a.rows.length && out.length < 40; i++) {
			if (a.rows[i] === b.rows[i]) continue;
			const x = new Map(a.rows[i].split('\n').map((l) => [l.slice(0, l.indexOf(':')), l]));
			const y = new Map(b.rows[i].split('\n').map((l) => [l.slice(0, l.indexOf(':')), l]));
			for (const k of new Set([...x.keys(), ...y.keys()])) {
				if (x.get(k) !== y.get(k)) out.push(label + ': ' + a.names[i] + ' ' + JSON.stringify(y.get(k) || k + ' unset') + ' but now ' + JSON.stringify(x.get(k) || k + ' unset'));
			}
		}
		return out;
	},
	loaded(link) {
		return new Promise((ok, no) => {
			if (link.sheet) { ok(); return; }
			link.addEventListener('load', ok, { once: true });
			link.addEventListener('error', () => no(new Error('could not load ' + link.href)), { once: true });
		});
	},
	async run({ hrefs, texts }) {
		try {
			const links = [...document.querySelectorAll('link[rel=stylesheet]')];
			const now = links.map((l) => l.getAttribute('href'));
			let pre = 0;
			while (pre < now.length && pre < hrefs.length && now[pre] === hrefs[pre]) pre++;
			let suf = 0;
			while (suf < now.length - pre && suf < hrefs.length - pre && now[now.length - 1 - suf] === hrefs[hrefs.length - 1 - suf]) suf++;
			const mine = links.slice(pre, links.length - suf);
			const theirs = hrefs.slice(pre, hrefs.length - suf);
			if (mine.length === 0) return JSON.stringify({ Error: 'the stylesheet lists do not differ' });
			for (const h of theirs) if (texts[h] === undefined) return JSON.stringify({ Error: 'the earlier frontend has no ' + h });
			const a = this.snap();
			const anchor = mine[0];
			const styles = theirs.map((h) => { const s = document.createElement('style'); s.textContent = texts[h]; anchor.before(s); return s; });
			mine.forEach((l) => l.remove());
			const b = this.snap();
			// Back: the links go in again under the earlier styles, which
			// leave only once the links have loaded.
			const back = mine.map((l) => { const n = l.cloneNode(); styles[0].before(n); return n; });
			await Promise.all(back.map((n) => this.loaded(n)));
			styles.forEach((s) => s.remove());
			const c = this.snap();
			return JSON.stringify({ Diffs: [...this.diff(a, b, 'earlier'), ...this.diff(a, c, 'restored')], Count: a.rows.length });
		} catch (e) {
			return JSON.stringify({ Error: String(e && e.stack || e) });
		}
	},
}, true`
