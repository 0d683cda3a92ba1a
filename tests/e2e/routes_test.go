package e2e

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestSettingsTabsComeFromTheRoutesInChromium: the settings tab bar is
// drawn from the router's SETTINGS_TABS, the one list of settings routes
// (it was a second list in settings.js, beside the router's), and each of
// its tabs is a route that opens that tab.
func TestSettingsTabsComeFromTheRoutesInChromium(t *testing.T) {
	a := newChatApp(t)
	a.do(chromedp.Navigate(a.base + "/#/settings/about"))
	a.waitJS(`!!document.querySelector('#info')`)
	var got struct{ Want, Drawn, Routes []string }
	raw := a.await(`(async () => {
	  const { SETTINGS_TABS, parse } = await import(` + appModule("core/router.js") + `);
	  return JSON.stringify({
	    want: SETTINGS_TABS.filter((t) => !t.desktop).map((t) => t.label + ' ' + '#/settings/' + t.id),
	    drawn: [...document.querySelectorAll('.tabs .tab')].map((a) => a.textContent.trim() + ' ' + a.getAttribute('href')),
	    routes: SETTINGS_TABS.map((t) => parse('#/settings/' + t.id).tab),
	  });
	})()`)
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Want) < 8 || !slices.Equal(got.Drawn, got.Want) {
		t.Errorf("the tab bar (an administrator, in a browser) is %q, want %q", got.Drawn, got.Want)
	}
	if slices.Contains(got.Routes, "") {
		t.Errorf("settings tabs the router does not take: %q", got.Routes)
	}
	for _, w := range got.Want {
		href := w[strings.Index(w, "#"):]
		a.do(chromedp.Navigate(a.base + "/" + href))
		a.waitJS(`(() => { const t = document.querySelector('.tabs .tab.is-active'); return !!t && t.getAttribute('href') === ` + strconv.Quote(href) + `; })()`)
	}
}

// appModule is a JS expression for the URL of one of the app's modules (p
// relative to js/, like "core/ui.js") as the page loaded it, under the
// frontend's version: importing it gives the app's own instance of the
// module, not a second copy with state of its own.
func appModule(p string) string {
	return `new URL(` + strconv.Quote(p) + `, document.querySelector('script[type=module]').src).href`
}
