package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// authStateScript counts, in window.__authStates, the page's requests for
// /api/auth/state (a route, not a facade call: the server does not log it).
const authStateScript = `(() => {
  window.__authStates = 0;
  const f = window.fetch;
  window.fetch = function (url, ...rest) {
    if (String(url).endsWith('/api/auth/state')) window.__authStates++;
    return f.call(this, url, ...rest);
  };
})()`

// TestStartAsksOnceInChromium: opening the app asks the server once for
// who is signed in, once for the preferences and once for the instance's
// details, however many screens read them (the store loads each and keeps
// it current from events). It asked for the sign-in state twice and for
// the preferences three times, each before the app could be used.
func TestStartAsksOnceInChromium(t *testing.T) {
	a := serveChatApp(t)
	mark := len(a.srv.Stderr())
	a.open(t, idleScript+";"+authStateScript)
	count := func(what string) {
		t.Helper()
		a.waitJS(`!!document.querySelector('.picker-trigger:not([disabled])')`)
		waitIdle(t, a.ctx)
		log := a.srv.Stderr()[mark:]
		mark += len(log)
		for _, m := range []string{"App.Info", "Prefs.Get"} {
			if n := strings.Count(log, "msg=call method="+m+" "); n != 1 {
				t.Errorf("%s: %s was called %d times, want 1", what, m, n)
			}
		}
		if n := evaluate[int](a.tab, `window.__authStates`); n != 1 {
			t.Errorf("%s: /api/auth/state was asked %d times, want 1", what, n)
		}
		// The page's one fetch takes index.html's preload: one request.
		if n := evaluate[int](a.tab, `performance.getEntriesByType('resource').filter((e) => e.name.endsWith('/api/auth/state')).length`); n != 1 {
			t.Errorf("%s: /api/auth/state was requested %d times, want 1", what, n)
		}
	}
	count("first load")
	a.do(chromedp.Reload())
	count("reload")
	a.pe.check(t)
}
