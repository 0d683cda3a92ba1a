package httpapi

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/events"
	"github.com/llembas/lembas/frontend"
)

// The served index.html names every module of the app's static import
// graph in a modulepreload link, so that a browser fetches them all at
// once rather than one level of imports per round trip; every link names a
// module that is served; the entry module stays a script tag. On both
// mounts: the desktop one is Wails' asset server.
func TestIndexPreloadsTheModuleGraph(t *testing.T) {
	graph, err := frontend.ModuleGraph(frontend.FS(), "js/main.js")
	if err != nil {
		t.Fatal(err)
	}
	link := regexp.MustCompile(`<link rel="modulepreload" href="([^"]+)">`)
	for _, desktop := range []bool{false, true} {
		h, err := New(Options{Dispatcher: api.NewDispatcher(slog.New(slog.DiscardHandler)), Bus: events.NewBus(),
			Files: frontend.FS(), Log: slog.New(slog.DiscardHandler), Desktop: desktop,
			Caller: func(*http.Request) (api.Caller, error) { return api.Caller{UserID: 1}, nil }})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		defer srv.Close()
		get := func(url string) *http.Request {
			req, _ := http.NewRequest("GET", url, nil)
			return req
		}
		_, index := do(t, get(srv.URL+"/"))
		preloaded := map[string]bool{}
		for _, m := range link.FindAllStringSubmatch(index, -1) {
			href := m[1]
			if preloaded[href] {
				t.Errorf("desktop=%v: %s preloaded twice", desktop, href)
			}
			preloaded[href] = true
			resp, _ := do(t, get(srv.URL+"/"+href))
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") {
				t.Errorf("desktop=%v: preloaded %s is %d %s, want a served module", desktop, href, resp.StatusCode, resp.Header.Get("Content-Type"))
			}
		}
		for _, p := range graph[1:] {
			if !preloaded[p] {
				t.Errorf("desktop=%v: %s is imported but not preloaded", desktop, p)
			}
		}
		if len(preloaded) != len(graph)-1 {
			t.Errorf("desktop=%v: %d links for %d imported modules", desktop, len(preloaded), len(graph)-1)
		}
		if !strings.Contains(index, `<script type="module" src="js/main.js"></script>`) {
			t.Errorf("desktop=%v: the entry module's script tag is gone", desktop)
		}
	}
}
