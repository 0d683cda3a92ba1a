// Package llm is the client for OpenAI-compatible chat endpoints: llama.cpp's
// server, vLLM, Ollama's /v1, LM Studio, OpenAI and gateways in its image.
//
// Every endpoint failure it returns is an *apperr.Error whose message says in
// plain words what happened and what to do; failures the endpoint answered
// with carry an *EndpointError in their chain so callers can branch on the
// upstream status and type. Streams are relayed event by event through a
// callback, never buffered, and guarded by two timeouts of our own (first
// token, stall) rather than an overall deadline, which would cut long answers.
package llm

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/secrets"
)

// Endpoint is one configured connection.
//
// Authorization: APIKey is sent as "Authorization: Bearer APIKey". An
// "Authorization" entry in Headers (any capitalisation) is sent only when
// APIKey is empty, for endpoints that want another scheme; setting both is
// refused by NewClient rather than letting one silently replace the other.
type Endpoint struct {
	// BaseURL is the API root, such as http://127.0.0.1:8080/v1.
	BaseURL string
	// APIKey is the bearer token; empty sends none.
	APIKey string
	// Headers are extra request headers (gateways want project or
	// organisation headers). Their values are never logged or shown.
	Headers map[string]string
	// CAPEM holds extra PEM certificates trusted on top of the system roots,
	// for a server behind a private CA or with a self-signed certificate.
	CAPEM string
	// InsecureTLS turns off certificate verification. It exists for the
	// person who deliberately chooses it; nothing sets it by default.
	InsecureTLS bool
	// NoStreamOptions leaves stream_options out of streaming requests, for
	// servers known to reject it (see Result.StreamOptionsRejected).
	NoStreamOptions bool
}

// Options tunes a Client. Zero values take the defaults.
type Options struct {
	// FirstTokenTimeout bounds the wait for the first event of an answer
	// (default 10 minutes: a CPU-only server can take minutes to process a
	// long prompt before it sends anything).
	FirstTokenTimeout time.Duration
	// StallTimeout bounds the gap between events once the answer has
	// started (default 60 seconds).
	StallTimeout time.Duration
	// DialTimeout bounds opening a connection (default 10 seconds).
	DialTimeout time.Duration
	// UserAgent is sent as User-Agent (default "LLeMbas").
	UserAgent string
}

// The defaults of Options.
const (
	DefaultFirstTokenTimeout = 10 * time.Minute
	DefaultStallTimeout      = 60 * time.Second
	DefaultDialTimeout       = 10 * time.Second
	DefaultUserAgent         = "LLeMbas"
)

// listTimeout bounds listing models: unlike a first token, a model list
// that takes longer than this is not coming.
const listTimeout = 30 * time.Second

// Client talks to one endpoint. It is safe for concurrent use.
type Client struct {
	base     string // normalised, without a trailing slash
	query    string // the base URL's query, added to every request
	shown    string // base for messages: no user info
	hostport string // host:port for "nothing is listening at"
	auth     string // the Authorization header value, or ""
	header   http.Header
	redact   *secrets.Redactor // this endpoint's key and header values
	opt      Options
	hc       *http.Client

	// noStreamOptions is set once the server rejected stream_options, so
	// later requests on this client do not pay for the retry again.
	noStreamOptions atomic.Bool
}

// NewClient validates ep and returns a client for it. Errors are
// apperr.Invalid with a message naming what to fix.
func NewClient(ep Endpoint, opt Options) (*Client, error) {
	if opt.FirstTokenTimeout <= 0 {
		opt.FirstTokenTimeout = DefaultFirstTokenTimeout
	}
	if opt.StallTimeout <= 0 {
		opt.StallTimeout = DefaultStallTimeout
	}
	if opt.DialTimeout <= 0 {
		opt.DialTimeout = DefaultDialTimeout
	}
	if opt.UserAgent == "" {
		opt.UserAgent = DefaultUserAgent
	}
	u, err := NormalizeBaseURL(ep.BaseURL)
	if err != nil {
		return nil, err
	}
	c := &Client{opt: opt, header: http.Header{}}
	c.noStreamOptions.Store(ep.NoStreamOptions)
	c.query = u.RawQuery
	u.RawQuery = ""
	c.base = u.String()
	c.shown = u.Redacted()
	c.hostport = u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		c.hostport = net.JoinHostPort(u.Hostname(), port)
	}

	for k, v := range ep.Headers {
		name := http.CanonicalHeaderKey(strings.TrimSpace(k))
		if !validHeaderName(name) {
			return nil, apperr.New(apperr.Invalid, "The extra header name %q is not a valid HTTP header name.", k)
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			// The value is a secret as far as we know: name the header only.
			return nil, apperr.New(apperr.Invalid, "The value of the extra header %q contains a line break, which HTTP does not allow.", name)
		}
		switch name {
		case "Host", "Content-Length", "Transfer-Encoding", "Connection", "Content-Type":
			return nil, apperr.New(apperr.Invalid, "The extra header %q is set by LLeMbas itself and cannot be overridden.", name)
		case "Authorization":
			if ep.APIKey != "" {
				return nil, apperr.New(apperr.Invalid, "Both an API key and an Authorization header are set. Keep one: the API key is sent as a Bearer token, the header only when the key is empty.")
			}
			c.auth = v
			continue
		}
		c.header.Set(name, v)
	}
	if ep.APIKey != "" {
		if strings.ContainsAny(ep.APIKey, "\r\n\x00") {
			return nil, apperr.New(apperr.Invalid, "The API key contains a line break. Paste it again without the line break.")
		}
		c.auth = "Bearer " + strings.TrimSpace(ep.APIKey)
	}

	known := []string{ep.APIKey, c.auth}
	for _, v := range ep.Headers {
		known = append(known, v)
	}
	c.redact = secrets.NewRedactor(known...)

	tlsConf, err := tlsConfig(ep)
	if err != nil {
		return nil, err
	}
	dialer := &net.Dialer{Timeout: opt.DialTimeout, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         dialer.DialContext,
		TLSClientConfig:     tlsConf,
		TLSHandshakeTimeout: opt.DialTimeout,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        16,
		IdleConnTimeout:     90 * time.Second,
	}
	c.hc = &http.Client{
		Transport: tr,
		// No Timeout: it would cut long streams; the watchdog bounds waits.
		//
		// Redirects are not followed: a 301/302 turns our POST into a GET,
		// which then fails with a confusing error. The status is reported
		// with the new address instead.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c, nil
}

// BaseURL returns the normalised base URL requests go to.
func (c *Client) BaseURL() string {
	if c.query != "" {
		return c.base + "?" + c.query
	}
	return c.base
}

// NormalizeBaseURL checks that raw is an http or https URL with a host and
// returns it normalised: an empty path becomes /v1, a trailing slash is
// dropped, and a pasted .../chat/completions or .../v1/models is trimmed
// back to the API root. Errors are apperr.Invalid.
func NormalizeBaseURL(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, apperr.New(apperr.Invalid, "The base URL is empty. Enter the address of the server, such as http://127.0.0.1:8080/v1.")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, apperr.New(apperr.Invalid, "The base URL %q is not a valid URL. Enter an address such as http://127.0.0.1:8080/v1.", raw)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		u.Scheme = strings.ToLower(u.Scheme)
	case "":
		return nil, apperr.New(apperr.Invalid, "The base URL %q has no scheme. Start it with http:// or https://.", raw)
	default:
		return nil, apperr.New(apperr.Invalid, "The base URL must start with http:// or https://, not %s://.", u.Scheme)
	}
	if u.User != nil {
		// The base URL is stored and shown as it is; a key in it would be
		// neither encrypted nor masked.
		return nil, apperr.New(apperr.Invalid, "The base URL contains a user name or password. Put credentials in the API key or an extra header instead, where they are kept encrypted.")
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, apperr.New(apperr.Invalid, "The base URL %q has no host. Enter an address such as http://127.0.0.1:8080/v1.", raw)
	}
	if p := u.Port(); p != "" {
		if n, err := parsePort(p); err != nil || n == 0 {
			return nil, apperr.New(apperr.Invalid, "The port in the base URL %q is not a number between 1 and 65535.", raw)
		}
	}
	u.Fragment, u.RawFragment = "", ""
	path := strings.TrimRight(u.Path, "/")
	for _, suffix := range []string{"/chat/completions", "/completions"} {
		if p, ok := strings.CutSuffix(path, suffix); ok {
			path = strings.TrimRight(p, "/")
			break
		}
	}
	// "/models" alone could be a real prefix; after /v1 it is the listing.
	if p, ok := strings.CutSuffix(path, "/v1/models"); ok {
		path = p + "/v1"
	}
	if path == "" {
		path = "/v1"
	}
	u.Path, u.RawPath = path, ""
	return u, nil
}

func parsePort(p string) (int, error) {
	n := 0
	for _, r := range p {
		if r < '0' || r > '9' {
			return 0, errors.New("not a number")
		}
		n = n*10 + int(r-'0')
		if n > 65535 {
			return 0, errors.New("out of range")
		}
	}
	return n, nil
}

// validHeaderName reports whether name is an RFC 9110 token.
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if r > 0x7e || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}

func tlsConfig(ep Endpoint) (*tls.Config, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12}
	if ep.CAPEM != "" {
		roots, err := x509.SystemCertPool()
		if err != nil || roots == nil {
			roots = x509.NewCertPool()
		}
		if !roots.AppendCertsFromPEM([]byte(ep.CAPEM)) {
			return nil, apperr.New(apperr.Invalid, "The CA certificate is not a valid PEM certificate. Paste the whole certificate, from -----BEGIN CERTIFICATE----- to -----END CERTIFICATE-----.")
		}
		conf.RootCAs = roots
	}
	if ep.InsecureTLS {
		conf.InsecureSkipVerify = true
	}
	return conf, nil
}

// newRequest builds a request to path below the base URL with our headers.
func (c *Client) newRequest(ctx context.Context, method, path string, body []byte, accept string) (*http.Request, error) {
	target := c.base + path
	if c.query != "" {
		target += "?" + c.query
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err, "The request to %s could not be built.", c.shown)
	}
	req.Header.Set("User-Agent", c.opt.UserAgent)
	for k, v := range c.header {
		req.Header[k] = v
	}
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", accept)
	return req, nil
}

// humanDuration writes d the way a message reads best: "10 minutes",
// "60 seconds", "150 ms".
func humanDuration(d time.Duration) string {
	switch {
	case d >= time.Minute && d%time.Minute == 0:
		return plural(int(d/time.Minute), "minute")
	case d >= time.Second && d%time.Second == 0:
		return plural(int(d/time.Second), "second")
	case d >= time.Second:
		return fmt.Sprintf("%.1f seconds", d.Seconds())
	default:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
