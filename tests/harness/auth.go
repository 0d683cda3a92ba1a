package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// The administrator Serve signs up on a fresh data directory (and signs in
// as on a used one).
const (
	AdminUser     = "admin"
	AdminPassword = "harness-admin-password"
)

// sessionCookie is the name of the server's session cookie
// (httpapi.CookieName; not imported, so the harness stays a client).
const sessionCookie = "lembas_session"

var (
	clientsMu sync.Mutex
	clients   = map[string]*http.Client{} // base URL → the admin's client
)

// ServeBare starts `lembas --serve` on a free loopback port and returns the
// process and its base URL once it answers. Nobody is signed in: the first
// sign-up is the test's to make.
func ServeBare(t testing.TB, bin, dataDir string, extraEnv ...string) (*Proc, string) {
	t.Helper()
	p := Start(t, bin, Env(dataDir, extraEnv...), "--serve", "--addr", "127.0.0.1:0")
	m := p.WaitOutput(t, `serving at (http://127\.0\.0\.1:\d+)/`, 30*time.Second)
	return p, m[1]
}

// Serve is ServeBare plus an administrator (AdminUser, AdminPassword):
// signed up when the data directory has none who can sign in, else signed
// in. API then calls as that administrator.
func Serve(t testing.TB, bin, dataDir string, extraEnv ...string) (*Proc, string) {
	t.Helper()
	p, base := ServeBare(t, bin, dataDir, extraEnv...)
	var st struct {
		NeedsFirstUser bool `json:"needsFirstUser"`
	}
	getJSON(t, http.DefaultClient, base+"/api/auth/state", &st)
	var c *http.Client
	if st.NeedsFirstUser {
		c = SignUp(t, base, AdminUser, AdminPassword)
	} else {
		c = Login(t, base, AdminUser, AdminPassword)
	}
	clientsMu.Lock()
	clients[base] = c
	clientsMu.Unlock()
	return p, base
}

// AdminClient is the signed-in administrator's client for a server started
// with Serve.
func AdminClient(t testing.TB, base string) *http.Client {
	t.Helper()
	clientsMu.Lock()
	defer clientsMu.Unlock()
	c, ok := clients[base]
	if !ok {
		t.Fatalf("no administrator signed in at %s: start it with harness.Serve", base)
	}
	return c
}

func newJarClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: 60 * time.Second}
}

// Login signs username in and returns a client carrying the session.
func Login(t testing.TB, base, username, password string) *http.Client {
	t.Helper()
	c := newJarClient()
	postAuth(t, c, base+"/api/auth/login", map[string]string{"username": username, "password": password})
	return c
}

// SignUp creates an account and returns a client carrying its session (the
// first account, or any in open sign-up mode, is signed in at once).
func SignUp(t testing.TB, base, username, password string) *http.Client {
	t.Helper()
	c := newJarClient()
	postAuth(t, c, base+"/api/auth/signup", map[string]string{"username": username, "password": password})
	return c
}

func postAuth(t testing.TB, c *http.Client, url string, form map[string]string) {
	t.Helper()
	b, _ := json.Marshal(form)
	resp, err := c.Post(url, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e map[string]any
		json.NewDecoder(resp.Body).Decode(&e)
		t.Fatalf("%s: %d %v", url, resp.StatusCode, e)
	}
}

func getJSON(t testing.TB, c *http.Client, url string, out any) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// Session returns the session token a client carries for base.
func Session(t testing.TB, c *http.Client, base string) string {
	t.Helper()
	u, _ := url.Parse(base)
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == sessionCookie {
			return ck.Value
		}
	}
	t.Fatalf("no session cookie for %s", base)
	return ""
}

// BrowserLogin signs username in and gives the Chromium context the
// session cookie, so the next navigation opens the app signed in.
func BrowserLogin(t testing.TB, ctx context.Context, base, username, password string) {
	t.Helper()
	BrowserSession(t, ctx, base, Login(t, base, username, password))
}

// BrowserAdmin gives the Chromium context the administrator's session of a
// server started with Serve.
func BrowserAdmin(t testing.TB, ctx context.Context, base string) {
	t.Helper()
	BrowserSession(t, ctx, base, AdminClient(t, base))
}

// BrowserSession copies a client's session cookie into the Chromium
// context.
func BrowserSession(t testing.TB, ctx context.Context, base string, c *http.Client) {
	t.Helper()
	token := Session(t, c, base)
	httpOnly := true
	_, err := chromedp.Call(ctx, network.SetCookie, network.SetCookieParams{Name: sessionCookie, Value: token,
		URL: base + "/", HTTPOnly: &httpOnly, SameSite: network.CookieSameSiteLax})
	if err != nil {
		t.Fatalf("set the session cookie in Chromium: %v", err)
	}
}

// APIAs posts one facade call with client c and decodes its result into out
// (when not nil). A non-200 answer fails the test.
func APIAs(t testing.TB, c *http.Client, base, method string, out any, args ...any) {
	t.Helper()
	if args == nil {
		args = []any{}
	}
	b, _ := json.Marshal(args)
	resp, err := c.Post(base+"/api/"+method, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e map[string]any
		json.NewDecoder(resp.Body).Decode(&e)
		t.Fatalf("%s: %d %v", method, resp.StatusCode, e)
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("%s: decode: %v", method, err)
		}
	}
}
