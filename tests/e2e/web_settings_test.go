package e2e

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/tests/harness"
)

// TestWebSettings: an administrator chooses SearXNG on Settings → Web with
// an instance on this machine (a local fake); it is refused until its
// range is allowed, and then Test search shows its results, with a result
// carrying a javascript: URL never becoming a link. The Firecrawl key
// never comes back to the browser.
func TestWebSettings(t *testing.T) {
	const key = "fc-PLAINTEXT-0123456789abcdef"
	var searches atomic.Int64
	searx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" {
			http.Error(w, "Forbidden", http.StatusForbidden)
			return
		}
		searches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"query":"` + r.URL.Query().Get("q") + `","number_of_results":0,"results":[` +
			`{"url":"https://en.wikipedia.org/wiki/Lembas","title":"Lembas - Wikipedia","content":"Lembas or waybread is a special food made by the Elves.","engine":"wikipedia","engines":["wikipedia"],"score":2.0,"category":"general"},` +
			`{"url":"javascript:alert(document.cookie)","title":"<img src=x onerror=alert(1)>","content":"script","engine":"evil"},` +
			`{"url":"https://tolkiengateway.net/wiki/Lembas","title":"Lembas - Tolkien Gateway","content":"<b>Lembas</b> was a bread made by the Elves.","engine":"bing"}` +
			`],"answers":[],"corrections":[],"infoboxes":[],"suggestions":[],"unresponsive_engines":[]}`))
	}))
	defer searx.Close()
	u := newAdminUI(t, 1280, 900, nil)

	u.step(t, "a SearXNG on this machine needs its range", func(t *testing.T, u *adminUI) {
		u.do(chromedp.Navigate(u.base + "/#/settings/web"))
		u.waitJS(`!!document.querySelector('#web-settings') && !!document.querySelector('#web-test')`)
		if tab := u.str(`document.querySelector('.tabs .tab.is-active')?.innerText ?? ''`); tab != "Web" {
			t.Errorf("active tab %q", tab)
		}
		u.click("#web-provider-searxng")
		u.waitJS(`!!document.querySelector('#web-searxng-url')`)
		u.fill("#web-searxng-url", searx.URL)
		u.click(`#web-settings button[type=submit]`)
		u.waitJS(`!!document.querySelector('#web-settings-error[role=alert]')`)
		if msg := u.str(`document.querySelector('#web-settings-error').innerText`); !strings.Contains(msg, "Allowed network ranges") &&
			!strings.Contains(msg, "allowed ranges") {
			t.Errorf("refusal reads %q", msg)
		}
		u.fill("#web-allow", "127.0.0.1/32")
		u.click(`#web-settings button[type=submit]`)
		u.waitJS(`[...document.querySelectorAll('.toast')].some((t) => t.innerText.includes('Web settings saved.'))`)
		var st struct {
			Provider, SearXNGURL string
			Allow                []string
		}
		harness.API(t, u.base, "Web.Settings", &st)
		if st.Provider != "searxng" || st.SearXNGURL != searx.URL || len(st.Allow) != 1 || st.Allow[0] != "127.0.0.1/32" {
			t.Errorf("saved settings: %+v", st)
		}
	})

	u.step(t, "test search shows the hits", func(t *testing.T, u *adminUI) {
		u.fill("#web-test-query", "lembas")
		u.click(`#web-test button[type=submit]`)
		u.waitJS(`document.querySelectorAll('#web-test-hits .web-hit').length > 0`)
		if n := u.js(`document.querySelectorAll('#web-test-hits .web-hit').length`); n != float64(2) {
			t.Errorf("%v hits shown, want 2 (the javascript: one dropped)", n)
		}
		links := u.str(`[...document.querySelectorAll('#web-test-hits a')].map((a) => a.getAttribute('href')).join(' ')`)
		if links != "https://en.wikipedia.org/wiki/Lembas https://tolkiengateway.net/wiki/Lembas" {
			t.Errorf("links %q", links)
		}
		if got := u.str(`document.querySelector('#web-test-hits').innerText`); !strings.Contains(got, "<b>Lembas</b> was a bread") {
			t.Errorf("a snippet's markup was not shown as text: %q", got)
		}
		if u.js(`!!document.querySelector('#web-test-hits img, #web-test-hits b')`) == true {
			t.Error("a result's markup became elements")
		}
		if searches.Load() == 0 {
			t.Error("the fake SearXNG saw no search")
		}
		u.shot("web-test-search")
	})

	u.step(t, "the Firecrawl key is write-only", func(t *testing.T, u *adminUI) {
		u.click("#web-provider-firecrawl")
		u.waitJS(`!!document.querySelector('#web-firecrawl-key')`)
		u.fill("#web-firecrawl-key", key)
		u.click(`#web-settings button[type=submit]`)
		u.waitJS(`(document.querySelector('#web-firecrawl-key-help')?.innerText ?? '').includes('A key is set')`)
		if u.js(`!!document.querySelector('#web-test-hits')`) == true {
			t.Error("the test search still shows SearXNG's results after the provider changed")
		}
		if v := u.str(`document.querySelector('#web-firecrawl-key').value`); v != "" {
			t.Errorf("key field holds %q after saving", v)
		}
		if urls, seen := u.resp.containing(key); len(urls) > 0 || seen == 0 {
			t.Errorf("the key reached the browser in %v (of %d responses)", urls, seen)
		}
		u.shot("web-firecrawl")
	})
}
