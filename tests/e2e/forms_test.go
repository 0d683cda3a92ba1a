package e2e

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/tests/harness"
)

// unlabelledJS lists, as text, the form controls on screen that a screen
// reader would announce without a name, and the aria-describedby and
// aria-labelledby references that point at nothing. A control's name comes
// from aria-labelledby, aria-label, a <label> (for= or around it) or a
// title, and must have some text. Controls hidden from everyone (the
// password managers' username field is aria-hidden) are left out.
const unlabelledJS = `(() => {
	const name = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.type ? '[type=' + e.type + ']' : '');
	const text = (e) => (e ? (e.innerText || e.textContent || '').trim() : '');
	const bad = [];
	for (const e of document.querySelectorAll('input, select, textarea')) {
		if (e.type === 'hidden' || e.closest('[aria-hidden="true"], [hidden]')) continue;
		const ids = (a) => (e.getAttribute(a) || '').split(/\s+/).filter(Boolean);
		for (const a of ['aria-labelledby', 'aria-describedby']) {
			for (const id of ids(a)) if (!document.getElementById(id)) bad.push(name(e) + ' ' + a + ' names #' + id + ', which is not on the page');
		}
		const named = ids('aria-labelledby').some((id) => text(document.getElementById(id)))
			|| (e.getAttribute('aria-label') || '').trim() !== ''
			|| [...(e.labels || [])].some((l) => text(l))
			|| (e.getAttribute('title') || '').trim() !== '';
		if (!named) bad.push(name(e) + ' has no accessible name');
		if (e.getAttribute('aria-invalid') === 'true' && ids('aria-describedby').length === 0) bad.push(name(e) + ' is invalid and says not why');
	}
	return bad.join('\n');
})()`

// TestSettingsFormsLabelled opens every settings and administration page,
// with its forms, details and dialogs, at a desktop and a phone size: every
// form control on them has an accessible name, and every description it
// points at is there. Each page is photographed in both themes, so that a
// change to how forms are built can be compared by eye.
func TestSettingsFormsLabelled(t *testing.T) {
	llm := fakellm.New(t)
	for _, size := range []struct {
		name string
		w, h int64
	}{{"wide", 1280, 800}, {"phone", 390, 844}} {
		t.Run(size.name, func(t *testing.T) {
			var userID, groupID int
			u := newAdminUI(t, size.w, size.h, func(base string) {
				userID, groupID = seedHousehold(t, base, llm)
			})
			u.waitJS(`!!document.querySelector('#composer-input')`)
			pages := []struct {
				name, hash, ready, open string
			}{
				{"connections", "connections", `document.querySelectorAll('.conn-row').length === 1`, ""},
				{"connection-form", "connections/new", `!!document.querySelector('#conn-new-url')`, ""},
				{"connection-edit", "connections", `document.querySelectorAll('.conn-row').length === 1`, `.conn-row button`},
				{"models", "models", `document.querySelectorAll('.model-row').length > 0`, `.model-row .model-row-main`},
				{"users", "users", `document.querySelectorAll('#users-list > li').length === 2`, ""},
				{"user-create", "users/new", `!!document.querySelector('.models-detail-pane form')`, ""},
				{"user", fmt.Sprintf("users/%d", userID), `!!document.querySelector('#user-detail')`, ""},
				{"user-reset", fmt.Sprintf("users/%d", userID), `!!document.querySelector('#user-detail')`, `//button[normalize-space(.)="Reset password…"]`},
				{"groups", "groups", `document.querySelectorAll('.model-list > li').length === 1`, ""},
				{"group-create", "groups/new", `!!document.querySelector('.models-detail-pane form')`, ""},
				{"group", fmt.Sprintf("groups/%d", groupID), `!!document.querySelector('.models-detail-pane form')`, ""},
				{"permissions", "permissions", `!!document.querySelector('#main input[type=checkbox]')`, ""},
				{"instance", "instance", `!!document.querySelector('#instance-form')`, ""},
				{"prompts", "prompts", `!!document.querySelector('#prompt-preview')`, ""},
				{"account", "account", `!!document.querySelector('#account-password')`, ""},
				{"voice", "voice", `!!document.querySelector('#main .card')`, ""},
				{"keyboard", "keyboard", `!!document.querySelector('#keys-table')`, ""},
				{"about", "about", `!!document.querySelector('#info-rows')`, ""},
			}
			for _, p := range pages {
				u.step(t, p.name, func(t *testing.T, u *adminUI) {
					u.js(fmt.Sprintf(`location.hash = %q, true`, "#/settings/"+p.hash))
					u.waitJS(p.ready)
					u.waitJS(`!document.querySelector('#main .loading-line')`)
					switch {
					case p.open == "":
					case p.open[0] == '/':
						u.clickXPath(p.open)
						u.waitJS(`!!document.querySelector('dialog[open]')`)
					default:
						u.click(p.open)
						u.waitJS(`!!document.querySelector('.model-detail, .conn-form')`)
					}
					u.waitJS(`!document.querySelector('#main .loading-line')`)
					if bad := u.str(unlabelledJS); bad != "" {
						t.Errorf("%s:\n%s", p.name, bad)
					}
					// Still pictures: a theme's colours fade in, and a
					// picture taken during the fade would differ from the
					// next run's for no reason.
					u.js(`(() => { const s = new CSSStyleSheet(); s.replaceSync('*, *::before, *::after { transition: none !important; animation: none !important; caret-color: transparent !important; }'); document.adoptedStyleSheets = [s]; return true; })()`)
					for _, theme := range []string{"moria", "shire"} {
						u.js(fmt.Sprintf(`document.documentElement.dataset.theme = %q, true`, theme))
						u.js(`window.scrollTo(0, 0), true`)
						u.shot(theme)
					}
					if p.open != "" && p.open[0] == '/' {
						u.do(chromedp.KeyEvent("\x1b"))
						u.waitJS(`!document.querySelector('dialog[open]')`)
					}
				})
			}
			u.pe.check(t)
		})
	}
}

// TestAuthFormsLabelled does the same for the screens before the app: the
// first account's sign-up, the sign-in form, and the sign-up form a server
// with open sign-up offers.
func TestAuthFormsLabelled(t *testing.T) {
	harness.Require(t, "chromium")
	bin := harness.Build(t, "", "CGO_ENABLED=0")
	_, base := harness.ServeBare(t, bin, t.TempDir())
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			p := openAuthPage(t, "auth", vp.w, vp.h)
			check := func(form, shot string) {
				t.Helper()
				p.waitJS(fmt.Sprintf(`!!document.querySelector(%q)`, form))
				if bad := p.str(unlabelledJS); bad != "" {
					t.Errorf("%s:\n%s", shot, bad)
				}
				p.shot(shot)
			}
			if vp.name == "desktop" {
				// The first account: only this browser ever sees this form.
				p.do(chromedp.Navigate(base + "/"))
				check("#signup-form", "first-signup")
				c := harness.SignUp(t, base, harness.AdminUser, harness.AdminPassword)
				harness.APIAs(t, c, base, "Admin.SetSettings", nil, map[string]any{"signUpMode": "open"})
			}
			p.do(chromedp.Navigate(base + "/"))
			check("#login-form", "signin")
			p.click("#auth-to-signup")
			check("#signup-form", "signup")
			p.pe.check(t)
		})
	}
}
