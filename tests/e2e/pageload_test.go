package e2e

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/tests/harness"
)

// orderScript logs, in window.__order, each API method the page asks for
// (its fetch wrapped before the page's scripts run) and "drawn" in the
// first task after the app's shell is in the document — before any effect
// of its first render, which Preact runs after the next frame.
const orderScript = `(() => {
  window.__order = [];
  const fetch0 = window.fetch;
  window.fetch = function (url, ...rest) {
    const m = /^\/api\/([A-Za-z]+\.[A-Za-z]+)$/.exec(String(url));
    if (m) window.__order.push(m[1]);
    return fetch0.call(this, url, ...rest);
  };
  const mo = new MutationObserver(() => {
    if (!document.querySelector('.shell')) return;
    mo.disconnect();
    setTimeout(() => window.__order.push('drawn'), 0);
  });
  mo.observe(document, { childList: true, subtree: true });
})()`

// The chat list, folders, models and connections are asked for before the
// shell's first render, not from its effects, so that they are on their
// way while it draws. (The order is the page's own script's, not a race.)
func TestListsAreAskedForBeforeTheFirstRenderInChromium(t *testing.T) {
	harness.Require(t, "chromium")
	bin := harness.Build(t, "", "CGO_ENABLED=0")
	_, base := harness.Serve(t, bin, t.TempDir())
	ctx := harness.Browser(t)
	harness.BrowserAdmin(t, ctx, base)
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: orderScript}); err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	harness.Must(t, chromedp.Do(c, chromedp.Navigate(base+"/")), "open the app")
	_, err := chromedp.Run(c, chromedp.Poll[bool](`window.__order.includes('drawn') && window.__order.includes('Chats.List')`))
	harness.Must(t, err, "wait for the shell and the chat list")
	order, err := chromedp.Run(c, chromedp.Evaluate[[]string](`window.__order`))
	harness.Must(t, err, "read the order")
	drawn := slices.Index(order, "drawn")
	for _, m := range []string{"Chats.List", "Folders.List", "Models.Picker", "Connections.List"} {
		if i := slices.Index(order, m); i < 0 || i > drawn {
			t.Errorf("%s was not asked for before the first render: %q", m, order)
		}
	}
}
