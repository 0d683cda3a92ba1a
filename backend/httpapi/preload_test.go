package httpapi

import (
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

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
		entry := regexp.MustCompile(`<script type="module" src="(/v/[0-9a-f]+/)js/main.js"></script>`).FindStringSubmatch(index)
		if entry == nil {
			t.Fatalf("desktop=%v: the entry module's script tag is gone", desktop)
		}
		prefix := entry[1]
		preloaded := map[string]bool{}
		for _, m := range link.FindAllStringSubmatch(index, -1) {
			href := m[1]
			if preloaded[href] {
				t.Errorf("desktop=%v: %s preloaded twice", desktop, href)
			}
			preloaded[href] = true
			resp, _ := do(t, get(srv.URL+href))
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") {
				t.Errorf("desktop=%v: preloaded %s is %d %s, want a served module", desktop, href, resp.StatusCode, resp.Header.Get("Content-Type"))
			}
		}
		for _, p := range graph[1:] {
			if !preloaded[prefix+p] {
				t.Errorf("desktop=%v: %s is imported but not preloaded", desktop, p)
			}
		}
		if len(preloaded) != len(graph)-1 {
			t.Errorf("desktop=%v: %d links for %d imported modules", desktop, len(preloaded), len(graph)-1)
		}
	}
}

// The scripts and styles are named by a version of the frontend's files
// (/v/<version>/…) and cached for good there, so that a reload revalidates
// none of them (each revalidation was a request, about 200 ms of a warm
// reload for 40 modules); any changed file gives every file a new URL, so
// an upgrade never mixes two versions. index.html itself, the files at
// their plain paths and an old version's URLs are revalidated every time.
func TestFilesNamedByVersion(t *testing.T) {
	files := fstest.MapFS{
		"index.html": {Data: []byte(`<html><head><meta name="lembas-transport" content="http">
  <link rel="stylesheet" href="css/app.css">
  <script src="js/theme.js"></script>
  <script type="module" src="js/main.js"></script>
</head><body><img src="img/mark.svg"></body></html>`)},
		"css/app.css":  {Data: []byte(`body{}`)},
		"js/theme.js":  {Data: []byte(`1`)},
		"js/main.js":   {Data: []byte("import { a } from './core/a.js';\n")},
		"js/core/a.js": {Data: []byte(`export const a = 1;`)},
		"img/mark.svg": {Data: []byte(`<svg/>`)},
		"404.html":     {Data: []byte(`Not all those who wander`)},
	}
	serve := func(files fs.FS) (*httptest.Server, string) {
		t.Helper()
		h, err := New(Options{Dispatcher: api.NewDispatcher(slog.New(slog.DiscardHandler)), Bus: events.NewBus(),
			Files: files, Log: slog.New(slog.DiscardHandler),
			Caller: func(*http.Request) (api.Caller, error) { return api.Caller{UserID: 1}, nil }})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		req, _ := http.NewRequest("GET", srv.URL+"/", nil)
		resp, index := do(t, req)
		if cc := resp.Header.Get("Cache-Control"); cc != "no-cache" {
			t.Errorf("index.html: Cache-Control %q, want no-cache", cc)
		}
		return srv, index
	}
	srv, index := serve(files)
	m := regexp.MustCompile(`<script type="module" src="/v/([0-9a-f]+)/js/main.js"></script>`).FindStringSubmatch(index)
	if m == nil {
		t.Fatalf("the entry module is not named by version:\n%s", index)
	}
	v := m[1]
	for _, want := range []string{`href="/v/` + v + `/css/app.css"`, `src="/v/` + v + `/js/theme.js"`,
		`<link rel="modulepreload" href="/v/` + v + `/js/core/a.js">`, `src="img/mark.svg"`} {
		if !strings.Contains(index, want) {
			t.Errorf("index.html lacks %s:\n%s", want, index)
		}
	}
	get := func(p string) (string, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+p, nil)
		resp, body := do(t, req)
		return resp.Status + " " + resp.Header.Get("Cache-Control"), body
	}
	forGood := "200 OK public, max-age=31536000, immutable"
	for p, want := range map[string]string{
		"/v/" + v + "/js/core/a.js":    forGood,
		"/v/" + v + "/css/app.css":     forGood,
		"/js/core/a.js":                "200 OK no-cache",
		"/v/0123456789ab/js/core/a.js": "200 OK no-cache",
		"/v/" + v + "/js/nothing.js":   "404 Not Found no-cache",
	} {
		if got, body := get(p); got != want {
			t.Errorf("%s: %s, want %s", p, got, want)
		} else if strings.HasPrefix(want, "200") && body != "export const a = 1;" && body != "body{}" {
			t.Errorf("%s: served %q", p, body)
		}
	}

	// A changed module gives every file a new version.
	changed := fstest.MapFS{}
	for k, f := range files {
		changed[k] = f
	}
	changed["js/core/a.js"] = &fstest.MapFile{Data: []byte(`export const a = 2;`)}
	_, index2 := serve(changed)
	m2 := regexp.MustCompile(`src="/v/([0-9a-f]+)/js/main.js"`).FindStringSubmatch(index2)
	if m2 == nil || m2[1] == v {
		t.Errorf("a changed module left the version at %s: %q", v, m2)
	}
}
