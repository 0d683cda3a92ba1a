package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/llembas/lembas/backend/fakellm"
)

// Layout: what a person sees on a phone and with the keyboard, the way
// someone new to the app found it wanting.

// overflowJS lists, as text, the elements of the page that stick out of
// the viewport or out of the card they are in. The settings tab strip
// scrolls sideways on purpose and is left out; so is the sidebar, which a
// phone keeps off screen until it is opened. It also lists stray text: a
// "0" or "NaN" a template rendered for a falsy number (`${n && …}`).
const overflowJS = `(() => {
	const W = document.documentElement.clientWidth;
	const name = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
		(typeof e.className === 'string' && e.className ? '.' + e.className.trim().split(/\s+/).join('.') : '');
	const bad = [];
	if (document.documentElement.scrollWidth > W + 1) bad.push('page scrolls sideways: ' + document.documentElement.scrollWidth + ' > ' + W);
	for (const e of document.querySelectorAll('#main *, .topbar *, .toasts *')) {
		if (e.closest('.tabs, .visually-hidden')) continue;
		const r = e.getBoundingClientRect();
		if (r.width === 0 || r.height === 0) continue;
		if (r.right > W + 1 || r.left < -1) { bad.push(name(e) + ' spans ' + Math.round(r.left) + '–' + Math.round(r.right) + ' of ' + W); continue; }
		const card = e.parentElement && e.parentElement.closest('.card');
		if (card) {
			const c = card.getBoundingClientRect();
			if (r.right > c.right + 1 || r.left < c.left - 1) bad.push(name(e) + ' spans ' + Math.round(r.left) + '–' + Math.round(r.right) + ', outside its card ' + Math.round(c.left) + '–' + Math.round(c.right));
		}
	}
	const walk = document.createTreeWalker(document.querySelector('#main'), NodeFilter.SHOW_TEXT);
	for (let n = walk.nextNode(); n; n = walk.nextNode()) {
		const s = n.nodeValue.trim();
		if ((s === '0' || s === 'NaN') && n.parentElement.children.length > 0) bad.push('stray "' + s + '" in ' + name(n.parentElement));
	}
	return bad.slice(0, 20).join('\n');
})()`

// TestLayoutPhoneSettings opens every settings page an administrator has,
// with its forms and details, at 390×844 in both themes: nothing sticks out
// of the screen or its card, the tab strip shows no scrollbar, and a
// connection's address gets the card's width.
func TestLayoutPhoneSettings(t *testing.T) {
	llm := fakellm.New(t)
	var userID, groupID int
	u := newAdminUI(t, 390, 844, func(base string) {
		userID, groupID = seedHousehold(t, base, llm)
	})
	u.waitJS(`!!document.querySelector('#composer-input')`)

	pages := []struct {
		name, hash, ready string
	}{
		{"connections", "connections", `document.querySelectorAll('.conn-row').length === 1`},
		{"connection-form", "connections/new", `!!document.querySelector('#conn-new-url')`},
		{"models", "models", `document.querySelectorAll('.model-row').length > 0`},
		{"users", "users", `document.querySelectorAll('#users-list > li').length === 2`},
		{"user-create", "users/new", `!!document.querySelector('.models-detail-pane form')`},
		{"user", fmt.Sprintf("users/%d", userID), `!!document.querySelector('.models-detail-pane .card')`},
		{"groups", "groups", `document.querySelectorAll('.model-list > li').length === 1`},
		{"group-create", "groups/new", `!!document.querySelector('.models-detail-pane form')`},
		{"group", fmt.Sprintf("groups/%d", groupID), `!!document.querySelector('.models-detail-pane form')`},
		{"permissions", "permissions", `!!document.querySelector('#main input[type=checkbox]')`},
		{"instance", "instance", `!!document.querySelector('#main form, #main .card') && !document.querySelector('#main .loading-line')`},
		{"prompts", "prompts", `!!document.querySelector('#prompt-preview')`},
		{"tools", "tools", `!!document.querySelector('#tools-form')`},
		{"web", "web", `!!document.querySelector('#web-settings')`},
		{"custom-tools", "custom-tools", `!!document.querySelector('#main .section-title')`},
		{"custom-tool-create", "custom-tools/new", `!!document.querySelector('#custom-form')`},
		{"mcp", "mcp", `!!document.querySelector('#mcp-create')`},
		{"mcp-create", "mcp/new", `!!document.querySelector('#mcp-form')`},
		{"account", "account", `!!document.querySelector('#main .card') && !document.querySelector('#main .loading-line')`},
		{"voice", "voice", `!!document.querySelector('#main .card') && !document.querySelector('#main .loading-line')`},
		{"keyboard", "keyboard", `!!document.querySelector('#keys-table')`},
		{"about", "about", `!!document.querySelector('#info-rows')`},
	}
	for _, p := range pages {
		u.step(t, p.name, func(t *testing.T, u *adminUI) {
			u.js(fmt.Sprintf(`location.hash = %q, true`, "#/settings/"+p.hash))
			u.waitJS(p.ready)
			u.waitJS(`!document.querySelector('#main .loading-line')`)
			if p.name == "models" {
				// The details of one model, as a phone shows them.
				u.click(`.model-row .model-row-main`)
				u.waitJS(`!!document.querySelector('.model-detail')`)
			}
			for _, theme := range []string{"moria", "shire"} {
				u.js(fmt.Sprintf(`document.documentElement.dataset.theme = %q, true`, theme))
				u.js(`window.scrollTo(0, 0), true`)
				if bad := u.str(overflowJS); bad != "" {
					t.Errorf("%s (%s):\n%s", p.name, theme, bad)
				}
				u.shot(theme)
			}
			// The tab strip scrolls sideways without a scrollbar under
			// the tabs, which read as a second underline. Headless
			// Chromium draws none anyway, so the style is checked too.
			if sb := u.js(`(() => { const n = document.querySelector('.tabs'); const s = getComputedStyle(n);
				return [n.offsetHeight - n.clientHeight - parseFloat(s.borderTopWidth) - parseFloat(s.borderBottomWidth), s.scrollbarWidth, n.scrollWidth > n.clientWidth]; })()`).([]any); sb[0] != float64(0) || sb[1] != "none" || sb[2] != true {
				t.Errorf("the settings tabs: scrollbar %vpx high, scrollbar-width %v, scroll sideways %v; want 0, none, true", sb...)
			}
		})
	}

	u.step(t, "shortcuts help", func(t *testing.T, u *adminUI) {
		u.js(`document.activeElement.blur(), true`)
		u.do(chromedp.KeyEvent("?"))
		u.waitJS(`document.querySelector('#shortcuts-dialog')?.open === true`)
		if bad := u.str(`(() => { const d = document.querySelector('#shortcuts-dialog'), r = d.getBoundingClientRect();
			return [...d.querySelectorAll('*')].filter((e) => { const x = e.getBoundingClientRect(); return x.width > 0 && (x.right > r.right + 1 || x.left < r.left - 1); })
				.map((e) => e.tagName + ' ' + Math.round(e.getBoundingClientRect().right)).join(', ') +
				(r.left < 0 || r.right > document.documentElement.clientWidth ? ' dialog ' + r.left + '–' + r.right : ''); })()`); bad != "" {
			t.Errorf("the help dialog on a phone: %s", bad)
		}
		u.shot("help")
		u.do(chromedp.KeyEvent(kb.Escape))
		u.waitJS(`!document.querySelector('#shortcuts-dialog')`)
	})

	u.step(t, "a connection's address gets the card's width", func(t *testing.T, u *adminUI) {
		u.js(`location.hash = '#/settings/connections', true`)
		u.waitJS(`document.querySelectorAll('.conn-row').length === 1`)
		var g struct{ URL, Row float64 }
		raw := u.str(`JSON.stringify({URL: document.querySelector('.conn-url').getBoundingClientRect().width,
			Row: document.querySelector('.conn-main').getBoundingClientRect().width})`)
		if err := json.Unmarshal([]byte(raw), &g); err != nil {
			t.Fatal(err)
		}
		if g.URL < 0.9*g.Row {
			t.Errorf("the address is %.0fpx wide in a %.0fpx card", g.URL, g.Row)
		}
		if strings.Count(u.str(`document.querySelector('.conn-url').innerText`), "\n") > 0 {
			t.Errorf("the address wraps: %q", u.str(`document.querySelector('.conn-url').innerText`))
		}
	})
	u.pe.check(t)
}

// coveredJS lists the controls that a toast covers, whether it takes their
// clicks (document.elementFromPoint at their centre) or only hides them:
// the buttons, links and fields on screen that stay put, so not those of
// what scrolls under a toast (the transcript, the sidebar's chats, a
// settings page), nor the composer a phone's open sidebar lies over.
const coveredJS = `(() => {
	const toasts = [...document.querySelectorAll('.toast')].map((t) => t.getBoundingClientRect());
	if (toasts.length === 0) return 'no toast on screen';
	const name = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.getAttribute('aria-label') ? '[' + e.getAttribute('aria-label') + ']' : '') +
		(typeof e.className === 'string' && e.className ? '.' + e.className.trim().split(/\s+/).join('.') : '');
	const bad = [];
	const controls = document.querySelectorAll('.shell button, .shell a[href], .shell input:not([type=file]), .shell textarea, .shell select');
	for (const e of controls) {
		if (e.closest('.toasts, .chat-scroll, .sidebar-scroll, #main .page, .visually-hidden')) continue;
		if (e.closest('#main') && document.querySelector('.shell.is-sidebar-open')) continue;
		const r = e.getBoundingClientRect();
		if (r.width === 0 || r.height === 0 || r.right <= 0 || r.left >= innerWidth || r.bottom <= 0 || r.top >= innerHeight) continue;
		const x = r.left + r.width / 2, y = r.top + r.height / 2;
		const hit = document.elementFromPoint(x, y);
		if (hit && hit.closest('.toasts')) { bad.push(name(e) + ' takes no clicks: ' + name(hit) + ' is over it'); continue; }
		if (toasts.some((t) => t.left < r.right && t.right > r.left && t.top < r.bottom && t.bottom > r.top)) bad.push(name(e) + ' is hidden under a toast');
	}
	return bad.join('\n');
})()`

// showToasts shows three toasts that stay until dismissed, one of them long
// and one with a button: the most room toasts take.
func showToasts(p *tab) {
	p.t.Helper()
	p.await(`import(` + appModule("core/ui.js") + `).then((ui) => {
		ui.toast('Chat deleted', {action: {label: 'Undo', run: () => {}}, timeout: 0});
		ui.toast('Could not save the image: the server refused it because it is larger than the limit an administrator set for images.', {error: true, timeout: 0});
		ui.toast('Image saved.', {timeout: 0});
		return 'shown';
	})`)
	p.waitJS(`document.querySelectorAll('.toast').length === 3`)
}

// TestLayoutToastsCoverNoControl: with toasts showing, the composer's
// buttons, the account chip, the top bar and the settings tabs are neither
// hidden nor unclickable, on a wide window and on a phone.
func TestLayoutToastsCoverNoControl(t *testing.T) {
	a := serveChatApp(t)
	a.open(t, "")
	// A chat with a reply: the transcript, its header and the sidebar row.
	a.send("Where is the Prancing Pony?")
	a.waitReplyIdle()

	check := func(t *testing.T, where string, mustSee ...string) {
		t.Helper()
		a.t = t
		showToasts(a.tab)
		// The toasts settle above the composer within a frame or two.
		if !a.within(5*time.Second, coveredJS+` === ''`) {
			t.Errorf("%s: toasts cover controls:\n%s", where, a.str(coveredJS))
		}
		// The two the toasts used to cover, by name, so that the check
		// above cannot pass by not finding them.
		for _, sel := range mustSee {
			if !a.bool(`(() => { const e = document.querySelector('` + sel + `'); if (!e) return false; const r = e.getBoundingClientRect();
					return e.contains(document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2)); })()`) {
				t.Errorf("%s: %s is not the element at its centre", where, sel)
			}
		}
		a.shot(where)
		a.js(`[...document.querySelectorAll('.toast button[aria-label=Dismiss]')].forEach((b) => b.click()), true`)
		a.waitJS(`document.querySelectorAll('.toast').length === 0`)
	}

	t.Run("wide window", func(t *testing.T) {
		check(t, "chat", "#composer-attach", ".account-chip")
		a.do(chromedp.Navigate(a.base + "/#/settings/account"))
		a.waitJS(`!!document.querySelector('#main .card') && !document.querySelector('#main .loading-line')`)
		check(t, "settings", ".account-chip")
	})
	t.Run("phone", func(t *testing.T) {
		a.t = t
		a.do(chromedp.EmulateViewport(390, 844), chromedp.Navigate(a.base+"/#/"))
		a.waitJS(`!!document.querySelector('#composer-input')`)
		check(t, "phone-new-chat", "#composer-attach", "#sidebar-toggle")
		a.click(`#sidebar-toggle`)
		a.waitJS(`(() => { const r = document.querySelector('#sidebar').getBoundingClientRect(); return r.left >= -1 && r.right > 100; })()`)
		check(t, "phone-sidebar", ".account-chip")
	})
	a.t = t
	a.pe.check(t)
}

// focusRingJS describes the focus indicator of the focused element as JSON:
// the outline's style, width and contrast with the page, and the strongest
// contrast of a box-shadow ring with the element's own fill.
const focusRingJS = `(() => {
	const rgb = (s) => (s.match(/rgba?\(([^)]+)\)/) || [null, '0,0,0'])[1].split(',').slice(0, 3).map(Number);
	const lum = (c) => { const [r, g, b] = c.map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
	const contrast = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
	const e = document.activeElement, s = getComputedStyle(e);
	const page = rgb(getComputedStyle(document.body).backgroundColor), fill = rgb(s.backgroundColor);
	const shadows = s.boxShadow === 'none' ? [] : s.boxShadow.split(/,(?![^(]*\))/).map((x) => rgb(x));
	return JSON.stringify({
		Focused: e.matches(':focus-visible'), Style: s.outlineStyle, Width: parseFloat(s.outlineWidth),
		OutlineOnPage: contrast(rgb(s.outlineColor), page), OutlineOnFill: contrast(rgb(s.outlineColor), fill),
		ShadowOnFill: Math.max(0, ...shadows.map((c) => contrast(c, fill))),
	});
})()`

// TestLayoutKeyboard: the first Tab on a phone reaches "Skip to message
// box", which moves to the composer; a focused primary button shows its
// focus plainly in both themes.
func TestLayoutKeyboard(t *testing.T) {
	a := serveChatApp(t)
	a.open(t, "")

	t.Run("skip link", func(t *testing.T) {
		a.t = t
		// A phone does not put the focus in the message box by itself.
		a.do(chromedp.EmulateViewport(390, 844), chromedp.Navigate(a.base+"/#/"), chromedp.Reload())
		a.waitJS(`!!document.querySelector('#composer-input')`)
		if a.bool(`document.activeElement !== document.body`) {
			t.Fatalf("after loading, the focus is on %s", a.str(`document.activeElement.outerHTML.slice(0, 80)`))
		}
		a.keys(kb.Tab)
		a.waitJS(`document.activeElement?.classList.contains('skip-link')`)
		if s := a.str(`document.activeElement.innerText.trim()`); s != "Skip to message box" {
			t.Errorf("the first Tab reaches %q", s)
		}
		// Shown on screen, on top, once it has the focus.
		a.waitJS(`(() => { const e = document.activeElement, r = e.getBoundingClientRect();
			return r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth && r.width > 20 &&
				document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2) === e; })()`)
		a.shot("skip-link")
		a.keys(kb.Enter)
		a.waitJS(`document.activeElement?.id === 'composer-input'`)
		a.keys("Hello")
		a.waitJS(`document.querySelector('#composer-input').value === 'Hello'`)
	})

	t.Run("primary button focus ring", func(t *testing.T) {
		a.t = t
		// No transitions: a theme switched under the focused button must
		// be read at its end, not halfway.
		if _, err := chromedp.Call(a.ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-reduced-motion", Value: "reduce"}}}); err != nil {
			t.Fatal(err)
		}
		a.do(chromedp.EmulateViewport(1280, 800), chromedp.Navigate(a.base+"/#/settings/connections"))
		a.waitJS(`[...document.querySelectorAll('#main .btn-primary')].some((b) => b.innerText.includes('Add connection'))`)
		a.js(`document.activeElement.blur(), document.querySelector('.main .page-title').focus(), true`)
		for i := 0; i < 80 && !a.bool(`document.activeElement?.matches('#main .btn-primary')`); i++ {
			a.keys(kb.Tab)
		}
		if !a.bool(`document.activeElement?.matches('#main .btn-primary')`) {
			t.Fatal("Tab never reached the primary button")
		}
		for _, theme := range []string{"shire", "moria"} {
			a.js(fmt.Sprintf(`document.documentElement.dataset.theme = %q, true`, theme))
			var r struct {
				Focused                                           bool
				Style                                             string
				Width, OutlineOnPage, OutlineOnFill, ShadowOnFill float64
			}
			if err := json.Unmarshal([]byte(a.str(focusRingJS)), &r); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %+v", theme, r)
			if !r.Focused || r.Style != "solid" || r.Width < 2 {
				t.Errorf("%s: the focused button's outline: %+v", theme, r)
			}
			if r.OutlineOnPage < 3 {
				t.Errorf("%s: the ring contrasts %.2f:1 with the page, want 3:1", theme, r.OutlineOnPage)
			}
			// Next to the button's own fill, the ring or a line inside
			// it must stand out.
			if max(r.OutlineOnFill, r.ShadowOnFill) < 3 {
				t.Errorf("%s: the focus contrasts %.2f:1 (ring) and %.2f:1 (inner line) with the button's fill, want 3:1", theme, r.OutlineOnFill, r.ShadowOnFill)
			}
			a.shot("focus-" + theme)
		}
	})
	a.t = t
	a.pe.check(t)
}
