package httpapi

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/events"
)

type echo struct{}

func (echo) Say(ctx context.Context, s string) (string, error) { return s, nil }

var files = fstest.MapFS{
	"index.html":   {Data: []byte(`<html><head><meta name="lembas-transport" content="http"></head></html>`)},
	"404.html":     {Data: []byte(`<p>Not all those who wander are lost.</p>`)},
	"css/app.css":  {Data: []byte(`body{}`)},
	"embed.go":     {Data: []byte(`package frontend`)},
	"js/main.js":   {Data: []byte(`export {}`)},
	"img/mark.svg": {Data: []byte(`<svg/>`)},
}

func newServer(t *testing.T, desktop bool, hb time.Duration) (*httptest.Server, *events.Bus) {
	t.Helper()
	d := api.NewDispatcher(slog.New(slog.DiscardHandler))
	d.Register("Echo", echo{}, api.Guards{"Say": api.SignedIn})
	bus := events.NewBus()
	h, err := New(Options{
		Dispatcher: d, Bus: bus, Files: files, Log: slog.New(slog.DiscardHandler),
		Desktop: desktop, CheckHost: !desktop, AllowedHosts: []string{"lembas.home.arpa", "nas:8484"},
		Caller:    func(*http.Request) (api.Caller, error) { return api.Caller{UserID: 1}, nil },
		Heartbeat: hb,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, bus
}

func do(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

func post(url, body string, hdr ...string) *http.Request {
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return req
}

func TestCallAndErrors(t *testing.T) {
	srv, _ := newServer(t, false, 0)
	tests := []struct {
		name   string
		req    *http.Request
		status int
		body   string
	}{
		{"ok", post(srv.URL+"/api/Echo.Say", `["hi"]`), 200, `"hi"`},
		{"unknown method", post(srv.URL+"/api/Echo.Nope", `[]`), 404, `"kind":"not_found"`},
		{"bad args", post(srv.URL+"/api/Echo.Say", `[1]`), 400, `"kind":"invalid"`},
		{"form post", post(srv.URL+"/api/Echo.Say", `a=b`, "Content-Type", "application/x-www-form-urlencoded"), 400, "application/json"},
		{"too large", post(srv.URL+"/api/Echo.Say", `["`+strings.Repeat("x", MaxCallBody)+`"]`), 413, "too large"},
		{"api GET", func() *http.Request { r, _ := http.NewRequest("GET", srv.URL+"/api/Echo.Say", nil); return r }(), 404, "no such API route"},
		{"cross-origin POST", post(srv.URL+"/api/Echo.Say", `["x"]`, "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"), 403, "cross-origin"},
		{"cross-origin POST without fetch metadata", post(srv.URL+"/api/Echo.Say", `["x"]`, "Origin", "https://evil.example"), 403, "cross-origin"},
		{"same-origin POST", post(srv.URL+"/api/Echo.Say", `["x"]`, "Sec-Fetch-Site", "same-origin"), 200, `"x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := do(t, tt.req)
			if resp.StatusCode != tt.status || !strings.Contains(body, tt.body) {
				t.Errorf("%d %.200s, want %d containing %q", resp.StatusCode, body, tt.status, tt.body)
			}
			if resp.Header.Get("Content-Security-Policy") != CSP || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("security headers missing: %v", resp.Header)
			}
		})
	}
}

func TestHostAllowlist(t *testing.T) {
	srv, _ := newServer(t, false, 0)
	for host, want := range map[string]int{
		"127.0.0.1:8484":        200,
		"192.168.1.20:8484":     200, // IP literals cannot be rebound
		"[::1]:8484":            200,
		"localhost:8484":        200,
		"lembas.home.arpa":      200,
		"LEMBAS.home.arpa:443":  200,
		"nas:8484":              200,
		"nas:9999":              403, // listed with a port: only that port
		"evil.example":          403,
		"attacker.rebind.test:": 403,
	} {
		req, _ := http.NewRequest("GET", srv.URL+"/", nil)
		req.Host = host
		resp, body := do(t, req)
		if resp.StatusCode != want {
			t.Errorf("Host %s: %d %s, want %d", host, resp.StatusCode, body, want)
		}
	}
}

func TestFilesAnd404(t *testing.T) {
	srv, _ := newServer(t, false, 0)
	get := func(p string) (*http.Response, string) {
		req, _ := http.NewRequest("GET", srv.URL+p, nil)
		return do(t, req)
	}
	resp, body := get("/")
	if resp.StatusCode != 200 || !strings.Contains(body, `content="http"`) || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("index: %d %s %v", resp.StatusCode, body, resp.Header)
	}
	etag := resp.Header.Get("ETag")
	req, _ := http.NewRequest("GET", srv.URL+"/", nil)
	req.Header.Set("If-None-Match", etag)
	if resp, _ := do(t, req); resp.StatusCode != http.StatusNotModified {
		t.Errorf("revalidation: %d", resp.StatusCode)
	}
	if resp, _ := get("/js/main.js"); resp.Header.Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Errorf("module MIME type %q (browsers refuse modules served otherwise)", resp.Header.Get("Content-Type"))
	}
	for _, p := range []string{"/no/such/page", "/embed.go", "/../etc/passwd"} {
		resp, body := get(p)
		if resp.StatusCode != 404 || !strings.Contains(body, "Not all those who wander") {
			t.Errorf("%s: %d %s", p, resp.StatusCode, body)
		}
	}
	resp, _ = do(t, post(srv.URL+"/index.html", "", "Sec-Fetch-Site", "same-origin"))
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST to a file: %d", resp.StatusCode)
	}
}

func TestDesktopMountTellsFrontendItsTransport(t *testing.T) {
	srv, _ := newServer(t, true, 0)
	req, _ := http.NewRequest("GET", srv.URL+"/", nil)
	req.Host = "wails" // the desktop mount does not check hosts
	resp, body := do(t, req)
	if resp.StatusCode != 200 || !strings.Contains(body, `<meta name="lembas-transport" content="desktop">`) {
		t.Errorf("desktop index: %d %s", resp.StatusCode, body)
	}
}

func TestSSEHeartbeatAndDisconnect(t *testing.T) {
	srv, bus := newServer(t, false, 20*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	var pings int
	for sc.Scan() && pings < 2 {
		if sc.Text() == ": ping" {
			pings++
		}
	}
	bus.Publish(events.Event{Topic: "t", UserID: 1, Data: "a\nb"})
	bus.Publish(events.Event{Topic: "other-user", UserID: 2})
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "data:") {
			if line != `data: {"topic":"t","data":"a\nb"}` {
				t.Errorf("frame %q", line)
			}
			break
		}
	}
	if bus.Followers() != 1 {
		t.Fatalf("followers = %d", bus.Followers())
	}
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(5 * time.Second)
	for bus.Followers() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if bus.Followers() != 0 {
		t.Error("follower not removed after the client went away")
	}
}

func TestFrameSplitsLines(t *testing.T) {
	got, _ := Frame(map[string]string{"a": "x"})
	if got != "data: {\"a\":\"x\"}\n\n" {
		t.Errorf("%q", got)
	}
}

func TestHostAllowedEdgeCases(t *testing.T) {
	if HostAllowed("", nil) {
		t.Error("empty Host allowed")
	}
	if !HostAllowed("app.localhost:8484", nil) {
		t.Error("*.localhost refused")
	}
}
