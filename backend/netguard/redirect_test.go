package netguard

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

func loopbackGuard() Guard {
	return Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
}

// A POST answered by 301, 302 or 303 is not retried as a GET; 307 and 308
// keep the method and body and are followed.
func TestPostRedirects(t *testing.T) {
	var gets int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/target" {
			if r.Method == http.MethodGet {
				gets++
			}
			b, _ := io.ReadAll(r.Body)
			io.WriteString(w, r.Method+" "+string(b))
			return
		}
		code := map[string]int{"/301": 301, "/302": 302, "/303": 303, "/307": 307, "/308": 308}[r.URL.Path]
		http.Redirect(w, r, "/target", code)
	}))
	defer srv.Close()
	c := loopbackGuard().Client(Options{})
	for _, p := range []string{"/301", "/302", "/303"} {
		resp, err := c.Post(srv.URL+p, "text/plain", strings.NewReader("body"))
		if err == nil {
			resp.Body.Close()
			t.Errorf("POST %s followed (%d)", p, resp.StatusCode)
			continue
		}
		if !errors.Is(err, ErrRedirect) {
			t.Errorf("POST %s: %v, want ErrRedirect", p, err)
		}
	}
	if gets != 0 {
		t.Errorf("the target saw %d GETs", gets)
	}
	for _, p := range []string{"/307", "/308"} {
		resp, err := c.Post(srv.URL+p, "text/plain", strings.NewReader("body"))
		if err != nil {
			t.Fatalf("POST %s: %v", p, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "POST body" {
			t.Errorf("POST %s reached the target as %q, want \"POST body\"", p, b)
		}
	}
	// A GET is redirected by all of them.
	resp, err := c.Get(srv.URL + "/302")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// A 307 keeps the POST, so its target is checked like any other hop.
func TestPost307ToBlockedAddressRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/api/token", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	resp, err := loopbackGuard().Client(Options{}).Post(srv.URL, "text/plain", strings.NewReader("x"))
	if err == nil {
		resp.Body.Close()
		t.Fatal("followed a 307 to the metadata address")
	}
	if !errors.Is(err, ErrBlocked) {
		t.Errorf("%v, want ErrBlocked", err)
	}
}

// Secret headers go to the origin they were issued for and no further:
// another port on the same host is another origin (Go's own rule keeps
// Authorization there, since the host matches).
func TestSecretHeadersDroppedAcrossOrigins(t *testing.T) {
	type seen struct{ auth, key, other string }
	var got seen
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = seen{r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.Header.Get("X-Other")}
	}))
	defer other.Close()
	var sameOrigin seen
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/", http.StatusFound)
		case "/here":
			http.Redirect(w, r, "/landing", http.StatusFound)
		case "/landing":
			sameOrigin = seen{r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.Header.Get("X-Other")}
		}
	}))
	defer first.Close()
	c := loopbackGuard().Client(Options{SecretHeaders: []string{"X-Api-Key"}})
	get := func(path string) {
		req, _ := http.NewRequest(http.MethodGet, first.URL+path, nil)
		req.Header.Set("Authorization", "Bearer sk-secret")
		req.Header.Set("X-Api-Key", "sk-secret")
		req.Header.Set("X-Other", "kept")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		resp.Body.Close()
	}
	get("/away")
	if got.auth != "" || got.key != "" {
		t.Errorf("the other origin received the secrets: %+v", got)
	}
	if got.other != "kept" {
		t.Errorf("an ordinary header was dropped: %+v", got)
	}
	get("/here")
	if sameOrigin.auth == "" || sameOrigin.key == "" {
		t.Errorf("a same-origin hop lost the secrets: %+v", sameOrigin)
	}
}

// Go's client sends the previous URL as Referer on a redirect: a secret in
// the first URL's query (a custom tool's ?key={{secret}}) would reach the
// other origin in it. A cross-origin hop carries no Referer; a same-origin
// one keeps Go's.
func TestRefererDroppedAcrossOrigins(t *testing.T) {
	var got string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Referer")
	}))
	defer other.Close()
	var sameOrigin string
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/", http.StatusFound)
		case "/here":
			http.Redirect(w, r, "/landing", http.StatusFound)
		case "/landing":
			sameOrigin = r.Header.Get("Referer")
		}
	}))
	defer first.Close()
	c := loopbackGuard().Client(Options{})
	for _, path := range []string{"/away?key=sk-secret", "/here?key=sk-secret"} {
		resp, err := c.Get(first.URL + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		resp.Body.Close()
	}
	if got != "" {
		t.Errorf("the other origin received Referer %q", got)
	}
	if !strings.Contains(sameOrigin, "/here") {
		t.Errorf("a same-origin hop's Referer = %q, want Go's (the previous URL)", sameOrigin)
	}
}
