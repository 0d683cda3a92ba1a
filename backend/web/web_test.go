package web

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/netguard"
	"github.com/llembas/lembas/backend/secrets"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/store/storetest"
	"github.com/llembas/lembas/backend/tools"
)

func capture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fake is the providers and pages, on loopback.
type fake struct {
	srv  *httptest.Server
	seen []*http.Request
	auth []string
}

func newFake(t *testing.T) *fake {
	f := &fake{}
	mux := http.NewServeMux()
	serve := func(status int, ct string, body []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			f.seen = append(f.seen, r)
			f.auth = append(f.auth, r.Header.Get("Authorization"))
			if ct != "" {
				w.Header().Set("Content-Type", ct)
			}
			w.WriteHeader(status)
			w.Write(body)
		}
	}
	mux.HandleFunc("/ddg/html/", serve(200, "text/html; charset=UTF-8", capture(t, "duckduckgo.html")))
	mux.HandleFunc("/ddg-captcha/html/", serve(202, "text/html; charset=UTF-8", capture(t, "duckduckgo_captcha.html")))
	mux.HandleFunc("/ddg-empty/html/", serve(200, "text/html; charset=UTF-8", capture(t, "duckduckgo_empty.html")))
	mux.HandleFunc("/searx/search", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("format") != "json" {
			http.Error(w, "html", 400)
			return
		}
		serve(200, "application/json", capture(t, "searxng.json"))(w, r)
	})
	mux.HandleFunc("/searx-nojson/search", serve(403, "text/html", []byte("<h1>403 Forbidden</h1>")))
	mux.HandleFunc("/searx-down/search", serve(200, "application/json", capture(t, "searxng_unresponsive.json")))
	mux.HandleFunc("/fc/v1/search", serve(200, "application/json", capture(t, "firecrawl_v1.json")))
	mux.HandleFunc("/fc/v2/search", serve(200, "application/json", capture(t, "firecrawl_v2.json")))
	mux.HandleFunc("/fc401/v1/search", serve(401, "application/json", capture(t, "firecrawl_401.json")))
	mux.HandleFunc("/fc402/v1/search", serve(402, "application/json", capture(t, "firecrawl_402.json")))
	mux.HandleFunc("/article", serve(200, "text/html; charset=utf-8", capture(t, "article.html")))
	mux.HandleFunc("/latin1", serve(200, "text/html", capture(t, "latin1.html")))
	mux.HandleFunc("/notes.txt", serve(200, "text/plain; charset=utf-8", []byte("line one\x1b[31m\n\n\n\nline two\n")))
	mux.HandleFunc("/paper.pdf", serve(200, "application/pdf", []byte("%PDF-1.7\n")))
	mux.HandleFunc("/photo", serve(200, "image/png", []byte("\x89PNG\r\n\x1a\n")))
	mux.HandleFunc("/untyped", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // no type: sniffed
		w.Write([]byte("%PDF-1.4 binary"))
	})
	mux.HandleFunc("/scripts-only", serve(200, "text/html", []byte(`<html><head><title>Tiny</title><script>var x = "hidden";</script></head><body><span>Just one line.</span></body></html>`)))
	mux.HandleFunc("/big", serve(200, "text/plain", bytes.Repeat([]byte("0123456789\n"), 100000)))
	mux.HandleFunc("/missing", serve(404, "text/html", []byte("<h1>Not Found</h1>")))
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/article", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func newService(t *testing.T, f *fake, opt Options) (*Service, *store.DB) {
	t.Helper()
	db := storetest.Open(t)
	keeper, err := secrets.Resolve(context.Background(), secrets.Options{DataDir: t.TempDir(), NoKeychain: true}, &memLedger{})
	if err != nil {
		t.Fatal(err)
	}
	if opt.Guard.Allow == nil {
		opt.Guard.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	}
	if f != nil {
		if opt.DuckDuckGoURL == "" {
			opt.DuckDuckGoURL = f.srv.URL + "/ddg/html/"
		}
		if opt.FirecrawlURL == "" {
			opt.FirecrawlURL = f.srv.URL + "/fc/v1/search"
		}
	}
	s := New(db, func() (*secrets.Keeper, error) { return keeper, nil }, slog.New(slog.NewTextHandler(io.Discard, nil)), opt)
	return s, db
}

func set(t *testing.T, s *Service, in SettingsInput) Settings {
	t.Helper()
	v, err := s.Set(context.Background(), in)
	if err != nil {
		t.Fatalf("Set: %v", err)
	}
	return v
}

func ptr[T any](v T) *T { return &v }

func urls(hits []tools.SearchHit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.URL)
	}
	return out
}

func equal(a, b []string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n")
}

func TestDuckDuckGo(t *testing.T) {
	f := newFake(t)
	s, _ := newService(t, f, Options{})
	ctx := context.Background()
	if s.SearchReady(ctx) {
		t.Fatal("ready with no provider")
	}
	set(t, s, SettingsInput{Provider: ptr(ProviderDuckDuckGo)})
	if !s.SearchReady(ctx) {
		t.Fatal("not ready with DuckDuckGo chosen")
	}
	hits, err := s.Search(ctx, "golang readability", 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"https://codeberg.org/readeck/go-readability", "https://pkg.go.dev/golang.org/x/net/html?tab=doc&lang=en",
		"https://github.com/mozilla/readability"}
	if !equal(urls(hits), want) {
		t.Fatalf("URLs %q, want %q (ad and javascript: dropped, redirects unwrapped)", urls(hits), want)
	}
	if hits[0].Title != "readeck/go-readability - Codeberg.org" {
		t.Errorf("title %q", hits[0].Title)
	}
	if !strings.HasPrefix(hits[0].Snippet, "Go package that cleans a HTML page for better readability. This package is fork of go-shiori/go-readability") {
		t.Errorf("snippet %q", hits[0].Snippet)
	}
	if strings.ContainsRune(hits[1].Snippet, '\u202e') {
		t.Errorf("a bidirectional override survived: %q", hits[1].Snippet)
	}
	if q := f.seen[len(f.seen)-1].URL.Query().Get("q"); q != "golang readability" {
		t.Errorf("query sent %q", q)
	}
	// n bounds the hits; the instance's number bounds n.
	if hits, _ := s.Search(ctx, "x", 1); len(hits) != 1 {
		t.Errorf("n=1 gave %d hits", len(hits))
	}
	set(t, s, SettingsInput{Results: ptr(2)})
	if hits, _ := s.Search(ctx, "x", 10); len(hits) != 2 {
		t.Errorf("results=2 gave %d hits", len(hits))
	}
}

func TestDuckDuckGoCaptchaAndEmpty(t *testing.T) {
	f := newFake(t)
	s, _ := newService(t, f, Options{DuckDuckGoURL: "placeholder"})
	s.opt.DuckDuckGoURL = f.srv.URL + "/ddg-captcha/html/"
	set(t, s, SettingsInput{Provider: ptr(ProviderDuckDuckGo)})
	_, err := s.Search(context.Background(), "golang", 5)
	if err == nil || !strings.Contains(err.Error(), "captcha") {
		t.Errorf("captcha page: %v, want an error that says captcha", err)
	}
	s.opt.DuckDuckGoURL = f.srv.URL + "/ddg-empty/html/"
	hits, err := s.Search(context.Background(), "zzqqxxnotaword", 5)
	if err != nil || len(hits) != 0 {
		t.Errorf("empty page: %v, %v; want no hits and no error", hits, err)
	}
}

func TestSearXNG(t *testing.T) {
	f := newFake(t)
	s, _ := newService(t, f, Options{})
	ctx := context.Background()
	if _, err := s.Set(ctx, SettingsInput{Provider: ptr(ProviderSearXNG)}); err == nil {
		t.Error("SearXNG chosen without an address")
	}
	v := set(t, s, SettingsInput{Provider: ptr(ProviderSearXNG), SearXNGURL: ptr(f.srv.URL + "/searx/")})
	if v.SearXNGURL != f.srv.URL+"/searx" {
		t.Errorf("stored address %q", v.SearXNGURL)
	}
	hits, err := s.Search(ctx, "golang readability", 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"https://codeberg.org/readeck/go-readability", "https://github.com/mozilla/readability", "https://pkg.go.dev/golang.org/x/net/html"}
	if !equal(urls(hits), want) {
		t.Fatalf("URLs %q, want %q (javascript: and the duplicate dropped)", urls(hits), want)
	}
	if strings.ContainsRune(hits[0].Snippet, '\a') {
		t.Errorf("a control character survived: %q", hits[0].Snippet)
	}

	set(t, s, SettingsInput{SearXNGURL: ptr(f.srv.URL + "/searx-nojson")})
	if _, err := s.Search(ctx, "x", 5); err == nil || !strings.Contains(err.Error(), "403") || !strings.Contains(err.Error(), "json") {
		t.Errorf("JSON disabled: %v", err)
	}
	set(t, s, SettingsInput{SearXNGURL: ptr(f.srv.URL + "/searx-down")})
	if _, err := s.Search(ctx, "x", 5); err == nil || !strings.Contains(err.Error(), "brave (too many requests)") {
		t.Errorf("engines down: %v", err)
	}
}

func TestFirecrawl(t *testing.T) {
	f := newFake(t)
	s, db := newService(t, f, Options{})
	ctx := context.Background()
	if _, err := s.Set(ctx, SettingsInput{Provider: ptr(ProviderFirecrawl)}); err == nil {
		t.Error("Firecrawl chosen without a key")
	}
	const key = "fc-0123456789abcdef0123456789abcdef"
	v := set(t, s, SettingsInput{Provider: ptr(ProviderFirecrawl), FirecrawlKey: ptr(key)})
	if !v.FirecrawlKeySet {
		t.Error("the view does not say a key is set")
	}
	// Encrypted at rest, and counted as an encrypted value.
	stored, _, _ := db.Setting(ctx, SettingFirecrawlKey)
	if stored == "" || strings.Contains(stored, key) {
		t.Errorf("stored key %q is not a token", stored)
	}
	if has, err := db.HasEncrypted(ctx); err != nil || !has {
		t.Errorf("HasEncrypted = %v, %v; want true", has, err)
	}
	for _, path := range []string{"/fc/v1/search", "/fc/v2/search"} {
		s.opt.FirecrawlURL = f.srv.URL + path
		hits, err := s.Search(ctx, "golang readability", 5)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(hits) != 2 || hits[1].URL != "https://github.com/mozilla/readability" || hits[1].Snippet == "" {
			t.Errorf("%s: hits %+v", path, hits)
		}
		if got := f.auth[len(f.auth)-1]; got != "Bearer "+key {
			t.Errorf("%s: Authorization %q", path, got)
		}
	}
	for path, want := range map[string]string{"/fc401/v1/search": "refused the API key", "/fc402/v1/search": "no credits"} {
		s.opt.FirecrawlURL = f.srv.URL + path
		_, err := s.Search(ctx, "x", 5)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), key) {
			t.Errorf("%s: %v, want %q and no key", path, err, want)
		}
	}
	v = set(t, s, SettingsInput{Provider: ptr(ProviderNone), FirecrawlKey: ptr("")})
	if v.FirecrawlKeySet {
		t.Error("key still set after clearing")
	}
}

func TestParseAllow(t *testing.T) {
	ok, err := ParseAllow([]string{"192.168.1.0/24", " 10.0.0.5 ", "", "fd00:1234::/48", "127.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	if got := []string{ok[0].String(), ok[1].String(), ok[2].String(), ok[3].String()}; !equal(got, []string{"192.168.1.0/24", "10.0.0.5/32", "fd00:1234::/48", "127.0.0.0/8"}) {
		t.Errorf("parsed %q", got)
	}
	for _, bad := range []string{"0.0.0.0/0", "::/0", "128.0.0.0/1", "10.0.0.0/7", "2000::/3", "192.168.1.5/24",
		"169.254.0.0/16", "169.254.169.254", "fd00:ec2::/32", "::ffff:0:0/96", "::ffff:192.168.1.1", "64:ff9b::/96",
		"2002::/16", "fe80::1%eth0", "lan", "192.168.1.0/33"} {
		if _, err := ParseAllow([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// A SearXNG on this machine's network is refused when saved unless its
// range is allowed, and then it is searched through the guard.
func TestSearXNGOnTheLANNeedsTheAllowList(t *testing.T) {
	f := newFake(t)
	s, _ := newService(t, f, Options{Guard: notAllowed()})
	ctx := context.Background()
	_, err := s.Set(ctx, SettingsInput{Provider: ptr(ProviderSearXNG), SearXNGURL: ptr(f.srv.URL + "/searx")})
	if err == nil || !strings.Contains(err.Error(), "allowed ranges") {
		t.Fatalf("loopback SearXNG saved without the allow-list: %v", err)
	}
	set(t, s, SettingsInput{Allow: ptr([]string{"127.0.0.1/32"}), Provider: ptr(ProviderSearXNG), SearXNGURL: ptr(f.srv.URL + "/searx")})
	if hits, err := s.Search(ctx, "x", 5); err != nil || len(hits) == 0 {
		t.Fatalf("allowed SearXNG: %v, %v", hits, err)
	}
	// Taking the range away again closes it, even for the saved address.
	set(t, s, SettingsInput{Allow: ptr([]string{})})
	_, err = s.Search(ctx, "x", 5)
	if err == nil || !strings.Contains(err.Error(), "private or special network") {
		t.Errorf("SearXNG searched after its range was removed: %v", err)
	}
}

// Guard, which other tools build their clients on, is the base guard
// widened by the allowed ranges saved now.
func TestGuardCarriesTheAllowList(t *testing.T) {
	s, _ := newService(t, nil, Options{Guard: notAllowed()})
	ctx := context.Background()
	lan := netip.MustParseAddr("192.168.1.20")
	g, err := s.Guard(ctx)
	if err != nil || g.Check(lan) == nil {
		t.Fatalf("before the allow-list: %v, %v", g.Check(lan), err)
	}
	set(t, s, SettingsInput{Allow: ptr([]string{"192.168.1.0/24"})})
	if g, err = s.Guard(ctx); err != nil || g.Check(lan) != nil || g.Check(netip.MustParseAddr("127.0.0.1")) == nil {
		t.Errorf("after allowing 192.168.1.0/24: lan %v, loopback %v, %v", g.Check(lan), g.Check(netip.MustParseAddr("127.0.0.1")), err)
	}
}

// notAllowed is a guard with an empty (non-nil) allow-list, so newService
// does not open loopback.
func notAllowed() netguard.Guard { return netguard.Guard{Allow: []netip.Prefix{}} }

// memLedger is a key ledger with nothing encrypted yet.
type memLedger struct{ rec *secrets.Record }

func (l *memLedger) KeyRecord(context.Context) (secrets.Record, bool, error) {
	if l.rec == nil {
		return secrets.Record{}, false, nil
	}
	return *l.rec, true, nil
}
func (l *memLedger) SetKeyRecord(_ context.Context, r secrets.Record) error { l.rec = &r; return nil }
func (l *memLedger) HasEncrypted(context.Context) (bool, error)             { return false, nil }

func TestFetch(t *testing.T) {
	f := newFake(t)
	s, _ := newService(t, f, Options{})
	ctx := context.Background()
	p, err := s.Fetch(ctx, f.srv.URL+"/moved")
	if err != nil {
		t.Fatal(err)
	}
	if p.URL != f.srv.URL+"/article" {
		t.Errorf("URL %q, want the one after the redirect", p.URL)
	}
	if !strings.Contains(p.Title, "Baking lembas at home") {
		t.Errorf("title %q", p.Title)
	}
	for _, want := range []string{"Waybread keeps for weeks", "Roll the dough", "Stored in a tin"} {
		if !strings.Contains(p.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, p.Text)
		}
	}
	for _, not := range []string{"tracking code", "footer script", "font-family", "Sourdough basics", "All rights reserved"} {
		if strings.Contains(p.Text, not) {
			t.Errorf("text holds %q:\n%s", not, p.Text)
		}
	}
	t.Logf("article as read:\n%s", p.Text)
	if p.Truncated {
		t.Error("a small page truncated")
	}

	p, err = s.Fetch(ctx, f.srv.URL+"/latin1")
	if err != nil || !strings.Contains(p.Text, "Un café crème coûte 3€ – déjà vu.") || p.Title != "Café crème" {
		t.Errorf("windows-1252 page: %q %q %v", p.Title, p.Text, err)
	}
	p, err = s.Fetch(ctx, f.srv.URL+"/notes.txt")
	if err != nil || p.Text != "line one[31m\n\nline two" {
		t.Errorf("plain text: %q %v", p.Text, err)
	}
	p, err = s.Fetch(ctx, f.srv.URL+"/scripts-only")
	if err != nil || p.Text != "Just one line." || p.Title != "Tiny" {
		t.Errorf("page readability finds nothing in: %q %q %v", p.Title, p.Text, err)
	}
	p, err = s.Fetch(ctx, f.srv.URL+"/big")
	if err != nil || !p.Truncated || len([]rune(p.Text)) > 40000 {
		t.Errorf("big page: truncated %v, %d characters, %v", p.Truncated, len([]rune(p.Text)), err)
	}
	for path, want := range map[string]string{"/paper.pdf": "is a PDF, which fetch_url cannot read", "/photo": "is an image (image/png)",
		"/untyped": "is a PDF", "/missing": "answered 404 Not Found"} {
		if _, err := s.Fetch(ctx, f.srv.URL+path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
	for _, bad := range []string{"file:///etc/passwd", "javascript:alert(1)", "ftp://example.org/", "not a url"} {
		if _, err := s.Fetch(ctx, bad); err == nil {
			t.Errorf("%s fetched", bad)
		}
	}
}

func TestFetchThroughTheGuard(t *testing.T) {
	f := newFake(t)
	s, _ := newService(t, f, Options{Guard: notAllowed()})
	_, err := s.Fetch(context.Background(), f.srv.URL+"/article")
	if err == nil || !strings.Contains(err.Error(), "private or special network") {
		t.Errorf("fetched a loopback page: %v", err)
	}
	_, err = s.Fetch(context.Background(), "http://169.254.169.254/latest/meta-data/")
	if err == nil || !strings.Contains(err.Error(), "private or special network") {
		t.Errorf("metadata: %v", err)
	}
}

func TestFetchTimeout(t *testing.T) {
	f := newFake(t)
	s, _ := newService(t, f, Options{Timeout: 300 * time.Millisecond})
	_, err := s.Fetch(context.Background(), f.srv.URL+"/hang")
	if err == nil || !strings.Contains(err.Error(), "did not answer in time") {
		t.Errorf("hanging server: %v", err)
	}
}
