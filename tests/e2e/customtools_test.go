package e2e

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/tests/harness"
)

// TestCustomTools: an administrator creates a custom HTTP tool on
// Settings → Custom tools (a local fake API, its range allowed under
// Settings → Web), with a secret in a header, and tries it: the request
// is shown with the secret masked, the argument arrives escaped in the
// query, and the answer — markup and all — is shown as text. The secret
// never reaches the browser.
func TestCustomTools(t *testing.T) {
	const secret = "tok-PLAINTEXT-0123456789abcdef"
	var mu sync.Mutex
	var gotAuth, gotQuery string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gotAuth, gotQuery = r.Header.Get("Authorization"), r.URL.RawQuery
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"city":"Bree","sky":"<img src=x onerror=alert(1)>","link":"javascript:alert(2)"}`))
	}))
	defer api.Close()
	u := newAdminUI(t, 1280, 900, func(base string) {
		var out any
		harness.API(t, base, "Web.SetSettings", &out, map[string]any{"allow": []string{"127.0.0.1/32"}})
	})

	u.step(t, "an administrator creates a tool", func(t *testing.T, u *adminUI) {
		u.do(chromedp.Navigate(u.base + "/#/settings/custom-tools"))
		u.waitJS(`!!document.querySelector('#custom-create')`)
		if tab := u.str(`document.querySelector('.tabs .tab.is-active')?.innerText ?? ''`); tab != "Custom tools" {
			t.Errorf("active tab %q", tab)
		}
		u.click("#custom-create")
		u.waitJS(`!!document.querySelector('#custom-form #custom-name')`)
		u.fill("#custom-name", "weather")
		u.fill("#custom-description", "The weather in a city now.")
		u.fill("#custom-url", api.URL+"/now?city={{city}}")
		u.click("#custom-new-add-header")
		u.waitJS(`!!document.querySelector('#custom-new-headers input')`)
		u.fill(`#custom-new-headers input[aria-label="Header 1 name"]`, "Authorization")
		u.fill(`#custom-new-headers input[aria-label="Header 1 value"]`, "Bearer {{secret}}")
		u.fill("#custom-secret", secret)
		u.click(`#custom-form button[type=submit]`)
		u.waitJS(`[...document.querySelectorAll('.toast')].some((t) => t.innerText.includes('Created the tool'))`)
		u.waitJS(`/#\/settings\/custom-tools\/\d+$/.test(location.hash) && !!document.querySelector('#custom-try')`)
		if got := u.str(`document.querySelector('#custom-list').innerText`); !strings.Contains(got, "weather") {
			t.Errorf("list reads %q", got)
		}
		if v := u.str(`document.querySelector('#custom-secret').value`); v != "" {
			t.Errorf("secret field holds %q after saving", v)
		}
		if help := u.str(`document.querySelector('#custom-secret-help').innerText`); !strings.Contains(help, "A secret is set") {
			t.Errorf("secret help %q", help)
		}
		u.shot("custom-tool-created")
	})

	u.step(t, "try it shows the request and the answer as text", func(t *testing.T, u *adminUI) {
		u.fill("#custom-try-args", `{"city": "Bree & Staddle"}`)
		u.click(`#custom-try button[type=submit]`)
		u.waitJS(`!!document.querySelector('#custom-try-output')`)
		out := u.str(`document.querySelector('#custom-try-output').innerText`)
		if !strings.Contains(out, `"sky": "<img src=x onerror=alert(1)>"`) {
			t.Errorf("answer reads %q", out)
		}
		if u.bool(`!!document.querySelector('#custom-try-result img, #custom-try-result a')`) {
			t.Error("the answer's markup became elements")
		}
		req := u.str(`document.querySelector('#custom-try-request').innerText`)
		if !strings.Contains(req, "GET "+api.URL+"/now?city=Bree%20%26%20Staddle") || !strings.Contains(req, "Authorization: Bearer ••••••") {
			t.Errorf("request reads %q", req)
		}
		mu.Lock()
		a, q := gotAuth, gotQuery
		mu.Unlock()
		if a != "Bearer "+secret || q != "city=Bree%20%26%20Staddle" {
			t.Errorf("the API got Authorization %q and query %q", a, q)
		}
		if urls, seen := u.resp.containing(secret); len(urls) > 0 || seen == 0 {
			t.Errorf("the secret reached the browser in %v (of %d responses)", urls, seen)
		}
		u.shot("custom-tool-try")
	})
}
