package httpapi

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/events"
)

// panicAvatars panics in every method: the stand-in for a bug in a route.
type panicAvatars struct{}

var _ Avatars = panicAvatars{}

func (panicAvatars) Avatar(context.Context, api.Caller, int64) ([]byte, string, error) {
	panic("avatar store bug")
}

func (panicAvatars) SetAvatar(context.Context, api.Caller, int64, []byte) error { return nil }

func (panicAvatars) DeleteAvatar(context.Context, api.Caller, int64) error { return nil }

// syncBuffer is a log sink tests can read while handlers write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func panicHandler(t *testing.T, desktop bool) (http.Handler, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	h, err := New(Options{
		Dispatcher: api.NewDispatcher(slog.New(slog.DiscardHandler)), Bus: events.NewBus(), Files: files,
		Log: slog.New(slog.NewTextHandler(logs, nil)), Desktop: desktop,
		Caller:  func(*http.Request) (api.Caller, error) { return api.Caller{UserID: 1}, nil },
		Avatars: panicAvatars{}, SelfTest: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return h, logs
}

// TestPanicInRouteIsRecovered calls the handler the way Wails' asset server
// does, with no recover around it: a panicking route must answer an
// internal error and leave the handler (and the process) serving.
func TestPanicInRouteIsRecovered(t *testing.T) {
	h, logs := panicHandler(t, true)
	for _, req := range []*http.Request{
		httptest.NewRequest("GET", "/api/models/3/avatar", nil),
		httptest.NewRequest("GET", "/api/selftest/panic", nil),
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req) // a panic escaping here fails the whole test binary
		body := rec.Body.String()
		if rec.Code != http.StatusInternalServerError || !strings.Contains(body, `"kind":"internal"`) {
			t.Errorf("%s %s: %d %s, want 500 internal", req.Method, req.URL.Path, rec.Code, body)
		}
		if strings.Contains(body, "bug") || strings.Contains(body, "self-test") {
			t.Errorf("the panic's text reached the client: %s", body)
		}
		if rec.Header().Get("Content-Security-Policy") != CSP {
			t.Errorf("security headers missing on the recovered answer: %v", rec.Header())
		}
	}
	log := logs.String()
	if !strings.Contains(log, `msg="panic in route"`) || !strings.Contains(log, "avatar store bug") || !strings.Contains(log, "route_test.go") {
		t.Errorf("the panic was not logged with its stack:\n%.2000s", log)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/css/app.css", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("after the panics: %d", rec.Code)
	}
}

// TestAbortHandlerPanicStaysInTheDesktopRoute: http.ErrAbortHandler is
// net/http's way to drop a connection, which its server recovers; Wails'
// asset server recovers nothing, so there it must not escape either.
func TestAbortHandlerPanicStaysInTheDesktopRoute(t *testing.T) {
	hh := &handler{opt: Options{Log: slog.New(slog.DiscardHandler), Desktop: true}}
	h := hh.guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		panic(http.ErrAbortHandler)
	}))
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("the panic escaped the desktop route: %v", p)
		}
	}()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/files/1", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("answered %d, want 500", rec.Code)
	}
}

// TestPanicAfterHeadersAbortsTheConnection: once a listening server has
// begun a response, the recovered panic cuts the connection instead of
// appending an error to a response that would look whole.
func TestPanicAfterHeadersAbortsTheConnection(t *testing.T) {
	hh := &handler{opt: Options{Log: slog.New(slog.DiscardHandler)}}
	srv := httptest.NewServer(
		// The adapter around a handler that panics mid-body.
		hh.guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "100")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, "partial")
			http.NewResponseController(w).Flush()
			panic("mid-body")
		})))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		return // aborted before the headers arrived: also not a whole answer
	}
	defer resp.Body.Close()
	if b, err := io.ReadAll(resp.Body); err == nil {
		t.Errorf("read %q with no error; the connection should have been cut", b)
	}
}

// TestPanicBeforeTheBodyDropsItsHeaders: headers a route set for the body
// it never sent (a length, a download name) must not describe the error.
func TestPanicBeforeTheBodyDropsItsHeaders(t *testing.T) {
	hh := &handler{opt: Options{Log: slog.New(slog.DiscardHandler)}}
	srv := httptest.NewServer(hh.guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000")
		w.Header().Set("Content-Disposition", `attachment; filename="big.bin"`)
		panic("before the body")
	})))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusInternalServerError || !strings.Contains(string(b), `"kind":"internal"`) {
		t.Errorf("%d %q %v, want a whole 500 internal answer", resp.StatusCode, b, err)
	}
	if d := resp.Header.Get("Content-Disposition"); d != "" {
		t.Errorf("the error came as a download: %s", d)
	}
}

// TestEveryRouteGoesThroughTheAdapter: a route registered on the mux
// directly would run without recover in the desktop app.
func TestEveryRouteGoesThroughTheAdapter(t *testing.T) {
	paths, _ := filepath.Glob("*.go")
	direct := regexp.MustCompile(`\.mux\.Handle(Func)?\(`)
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") || p == "route.go" {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if loc := direct.FindIndex(b); loc != nil {
			line := bytes.Count(b[:loc[0]], []byte("\n")) + 1
			t.Errorf("%s:%d registers a route on the mux directly; use h.handle or h.handleAs", p, line)
		}
	}
}
