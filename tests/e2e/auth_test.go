package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/tests/harness"
)

// authPage is a tab on a server with accounts, signed in (or not) the way
// a person does it, through the forms.
type authPage struct {
	*tab
}

// openAuthPage opens a tab of w×h with no session. name tells its
// screenshots from those of the test's other tabs.
func openAuthPage(t *testing.T, name string, w, h int64) *authPage {
	t.Helper()
	p := &authPage{newTab(t, harness.Browser(t), name)}
	p.do(chromedp.EmulateViewport(w, h))
	return p
}

const (
	appShown   = `!!document.querySelector('#sidebar') && !document.querySelector('.auth')`
	loginShown = `!!document.querySelector('#login-form') && document.activeElement && document.activeElement.id === 'login-username'`
)

// signIn fills the sign-in form and submits it.
func (p *authPage) signIn(username, password string) {
	p.t.Helper()
	p.waitJS(`!!document.querySelector('#login-form')`)
	p.fill("#login-username", username)
	p.fill("#login-password", password)
	p.click("#login-form button[type=submit]")
}

var viewports = []struct {
	name string
	w, h int64
}{{"desktop", 1280, 860}, {"phone", 390, 844}}

// TestAuthFirstAdminInBrowser creates the first account of a fresh server
// through the page, signs out, fails with a wrong password, signs in, and
// returns to the screen that was asked for.
func TestAuthFirstAdminInBrowser(t *testing.T) {
	harness.Require(t, "chromium")
	bin := harness.Build(t, "", "CGO_ENABLED=0")
	const password = "a long walk to Mordor"
	for _, vp := range viewports {
		t.Run(vp.name, func(t *testing.T) {
			_, base := harness.ServeBare(t, bin, t.TempDir(), "LEMBAS_INSTANCE_NAME=Bag End")
			p := openAuthPage(t, "first-"+vp.name, vp.w, vp.h)
			p.do(chromedp.Navigate(base + "/"))

			p.waitJS(`!!document.querySelector('#signup-form')`)
			if h := p.str(`document.querySelector('#auth-title').innerText`); h != "Create the administrator account" {
				t.Errorf("sign-up heading %q", h)
			}
			if got := p.str(`document.querySelector('.auth-instance').innerText`); got != "Bag End" {
				t.Errorf("instance name shown %q", got)
			}
			if p.bool(`!!document.querySelector('#auth-insecure')`) {
				t.Error("the plain-HTTP warning shows on loopback")
			}
			if p.bool(`document.documentElement.scrollWidth > innerWidth + 1`) {
				t.Error("the sign-up page scrolls sideways")
			}
			p.shot("signup")

			// A password that differs from its repetition never leaves the page.
			p.fill("#signup-username", "bilbo")
			p.fill("#signup-display", "Bilbo Baggins")
			p.fill("#signup-password", password)
			p.fill("#signup-confirm", password+"!")
			p.click("#signup-form button[type=submit]")
			p.waitJS(`document.querySelector('#signup-error')?.innerText.includes('differ')`)
			p.fill("#signup-confirm", password)
			p.click("#signup-form button[type=submit]")
			p.waitJS(appShown)
			p.waitJS(`document.title.includes('LLeMbas') || document.title.includes('Bag End')`)

			// The account is an administrator: the admin tabs show.
			p.do(chromedp.Navigate(base + "/#/settings/account"))
			p.waitJS(`document.querySelector('#account-username')?.innerText === 'bilbo'`)
			tabs := p.str(`[...document.querySelectorAll('.tabs .tab')].map((a) => a.innerText).join(',')`)
			for _, want := range []string{"Connections", "Users", "Groups", "Permissions", "Instance", "Account", "About"} {
				if !strings.Contains(tabs, want) {
					t.Errorf("tabs %q lack %s", tabs, want)
				}
			}
			if !p.bool(`[...document.querySelectorAll('#account-profile .badge')].some((b) => b.innerText === 'Administrator')`) {
				t.Error("the first account is not shown as an administrator")
			}

			// Sign out: back to the sign-in form. The buttons show once the
			// list of sessions is in, so they no longer move when clicked.
			p.waitJS(`!!document.querySelector('#account-sessions .session-list') && !!document.querySelector('#account-signout')`)
			p.click("#account-signout")
			p.waitJS(loginShown)

			// A wrong password is refused with the reason, announced.
			p.signIn("bilbo", "not the password at all")
			p.waitJS(`document.querySelector('#login-error')?.innerText.includes('Wrong username or password')`)
			if role := p.str(`document.querySelector('#login-error').getAttribute('role')`); role != "alert" {
				t.Errorf("the error's role is %q, want alert", role)
			}
			if v := p.str(`document.querySelector('#login-password').value`); v != "" {
				t.Error("the refused password stays in the field")
			}
			p.shot("wrong-password")

			// Signing in from a deep link returns to it (the navigation
			// only changes the hash: the sign-in form stays).
			p.do(chromedp.Navigate(base + "/#/settings/about"))
			p.waitJS(`!!document.querySelector('#login-form') && location.hash === '#/settings/about'`)
			p.signIn("bilbo", password)
			p.waitJS(appShown)
			p.waitJS(`location.hash === '#/settings/about' && !!document.querySelector('#info-version')`)

			// Sign out everywhere ends this session too, after a confirmation.
			p.do(chromedp.Navigate(base + "/#/settings/account"))
			p.waitJS(`!!document.querySelector('#account-sessions .session-list') && !!document.querySelector('#account-signout-all')`)
			p.click("#account-signout-all")
			p.waitJS(`!!document.querySelector('dialog[open]')`)
			p.clickText("dialog", "Sign out everywhere")
			p.waitJS(`!!document.querySelector('#login-form')`)
			if n := p.str(`String(document.cookie.includes('lembas_session'))`); n != "false" {
				t.Error("the session cookie is readable by the page")
			}
			p.pe.check(t, "401 (Unauthorized)")
		})
	}
}

// TestAuthEachUserSeesOwnChats signs two people in, in two browsers, and
// checks that each sidebar lists only that person's chats.
func TestAuthEachUserSeesOwnChats(t *testing.T) {
	harness.Require(t, "chromium")
	llm := fakellm.New(t)
	llm.SetDefault(noAutoTitles())
	bin := harness.Build(t, "", "CGO_ENABLED=0")
	_, base := harness.Serve(t, bin, t.TempDir())
	admin := harness.Login(t, base, "admin", harness.AdminPassword)
	harness.APIAs(t, admin, base, "Connections.Create", nil, map[string]any{"name": "Fake", "baseUrl": llm.URL(), "enabled": true})
	harness.APIAs(t, admin, base, "Admin.CreateUser", nil, map[string]any{
		"username": "frodo", "displayName": "Frodo Baggins", "password": "the ring is mine, precious", "admin": false})
	frodo := harness.Login(t, base, "frodo", "the ring is mine, precious")

	send := func(c *http.Client, text string) {
		var models []struct{ ID int }
		harness.APIAs(t, c, base, "Models.Picker", &models)
		if len(models) == 0 {
			t.Fatal("no models for this user")
		}
		harness.APIAs(t, c, base, "Chats.Send", nil, map[string]any{"modelId": models[0].ID, "content": text})
	}
	send(admin, "Bilbo plans a party")
	send(frodo, "Frodo keeps a secret")

	pages := map[string]*authPage{}
	for _, who := range []struct{ user, pass, vp string }{
		{"admin", harness.AdminPassword, "desktop"}, {"frodo", "the ring is mine, precious", "phone"},
	} {
		w, h := int64(1280), int64(860)
		if who.vp == "phone" {
			w, h = 390, 844
		}
		p := openAuthPage(t, "chats-"+who.user, w, h)
		harness.BrowserLogin(t, p.ctx, base, who.user, who.pass)
		p.do(chromedp.Navigate(base + "/"))
		p.waitJS(appShown)
		pages[who.user] = p
	}
	titles := `[...document.querySelectorAll('#sidebar .chat-link-title')].map((e) => e.textContent).join('|')`
	pages["admin"].waitJS(`document.querySelectorAll('#sidebar .chat-link-title').length > 0`)
	pages["frodo"].waitJS(`document.querySelectorAll('#sidebar .chat-link-title').length > 0`)
	if got := pages["admin"].str(titles); !strings.Contains(got, "Bilbo plans") || strings.Contains(got, "Frodo") {
		t.Errorf("admin's sidebar: %q", got)
	}
	if got := pages["frodo"].str(titles); !strings.Contains(got, "Frodo keeps") || strings.Contains(got, "Bilbo") {
		t.Errorf("frodo's sidebar: %q", got)
	}

	// A member sees Account and About, none of the administration.
	f := pages["frodo"]
	f.do(chromedp.Navigate(base + "/#/settings/users"))
	f.waitJS(`location.hash === '#/settings/account' && !!document.querySelector('#account-username')`)
	if tabs := f.str(`[...document.querySelectorAll('.tabs .tab')].map((a) => a.innerText).join(',')`); strings.Contains(tabs, "Users") || strings.Contains(tabs, "Connections") {
		t.Errorf("a member sees the tabs %q", tabs)
	}

	// The administrator keeps the model for himself, on the Models page:
	// frodo's picker no longer offers it.
	a := pages["admin"]
	a.do(chromedp.Navigate(base + "/#/settings/models"))
	a.click(".model-row-main")
	a.waitJS(`!!document.querySelector('#model-access input[type=radio]')`)
	a.click("#model-access input[type=radio][id$='-chosen']")
	a.clickXPath(`//section[@id='model-access']//label[.//*[normalize-space(.)='@admin']]/input`)
	a.clickText("model-access", "Save access")
	a.waitJS(`[...document.querySelectorAll('.toast')].some((t) => t.innerText.includes('Only the chosen people'))`)
	var access struct {
		Everyone bool
		Users    []int
	}
	var picked []struct{ ID int }
	harness.APIAs(t, admin, base, "Models.Picker", &picked)
	harness.APIAs(t, admin, base, "Admin.ModelAccess", &access, picked[0].ID)
	if access.Everyone || len(access.Users) != 1 {
		t.Errorf("model access after saving: %+v", access)
	}
	var frodoModels []struct{ ID int }
	harness.APIAs(t, frodo, base, "Models.Picker", &frodoModels)
	if len(frodoModels) != 0 {
		t.Errorf("frodo still sees %d models", len(frodoModels))
	}

	// The administrator disables frodo: his open page falls back to the
	// sign-in form, told by the event stream within a heartbeat (15 s),
	// keeping where he was.
	var users struct {
		Users []struct {
			ID       int
			Username string
		}
	}
	harness.APIAs(t, admin, base, "Admin.Users", &users, map[string]any{"query": "frodo", "status": "", "offset": 0, "limit": 10})
	if len(users.Users) != 1 {
		t.Fatalf("Admin.Users: %+v", users)
	}
	harness.APIAs(t, admin, base, "Admin.SetStatus", nil, users.Users[0].ID, "disabled")
	f.waitJSFor(`!!document.querySelector('#login-form') && !!document.querySelector('#auth-ended')`, 40*time.Second)
	if h := f.str(`location.hash`); h != "#/settings/account" {
		t.Errorf("after the session ended the hash is %q", h)
	}
	f.signIn("frodo", "the ring is mine, precious")
	f.waitJS(`/disabled/i.test(document.querySelector('#login-error')?.innerText ?? '')`)
	for _, p := range pages {
		p.pe.check(t, "401 (Unauthorized)", "403 (Forbidden)")
	}
}

// TestAuthApproval asks for an account on a server in approval mode, is
// told to wait, is approved by the administrator in another browser, and
// signs in.
func TestAuthApproval(t *testing.T) {
	harness.Require(t, "chromium")
	bin := harness.Build(t, "", "CGO_ENABLED=0")
	_, base := harness.Serve(t, bin, t.TempDir())
	admin := harness.Login(t, base, "admin", harness.AdminPassword)
	harness.APIAs(t, admin, base, "Admin.SetSettings", nil, map[string]any{"signUpMode": "approval"})
	const password = "second breakfast please"

	p := openAuthPage(t, "approval-phone", 390, 844)
	p.do(chromedp.Navigate(base + "/"))
	p.waitJS(loginShown)
	p.click("#auth-to-signup")
	p.waitJS(`!!document.querySelector('#signup-form')`)
	if h := p.str(`document.querySelector('#auth-title').innerText`); h != "Create account" {
		t.Errorf("sign-up heading %q", h)
	}
	p.fill("#signup-username", "pippin")
	p.fill("#signup-password", password)
	p.fill("#signup-confirm", password)
	p.click("#signup-form button[type=submit]")
	p.waitJS(`document.querySelector('#auth-pending')?.innerText.includes("waiting for an administrator's approval")`)
	p.shot("pending")
	p.clickText("auth-pending", "Back to sign in")
	p.signIn("pippin", password)
	p.waitJS(`/approv/i.test(document.querySelector('#login-error')?.innerText ?? '')`)

	a := openAuthPage(t, "approval-admin", 1280, 860)
	harness.BrowserLogin(t, a.ctx, base, "admin", harness.AdminPassword)
	a.do(chromedp.Navigate(base + "/#/settings/users"))
	a.waitJS(`!!document.querySelector('#users-pending-note')`)
	a.waitJS(`[...document.querySelectorAll('#users-list .user-row')].some((r) => r.innerText.includes('pippin'))`)
	a.clickXPath(`//li[contains(@class,'user-row')][.//*[normalize-space(.)='@pippin']]//button[normalize-space(.)='Approve']`)
	a.waitJS(`[...document.querySelectorAll('.toast')].some((t) => t.innerText.includes('can sign in now'))`)
	a.waitJS(`!document.querySelector('#users-pending-note')`)

	p.signIn("pippin", password)
	p.waitJS(appShown)

	// The administrator puts pippin in a new group that may see every model.
	a.do(chromedp.Navigate(base + "/#/settings/groups"))
	a.click("#groups-create")
	a.waitJS(`!!document.querySelector('#group-new-name')`)
	a.fill("#group-new-name", "Hobbits")
	a.click("#group-new-perm-models-view-all")
	a.clickXPath(`//form[@id='group-form']//label[.//*[normalize-space(.)='@pippin']]/input`)
	a.click("#group-form button[type=submit]")
	a.waitJS(`[...document.querySelectorAll('#groups-list .model-row-name')].some((e) => e.textContent === 'Hobbits')`)
	a.waitJS(`/^#\/settings\/groups\/\d+$/.test(location.hash)`)
	var groups []struct {
		Name        string
		Permissions []string
		Members     []int
	}
	harness.APIAs(t, admin, base, "Admin.Groups", &groups)
	if len(groups) != 1 || groups[0].Name != "Hobbits" || len(groups[0].Members) != 1 ||
		len(groups[0].Permissions) != 1 || groups[0].Permissions[0] != "models.view_all" {
		t.Errorf("groups after creating one: %+v", groups)
	}
	a.shot("group")

	// A new password through the dialog, then administrator rights.
	a.do(chromedp.Navigate(base + "/#/settings/users"))
	a.clickXPath(`//li[contains(@class,'user-row')][.//*[normalize-space(.)='@pippin']]//a`)
	a.waitJS(`document.querySelector('#user-detail-title')?.textContent === 'pippin'`)
	a.clickText("user-detail", "Reset password…")
	a.waitJS(`!!document.querySelector('#reset-dialog[open]')`)
	a.fill("#reset-password", "elevenses and luncheon")
	a.fill("#reset-confirm", "elevenses and luncheon")
	a.click("#reset-dialog button[type=submit]")
	a.waitJS(`[...document.querySelectorAll('.toast')].some((t) => t.innerText.includes('New password set for pippin'))`)
	harness.Login(t, base, "pippin", "elevenses and luncheon")
	a.clickText("user-detail", "Make admin")
	a.waitJS(`!!document.querySelector('dialog[open]')`)
	a.clickText("dialog", "Make administrator")
	a.waitJS(`[...document.querySelectorAll('#user-detail .badge, #users-list .user-row.is-selected .badge')].some((b) => b.textContent === 'Administrator')`)

	// A storage limit for each person's files, set on the Instance page,
	// is what pippin's account says.
	a.do(chromedp.Navigate(base + "/#/settings/instance"))
	a.waitJS(`document.querySelector('#instance-files-quota')?.value === '0'`)
	a.fill("#instance-files-quota", "300")
	a.click("#instance-form button[type=submit]")
	a.waitJS(`[...document.querySelectorAll('.toast')].some((t) => t.innerText.includes('Instance settings saved'))`)
	a.shot("instance")
	// (The new password signed pippin's phone out: sign in again.)
	p.do(chromedp.Navigate(base + "/#/settings/account"))
	p.waitJS(loginShown)
	p.signIn("pippin", "elevenses and luncheon")
	p.waitJS(`(document.querySelector('#account-storage')?.innerText ?? '').includes('0 bytes of the 300 MB')`)
	p.shot("account-storage")
	p.pe.check(t, "401 (Unauthorized)", "403 (Forbidden)")
	a.pe.check(t)
}

// TestAuthPWA checks the manifest, the service worker's registration and
// scope, and the offline page it shows once the server is gone.
func TestAuthPWA(t *testing.T) {
	harness.Require(t, "chromium")
	bin := harness.Build(t, "", "CGO_ENABLED=0")
	proc, base := harness.Serve(t, bin, t.TempDir(), "LEMBAS_INSTANCE_NAME=Bag End")
	p := openAuthPage(t, "pwa", 1280, 860)
	harness.BrowserLogin(t, p.ctx, base, "admin", harness.AdminPassword)
	p.do(chromedp.Navigate(base + "/"))
	p.waitJS(appShown)

	if href := p.str(`document.querySelector('link[rel=manifest]')?.getAttribute('href') ?? ''`); href != "/manifest.webmanifest" {
		t.Errorf("manifest link %q", href)
	}
	if name := p.await(`fetch('/manifest.webmanifest').then((r) => r.json()).then((m) => m.name)`); !strings.Contains(name, "Bag End") {
		t.Errorf("manifest name %q", name)
	}
	if !p.bool(`window.isSecureContext`) {
		t.Fatal("http://127.0.0.1 is not a secure context here")
	}
	scope := p.await(`navigator.serviceWorker.ready.then((r) => r.scope)`)
	if scope != base+"/" {
		t.Errorf("service worker scope %q, want %q", scope, base+"/")
	}

	// Under the worker's control, the API and the event stream still work.
	p.do(chromedp.Navigate(base + "/#/settings/account"))
	p.waitJS(`!!navigator.serviceWorker.controller`)
	p.waitJS(`document.querySelector('#account-username')?.innerText === 'admin'`)
	if got := p.await(`fetch('/api/Account.Me', {method: 'POST', headers: {'Content-Type': 'application/json'}, body: '[]'}).then((r) => r.json()).then((m) => m.username)`); got != "admin" {
		t.Errorf("Account.Me under the worker: %q", got)
	}

	// The server goes away: a navigation gets the offline page.
	proc.Kill()
	p.do(chromedp.Navigate(base + "/"))
	p.waitJS(`document.body.textContent.includes('The server cannot be reached')`)
	p.shot("offline")
	p.pe.check(t, "Failed to load resource", "ERR_CONNECTION_REFUSED", "lembas:")
}

// TestAuthRateLimit spends the sign-in attempts the server allows and
// checks that the form says how long to wait and holds its button until then.
func TestAuthRateLimit(t *testing.T) {
	harness.Require(t, "chromium")
	bin := harness.Build(t, "", "CGO_ENABLED=0")
	_, base := harness.Serve(t, bin, t.TempDir())
	p := openAuthPage(t, "ratelimit-phone", 390, 844)
	p.do(chromedp.Navigate(base + "/"))
	p.waitJS(loginShown)
	// Spend the username's burst without the form, then try once more
	// with it. The username's bucket refills one attempt a minute, so it
	// is what keeps the form refused however slow the machine. The
	// address's (one every 10 s) may run out first — the harness's sign-up
	// spent one of its attempts — and must not end the loop early: a 429
	// before ten refusals waits a second and goes on.
	statuses := p.await(`(async () => { const out = []; let refused = 0;
		for (let i = 0; i < 60 && refused < 10; i++) {
			const r = await fetch('/api/auth/login', {method: 'POST', headers: {'Content-Type': 'application/json'},
				body: JSON.stringify({username: 'gollum', password: 'not the password ' + i})});
			out.push(r.status);
			if (r.status === 401) refused++;
			else if (r.status === 429) await new Promise((res) => setTimeout(res, 1000));
		}
		const r = await fetch('/api/auth/login', {method: 'POST', headers: {'Content-Type': 'application/json'},
			body: JSON.stringify({username: 'gollum', password: 'once more'})});
		out.push(r.status);
		return out.join(','); })()`)
	if !strings.HasSuffix(statuses, "429") {
		t.Fatalf("the server never limited sign-ins: %s", statuses)
	}
	p.signIn("gollum", "my precious, my precious")
	// The visible count goes down; what was announced stays as it was.
	p.waitJS(`/^Too many attempts; try again in \d+ seconds?\.$/.test(document.querySelector('#login-error [aria-hidden]')?.innerText.trim() ?? '')`)
	if a := p.str(`document.querySelector('#login-error .visually-hidden')?.textContent ?? ''`); !strings.HasPrefix(a, "Too many attempts") {
		t.Errorf("announced %q", a)
	}
	if !p.bool(`document.querySelector('#login-form button[type=submit]').disabled`) {
		t.Error("the sign-in button stays enabled while the server refuses")
	}
	p.shot("limited")
	p.pe.check(t, "401 (Unauthorized)", "429 (Too Many Requests)")
}
