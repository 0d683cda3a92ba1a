package llm

import (
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/fakellm"
)

func TestNormalizeBaseURL(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080/v1"},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8080/v1"},
		{"  http://localhost:11434/v1/ ", "http://localhost:11434/v1"},
		{"https://api.openai.com/v1", "https://api.openai.com/v1"},
		{"http://127.0.0.1:8080/v1/chat/completions", "http://127.0.0.1:8080/v1"},
		{"http://127.0.0.1:8080/v1/chat/completions/", "http://127.0.0.1:8080/v1"},
		{"http://127.0.0.1:8080/v1/models", "http://127.0.0.1:8080/v1"},
		{"https://openrouter.ai/api/v1", "https://openrouter.ai/api/v1"},
		{"https://gw.example/openai/v1/chat/completions", "https://gw.example/openai/v1"},
		{"HTTP://Host.example:1234", "http://Host.example:1234/v1"},
		{"http://[::1]:8000", "http://[::1]:8000/v1"},
		{"https://gw.example/v1?api-version=1#frag", "https://gw.example/v1?api-version=1"},
	}
	for _, tt := range tests {
		u, err := NormalizeBaseURL(tt.in)
		if err != nil {
			t.Errorf("NormalizeBaseURL(%q): %v", tt.in, err)
			continue
		}
		if got := u.String(); got != tt.want {
			t.Errorf("NormalizeBaseURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNewClientInvalid(t *testing.T) {
	tests := []struct {
		name string
		ep   Endpoint
		word string
	}{
		{"empty", Endpoint{}, "empty"},
		{"no scheme", Endpoint{BaseURL: "127.0.0.1:8080/v1"}, "http://"},
		{"no scheme host", Endpoint{BaseURL: "localhost"}, "no scheme"},
		{"ftp", Endpoint{BaseURL: "ftp://host/v1"}, "not ftp://"},
		{"no host", Endpoint{BaseURL: "http:///v1"}, "no host"},
		{"bad port", Endpoint{BaseURL: "http://host:99999/v1"}, "port"},
		{"credentials in URL", Endpoint{BaseURL: "https://user:secret@host/v1"}, "user name or password"},
		{"garbage", Endpoint{BaseURL: "http://a b/%zz"}, "not a valid URL"},
		{"bad PEM", Endpoint{BaseURL: "https://host/v1", CAPEM: "not a certificate"}, "BEGIN CERTIFICATE"},
		{"key and header", Endpoint{BaseURL: "http://host/v1", APIKey: "k", Headers: map[string]string{"authorization": "Basic x"}}, "Both an API key and an Authorization header"},
		{"header newline", Endpoint{BaseURL: "http://host/v1", Headers: map[string]string{"X-Team": "a\r\nEvil: 1"}}, "line break"},
		{"header name", Endpoint{BaseURL: "http://host/v1", Headers: map[string]string{"Bad Name": "x"}}, "not a valid HTTP header name"},
		{"reserved header", Endpoint{BaseURL: "http://host/v1", Headers: map[string]string{"content-type": "text/plain"}}, "cannot be overridden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewClient(tt.ep, Options{})
			checkErr(t, err, apperr.Invalid, tt.word)
		})
	}
}

func TestHeadersNeverLeakValues(t *testing.T) {
	_, err := NewClient(Endpoint{BaseURL: "http://host/v1", Headers: map[string]string{"X-Secret": "hunter2\n"}}, Options{})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("err = %v: must not contain the header value", err)
	}
}

func TestRequestHeaders(t *testing.T) {
	tests := []struct {
		name     string
		ep       Endpoint
		opt      Options
		wantAuth string
		wantUA   string
		extra    map[string]string
	}{
		{name: "api key", ep: Endpoint{APIKey: "sk-1"}, wantAuth: "Bearer sk-1", wantUA: DefaultUserAgent},
		{name: "no key", ep: Endpoint{}, wantAuth: "", wantUA: DefaultUserAgent},
		{name: "header when no key", ep: Endpoint{Headers: map[string]string{"authorization": "Basic abc"}}, wantAuth: "Basic abc", wantUA: DefaultUserAgent},
		{name: "extra headers", ep: Endpoint{APIKey: "k", Headers: map[string]string{"x-title": "LLeMbas", "HTTP-Referer": "https://lembas.example"}},
			opt: Options{UserAgent: "LLeMbas/test"}, wantAuth: "Bearer k", wantUA: "LLeMbas/test",
			extra: map[string]string{"X-Title": "LLeMbas", "Http-Referer": "https://lembas.example"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := fakellm.New(t)
			tt.ep.BaseURL = fake.URL()
			c, err := NewClient(tt.ep, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.ListModels(bg()); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Chat(bg(), ask(), func(Delta) error { return nil }); err != nil {
				t.Fatal(err)
			}
			for _, r := range fake.Requests() {
				if got := r.Header.Get("Authorization"); got != tt.wantAuth {
					t.Errorf("%s: Authorization = %q, want %q", r.Path, got, tt.wantAuth)
				}
				if got := r.Header.Get("User-Agent"); got != tt.wantUA {
					t.Errorf("%s: User-Agent = %q, want %q", r.Path, got, tt.wantUA)
				}
				for k, v := range tt.extra {
					if got := r.Header.Get(k); got != v {
						t.Errorf("%s: %s = %q, want %q", r.Path, k, got, v)
					}
				}
			}
		})
	}
}

// tlsFront puts a TLS server in front of the fake, as a reverse proxy with
// httptest's self-signed certificate.
func tlsFront(t *testing.T, fake *fakellm.Server) (*httptest.Server, string) {
	t.Helper()
	target, _ := url.Parse(root(fake))
	ts := httptest.NewUnstartedServer(httputil.NewSingleHostReverseProxy(target))
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // handshake failures are the point
	ts.StartTLS()
	t.Cleanup(ts.Close)
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}))
	return ts, caPEM
}

func TestTLS(t *testing.T) {
	fake := fakellm.New(t)
	ts, caPEM := tlsFront(t, fake)

	t.Run("unknown authority", func(t *testing.T) {
		_, err := newClient(t, ts.URL+"/v1", Options{}).Test(bg())
		checkErr(t, err, apperr.Unavailable, "authority this computer does not trust", "CA certificate", "trust its certificate")
	})
	t.Run("custom CA", func(t *testing.T) {
		c, err := NewClient(Endpoint{BaseURL: ts.URL, CAPEM: caPEM}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Test(bg()); err != nil {
			t.Fatal(err)
		}
		var got reply
		if _, err := c.Chat(bg(), ask(), got.fn); err != nil || got.content.Len() == 0 {
			t.Fatalf("chat over TLS: %q, %v", got.content.String(), err)
		}
	})
	t.Run("insecure by choice", func(t *testing.T) {
		c, err := NewClient(Endpoint{BaseURL: ts.URL, InsecureTLS: true}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Test(bg()); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("http to an https server", func(t *testing.T) {
		_, err := newClient(t, strings.Replace(ts.URL, "https://", "http://", 1), Options{}).Test(bg())
		checkErr(t, err, apperr.Invalid, "speaks HTTPS", "https://")
	})
	t.Run("https to an http server", func(t *testing.T) {
		_, err := newClient(t, strings.Replace(root(fake), "http://", "https://", 1), Options{}).Test(bg())
		checkErr(t, err, apperr.Unavailable, "does not speak HTTPS", "http://")
	})
}

// TestProxyFromEnvironment runs in a child process: net/http reads the
// proxy variables once per process, so setting them here would be too late
// if any earlier test made a request.
func TestProxyFromEnvironment(t *testing.T) {
	if os.Getenv("LLM_TEST_PROXY_CHILD") != "1" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestProxyFromEnvironment$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "LLM_TEST_PROXY_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestProxyFromEnvironment") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}

	fake := fakellm.New(t)
	target, _ := url.Parse(root(fake))
	forward := httputil.NewSingleHostReverseProxy(target)
	var mu sync.Mutex
	var seen []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.String())
		mu.Unlock()
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	for _, k := range []string{"HTTP_PROXY", "http_proxy"} {
		t.Setenv(k, proxy.URL)
	}
	for _, k := range []string{"NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy"} {
		t.Setenv(k, "")
	}

	// Go never proxies loopback, so the client is pointed at a name only
	// the proxy can reach.
	c := newClient(t, "http://example.invalid/v1", Options{})
	res, err := c.Test(bg())
	if err != nil {
		t.Fatal(err)
	}
	if res.Count != 1 {
		t.Errorf("count = %d", res.Count)
	}
	var got reply
	if _, err := c.Chat(bg(), ask(), got.fn); err != nil || got.content.Len() == 0 {
		t.Fatalf("chat through the proxy: %q, %v", got.content.String(), err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"GET http://example.invalid/v1/models", "POST http://example.invalid/v1/chat/completions"}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Errorf("the proxy saw %q, want %q", seen, want)
	}
}

func TestNetworkFailures(t *testing.T) {
	t.Run("connection refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		c := newClient(t, "http://"+addr, Options{})
		_, err = c.Test(bg())
		checkErr(t, err, apperr.Unavailable, "Nothing is listening at "+addr, "Start the server")
		_, err = c.Chat(bg(), ask(), func(Delta) error { return nil })
		checkErr(t, err, apperr.Unavailable, "Nothing is listening at "+addr)
	})

	t.Run("dns", func(t *testing.T) {
		c := newClient(t, "http://no-such-host.invalid/v1", Options{})
		// The real lookup, when this machine's resolver answers at all.
		_, err := c.Test(bg())
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			checkErr(t, err, apperr.Unavailable, `"no-such-host.invalid" could not be found`, "typos")
		}
		synthetic := &url.Error{Op: "Get", URL: "http://no-such-host.invalid/v1/models", Err: &net.OpError{Op: "dial", Net: "tcp",
			Err: &net.DNSError{Err: "no such host", Name: "no-such-host.invalid", IsNotFound: true}}}
		checkErr(t, c.networkError(synthetic), apperr.Unavailable, `"no-such-host.invalid" could not be found`)
		synthetic.Err.(*net.OpError).Err = &net.DNSError{Err: "i/o timeout", Name: "slow.example", IsTimeout: true}
		checkErr(t, c.networkError(synthetic), apperr.Unavailable, "could not be looked up")
	})

	t.Run("nothing answers at the path", func(t *testing.T) {
		fake := fakellm.New(t)
		_, err := newClient(t, root(fake)+"/api", Options{}).Test(bg())
		checkErr(t, err, apperr.Unavailable, "Nothing answers at", "/api/models (404)", "end in /v1")
	})

	t.Run("auth", func(t *testing.T) {
		fake := fakellm.New(t)
		fake.SetModels(fakellm.Status(401, ""))
		c, _ := NewClient(Endpoint{BaseURL: fake.URL(), APIKey: "wrong"}, Options{})
		_, err := c.Test(bg())
		checkErr(t, err, apperr.Unavailable, "rejected the API key (401)")
		fake.SetModels(fakellm.Status(403, ""))
		_, err = c.Test(bg())
		checkErr(t, err, apperr.Unavailable, "refused access (403)")
	})

	t.Run("timeout", func(t *testing.T) {
		fake := fakellm.New(t)
		fake.SetModels(fakellm.Fixture("models").FirstByteAfter(5 * time.Second))
		_, err := newClient(t, fake.URL(), Options{FirstTokenTimeout: 100 * time.Millisecond}).Test(bg())
		checkErr(t, err, apperr.Unavailable, "did not answer within 100 ms")
		if !errors.Is(err, ErrTimeout) {
			t.Errorf("ErrTimeout not in %v", err)
		}
	})

	t.Run("reset", func(t *testing.T) {
		fake := fakellm.New(t)
		fake.SetModels(fakellm.Fixture("models").ResetAfter(20))
		_, err := newClient(t, fake.URL(), Options{}).Test(bg())
		if apperr.KindOf(err) != apperr.Unavailable {
			t.Errorf("err = %v", err)
		}
	})
}
