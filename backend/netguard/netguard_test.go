package netguard

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestCheckRefusesSpecialRanges(t *testing.T) {
	var g Guard
	for _, tc := range []struct{ addr, why string }{
		{"127.0.0.1", "loopback"},
		{"127.255.1.2", "loopback /8"},
		{"::1", "IPv6 loopback"},
		{"10.1.2.3", "private 10/8"},
		{"172.16.0.1", "private 172.16/12"},
		{"172.31.255.254", "private 172.16/12 end"},
		{"192.168.1.1", "private 192.168/16"},
		{"169.254.169.254", "link-local (cloud metadata)"},
		{"fe80::1", "IPv6 link-local"},
		{"fe80::1%eth0", "IPv6 link-local with zone"},
		{"100.64.0.1", "CGNAT 100.64/10"},
		{"100.127.255.254", "CGNAT end"},
		{"64:ff9b::7f00:1", "NAT64 of 127.0.0.1"},
		{"64:ff9b::a00:1", "NAT64 of 10.0.0.1"},
		{"64:ff9b:1::1", "local-use NAT64"},
		{"2002:7f00:1::1", "6to4 of 127.0.0.1"},
		{"2002:c0a8:101::1", "6to4 of 192.168.1.1"},
		{"::ffff:127.0.0.1", "IPv4-mapped loopback"},
		{"::ffff:10.0.0.1", "IPv4-mapped private"},
		{"::ffff:8.8.8.8", "IPv4-mapped public (never dialled as such)"},
		{"::127.0.0.1", "IPv4-compatible"},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "this network"},
		{"::", "IPv6 unspecified"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast SSDP"},
		{"ff02::1", "IPv6 multicast"},
		{"255.255.255.255", "broadcast"},
		{"240.0.0.1", "reserved"},
		{"fc00::1", "ULA"},
		{"fd12:3456::1", "ULA fd"},
		{"fec0::1", "site-local"},
		{"192.0.0.8", "IETF protocol assignments"},
		{"192.0.2.1", "TEST-NET-1"},
		{"198.51.100.7", "TEST-NET-2"},
		{"203.0.113.9", "TEST-NET-3"},
		{"198.18.0.1", "benchmarking"},
		{"192.88.99.1", "6to4 relay anycast"},
		{"2001:db8::1", "documentation"},
		{"2001::1", "Teredo"},
		{"100::1", "discard-only"},
	} {
		a, err := netip.ParseAddr(tc.addr)
		if err != nil {
			t.Fatalf("%s: %v", tc.addr, err)
		}
		if err := g.Check(a); !errors.Is(err, ErrBlocked) {
			t.Errorf("%s (%s) allowed, want refused", tc.addr, tc.why)
		}
	}
}

func TestCheckAllowsPublicAddresses(t *testing.T) {
	var g Guard
	for _, s := range []string{"8.8.8.8", "1.1.1.1", "93.184.216.34", "100.63.255.255", "100.128.0.1",
		"172.15.255.255", "172.32.0.1", "192.169.0.1", "2606:4700:4700::1111", "2a00:1450:4001::200e"} {
		if err := (g).Check(netip.MustParseAddr(s)); err != nil {
			t.Errorf("%s refused: %v", s, err)
		}
	}
}

func TestAllowOpensARange(t *testing.T) {
	g := Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	if err := g.Check(netip.MustParseAddr("127.0.0.1")); err != nil {
		t.Fatal(err)
	}
	if err := g.Check(netip.MustParseAddr("127.0.0.2")); err == nil {
		t.Fatal("127.0.0.2 allowed by a /32 for 127.0.0.1")
	}
}

func TestControlParsesDialAddresses(t *testing.T) {
	var g Guard
	for _, a := range []string{"127.0.0.1:80", "[::1]:443", "[fe80::1%lo]:80", "garbage"} {
		if err := g.Control("tcp", a, nil); !errors.Is(err, ErrBlocked) {
			t.Errorf("Control(%q) = %v, want refused", a, err)
		}
	}
	if err := g.Control("tcp4", "8.8.8.8:53", nil); err != nil {
		t.Errorf("Control(public) = %v", err)
	}
}

func TestCheckURL(t *testing.T) {
	var g Guard
	for _, raw := range []string{"file:///etc/passwd", "gopher://x/", "http://127.0.0.1/", "http://[::1]:8080/", "http:///nohost", "https://user:pw@example.org/"} {
		u, _ := url.Parse(raw)
		if err := g.CheckURL(u); err == nil {
			t.Errorf("CheckURL(%s) allowed", raw)
		}
	}
	u, _ := url.Parse("https://example.org/v1")
	if err := g.CheckURL(u); err != nil {
		t.Errorf("CheckURL(example.org) = %v", err)
	}
}

// The client refuses a name that resolves to loopback: the check is on the
// dialled address, not the URL.
func TestClientRefusesNameResolvingToLoopback(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("secret")) }))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	c := Guard{}.Client(Options{})
	for _, u := range []string{"http://localhost" + port + "/", srv.URL + "/"} {
		resp, err := c.Get(u)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("GET %s reached the loopback server", u)
		}
		if !errors.Is(err, ErrBlocked) {
			t.Errorf("GET %s: %v, want ErrBlocked in the chain", u, err)
		}
	}
}

// A redirect from an allowed server to a refused one is not followed.
func TestClientRechecksRedirects(t *testing.T) {
	inner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("inner")) }))
	defer inner.Close()
	outer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/to-name":
			http.Redirect(w, r, "http://localhost"+inner.URL[strings.LastIndex(inner.URL, ":"):]+"/", http.StatusFound)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		}
	}))
	defer outer.Close()
	// Only the outer server's exact address is allowed.
	ap := netip.MustParseAddrPort(strings.TrimPrefix(outer.URL, "http://"))
	g := Guard{Allow: []netip.Prefix{netip.PrefixFrom(ap.Addr(), 32)}}
	// (inner shares that address, so it is reachable directly, which is the
	// control below; by name, "localhost" may resolve to ::1 first, so the
	// redirect cases are the ones whose refusal does not depend on that.)
	c := g.Client(Options{})
	for _, p := range []string{"/to-metadata", "/to-file"} {
		resp, err := c.Get(outer.URL + p)
		if err == nil {
			resp.Body.Close()
			t.Errorf("GET %s followed the redirect (%d)", p, resp.StatusCode)
			continue
		}
		if !errors.Is(err, ErrBlocked) {
			t.Errorf("GET %s: %v, want ErrBlocked", p, err)
		}
	}
	// Control: without redirects, the allowed server answers.
	resp, err := c.Get(inner.URL + "/")
	if err != nil {
		t.Fatalf("allowed address refused: %v", err)
	}
	resp.Body.Close()
}

func TestResolveChecksEveryAddress(t *testing.T) {
	if err := (Guard{}).Resolve(context.Background(), "localhost"); !errors.Is(err, ErrBlocked) {
		t.Errorf("Resolve(localhost) = %v, want refused", err)
	}
	if err := (Guard{}).Resolve(context.Background(), "10.0.0.1"); !errors.Is(err, ErrBlocked) {
		t.Errorf("Resolve(10.0.0.1) = %v, want refused", err)
	}
}

// Clients hands out one client per allow-list and options, and a new one
// when either changes (a secret header kept across origins by a reused
// client would leak it).
func TestClientsAreKeptByGuardAndOptions(t *testing.T) {
	var c Clients
	lan := Guard{Allow: []netip.Prefix{netip.MustParsePrefix("192.168.1.0/24")}}
	a := c.Get(lan, Options{SecretHeaders: []string{"X-Key", "Authorization"}})
	if b := c.Get(lan, Options{SecretHeaders: []string{"Authorization", "X-Key"}}); a != b {
		t.Error("the same guard and options made a second client")
	}
	for name, other := range map[string]*http.Client{
		"another allow-list": c.Get(Guard{}, Options{SecretHeaders: []string{"X-Key", "Authorization"}}),
		"other secrets":      c.Get(lan, Options{SecretHeaders: []string{"X-Key"}}),
		"another timeout":    c.Get(lan, Options{Timeout: time.Second, SecretHeaders: []string{"X-Key", "Authorization"}}),
	} {
		if other == a {
			t.Errorf("%s reused the client", name)
		}
	}
}
