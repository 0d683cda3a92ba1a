package llm

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/llembas/lembas/backend/apperr"
)

// ErrTimeout is in the chain of every error caused by the first-token or
// stall timeout, so callers can tell a timeout from a stop they asked for
// (which has context.Canceled in its chain instead).
var ErrTimeout = errors.New("llm: the endpoint timed out")

// ErrLineTooLong is returned by ParseSSE when a line or an event exceeds
// MaxEventSize: a hostile or broken endpoint streaming without newlines
// must not grow memory without bound.
var ErrLineTooLong = errors.New("llm: stream line too long")

// EndpointError is what the endpoint itself said when it refused or failed
// a request. It sits inside the *apperr.Error returned to callers, who find
// it with errors.As to branch on the upstream status and type.
type EndpointError struct {
	// Status is the HTTP status; 200 for an error object sent inside a
	// stream that had already started.
	Status int
	// Type and Code are the upstream error's type and code as sent, such
	// as "invalid_request_error" and "model_not_found" (a numeric code is
	// kept as its digits).
	Type, Code string
	// Message is the upstream message, whitespace folded and bounded.
	Message string
	// RetryAfter is the wait a 429 or 503 asked for, or zero.
	RetryAfter time.Duration
	// PromptTokens and ContextSize are the token counts of a
	// context-exceeded error when the endpoint gave them, or zero.
	PromptTokens, ContextSize int
}

func (e *EndpointError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "endpoint answered %d", e.Status)
	if e.Type != "" || e.Code != "" {
		b.WriteString(" (" + strings.Trim(e.Type+" "+e.Code, " ") + ")")
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// ContextExceeded reports whether the endpoint refused the request because
// the prompt does not fit in the model's context.
func (e *EndpointError) ContextExceeded() bool {
	if e.Type == "exceed_context_size_error" || e.Code == "context_length_exceeded" {
		return true
	}
	m := strings.ToLower(e.Message)
	return strings.Contains(m, "maximum context length") ||
		strings.Contains(m, "exceeds the available context size") ||
		strings.Contains(m, "context window") && strings.Contains(m, "exceed") ||
		strings.Contains(m, "context length") && strings.Contains(m, "exceed")
}

// ModelNotFound reports whether the endpoint said the requested model does
// not exist, as opposed to the route not existing.
func (e *EndpointError) ModelNotFound() bool {
	if e.Code == "model_not_found" {
		return true
	}
	return e.Status == http.StatusNotFound && strings.Contains(strings.ToLower(e.Message), "model")
}

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// parseEndpointError reads the error shapes servers send: OpenAI's
// {"error":{"message","type","code"}}, Ollama's {"error":"text"}, vLLM's
// top-level {"object":"error","message","type","code"}, FastAPI's
// {"detail":…}, or plain text.
func parseEndpointError(status int, body []byte) *EndpointError {
	e := &EndpointError{Status: status}
	trimmed := strings.TrimSpace(string(body))
	var top map[string]json.RawMessage
	if json.Unmarshal([]byte(trimmed), &top) != nil {
		if looksLikeHTML(trimmed) {
			e.Message = "(an HTML page)"
		} else {
			e.Message = cleanMessage(trimmed)
		}
		return e
	}
	obj := top
	if raw, ok := top["error"]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			e.Message = cleanMessage(s)
			return e
		}
		var inner map[string]json.RawMessage
		if json.Unmarshal(raw, &inner) == nil {
			obj = inner
		}
	}
	e.Message = cleanMessage(rawText(obj["message"]))
	if e.Message == "" {
		e.Message = cleanMessage(detailText(obj["detail"]))
	}
	e.Type = rawText(obj["type"])
	e.Code = rawText(obj["code"])
	e.PromptTokens = rawInt(obj["n_prompt_tokens"])
	e.ContextSize = rawInt(obj["n_ctx"])
	if e.Code == strconv.Itoa(status) {
		e.Code = "" // llama.cpp and vLLM repeat the status as the code
	}
	return e
}

// rawText returns a JSON string's value, a number's digits, or "".
func rawText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

func rawInt(raw json.RawMessage) int {
	var n int
	if json.Unmarshal(raw, &n) == nil {
		return n
	}
	return 0
}

// detailText reads FastAPI's detail, a string or a list of {"msg": …}.
func detailText(raw json.RawMessage) string {
	if s := rawText(raw); s != "" {
		return s
	}
	var list []struct {
		Msg string `json:"msg"`
	}
	if json.Unmarshal(raw, &list) == nil {
		var msgs []string
		for _, d := range list {
			if d.Msg != "" {
				msgs = append(msgs, d.Msg)
			}
		}
		return strings.Join(msgs, "; ")
	}
	return ""
}

func looksLikeHTML(s string) bool {
	head := strings.ToLower(s[:min(len(s), 512)])
	return strings.HasPrefix(head, "<!doctype html") || strings.HasPrefix(head, "<html") ||
		strings.Contains(head, "<head") || strings.Contains(head, "<body")
}

// maxMessage bounds upstream text quoted in our messages.
const maxMessage = 300

// cleanMessage folds whitespace, replaces invalid UTF-8 and bounds the
// length of upstream text before it goes into a message people read.
func cleanMessage(s string) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
	if utf8.RuneCountInString(s) > maxMessage {
		r := []rune(s)
		s = string(r[:maxMessage]) + "…"
	}
	return s
}

// retryAfter reads Retry-After (seconds or an HTTP date) or Azure's
// retry-after-ms.
func retryAfter(h http.Header) time.Duration {
	if ms, err := strconv.Atoi(strings.TrimSpace(h.Get("Retry-After-Ms"))); err == nil && ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d.Round(time.Second)
		}
	}
	return 0
}

var (
	reLlamaCtx  = regexp.MustCompile(`request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)`)
	reMaxCtx    = regexp.MustCompile(`maximum context length is (\d+)`)
	rePromptLen = regexp.MustCompile(`(?:resulted in|requested|you have) (\d+) tokens`)
)

// contextCounts fills in the token counts from the message when the error
// has no structured fields (OpenAI and vLLM only say them in words).
func contextCounts(e *EndpointError) (prompt, ctx int) {
	prompt, ctx = e.PromptTokens, e.ContextSize
	if m := reLlamaCtx.FindStringSubmatch(e.Message); m != nil {
		p, _ := strconv.Atoi(m[1])
		c, _ := strconv.Atoi(m[2])
		prompt, ctx = orInt(prompt, p), orInt(ctx, c)
	}
	if m := reMaxCtx.FindStringSubmatch(e.Message); m != nil {
		c, _ := strconv.Atoi(m[1])
		ctx = orInt(ctx, c)
	}
	if m := rePromptLen.FindStringSubmatch(e.Message); m != nil {
		p, _ := strconv.Atoi(m[1])
		prompt = orInt(prompt, p)
	}
	return prompt, ctx
}

// orInt returns a if set, else b.
func orInt(a, b int) int {
	if a > 0 {
		return a
	}
	return b
}

// statusError turns a non-2xx response into the error callers get. target
// is the URL as shown to people; model is the requested model, if any.
func (c *Client) statusError(resp *http.Response, body []byte, target, model string) error {
	// An endpoint (or a proxy before it) may echo the request, our key and
	// headers included: hide them before anything is cut or quoted.
	body = []byte(c.redact.Redact(string(body)))
	e := parseEndpointError(resp.StatusCode, body)
	e.RetryAfter = retryAfter(resp.Header)
	code := resp.StatusCode
	upstream := func() string {
		if e.Message == "" {
			return ""
		}
		return ": " + e.Message
	}
	wrap := func(kind apperr.Kind, format string, args ...any) error {
		return apperr.Wrap(kind, e, format, args...)
	}
	switch {
	case code >= 300 && code < 400:
		if loc := resp.Header.Get("Location"); loc != "" {
			return wrap(apperr.Unavailable, "The endpoint redirects to %s (%d). Use that address as the base URL.", cleanMessage(c.redact.Redact(loc)), code)
		}
		return wrap(apperr.Unavailable, "The endpoint answered with a redirect (%d) to nowhere. Check the base URL.", code)
	case code == http.StatusUnauthorized:
		if c.auth == "" {
			return wrap(apperr.Unavailable, "The endpoint wants an API key (401). Add the key in the connection settings.")
		}
		return wrap(apperr.Unavailable, "The endpoint rejected the API key (401). Check the key in the connection settings.")
	case code == http.StatusForbidden:
		return wrap(apperr.Unavailable, "The endpoint refused access (403)%s. Check that the API key is allowed to use this model.", upstream())
	case code == http.StatusNotFound:
		if model != "" && e.ModelNotFound() {
			return wrap(apperr.Unavailable, "The endpoint has no model named %q (404). Pick another model or refresh the model list.", model)
		}
		return wrap(apperr.Unavailable, "Nothing answers at %s (404). Check the base URL: most servers expect it to end in /v1.", target)
	case code == http.StatusTooManyRequests:
		if e.RetryAfter > 0 {
			return wrap(apperr.Unavailable, "The endpoint is limiting requests (429). Try again in %s.", humanDuration(max(e.RetryAfter.Round(time.Second), time.Second)))
		}
		return wrap(apperr.Unavailable, "The endpoint is limiting requests (429)%s. Wait a moment and try again.", upstream())
	case e.ContextExceeded():
		prompt, size := contextCounts(e)
		e.PromptTokens, e.ContextSize = prompt, size
		counts := ""
		if prompt > 0 && size > 0 {
			counts = fmt.Sprintf(" (%d of %d tokens)", prompt, size)
		} else if size > 0 {
			counts = fmt.Sprintf(" (%d tokens)", size)
		}
		return wrap(apperr.Invalid, "The conversation is longer than the model's context%s. Start a new chat or remove earlier messages, or give the model a larger context on the server.", counts)
	case code == http.StatusBadRequest && strings.Contains(string(body), "HTTP request to an HTTPS server"):
		return wrap(apperr.Invalid, "The server at %s speaks HTTPS. Change the base URL to start with https://.", c.shown)
	case code == http.StatusBadRequest || code == http.StatusRequestEntityTooLarge || code == http.StatusUnprocessableEntity:
		return wrap(apperr.Invalid, "The endpoint refused the request (%d)%s.", code, upstream())
	case code == http.StatusBadGateway || code == http.StatusServiceUnavailable || code == http.StatusGatewayTimeout:
		return wrap(apperr.Unavailable, "The endpoint is unavailable (%d)%s. It may be loading the model or overloaded; try again in a moment.", code, upstream())
	case code >= 500:
		return wrap(apperr.Unavailable, "The endpoint failed while answering (%d)%s. Try again; if it keeps failing, look at the server's log.", code, upstream())
	default:
		return wrap(apperr.Unavailable, "The endpoint answered with an unexpected status (%d)%s.", code, upstream())
	}
}

// scrub hides this endpoint's secrets in the messages of err's chain, a
// second net behind the redaction of upstream text where it is read: what
// the caller shows, logs or stores (messages.error) never holds them.
func (c *Client) scrub(err error) error {
	for e := err; e != nil; e = errors.Unwrap(e) {
		switch x := e.(type) {
		case *apperr.Error:
			x.Message = c.redact.Redact(x.Message)
		case *EndpointError:
			x.Message, x.Type, x.Code = c.redact.Redact(x.Message), c.redact.Redact(x.Type), c.redact.Redact(x.Code)
		}
	}
	return err
}

// networkError explains a failure to reach the endpoint or to get its
// response headers.
func (c *Client) networkError(err error) error {
	var (
		unknownCA  x509.UnknownAuthorityError
		hostname   x509.HostnameError
		invalid    x509.CertificateInvalidError
		recordErr  tls.RecordHeaderError
		dnsErr     *net.DNSError
		opErr      *net.OpError
		netErr     net.Error
		tlsVerify  *tls.CertificateVerificationError
		tlsAlert   tls.AlertError
		serverHTTP = strings.Contains(err.Error(), "server gave HTTP response to HTTPS client")
	)
	switch {
	case errors.As(err, &unknownCA):
		return apperr.Wrap(apperr.Unavailable, err, "The certificate of %s is signed by an authority this computer does not trust. Add the server's CA certificate in the connection settings, or, if you know this server, choose to trust its certificate.", c.shown)
	case errors.As(err, &hostname):
		return apperr.Wrap(apperr.Unavailable, err, "The certificate of %s was issued for another name (%s). Use the name on the certificate in the base URL, or add a certificate for this name.", c.shown, cleanMessage(hostname.Error()))
	case errors.As(err, &invalid):
		if invalid.Reason == x509.Expired {
			return apperr.Wrap(apperr.Unavailable, err, "The certificate of %s has expired or is not valid yet. Renew it on the server, or check this computer's clock.", c.shown)
		}
		return apperr.Wrap(apperr.Unavailable, err, "The certificate of %s is not valid (%s). Fix the certificate on the server.", c.shown, cleanMessage(invalid.Error()))
	case errors.As(err, &tlsVerify):
		return apperr.Wrap(apperr.Unavailable, err, "The certificate of %s could not be verified. Add the server's CA certificate in the connection settings.", c.shown)
	case serverHTTP || errors.As(err, &recordErr):
		return apperr.Wrap(apperr.Unavailable, err, "The server at %s does not speak HTTPS. Change the base URL to start with http://.", c.shown)
	case errors.As(err, &tlsAlert):
		return apperr.Wrap(apperr.Unavailable, err, "The secure connection to %s failed (%s). Check that the base URL points at the API and not at another service.", c.shown, cleanMessage(tlsAlert.Error()))
	case errors.As(err, &opErr) && opErr.Op == "proxyconnect":
		return apperr.Wrap(apperr.Unavailable, err, "The HTTP proxy set in this computer's environment (HTTP_PROXY/HTTPS_PROXY) could not be reached. Fix the proxy setting, or add the endpoint's host to NO_PROXY.")
	case errors.As(err, &dnsErr):
		if dnsErr.IsNotFound {
			return apperr.Wrap(apperr.Unavailable, err, "The host name %q could not be found. Check the base URL for typos.", dnsErr.Name)
		}
		return apperr.Wrap(apperr.Unavailable, err, "The host name %q could not be looked up: the name service did not answer. Check the network connection.", dnsErr.Name)
	case errors.Is(err, syscall.ECONNREFUSED):
		return apperr.Wrap(apperr.Unavailable, err, "Nothing is listening at %s. Start the server, or check the address and port in the base URL.", c.hostport)
	case errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH):
		return apperr.Wrap(apperr.Unavailable, err, "%s cannot be reached from this computer (no route). Check the network connection or VPN.", c.hostport)
	case errors.As(err, &netErr) && netErr.Timeout():
		return apperr.Wrap(apperr.Unavailable, err, "%s did not accept a connection within %s. Check that the server is running and reachable.", c.hostport, humanDuration(c.opt.DialTimeout))
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET):
		return apperr.Wrap(apperr.Unavailable, err, "The endpoint at %s closed the connection without answering. Check that the base URL points at an OpenAI-compatible API.", c.shown)
	default:
		return apperr.Wrap(apperr.Unavailable, err, "Could not reach the endpoint at %s. Check the base URL and that the server is running.", c.shown)
	}
}

// brokenStream explains a read error after the answer had started.
func brokenStream(err error) error {
	return apperr.Wrap(apperr.Unavailable, err, "The connection to the endpoint broke off in the middle of the answer. Try again; if it keeps happening, look at the server's log.")
}

// phase says which wait a watchdog is guarding.
type phase int

const (
	phaseFirst phase = iota // waiting for the answer to start
	phaseStall              // between events of a started answer
	phaseList               // waiting for a model list
)

// timeoutError is the cause a watchdog cancels its request with.
type timeoutError struct {
	phase phase
	after time.Duration
}

func (e *timeoutError) Error() string { return "llm: " + e.message() }

func (e *timeoutError) Is(target error) bool { return target == ErrTimeout }

func (e *timeoutError) message() string {
	switch e.phase {
	case phaseStall:
		return fmt.Sprintf("The endpoint stopped sending for %s in the middle of the answer, so the request was abandoned. Try again; if it keeps happening, look at the server's log.", humanDuration(e.after))
	case phaseList:
		return fmt.Sprintf("The endpoint did not answer within %s. Check that the server is running and not overloaded.", humanDuration(e.after))
	default:
		return fmt.Sprintf("The endpoint did not start answering within %s. A slow server may still be reading a long prompt: try a shorter conversation, or raise the first-token timeout.", humanDuration(e.after))
	}
}

// watchdog cancels a request when the endpoint is silent for too long. It
// is a timer reset on every read, rather than http.Client.Timeout, because
// a healthy answer may stream for an hour while a dead one must be noticed
// in a minute.
type watchdog struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
	cur    atomic.Pointer[timeoutError]
}

func newWatchdog(parent context.Context, p phase, d time.Duration) *watchdog {
	ctx, cancel := context.WithCancelCause(parent)
	w := &watchdog{ctx: ctx, cancel: cancel}
	w.cur.Store(&timeoutError{phase: p, after: d})
	w.timer = time.AfterFunc(d, func() { w.cancel(w.cur.Load()) })
	return w
}

// touch restarts the current wait: the endpoint showed it is alive.
func (w *watchdog) touch() { w.timer.Reset(w.cur.Load().after) }

// started switches from the first-token wait to the stall wait.
func (w *watchdog) started(stall time.Duration) {
	if w.cur.Load().phase != phaseStall {
		w.cur.Store(&timeoutError{phase: phaseStall, after: stall})
	}
	w.touch()
}

func (w *watchdog) stop() {
	w.timer.Stop()
	w.cancel(context.Canceled)
}

// failure turns err, which ended a request, into what the caller gets: the
// caller's own cancellation, one of our timeouts, or explain(err).
func (w *watchdog) failure(parent context.Context, err error, explain func(error) error) error {
	if parent.Err() != nil {
		return fmt.Errorf("llm: request stopped: %w", parent.Err())
	}
	var te *timeoutError
	if errors.As(context.Cause(w.ctx), &te) {
		return apperr.Wrap(apperr.Unavailable, te, "%s", te.message())
	}
	return explain(err)
}

// activityReader tells the watchdog about every byte that arrives, so
// keep-alive comments count as signs of life too.
type activityReader struct {
	r io.Reader
	w *watchdog
}

func (a *activityReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.w.touch()
	}
	return n, err
}
