package harness

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The page the tests click on: a button that slides down for a while after
// load (as one does when a list above it arrives), a decoy where it
// started, and a button hidden under a veil.
const clickPage = `<!doctype html><meta charset="utf-8">
<style>
  body { margin: 0; font: 16px sans-serif; }
  #spacer { height: 0; transition: height 600ms linear; }
  #decoy, #moving, #covered { display: block; width: 200px; height: 40px; }
  #decoy { position: absolute; top: 0; left: 0; }
  #veil { position: absolute; top: 300px; left: 0; width: 300px; height: 100px; background: #fff; }
  #covered { position: absolute; top: 320px; left: 0; }
</style>
<button id="decoy" onclick="window.hits.push('decoy')">Decoy</button>
<div id="spacer"></div>
<button id="moving" onclick="window.hits.push('moving')">Moving</button>
<button id="covered" onclick="window.hits.push('covered')">Covered</button>
<div id="veil"></div>
<script>
  window.hits = [];
  // Counts Click's looks at what is under a point.
  window.looks = 0;
  const under = document.elementFromPoint.bind(document);
  document.elementFromPoint = (x, y) => { window.looks++; return under(x, y); };
  requestAnimationFrame(() => { document.getElementById('spacer').style.height = '200px'; });
</script>`

func clickServer(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(clickPage))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestClickWaitsForTheNodeToSettle(t *testing.T) {
	ctx := Browser(t)
	url := clickServer(t)
	tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.Navigate(url), Click(chromedp.CSS("#moving"))); err != nil {
		t.Fatal(err)
	}
	hits, err := chromedp.Run(tctx, chromedp.Evaluate[string](`window.hits.join(',')`))
	if err != nil {
		t.Fatal(err)
	}
	if hits != "moving" {
		t.Errorf("clicks landed on %q, want only the moving button", hits)
	}
}

func TestClickRefusesACoveredNode(t *testing.T) {
	ctx := Browser(t)
	url := clickServer(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	// Click tries until its context ends. It used to get 2 s, and a loaded
	// machine could spend them before the first look, leaving an error
	// that named nothing; it is stopped after its second look instead.
	tctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- chromedp.Do(tctx, Click(chromedp.CSS("#covered"))) }()
	var err error
	for stopped := false; !stopped; {
		select {
		case err = <-done:
			stopped = true
		case <-time.After(50 * time.Millisecond):
			looks, lerr := chromedp.Run(tctx, chromedp.Evaluate[int](`window.looks`))
			if lerr != nil {
				t.Fatalf("counting looks: %v", lerr)
			}
			if looks >= 2 {
				cancel()
				err = <-done
				stopped = true
			}
		}
	}
	if err == nil || !strings.Contains(err.Error(), "covered by div#veil") {
		t.Fatalf("clicking a covered button: %v; want an error that names the veil", err)
	}
	hits, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`window.hits.join(',')`))
	if hits != "" {
		t.Errorf("something was clicked: %q", hits)
	}
}
