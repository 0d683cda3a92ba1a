// Package netguard is the HTTP client for outbound requests whose address a
// user (or a model) chose: per-user audio endpoints now, web pages, tools and
// MCP later. Its dialer refuses loopback, private, link-local, CGNAT, NAT64,
// 6to4, IPv4-mapped, unspecified, multicast and the other special-purpose
// ranges of the IANA registries, and it checks the address *after*
// resolution, in the dialer's Control hook, on every connection: a name that
// resolves to 127.0.0.1 walks past any check that only reads the URL, and a
// name can resolve differently on the second lookup (DNS rebinding).
// Redirects are re-checked too (scheme, and every hop dials through the same
// Control). No proxy is used: a proxy would make the dial go to the proxy,
// and the proxy to wherever the URL says.
//
// Endpoints set by an administrator (or the desktop owner) are a deliberate
// choice and may be on the LAN; they do not use this client.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// blocked are the ranges no guarded request may reach. Sources: the IANA
// IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890 and updates).
var blocked = mustPrefixes(
	// IPv4
	"0.0.0.0/8",          // "this network", unspecified
	"10.0.0.0/8",         // private
	"100.64.0.0/10",      // CGNAT shared address space
	"127.0.0.0/8",        // loopback
	"169.254.0.0/16",     // link-local (cloud metadata lives here)
	"172.16.0.0/12",      // private
	"192.0.0.0/24",       // IETF protocol assignments
	"192.0.2.0/24",       // TEST-NET-1
	"192.31.196.0/24",    // AS112
	"192.52.193.0/24",    // AMT
	"192.88.99.0/24",     // 6to4 relay anycast
	"192.168.0.0/16",     // private
	"192.175.48.0/24",    // AS112 direct delegation
	"198.18.0.0/15",      // benchmarking
	"198.51.100.0/24",    // TEST-NET-2
	"203.0.113.0/24",     // TEST-NET-3
	"224.0.0.0/4",        // multicast
	"240.0.0.0/4",        // reserved
	"255.255.255.255/32", // broadcast
	// IPv6
	"::/128",          // unspecified
	"::1/128",         // loopback
	"::/96",           // IPv4-compatible (deprecated)
	"::ffff:0:0/96",   // IPv4-mapped
	"::ffff:0:0:0/96", // IPv4-translated
	"64:ff9b::/96",    // NAT64 well-known prefix
	"64:ff9b:1::/48",  // NAT64 local-use
	"100::/64",        // discard-only
	"2001::/23",       // IETF protocol assignments (Teredo 2001::/32 among them)
	"2001:db8::/32",   // documentation
	"2002::/16",       // 6to4
	"3fff::/20",       // documentation
	"5f00::/16",       // segment routing SIDs
	"fc00::/7",        // unique local
	"fe80::/10",       // link-local
	"fec0::/10",       // site-local (deprecated)
	"ff00::/8",        // multicast
)

func mustPrefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// ErrBlocked is in the chain of every refusal.
var ErrBlocked = errors.New("address not allowed")

// ErrRedirect is in the chain of a redirect the client refuses to follow
// (besides those to a refused address, which are ErrBlocked).
var ErrRedirect = errors.New("redirect not followed")

// Guard decides which addresses may be dialled. The zero Guard refuses
// every special-purpose range.
type Guard struct {
	// Allow are ranges let through although they are special (tests use a
	// loopback listener; an installation could open one LAN host on
	// purpose).
	Allow []netip.Prefix
	// Lookup, when set, resolves names instead of the system resolver
	// (tests: a name that resolves to loopback without touching DNS).
	// The dialer still checks every address it returns.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

// Check returns an error wrapping ErrBlocked unless addr is a public
// unicast address (or in g.Allow).
func (g Guard) Check(addr netip.Addr) error {
	if !addr.IsValid() {
		return fmt.Errorf("%w: invalid address", ErrBlocked)
	}
	for _, p := range g.Allow {
		if p.Contains(addr) {
			return nil
		}
	}
	if addr.Zone() != "" {
		return fmt.Errorf("%w: %s has a zone (link-local)", ErrBlocked, addr)
	}
	for _, p := range blocked {
		if p.Contains(addr) {
			return fmt.Errorf("%w: %s is in the special-purpose range %s", ErrBlocked, addr, p)
		}
	}
	return nil
}

// Control is a net.Dialer Control function: it runs after name resolution,
// with the address about to be connected to, and refuses it unless Check
// allows it.
func (g Guard) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot parse %q", ErrBlocked, address)
	}
	return g.Check(ap.Addr())
}

// CheckURL refuses URLs that are not http or https, carry user info, or
// name an IP literal the guard refuses (names are checked when dialled).
func (g Guard) CheckURL(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%w: scheme %q (only http and https)", ErrBlocked, u.Scheme)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("%w: no host", ErrBlocked)
	}
	if u.User != nil {
		// Credentials in a URL end up in logs and Referer headers; a
		// redirect carrying them is refused too.
		return fmt.Errorf("%w: user info in the URL", ErrBlocked)
	}
	host := strings.TrimSuffix(u.Hostname(), ".")
	if a, err := netip.ParseAddr(host); err == nil {
		return g.Check(a)
	}
	if numericHost(host) {
		// 2130706433, 0177.0.0.1, 0x7f000001, 127.1: forms that C's
		// inet_aton (and so a system resolver) reads as an IPv4 address
		// and Go's parser does not. No real name ends in a numeric label,
		// so they are refused outright rather than left to the resolver.
		return fmt.Errorf("%w: %q is not a canonical IP address", ErrBlocked, u.Hostname())
	}
	return nil
}

// numericHost reports whether host's last label is a number (decimal,
// octal or 0x hex), which no top-level domain is.
func numericHost(host string) bool {
	last := host[strings.LastIndex(host, ".")+1:]
	if last == "" {
		return false
	}
	l := strings.ToLower(last)
	if strings.HasPrefix(l, "0x") {
		l = l[2:]
		return strings.Trim(l, "0123456789abcdef") == ""
	}
	return strings.Trim(l, "0123456789") == ""
}

// Options tune a guarded client.
type Options struct {
	// Timeout bounds a whole request, body included (0: none; the caller
	// then bounds it with its context).
	Timeout time.Duration
	// DialTimeout bounds connecting (default 10 s).
	DialTimeout time.Duration
	// HeaderTimeout bounds the wait for a response's headers once the
	// request is sent (default 2 minutes): a server chosen by a user must
	// not hold a connection open for ever.
	HeaderTimeout time.Duration
	// MaxRedirects is how many redirects are followed (default 3; -1 none).
	MaxRedirects int
	// SecretHeaders are request headers holding a secret (an API key
	// header); like Authorization, Cookie and Proxy-Authorization they are
	// dropped from a redirect that leaves the origin (scheme, host and
	// port) of the first request, which is the origin they were issued for.
	SecretHeaders []string
}

// alwaysSecret are the headers dropped on every cross-origin hop. Go's
// client drops them only when the host is neither the same nor a
// subdomain; a hop to another port or from https to http keeps them.
// Referer is among them: Go's client sets it to the previous URL, whose
// query may hold a secret (a custom tool's ?key={{secret}}).
var alwaysSecret = []string{"Authorization", "Cookie", "Proxy-Authorization", "Referer"}

func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return u.Scheme + "://" + strings.ToLower(strings.TrimSuffix(u.Hostname(), ".")) + ":" + port
}

// Client returns an HTTP client that dials only addresses g allows and
// re-checks every redirect.
func (g Guard) Client(opt Options) *http.Client {
	if opt.DialTimeout <= 0 {
		opt.DialTimeout = 10 * time.Second
	}
	if opt.MaxRedirects == 0 {
		opt.MaxRedirects = 3
	}
	if opt.HeaderTimeout <= 0 {
		opt.HeaderTimeout = 2 * time.Minute
	}
	d := &net.Dialer{Timeout: opt.DialTimeout, KeepAlive: 30 * time.Second, Control: g.Control}
	dial := d.DialContext
	if g.Lookup != nil {
		dial = func(ctx context.Context, network, address string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(address)
			if err != nil {
				return nil, err
			}
			if _, err := netip.ParseAddr(host); err == nil {
				return d.DialContext(ctx, network, address)
			}
			addrs, err := g.Lookup(ctx, host)
			if err != nil {
				return nil, err
			}
			err = fmt.Errorf("no address for %s", host)
			for _, a := range addrs {
				var c net.Conn
				if c, err = d.DialContext(ctx, network, net.JoinHostPort(a.String(), port)); err == nil {
					return c, nil
				}
			}
			return nil, err
		}
	}
	tr := &http.Transport{
		Proxy:                 nil, // see the package comment
		DialContext:           dial,
		TLSHandshakeTimeout:   opt.DialTimeout,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          8,
		IdleConnTimeout:       60 * time.Second,
		ResponseHeaderTimeout: opt.HeaderTimeout,
	}
	return &http.Client{
		Transport: guardedTransport{g: g, rt: tr},
		Timeout:   opt.Timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if opt.MaxRedirects < 0 || len(via) > opt.MaxRedirects {
				return fmt.Errorf("%w: too many redirects", ErrBlocked)
			}
			prev := via[len(via)-1]
			if req.Response != nil && prev.Method != http.MethodGet && prev.Method != http.MethodHead {
				switch req.Response.StatusCode {
				case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther:
					// These turn a POST into a GET without its body:
					// guessing what the server meant is not ours to do
					// (307 and 308 keep the method and are followed).
					return fmt.Errorf("%w: %d in answer to a %s (it would be retried as a GET)", ErrRedirect, req.Response.StatusCode, prev.Method)
				}
			}
			if err := g.CheckURL(req.URL); err != nil {
				return err
			}
			if origin(req.URL) != origin(via[0].URL) {
				for _, h := range alwaysSecret {
					req.Header.Del(h)
				}
				for _, h := range opt.SecretHeaders {
					req.Header.Del(h)
				}
			}
			return nil
		},
	}
}

// guardedTransport checks each request's URL before it is sent, so an IP
// literal is refused with a clear message before any dial.
type guardedTransport struct {
	g  Guard
	rt http.RoundTripper
}

func (t guardedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.g.CheckURL(req.URL); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	return t.rt.RoundTrip(req)
}

// CloseIdleConnections closes the wrapped transport's idle connections
// (http.Client.CloseIdleConnections reaches a transport only through it).
func (t guardedTransport) CloseIdleConnections() {
	if c, ok := t.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// Resolve looks host up and checks every address it resolves to, for a
// settings form that wants to say "this address is not allowed" before
// saving. The dialer checks again on every connection.
func (g Guard) Resolve(ctx context.Context, host string) error {
	if a, err := netip.ParseAddr(host); err == nil {
		return g.Check(a)
	}
	lookup := func(ctx context.Context, host string) ([]netip.Addr, error) {
		return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	}
	if g.Lookup != nil {
		lookup = g.Lookup
	}
	addrs, err := lookup(ctx, host)
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if err := g.Check(a); err != nil {
			return err
		}
	}
	return nil
}

// Clients keeps guarded clients by their allowed ranges and options, so
// connections are reused between calls while the allow-list changes only
// when an administrator edits it. The zero value is ready to use. A
// guard's Lookup hook is not part of the key: one Clients serves one
// service, whose guard keeps its hook.
type Clients struct {
	mu sync.Mutex
	m  map[string]*http.Client
}

// Get returns the client for g and opt, made on first use.
func (c *Clients) Get(g Guard, opt Options) *http.Client {
	opt.SecretHeaders = slices.Clone(opt.SecretHeaders)
	slices.Sort(opt.SecretHeaders)
	var key strings.Builder
	for _, p := range g.Allow {
		key.WriteString(p.String() + " ")
	}
	fmt.Fprintf(&key, "|%d %d %d %d|%s", opt.Timeout, opt.DialTimeout, opt.HeaderTimeout, opt.MaxRedirects,
		strings.Join(opt.SecretHeaders, " "))
	c.mu.Lock()
	defer c.mu.Unlock()
	if hc, ok := c.m[key.String()]; ok {
		return hc
	}
	if c.m == nil || len(c.m) >= 16 {
		c.m = map[string]*http.Client{} // the allow-list changed more than a few times
	}
	hc := g.Client(opt)
	c.m[key.String()] = hc
	return hc
}
