// Package e2e drives `lembas --serve` in headless Chromium.
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/tests/harness"
)

// pageErrors collects uncaught exceptions, console errors and browser log
// errors (CSP violations land there) for one tab.
type pageErrors struct {
	mu   sync.Mutex
	errs []string
}

func watchErrors(t *testing.T, ctx context.Context) *pageErrors {
	pe := &pageErrors{}
	err := chromedp.Listen(ctx, func(ev any) {
		var msg string
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			msg = "exception: " + e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				msg = "console.error: " + strings.Join(parts, " ")
			}
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				msg = "log: " + e.Entry.Text + " " + e.Entry.URL
			}
		}
		if msg != "" {
			pe.mu.Lock()
			pe.errs = append(pe.errs, msg)
			pe.mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	// The Log domain reports CSP violations and failed loads.
	if err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, log.Enable, cdp.Empty{})
		return err
	})); err != nil {
		t.Fatalf("Log.enable: %v", err)
	}
	return pe
}

func (pe *pageErrors) check(t *testing.T, ignore ...string) {
	t.Helper()
	pe.mu.Lock()
	defer pe.mu.Unlock()
outer:
	for _, e := range pe.errs {
		for _, ig := range ignore {
			if strings.Contains(e, ig) {
				continue outer
			}
		}
		t.Errorf("page error: %s", e)
	}
}

func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(90))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(harness.ArtifactDir(t), name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", p)
}

func waitText(ctx context.Context, sel, want string) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(
		`(() => { const el = document.querySelector(%q); return !!el && el.textContent.includes(%q); })()`, sel, want)))
	return err
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// TestShellInChromium runs the pure-Go server build (CGO off, as on a NAS)
// and checks that the same frontend works: the info call answers, the theme
// switch persists, the phone layout's sidebar toggles, and the 404 page shows.
func TestShellInChromium(t *testing.T) {
	harness.Require(t, "chromium")
	bin := harness.Build(t, "", "CGO_ENABLED=0")
	dataDir := t.TempDir()
	_, base := harness.Serve(t, bin, dataDir)
	ctx := harness.Browser(t)
	harness.BrowserAdmin(t, ctx, base)
	pe := watchErrors(t, ctx)

	for _, vp := range []struct {
		name string
		w, h int64
	}{{"desktop", 1280, 800}, {"phone", 390, 844}} {
		t.Run(vp.name, func(t *testing.T) {
			if err := chromedp.Do(ctx,
				chromedp.EmulateViewport(vp.w, vp.h),
				chromedp.Navigate(base+"/#/settings/about"),
			); err != nil {
				t.Fatal(err)
			}
			if err := waitText(ctx, "#info-datadir", dataDir); err != nil {
				t.Fatalf("info card never showed the data directory: %v", err)
			}
			if got := eval[string](t, ctx, `document.querySelector('#info-version').textContent`); !strings.Contains(got, "0.1.0") {
				t.Errorf("version shown: %q", got)
			}
			for _, theme := range []string{"moria", "shire"} {
				eval[bool](t, ctx, fmt.Sprintf(`(() => { const s = document.querySelector('#theme-select');
					s.value = %q; return s.dispatchEvent(new Event('change', {bubbles: true})); })()`, theme))
				// Each choice is saved, and the server's prefs event follows:
				// the echo of the choice before this one can land after it
				// and show that theme until this one's echo arrives, so
				// wait for the theme to settle rather than read it once.
				pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				_, err := chromedp.Run(pctx, chromedp.Poll[bool](fmt.Sprintf(`document.documentElement.dataset.theme === %q`, theme)))
				cancel()
				if err != nil {
					t.Fatalf("data-theme = %q after choosing %s", eval[string](t, ctx, `document.documentElement.dataset.theme`), theme)
				}
				shot(t, ctx, fmt.Sprintf("serve-%s-%s.png", vp.name, theme))
			}
			if vp.name == "phone" {
				visible := `(() => { const r = document.querySelector('#sidebar').getBoundingClientRect(); return r.right > 10 && r.left < innerWidth; })()`
				// Coming from the desktop width, the sidebar slides away
				// (a CSS transition): wait for it to be gone.
				pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				_, err := chromedp.Run(pctx, chromedp.Poll[bool](`!`+visible))
				cancel()
				if err != nil {
					t.Error("sidebar covers the phone screen before it is opened")
				}
				if err := chromedp.Do(ctx, harness.Click(chromedp.CSS("#sidebar-toggle"))); err != nil {
					t.Fatal(err)
				}
				// The slide-in is a transition too: wait for it rather
				// than for a fixed 400 ms, which a loaded machine overran.
				pctx, cancel = context.WithTimeout(ctx, 10*time.Second)
				_, err = chromedp.Run(pctx, chromedp.Poll[bool](visible))
				cancel()
				if err != nil {
					t.Error("sidebar toggle did not show the sidebar")
				}
				if eval[bool](t, ctx, `document.documentElement.scrollWidth > innerWidth + 1`) {
					t.Error("phone layout scrolls sideways")
				}
			}
		})
	}

	// The theme chosen last (shire) is stored for the user, not just locally.
	var prefs struct{ Theme string }
	harness.API(t, base, "Prefs.Get", &prefs)
	if prefs.Theme != "shire" {
		t.Errorf("stored theme %q, want shire", prefs.Theme)
	}

	t.Run("404", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(base+"/no/such/page")); err != nil {
			t.Fatal(err)
		}
		if err := waitText(ctx, "body", "This page, however, is."); err != nil {
			t.Fatal(err)
		}
		shot(t, ctx, "serve-404.png")
	})
	pe.check(t, "status of 404 (Not Found) "+base+"/no/such/page")
}

// TestSelfTestOverHTTP runs the frontend's self-test in Chromium: calls over
// fetch, events over the shared EventSource, a recovered panic, and the API
// through the handler.
func TestSelfTestOverHTTP(t *testing.T) {
	harness.Require(t, "chromium")
	bin := harness.Build(t, "", "CGO_ENABLED=0")
	p, base := harness.Serve(t, bin, t.TempDir(), "LEMBAS_SELFTEST=1")
	ctx := harness.Browser(t)
	harness.BrowserAdmin(t, ctx, base)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/")); err != nil {
		t.Fatal(err)
	}
	p.WaitOutput(t, `selftest (PASS|FAIL) (done|error)`, 30*time.Second)
	out := p.Stdout()
	if fails := harness.Lines(out, "selftest FAIL"); len(fails) > 0 {
		t.Errorf("self-test failures:\n%s", strings.Join(fails, "\n"))
	}
	for _, step := range []string{"transport http for mode serve", "rendered", "event", "panic internal", "after-panic", "route-panic 500 internal", "after-route-panic 200", "asset", "styles", "handler-api", "done"} {
		if !strings.Contains(out, "selftest PASS "+step) {
			t.Errorf("step %q did not pass:\n%s", step, out)
		}
	}
}
