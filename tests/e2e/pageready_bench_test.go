package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/tests/harness"
)

// readyScript runs at the start of every document (before the page's own
// scripts) and records in window.__lembasReady the performance.now() —
// milliseconds since the navigation began — at which the app is first
// usable: the chat list drawn, the models loaded (the picker enabled) and
// the composer enabled (present, with no note saying why it cannot send),
// and in window.__lembasRequests how many requests the page had made by
// then (the document and every resource; the event stream's worker is not
// counted), and in window.__lembasModules when the document's modules had
// all arrived and run (DOMContentLoaded waits for module scripts). The check runs on every DOM change, so the time is exact to a
// mutation, not to a polling interval.
const readyScript = `(() => {
  const ready = () => !!document.querySelector('.chat-link')
    && !!document.querySelector('.picker-trigger:not([disabled])')
    && !!document.querySelector('#composer-input:not([disabled])')
    && !document.querySelector('#composer-note');
  const check = () => {
    if (window.__lembasReady || !ready()) return false;
    window.__lembasReady = performance.now();
    window.__lembasRequests = 1 + performance.getEntriesByType('resource').length;
    window.__lembasModules = performance.getEntriesByType('navigation')[0].domContentLoadedEventStart;
    return true;
  };
  const mo = new MutationObserver(() => { if (check()) mo.disconnect(); });
  mo.observe(document, { childList: true, subtree: true, attributes: true });
})()`

// BenchmarkPageReady reports how long a reload takes to give a usable app
// (page_ready_ms: navigation to the chat list, models and an enabled
// composer, median of five reloads with a warm HTTP cache, as a returning
// user), the same with the browser's cache emptied before each reload
// (cold_ms), how much of a warm reload went to fetching and running the
// modules (modules_ms, to DOMContentLoaded), and how many requests the
// first load of a fresh profile had made by then (page_requests). Chromium
// against the real server, signed in, with two chats and one model.
func BenchmarkPageReady(b *testing.B) {
	harness.Require(b, "chromium")
	bin := harness.Build(b, "", "CGO_ENABLED=0")
	llm := fakellm.New(b)
	dir := b.TempDir()
	seedLongChats(b, dir, llm.URL(), map[string]int{"short": 4, "long": 6})
	_, base := harness.Serve(b, bin, dir)

	ctx := harness.Browser(b)
	harness.BrowserAdmin(b, ctx, base)
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		b.Helper()
		c, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		if err := chromedp.Do(c, actions...); err != nil {
			b.Fatalf("%s: %v", what, err)
		}
	}
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument,
		page.AddScriptToEvaluateOnNewDocumentParams{Source: readyScript}); err != nil {
		b.Fatalf("init script: %v", err)
	}
	// ready waits for the page to record its ready time, then returns it
	// and the request count.
	ready := func() (ms, requests, modules float64) {
		b.Helper()
		c, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		if _, err := chromedp.Run(c, chromedp.Poll[bool](`!!window.__lembasReady`)); err != nil {
			b.Fatalf("the app did not become usable: %v", err)
		}
		ms, err := chromedp.Run(c, chromedp.Evaluate[float64](`window.__lembasReady`))
		harness.Must(b, err, "read the ready time")
		requests, err = chromedp.Run(c, chromedp.Evaluate[float64](`window.__lembasRequests`))
		harness.Must(b, err, "read the request count")
		modules, err = chromedp.Run(c, chromedp.Evaluate[float64](`window.__lembasModules`))
		harness.Must(b, err, "read the modules' time")
		return ms, requests, modules
	}
	run("open the app", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(base+"/"))
	first, requests, _ := ready()
	b.Logf("first load of a fresh profile: %.0f ms, %.0f requests", first, requests)

	var warm, cold, modules []float64
	for b.Loop() {
		for range 5 {
			run("reload", chromedp.Reload())
			ms, _, mod := ready()
			warm = append(warm, ms)
			modules = append(modules, mod)
		}
		for range 5 {
			if _, err := chromedp.Call(ctx, network.ClearBrowserCache, cdp.Empty{}); err != nil {
				b.Fatalf("empty the cache: %v", err)
			}
			run("reload", chromedp.Reload())
			ms, _, _ := ready()
			cold = append(cold, ms)
		}
	}
	b.Logf("reloads, warm cache, ms: %.0f", warm)
	b.Logf("reloads, empty cache, ms: %.0f", cold)
	b.Logf("reloads, warm cache, modules loaded and run (DOMContentLoaded), ms: %.0f", modules)
	b.ReportMetric(median(warm), "page_ready_ms")
	b.ReportMetric(median(cold), "cold_ms")
	b.ReportMetric(median(modules), "modules_ms")
	b.ReportMetric(requests, "page_requests")
}
