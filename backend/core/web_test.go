package core

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/httpapi"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/netguard"
	"github.com/llembas/lembas/frontend"
)

// The household server's web layer, end to end over a real socket: the
// handler a listening --serve uses, on a real database.

// clock is a settable time for session expiry.
type clock struct{ ns atomic.Int64 }

func (c *clock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// syncBuf is a log sink safe for concurrent writes.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type web struct {
	t     *testing.T
	c     *Core
	srv   *httptest.Server
	clock *clock
	log   *syncBuf
}

type webOptions struct {
	proxies []netip.Prefix
	limits  *auth.LoginLimits
	// audioLoopback lets users' own voice servers be on 127.0.0.1 (the
	// fake audio server); the guard refuses it otherwise.
	audioLoopback bool
	// writeTimeout, maxDownloads and downloadWait tune file downloads
	// (core.Options); zero values are the defaults.
	writeTimeout time.Duration
	maxDownloads int
	downloadWait time.Duration
}

func newWeb(t *testing.T, o webOptions) *web {
	t.Helper()
	w := &web{t: t, clock: &clock{}, log: &syncBuf{}}
	w.clock.ns.Store(time.Now().UnixNano())
	cfg := testConfig(t, true)
	cfg.TrustedProxies = o.proxies
	opt := Options{
		Mode:      Serve,
		Version:   "test",
		Files:     frontend.FS(),
		Log:       slog.New(slog.NewTextHandler(w.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Password:  auth.Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32},
		Sessions:  auth.SessionOptions{Now: w.clock.Now},
		Login:     o.limits,
		Heartbeat: 50 * time.Millisecond,

		WriteTimeout: o.writeTimeout,
		MaxDownloads: o.maxDownloads,
		DownloadWait: o.downloadWait,
	}
	if o.audioLoopback {
		opt.AudioGuard = netguard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	}
	c, err := Open(context.Background(), cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	h, err := c.Handler(false)
	if err != nil {
		t.Fatal(err)
	}
	w.c, w.srv = c, httptest.NewServer(h)
	t.Cleanup(func() {
		c.StopStreams()
		w.srv.Close()
		c.Close()
	})
	return w
}

func newClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 30 * time.Second}
}

// post sends JSON to path and returns the status and body.
func (w *web) post(c *http.Client, path string, body any, hdr ...string) (int, string) {
	w.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", w.srv.URL+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			// The client's jar goes by the Host, not the URL: carry the
			// cookies across by hand.
			req.Host = hdr[i+1]
			if c.Jar != nil {
				for _, ck := range c.Jar.Cookies(req.URL) {
					req.AddCookie(ck)
				}
			}
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	resp, err := c.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

func (w *web) signUp(c *http.Client, name, password string) (int, string) {
	return w.post(c, "/api/auth/signup", map[string]string{"username": name, "password": password})
}

func (w *web) login(c *http.Client, name, password string, hdr ...string) (int, string) {
	return w.post(c, "/api/auth/login", map[string]string{"username": name, "password": password}, hdr...)
}

func (w *web) call(c *http.Client, method string, args ...any) (int, string) {
	if args == nil {
		args = []any{}
	}
	return w.post(c, "/api/"+method, args)
}

func TestSignedOutAPIIsUnauthorized(t *testing.T) {
	w := newWeb(t, webOptions{})
	anon := newClient()
	for _, path := range []string{"/api/Chats.List", "/api/App.Info", "/api/Admin.Users", "/api/No.Such", "/api/models/1/avatar"} {
		if code, body := w.post(anon, path, []any{}); code != 401 || !strings.Contains(body, `"unauthorized"`) {
			t.Errorf("POST %s signed out: %d %s", path, code, body)
		}
	}
	for _, path := range []string{"/api/events", "/api/whatever"} {
		resp, err := anon.Get(w.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("GET %s signed out: %d", path, resp.StatusCode)
		}
	}
	// What must work signed out: the state, the app shell, the manifest.
	for _, path := range []string{"/api/auth/state", "/", "/manifest.webmanifest", "/sw.js", "/icons/icon-512.png"} {
		resp, err := anon.Get(w.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET %s signed out: %d", path, resp.StatusCode)
		}
		if path == "/manifest.webmanifest" && !strings.Contains(string(body), `"name":"LLeMbas"`) {
			t.Errorf("manifest lacks the instance name: %s", body)
		}
	}
	// A forged or garbage cookie is no better than none.
	for _, v := range []string{"x", strings.Repeat("A", 43), "../../etc/passwd"} {
		req, _ := http.NewRequest("POST", w.srv.URL+"/api/Chats.List", strings.NewReader("[]"))
		req.AddCookie(&http.Cookie{Name: httpapi.CookieName, Value: v})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("cookie %q: %d", v, resp.StatusCode)
		}
	}
}

func TestFirstSignUpIsTheOnlyAdminUnderConcurrency(t *testing.T) {
	w := newWeb(t, webOptions{limits: &auth.LoginLimits{
		PerAddress:  auth.LimitOptions{Burst: 100, Every: time.Second},
		PerUsername: auth.LimitOptions{Burst: 100, Every: time.Second},
	}})
	const n = 12
	var wg sync.WaitGroup
	results := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, body := w.signUp(newClient(), fmt.Sprintf("racer%d", i), "a-long-enough-password")
			results[i] = body
		}()
	}
	wg.Wait()
	admins := 0
	for _, r := range results {
		if strings.Contains(r, `"admin":true`) {
			admins++
		}
	}
	if admins != 1 {
		t.Fatalf("%d admins from %d concurrent first sign-ups:\n%s", admins, n, strings.Join(results, "\n"))
	}
	// The rest wait for approval (the default mode) and cannot sign in.
	pending := 0
	for _, r := range results {
		if strings.Contains(r, `"pending":true`) {
			pending++
		}
	}
	if pending != n-1 {
		t.Errorf("%d pending, want %d", pending, n-1)
	}
}

func TestCookieFlags(t *testing.T) {
	proxy := netip.MustParsePrefix("127.0.0.1/32")
	w := newWeb(t, webOptions{proxies: []netip.Prefix{proxy}})
	check := func(what string, hdr []string, secure bool) {
		t.Helper()
		b, _ := json.Marshal(map[string]string{"username": "frodo", "password": "a-long-enough-password"})
		path := "/api/auth/login"
		if what == "sign-up" {
			path = "/api/auth/signup"
		}
		req, _ := http.NewRequest("POST", w.srv.URL+path, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var ck *http.Cookie
		for _, c := range resp.Cookies() {
			if c.Name == httpapi.CookieName {
				ck = c
			}
		}
		if ck == nil {
			t.Fatalf("%s: no session cookie (status %d)", what, resp.StatusCode)
		}
		raw := resp.Header.Get("Set-Cookie")
		if !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Path != "/" || ck.MaxAge <= 0 || ck.Secure != secure {
			t.Errorf("%s: cookie %q; want HttpOnly, SameSite=Lax, Path=/, Max-Age, Secure=%v", what, raw, secure)
		}
	}
	check("sign-up", nil, false)
	check("login over plain HTTP", nil, false)
	check("login behind a TLS proxy", []string{"X-Forwarded-Proto", "https"}, true)
}

func TestSecureOnlyFromTrustedProxies(t *testing.T) {
	// The same X-Forwarded-Proto from an untrusted peer changes nothing.
	w := newWeb(t, webOptions{})
	w.signUp(newClient(), "frodo", "a-long-enough-password")
	code, body := w.post(newClient(), "/api/auth/login", map[string]string{"username": "frodo", "password": "a-long-enough-password"},
		"X-Forwarded-Proto", "https")
	if code != 200 {
		t.Fatalf("login: %d %s", code, body)
	}
	resp, _ := http.Get(w.srv.URL + "/api/auth/state")
	var st httpapi.AuthState
	json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if st.Insecure {
		t.Error("a loopback page is reported as insecure")
	}
	// Beyond loopback over plain HTTP the login page warns.
	req, _ := http.NewRequest("GET", w.srv.URL+"/api/auth/state", nil)
	req.Host = "192.168.1.20:8484"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if !st.Insecure {
		t.Error("plain HTTP to a LAN address is not reported as insecure")
	}
}

func TestOriginAndHostChecks(t *testing.T) {
	w := newWeb(t, webOptions{})
	c := newClient()
	if code, body := w.signUp(c, "frodo", "a-long-enough-password"); code != 200 {
		t.Fatalf("sign-up: %d %s", code, body)
	}
	// A state-changing request from a foreign page is refused before
	// anything looks at it: the login form and a signed-in call alike.
	for _, path := range []string{"/api/Folders.Create", "/api/auth/login", "/api/auth/logout"} {
		code, body := w.post(c, path, []any{"x"}, "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site")
		if code != 403 {
			t.Errorf("cross-origin POST %s: %d %s", path, code, body)
		}
	}
	if code, body := w.call(c, "Folders.List"); code != 200 || strings.Contains(body, `"x"`) {
		t.Errorf("the cross-origin call left a folder: %d %s", code, body)
	}
	// Same-origin works.
	if code, body := w.post(c, "/api/Folders.Create", []any{"mine"}, "Origin", w.srv.URL, "Sec-Fetch-Site", "same-origin"); code != 200 {
		t.Errorf("same-origin POST: %d %s", code, body)
	}
	// DNS rebinding: a foreign name is refused, an IP literal is fine.
	if code, _ := w.post(c, "/api/Folders.List", []any{}, "Host", "attacker.example:80"); code != 403 {
		t.Errorf("foreign Host: %d, want 403", code)
	}
	for _, host := range []string{"192.168.1.20:8484", "[fd00::1]:8484", "localhost"} {
		if code, body := w.post(c, "/api/Folders.List", []any{}, "Host", host); code != 200 {
			t.Errorf("Host %s: %d %s", host, code, body)
		}
	}
}

func TestSessionsExpireAndAreRevoked(t *testing.T) {
	w := newWeb(t, webOptions{})
	phone, laptop := newClient(), newClient()
	if code, body := w.signUp(phone, "sam", "po-tay-toes-boiled"); code != 200 {
		t.Fatalf("sign-up: %d %s", code, body)
	}
	if code, _ := w.login(laptop, "sam", "po-tay-toes-boiled"); code != 200 {
		t.Fatal("login")
	}
	// Sessions lists both, this one marked.
	_, body := w.call(phone, "Account.Sessions")
	var list []struct {
		ID      string `json:"id"`
		Current bool   `json:"current"`
	}
	json.Unmarshal([]byte(body), &list)
	if len(list) != 2 {
		t.Fatalf("sessions: %s", body)
	}
	var laptopID string
	for _, s := range list {
		if !s.Current {
			laptopID = s.ID
		}
	}
	// Revoke the laptop from the phone.
	if code, body := w.call(phone, "Account.RevokeSession", laptopID); code != 200 {
		t.Fatalf("revoke: %d %s", code, body)
	}
	if code, _ := w.call(laptop, "Chats.List"); code != 401 {
		t.Errorf("revoked session: %d, want 401", code)
	}
	if code, _ := w.call(phone, "Chats.List"); code != 200 {
		t.Errorf("the revoking session stopped working: %d", code)
	}
	// Sign out everywhere ends the phone too.
	w.login(laptop, "sam", "po-tay-toes-boiled")
	if code, _ := w.call(phone, "Account.SignOutEverywhere"); code != 200 {
		t.Fatal("sign out everywhere")
	}
	for name, c := range map[string]*http.Client{"phone": phone, "laptop": laptop} {
		if code, _ := w.call(c, "Chats.List"); code != 401 {
			t.Errorf("%s after sign out everywhere: %d", name, code)
		}
	}
	// Logout ends one session.
	w.login(phone, "sam", "po-tay-toes-boiled")
	w.post(phone, "/api/auth/logout", nil)
	if code, _ := w.call(phone, "Chats.List"); code != 401 {
		t.Errorf("after logout: %d", code)
	}
	// Idle expiry (30 days) and the absolute limit (90 days).
	w.login(phone, "sam", "po-tay-toes-boiled")
	w.clock.Advance(29 * 24 * time.Hour)
	if code, _ := w.call(phone, "Chats.List"); code != 200 {
		t.Errorf("used within the idle limit: %d", code)
	}
	w.clock.Advance(31 * 24 * time.Hour)
	if code, _ := w.call(phone, "Chats.List"); code != 401 {
		t.Errorf("idle 31 days: %d, want 401", code)
	}
	w.login(phone, "sam", "po-tay-toes-boiled")
	for range 4 { // used every 25 days: never idle, but 100 days old
		w.clock.Advance(25 * 24 * time.Hour)
		w.call(phone, "Chats.List")
	}
	if code, _ := w.call(phone, "Chats.List"); code != 401 {
		t.Errorf("100 days after sign-in: %d, want 401", code)
	}
}

func TestDisabledUserLosesSessionAndStream(t *testing.T) {
	w := newWeb(t, webOptions{})
	admin, pippin := newClient(), newClient()
	w.signUp(admin, "gandalf", "you-shall-not-pass")
	w.call(admin, "Admin.SetSettings", map[string]string{"signUpMode": "open"})
	if code, body := w.signUp(pippin, "pippin", "second-breakfast"); code != 200 || !strings.Contains(body, `"signedIn":true`) {
		t.Fatalf("open sign-up: %d %s", code, body)
	}
	req, _ := http.NewRequest("GET", w.srv.URL+"/api/events", nil)
	resp, err := pippin.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("events: %v %v", resp, err)
	}
	defer resp.Body.Close()
	ended := make(chan string, 1)
	go func() {
		var last string
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			last = sc.Text()
			if strings.HasPrefix(last, "event: signed-out") {
				break
			}
		}
		ended <- last
	}()
	_, body := w.call(admin, "Admin.Users", map[string]string{"query": "pippin"})
	var users struct {
		Users []struct{ ID int64 } `json:"users"`
	}
	json.Unmarshal([]byte(body), &users)
	if len(users.Users) != 1 {
		t.Fatalf("users: %s", body)
	}
	if code, body := w.call(admin, "Admin.SetStatus", users.Users[0].ID, "disabled"); code != 200 {
		t.Fatalf("disable: %d %s", code, body)
	}
	if code, _ := w.call(pippin, "Chats.List"); code != 401 {
		t.Errorf("disabled user's session: %d, want 401", code)
	}
	select {
	case last := <-ended:
		if !strings.HasPrefix(last, "event: signed-out") {
			t.Errorf("stream ended without saying why: %q", last)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a disabled user's event stream kept running")
	}
	if code, body := w.login(pippin, "pippin", "second-breakfast"); code != 403 || !strings.Contains(body, "disabled") {
		t.Errorf("disabled login: %d %s", code, body)
	}
}

func TestLoginRateLimitPerClientBehindAProxy(t *testing.T) {
	proxy := netip.MustParsePrefix("127.0.0.1/32")
	limits := &auth.LoginLimits{
		PerAddress:  auth.LimitOptions{Burst: 3, Every: time.Hour},
		PerUsername: auth.LimitOptions{Burst: 50, Every: time.Hour},
	}
	w := newWeb(t, webOptions{proxies: []netip.Prefix{proxy}, limits: limits})
	w.signUp(newClient(), "frodo", "a-long-enough-password")

	attacker := []string{"X-Forwarded-For", "203.0.113.66"}
	for i := range 3 {
		if code, _ := w.login(newClient(), "frodo", "wrong-password-"+fmt.Sprint(i), attacker...); code != 401 {
			t.Fatalf("attempt %d: %d, want 401", i, code)
		}
	}
	code, body := w.login(newClient(), "frodo", "a-long-enough-password", attacker...)
	if code != 429 || !strings.Contains(body, "rate_limited") {
		t.Fatalf("fourth attempt: %d %s, want 429", code, body)
	}
	// Another household member behind the same proxy is not locked out.
	if code, body := w.login(newClient(), "frodo", "a-long-enough-password", "X-Forwarded-For", "192.168.1.7"); code != 200 {
		t.Errorf("another client behind the proxy: %d %s", code, body)
	}
	// A spoofed X-Forwarded-For appended by the proxy: the proxy's own
	// rightmost entry is the client.
	if code, _ := w.login(newClient(), "frodo", "x", "X-Forwarded-For", "192.168.1.7, 203.0.113.66"); code != 429 {
		t.Errorf("spoofed left-hand X-Forwarded-For escaped the limit: %d", code)
	}
	// Retry-After is set.
	req, _ := http.NewRequest("POST", w.srv.URL+"/api/auth/login", strings.NewReader(`{"username":"frodo","password":"x"}`))
	req.Header.Set("X-Forwarded-For", "203.0.113.66")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != 429 || r.Header.Get("Retry-After") == "" {
		t.Errorf("429 without Retry-After: %d %q", r.StatusCode, r.Header.Get("Retry-After"))
	}
}

func TestForwardedForIgnoredWithoutTrustedProxy(t *testing.T) {
	limits := &auth.LoginLimits{
		PerAddress:  auth.LimitOptions{Burst: 2, Every: time.Hour},
		PerUsername: auth.LimitOptions{Burst: 50, Every: time.Hour},
	}
	w := newWeb(t, webOptions{limits: limits})
	for i := range 2 {
		w.login(newClient(), "nobody", "x", "X-Forwarded-For", fmt.Sprintf("10.0.0.%d", i))
	}
	// Rotating X-Forwarded-For does not buy fresh attempts.
	if code, _ := w.login(newClient(), "nobody", "x", "X-Forwarded-For", "10.0.0.99"); code != 429 {
		t.Errorf("untrusted X-Forwarded-For reset the limit: %d", code)
	}
}

// TestSecretsNeverLeave scans everything a browser or the log can see for a
// known API key and password.
func TestSecretsNeverLeave(t *testing.T) {
	const apiKey = "sk-scan-7d3f9a1c5e2b8d4f"
	const password = "scan-password-b6e1c9a2"
	w := newWeb(t, webOptions{})
	llm := fakellm.New(t)
	c := newClient()
	var seen strings.Builder
	record := func(code int, body string) { fmt.Fprintf(&seen, "%d %s\n", code, body) }
	record(w.signUp(c, "scanner", password))
	record(w.login(newClient(), "scanner", "wrong-"+password))
	record(w.login(c, "scanner", password))
	record(w.login(newClient(), password, password)) // a password typed as the username

	// An event stream, open while everything happens.
	req, _ := http.NewRequest("GET", w.srv.URL+"/api/events", nil)
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := c.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	streamDone := make(chan []byte)
	go func() { b, _ := io.ReadAll(resp.Body); streamDone <- b }()

	code, body := w.call(c, "Connections.Create", map[string]any{"name": "scan", "baseUrl": llm.URL(), "apiKey": apiKey,
		"headers": map[string]string{"Authorization": "Bearer " + apiKey}})
	record(code, body)
	var conn struct{ ID int64 }
	json.Unmarshal([]byte(body), &conn)
	record(w.call(c, "Connections.List"))
	record(w.call(c, "Connections.Test", conn.ID))
	record(w.call(c, "Connections.Update", conn.ID, map[string]any{"name": "scan2", "baseUrl": llm.URL(), "headers": map[string]string{}}))
	record(w.call(c, "Connections.RefreshModels", conn.ID))
	_, picker := w.call(c, "Models.Picker")
	record(200, picker)
	var models []struct{ ID int64 }
	json.Unmarshal([]byte(picker), &models)
	if len(models) == 0 {
		t.Fatalf("no models to chat with: %s", picker)
	}
	{
		code, body := w.call(c, "Chats.Send", map[string]any{"modelId": models[0].ID, "content": "hello"})
		record(code, body)
		time.Sleep(300 * time.Millisecond)
	}
	for _, m := range []string{"App.Info", "Account.Me", "Account.Sessions", "Admin.Users", "Admin.Settings", "Prefs.Get", "Chats.List", "Models.List"} {
		args := []any{}
		if m == "Admin.Users" || m == "Models.List" {
			args = []any{map[string]any{}}
		}
		record(w.call(c, m, args...))
	}
	record(w.call(c, "Account.ChangePassword", password, password+"-new"))
	for _, path := range []string{"/", "/index.html", "/manifest.webmanifest", "/api/auth/state", "/404"} {
		r, err := c.Get(w.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		record(r.StatusCode, string(b))
		for k, v := range r.Header {
			fmt.Fprintf(&seen, "%s: %s\n", k, strings.Join(v, ","))
		}
	}
	cancel()
	seen.Write(<-streamDone)
	everything := seen.String() + "\n" + w.log.String()
	if !strings.Contains(everything, "scan2") || !strings.Contains(w.log.String(), "signed in") {
		t.Fatalf("the scan saw too little to mean anything:\n%.2000s", everything)
	}
	for _, secret := range []string{apiKey, password, apiKey[3:], password + "-new"} {
		if i := strings.Index(everything, secret); i >= 0 {
			t.Errorf("secret %q leaked: …%s…", secret, everything[max(0, i-200):min(len(everything), i+100)])
		}
	}
	// And the database holds neither in the clear.
	raw, err := w.c.DB.Write().QueryContext(context.Background(),
		`SELECT api_key_enc || headers_enc FROM connections UNION ALL SELECT password_hash FROM users`)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for raw.Next() {
		var s string
		raw.Scan(&s)
		if strings.Contains(s, apiKey) || strings.Contains(s, password) {
			t.Error("a secret is stored in the clear")
		}
	}
}

// adminAndMember signs up an administrator (gandalf), opens sign-ups, adds
// a shared connection to llm and signs up a member (sam); it returns both
// and the first model the member may pick.
func adminAndMember(t *testing.T, w *web, llm *fakellm.Server) (admin, member *http.Client, model int64) {
	t.Helper()
	admin, member = newClient(), newClient()
	w.signUp(admin, "gandalf", "you-shall-not-pass")
	w.call(admin, "Admin.SetSettings", map[string]string{"signUpMode": "open"})
	w.call(admin, "Connections.Create", map[string]any{"name": "shared", "baseUrl": llm.URL()})
	w.signUp(member, "sam", "po-tay-toes-boiled")
	_, body := w.call(member, "Models.Picker")
	var models []struct{ ID int64 }
	json.Unmarshal([]byte(body), &models)
	if len(models) == 0 {
		t.Fatalf("the member sees no shared model: %s", body)
	}
	return admin, member, models[0].ID
}

// Admins configure the instance; they do not read other people's chats.
func TestAdminsDoNotReachOthersPrivateData(t *testing.T) {
	w := newWeb(t, webOptions{})
	admin, member, model := adminAndMember(t, w, fakellm.New(t))
	code, body := w.call(member, "Chats.Send", map[string]any{"modelId": model, "content": "my secret garden plans"})
	if code != 200 {
		t.Fatalf("member's send: %d %s", code, body)
	}
	var turn struct {
		Chat struct{ ID int64 } `json:"chat"`
	}
	json.Unmarshal([]byte(body), &turn)
	_, body = w.call(member, "Folders.Create", "Garden")
	var folder struct{ ID int64 }
	json.Unmarshal([]byte(body), &folder)

	for _, probe := range []struct {
		method string
		args   []any
	}{
		{"Chats.Get", []any{turn.Chat.ID}},
		{"Chats.Messages", []any{turn.Chat.ID}},
		{"Chats.Trash", []any{turn.Chat.ID}},
		{"Folders.Rename", []any{folder.ID, "Mine now"}},
	} {
		if code, body := w.call(admin, probe.method, probe.args...); code != 404 {
			t.Errorf("admin %s on the member's data: %d %s, want 404", probe.method, code, body)
		}
	}
	if _, body := w.call(admin, "Chats.Search", "garden"); strings.Contains(body, "garden") {
		t.Errorf("the admin's search finds the member's chat: %s", body)
	}
	if _, body := w.call(admin, "Chats.List"); strings.Contains(body, fmt.Sprint(turn.Chat.ID)) && strings.Contains(body, "garden") {
		t.Errorf("the admin's chat list shows the member's chat: %s", body)
	}
}

// Signing in again in the same browser ends the session it held.
func TestLoginEndsThePreviousSessionOfTheBrowser(t *testing.T) {
	w := newWeb(t, webOptions{})
	c := newClient()
	w.signUp(c, "merry", "a-long-enough-password")
	w.call(newClient(), "Chats.List") // nothing
	_, body := w.call(c, "Account.Sessions")
	if strings.Count(body, `"id"`) != 1 {
		t.Fatalf("sessions after sign-up: %s", body)
	}
	if code, _ := w.login(c, "merry", "a-long-enough-password"); code != 200 {
		t.Fatal("login")
	}
	if _, body := w.call(c, "Account.Sessions"); strings.Count(body, `"id"`) != 1 {
		t.Errorf("the old session outlived a new sign-in in the same browser: %s", body)
	}
}

// A stolen session cannot guess the password through Account.ChangePassword
// faster than the login limits allow.
func TestChangePasswordIsRateLimited(t *testing.T) {
	w := newWeb(t, webOptions{})
	c := newClient()
	w.signUp(c, "pippin", "second-breakfast")
	limited := false
	for i := range 30 {
		code, body := w.call(c, "Account.ChangePassword", fmt.Sprintf("guess-%d-long", i), "elevenses-at-eleven")
		if code == 429 && strings.Contains(body, "rate_limited") {
			limited = true
			break
		}
		if code != 400 {
			t.Fatalf("guess %d: %d %s", i, code, body)
		}
	}
	if !limited {
		t.Error("30 wrong current passwords were all checked")
	}
}

// A stored API key never follows a connection to another server.
func TestConnectionSecretsStayWithTheirServer(t *testing.T) {
	w := newWeb(t, webOptions{})
	llm := fakellm.New(t)
	other := fakellm.New(t)
	c := newClient()
	w.signUp(c, "gandalf", "you-shall-not-pass")
	code, body := w.call(c, "Connections.Create", map[string]any{"name": "keyed", "baseUrl": llm.URL(), "apiKey": "sk-stays-home-1234"})
	if code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}
	var conn struct{ ID int64 }
	json.Unmarshal([]byte(body), &conn)
	update := func(in map[string]any) (int, string) { return w.call(c, "Connections.Update", conn.ID, in) }

	if code, body := update(map[string]any{"name": "keyed", "baseUrl": other.URL()}); code != 400 || !strings.Contains(body, "enter the API key") {
		t.Errorf("moving to another server with the key kept: %d %s, want 400", code, body)
	}
	if code, body := update(map[string]any{"name": "renamed", "baseUrl": llm.URL()}); code != 200 {
		t.Errorf("renaming on the same server: %d %s", code, body)
	}
	if code, body := update(map[string]any{"name": "keyed", "baseUrl": other.URL(), "apiKey": "sk-new-server-5678"}); code != 200 {
		t.Errorf("moving with a new key: %d %s", code, body)
	}
}

// Members see the models they may use, not the administrator's prompts.
func TestPickerHidesTheAdminsSystemPrompt(t *testing.T) {
	w := newWeb(t, webOptions{})
	llm := fakellm.New(t)
	admin, member := newClient(), newClient()
	w.signUp(admin, "gandalf", "you-shall-not-pass")
	w.call(admin, "Admin.SetSettings", map[string]string{"signUpMode": "open"})
	w.call(admin, "Connections.Create", map[string]any{"name": "shared", "baseUrl": llm.URL()})
	_, body := w.call(admin, "Models.Picker")
	var models []struct{ ID int64 }
	json.Unmarshal([]byte(body), &models)
	if len(models) == 0 {
		t.Fatalf("no models: %s", body)
	}
	if code, body := w.call(admin, "Models.Update", models[0].ID, map[string]any{"systemPrompt": "secret-sauce-instructions"}); code != 200 {
		t.Fatalf("update: %d %s", code, body)
	}
	if _, body := w.call(admin, "Models.Picker"); !strings.Contains(body, "secret-sauce-instructions") {
		t.Errorf("the administrator's own picker lacks the prompt: %s", body)
	}
	w.signUp(member, "sam", "po-tay-toes-boiled")
	if _, body := w.call(member, "Models.Picker"); strings.Contains(body, "secret-sauce") || !strings.Contains(body, fmt.Sprintf(`"id":%d`, models[0].ID)) {
		t.Errorf("member's picker: %s", body)
	} else if !strings.Contains(body, `"hasSystemPrompt":true`) {
		// Chat settings still say that a prompt applies.
		t.Errorf("member's picker does not say the model has a prompt: %s", body)
	}
}

// The desktop window follows the owner's admin flag as it changes, not as
// it was at start.
func TestOwnerCallerFollowsADemotion(t *testing.T) {
	w := newWeb(t, webOptions{})
	if !w.c.OwnerCaller().Admin {
		t.Fatal("the owner starts as an administrator")
	}
	// The owner gets a password (the first sign-up claims the empty owner
	// row), and a second administrator who can sign in exists.
	w.signUp(newClient(), "gandalf", "you-shall-not-pass")
	if _, err := w.c.Accounts.Create(context.Background(), auth.SignUpRequest{Username: "saruman", Password: "of-many-colours"}, true); err != nil {
		t.Fatal(err)
	}
	if err := w.c.DB.SetAdmin(context.Background(), ids.UserID(w.c.Owner.ID), false); err != nil {
		t.Fatal(err)
	}
	if w.c.OwnerCaller().Admin {
		t.Error("the desktop window is still an administrator after the owner was demoted")
	}
}
