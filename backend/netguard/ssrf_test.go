package netguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// ssrfHosts are the host parts of URLs a model could be talked into
// fetching, all of which mean this machine, its networks or a cloud's
// metadata service. They are tried on the port of a loopback listener
// that must never see a connection.
var ssrfHosts = []string{
	// IPv4 loopback, canonical and in the forms inet_aton reads.
	"127.0.0.1", "127.0.0.3", "127.255.255.254", "127.0.0.1.", "127.1", "127.0.1", "127.000.000.001",
	"2130706433", "017700000001", "0177.0.0.1", "0177.0.0.01", "0177.1", "0x7f.0.0.1", "0x7f.1",
	"0x7f000001", "0X7F000001", "0x7f.0x0.0x0.0x1", "0177.0x0.0.1", "127.0.0.0x1",
	// "This network" and unspecified.
	"0", "00", "0x0", "0.0.0.0", "0.0.0.1", "0.1.2.3",
	// Private ranges.
	"10.0.0.1", "10.255.255.254", "012.0.0.1", "167772161", "0xa000001",
	"172.16.0.1", "172.31.255.254", "2886729729", "192.168.0.1", "192.168.1.1", "192.168.255.254",
	"3232235777", "0xc0a80101", "0300.0250.1.1",
	// CGNAT and the metadata services that live there and in link-local.
	"100.64.0.1", "100.100.100.200", "100.127.255.254", "1681915905",
	"169.254.169.254", "169.254.170.2", "169.254.0.1", "2852039166", "0xa9fea9fe", "0251.0376.0251.0376",
	"0xa9.0xfe.0xa9.0xfe", "169.254.43518",
	// Other special-purpose IPv4.
	"192.0.0.1", "192.0.2.1", "198.18.0.1", "198.51.100.1", "203.0.113.1", "192.88.99.1",
	"224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
	// IPv6 loopback and the IPv6 forms that carry an IPv4 address.
	"[::1]", "[0:0:0:0:0:0:0:1]", "[::0001]", "[::]",
	"[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[0:0:0:0:0:ffff:127.0.0.1]", "[::ffff:10.0.0.1]",
	"[::ffff:169.254.169.254]", "[::ffff:192.168.1.1]", "[::127.0.0.1]", "[::7f00:1]",
	"[::ffff:0:127.0.0.1]", "[64:ff9b::7f00:1]", "[64:ff9b::127.0.0.1]", "[64:ff9b::a9fe:a9fe]",
	"[64:ff9b::10.0.0.1]", "[64:ff9b:1::7f00:1]", "[2002:7f00:1::]", "[2002:7f00:0001::1]",
	"[2002:a9fe:a9fe::]", "[2002:c0a8:101::1]", "[2001::7f00:1]", "[2001:0:4136:e378:8000:63bf:80ff:fffe]",
	// Link-local, with and without a zone; ULA, site-local, multicast.
	"[fe80::1]", "[fe80::1%25lo]", "[fe80::1%25eth0]", "[fe80::1%251]", "[fc00::1]", "[fd00::1]",
	"[fd00:ec2::254]", "[fec0::1]", "[ff02::1]", "[100::1]", "[2001:db8::1]",
	// Names (through the test resolver below): loopback, metadata, private,
	// mapped, and one that answers a public and a loopback address.
	"localhost", "localhost.", "LOCALHOST", "loopback.test", "127.0.0.1.nip.io", "metadata.test",
	"private.test", "mapped.test", "six.test", "nat64.test", "zone.test",
}

// testLookup resolves the test's names without DNS.
func testLookup(_ context.Context, host string) ([]netip.Addr, error) {
	m := map[string][]string{
		"localhost":        {"127.0.0.1", "::1"},
		"loopback.test":    {"127.0.0.1"},
		"127.0.0.1.nip.io": {"127.0.0.1"},
		"metadata.test":    {"169.254.169.254"},
		"private.test":     {"192.168.1.1"},
		"mapped.test":      {"::ffff:127.0.0.1"},
		"six.test":         {"::1"},
		"nat64.test":       {"64:ff9b::7f00:1"},
		"zone.test":        {"fe80::1%lo"},
	}
	list, ok := m[strings.ToLower(strings.TrimSuffix(host, "."))]
	if !ok {
		return nil, &net.DNSError{Err: "no such host (test resolver)", Name: host, IsNotFound: true}
	}
	var out []netip.Addr
	for _, s := range list {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

// ssrfTally is what a run of every form found.
type ssrfTally struct {
	refused, reached int
	failures         []string
}

// tryForms requests every form on a loopback listener's port three ways:
// directly, through a 302 from an allowed server, and as a POST through a
// 307 from it (which is followed, so the target must be re-checked).
func tryForms(tb testing.TB) ssrfTally {
	tb.Helper()
	var accepts atomic.Int64
	count := func(ln net.Listener) {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepts.Add(1)
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nsecret")
			c.Close()
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	go count(ln)
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	if ln6, err := net.Listen("tcp", "[::1]:"+port); err == nil {
		defer ln6.Close()
		go count(ln6)
	}

	// The allowed server: on another loopback address, allowed by a /32,
	// redirecting to wherever ?to= says.
	rl, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		tb.Skipf("no second loopback address: %v", err)
	}
	redirector := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code := http.StatusFound
		if r.Method == http.MethodPost {
			code = http.StatusTemporaryRedirect
		}
		w.Header().Set("Location", r.URL.Query().Get("to"))
		w.WriteHeader(code)
	})}
	go redirector.Serve(rl)
	defer redirector.Close()
	from := "http://" + rl.Addr().String() + "/?to="

	g := Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}, Lookup: testLookup}
	c := g.Client(Options{Timeout: 30 * time.Second})
	var t ssrfTally
	try := func(label, method, target string) {
		req, err := http.NewRequest(method, target, strings.NewReader("x=1"))
		if err != nil {
			t.failures = append(t.failures, fmt.Sprintf("%s: bad URL: %v", label, err))
			return
		}
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
			t.reached++
			t.failures = append(t.failures, fmt.Sprintf("%s: answered %d", label, resp.StatusCode))
			return
		}
		if errors.Is(err, ErrBlocked) || errors.Is(err, ErrRedirect) {
			t.refused++
			return
		}
		t.failures = append(t.failures, fmt.Sprintf("%s: %v (not a refusal by the guard)", label, err))
	}
	for _, h := range ssrfHosts {
		target := "http://" + h + ":" + port + "/latest/meta-data/"
		try(h+" direct", http.MethodGet, target)
		try(h+" via 302", http.MethodGet, from+url.QueryEscape(target))
		try(h+" via 307 POST", http.MethodPost, from+url.QueryEscape(target))
	}
	// Schemes and forms of URL that are not an address at all.
	for _, raw := range []string{"file:///etc/passwd", "gopher://127.0.0.1:" + port + "/", "ftp://127.0.0.1:" + port + "/",
		"http://user:pw@127.0.0.2:" + port + "/", "dict://127.0.0.1:" + port + "/"} {
		try(raw+" direct", http.MethodGet, raw)
		try(raw+" via 302", http.MethodGet, from+url.QueryEscape(raw))
	}
	t.reached += int(accepts.Load())
	if n := accepts.Load(); n > 0 {
		t.failures = append(t.failures, fmt.Sprintf("the loopback listener accepted %d connections", n))
	}
	return t
}

// Every form of this machine's and its networks' addresses is refused by
// the guard itself (not by chance, such as a name that fails to resolve),
// and the listener they all point at never sees a connection.
func TestSSRFForms(t *testing.T) {
	got := tryForms(t)
	for _, f := range got.failures {
		t.Error(f)
	}
	if got.refused < 180 {
		t.Errorf("%d forms refused, want at least 180", got.refused)
	}
	t.Logf("figure ssrf_forms_refused %d; ssrf_forms_reached %d", got.refused, got.reached)
}

// BenchmarkSSRFForms reports the figures for make bench.
func BenchmarkSSRFForms(b *testing.B) {
	var got ssrfTally
	for i := 0; i < b.N; i++ {
		got = tryForms(b)
	}
	b.ReportMetric(float64(got.refused), "ssrf_forms_refused")
	b.ReportMetric(float64(got.reached), "ssrf_forms_reached")
}
