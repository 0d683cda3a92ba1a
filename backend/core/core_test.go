package core

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/config"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/frontend"
)

func testConfig(t *testing.T) config.Config {
	t.Helper()
	cfg, err := config.Load(func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = t.TempDir()
	cfg.NoKeychain = true
	cfg.SelfTest = true
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func openTest(t *testing.T, opened *[]string) *Core {
	t.Helper()
	c, err := Open(context.Background(), testConfig(t), Options{
		Mode:    Serve,
		Version: "test",
		Files:   frontend.FS(),
		Log:     slog.New(slog.DiscardHandler),
		OpenURL: func(u string) error { *opened = append(*opened, u); return nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// facadeCalls says how to call every facade method and what it should
// answer. The test fails when a method is registered without an entry here,
// so a new method cannot go untested through both paths.
var facadeCalls = map[string]struct {
	args []any
	kind apperr.Kind // "" means success
}{
	"App.Info":      {nil, ""},
	"App.OpenURL":   {[]any{"https://example.org/"}, ""},
	"Prefs.Get":     {nil, ""},
	"Prefs.Set":     {[]any{map[string]any{"theme": "shire"}}, ""},
	"Diag.NilDeref": {nil, apperr.Internal},
	"Diag.Emit":     {[]any{"selftest", map[string]int{"n": 1}}, ""},
	"Diag.Report":   {[]any{"step", true, "detail"}, ""},
}

func TestEveryFacadeMethodOverBothPaths(t *testing.T) {
	var opened []string
	c := openTest(t, &opened)
	h, err := c.Handler(false)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	for _, m := range c.Dispatcher.Methods() {
		tc, ok := facadeCalls[m.Name]
		if !ok {
			t.Errorf("%s has no entry in facadeCalls: add one", m.Name)
			continue
		}
		args, _ := json.Marshal(tc.args)
		if tc.args == nil {
			args = []byte("[]")
		}
		t.Run(m.Name, func(t *testing.T) {
			// The path the desktop bridge takes: straight into the dispatcher.
			res := c.Dispatcher.Call(context.Background(), c.OwnerCaller(), m.Name, args)
			if tc.kind == "" && res.Error != nil {
				t.Fatalf("dispatcher: %+v", res.Error)
			}
			if tc.kind != "" && (res.Error == nil || res.Error.Kind != tc.kind) {
				t.Fatalf("dispatcher: %+v, want kind %s", res, tc.kind)
			}
			// Over HTTP.
			resp, err := http.Post(srv.URL+"/api/"+m.Name, "application/json", strings.NewReader(string(args)))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			wantStatus := http.StatusOK
			if tc.kind != "" {
				wantStatus = apperr.HTTPStatus(tc.kind)
			}
			if resp.StatusCode != wantStatus {
				t.Fatalf("HTTP %d %s, want %d", resp.StatusCode, body, wantStatus)
			}
			if tc.kind == "" && res.Error == nil && m.Name != "App.Info" && string(body) != string(res.Result) {
				t.Errorf("HTTP answered %s, dispatcher %s", body, res.Result)
			}
		})
	}
	for name := range facadeCalls {
		found := false
		for _, m := range c.Dispatcher.Methods() {
			found = found || m.Name == name
		}
		if !found {
			t.Errorf("facadeCalls lists %s, which is not registered", name)
		}
	}
	if len(opened) != 2 || opened[0] != "https://example.org/" {
		t.Errorf("opener called with %v", opened)
	}
}

func TestInfoDescribesInstance(t *testing.T) {
	var opened []string
	c := openTest(t, &opened)
	res := c.Dispatcher.Call(context.Background(), c.OwnerCaller(), "App.Info", nil)
	var info api.Info
	if err := json.Unmarshal(res.Result, &info); err != nil {
		t.Fatal(err, res.Error)
	}
	if info.DataDir != c.Config.DataDir || info.Mode != "serve" || info.Counts["users"] != 1 || info.InstanceName != "LLeMbas" {
		t.Errorf("info = %+v", info)
	}
	if !strings.Contains(info.KeySource, "key file") {
		t.Errorf("key source %q; with no keychain it should be the key file", info.KeySource)
	}
	if !c.Owner.IsAdmin || !c.Owner.IsOwner {
		t.Errorf("owner = %+v", c.Owner)
	}
}

func TestSecondOpenIsRefused(t *testing.T) {
	var opened []string
	c := openTest(t, &opened)
	_, err := Open(context.Background(), c.Config, Options{Mode: Desktop, Files: frontend.FS()})
	if !errors.Is(err, store.ErrLocked) {
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
}

func TestReopenKeepsOwnerAndKey(t *testing.T) {
	cfg := testConfig(t)
	opt := Options{Mode: Serve, Files: frontend.FS()}
	c1, err := Open(context.Background(), cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	k1, err := c1.Secrets()
	if err != nil {
		t.Fatal(err)
	}
	tok, err := k1.Encrypt("sk-test")
	if err != nil {
		t.Fatal(err)
	}
	owner := c1.Owner.ID
	c1.Close()
	c2, err := Open(context.Background(), cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	k2, err := c2.Secrets()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := k2.Decrypt(tok); err != nil || got != "sk-test" {
		t.Errorf("decrypt after reopen = %q, %v", got, err)
	}
	if c2.Owner.ID != owner {
		t.Errorf("owner changed: %d → %d", owner, c2.Owner.ID)
	}
}

func TestEventsReachTheCallerOverSSE(t *testing.T) {
	var opened []string
	c := openTest(t, &opened)
	h, _ := c.Handler(false)
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	// Wait until subscribed (the first comment is written after Subscribe).
	for sc.Scan() && sc.Text() != ": connected" {
	}
	http.Post(srv.URL+"/api/Prefs.Set", "application/json", strings.NewReader(`[{"theme":"moria"}]`))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "data: ") {
			if want := `data: {"topic":"prefs","data":{"theme":"moria"}}`; line != want {
				t.Fatalf("got %s, want %s", line, want)
			}
			break
		}
	}
	c.StopStreams()
	for sc.Scan() {
	}
	if c.Bus.Followers() != 0 {
		t.Errorf("followers after stop = %d", c.Bus.Followers())
	}
}

// BenchmarkHTTPCall is one facade call over loopback HTTP through the whole
// handler (security headers, cross-origin check, dispatcher, SQLite read).
func BenchmarkHTTPCall(b *testing.B) {
	cfg, _ := config.Load(func(string) (string, bool) { return "", false })
	cfg.DataDir = b.TempDir()
	cfg.NoKeychain = true
	cfg.Validate()
	c, err := Open(context.Background(), cfg, Options{Mode: Serve, Files: frontend.FS()})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	h, _ := c.Handler(false)
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := srv.Client()
	b.ReportAllocs()
	for b.Loop() {
		resp, err := client.Post(srv.URL+"/api/Prefs.Get", "application/json", strings.NewReader("[]"))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatal(resp.Status)
		}
	}
}
