// Package fakellm is a scripted fake of an OpenAI-compatible chat endpoint
// for tests.
//
// The LLM endpoint is the one dependency our tests fake, so the fake must
// speak the exact wire format: replies are replayed from captures of a real
// llama.cpp server (see fixtures/README.md) or built in the same shape, and
// failures are real ones — error bodies as servers send them, malformed and
// truncated streams, dropped connections and stalls.
package fakellm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// Server is an httptest-backed fake endpoint. Its methods are safe for
// concurrent use, including while requests are being served.
type Server struct {
	srv       *httptest.Server
	done      chan struct{} // closed by Close so stalled and sleeping handlers give up
	closeOnce sync.Once

	mu     sync.Mutex
	queue  []Reply
	def    Reply
	models Reply
	reqs   []Request
	seen   int              // requests received, recorded or not
	keep   int              // how many requests reqs holds at most; -1: all
	grew   chan struct{}    // closed and replaced whenever seen grows, to wake WaitRequests
	routes map[string]Reply // "METHOD /path" → reply, for other endpoints (audio)
}

// Request is one request the server received.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
	// JSON is Body decoded, or nil when Body is not a JSON object.
	JSON map[string]any
}

// New starts a server and registers t.Cleanup to close it.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		done:   make(chan struct{}),
		def:    Fixture("stream-no-reasoning"),
		models: Fixture("models"),
		grew:   make(chan struct{}),
		keep:   -1,
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.Close)
	return s
}

// Close shuts the server down, cutting off stalled and delayed replies; it
// is safe to call more than once. New arranges for it to run at cleanup, so
// tests call it only to make the endpoint vanish early.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.done)
		// httptest's Close waits for active connections, which a stalled
		// reply never finishes on its own.
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// URL returns the base URL clients are configured with, ending in /v1.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Enqueue adds replies for the next POST /v1/chat/completions calls, in order.
func (s *Server) Enqueue(r ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, r...)
}

// SetDefault sets the chat completions reply used when the queue is empty;
// initially it is Fixture("stream-no-reasoning").
func (s *Server) SetDefault(r Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.def = r
}

// SetModels sets the GET /v1/models reply; initially it is Fixture("models").
func (s *Server) SetModels(r Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = r
}

// SetRoute answers method and path (such as "POST", "/v1/audio/speech")
// with r, for the endpoints besides chat completions and models: audio
// transcription, speech and voice lists. Func replies see the request body
// (a multipart upload included) as received.
func (s *Server) SetRoute(method, path string, r Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.routes == nil {
		s.routes = map[string]Reply{}
	}
	s.routes[method+" "+path] = r
}

// KeepRequests bounds the request log to the newest n requests (0: none
// is recorded). By default every request is kept, which is what tests
// want; a long-running fake (build/devllm) must not, or every chat it
// answers stays in memory: a long chat sends the whole history each
// time. WaitRequests counts every request either way.
func (s *Server) KeepRequests(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keep = max(n, 0)
	s.trim()
}

// trim drops the oldest recorded requests beyond keep. s.mu held.
func (s *Server) trim() {
	if s.keep >= 0 && len(s.reqs) > s.keep {
		n := copy(s.reqs, s.reqs[len(s.reqs)-s.keep:])
		clear(s.reqs[n:])
		s.reqs = s.reqs[:n]
	}
}

// Requests returns the requests received so far (all of them, or the
// newest KeepRequests allows), in arrival order.
// Callers must not modify the bodies, headers or decoded JSON.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// WaitRequests blocks until at least n requests have arrived or ctx ends.
func (s *Server) WaitRequests(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		got, grew := s.seen, s.grew
		s.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-grew:
		case <-ctx.Done():
			return fmt.Errorf("fakellm: %d of %d requests arrived: %w", got, n, ctx.Err())
		}
	}
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	var m map[string]any
	if json.Unmarshal(body, &m) == nil {
		req.JSON = m
	}

	// Recording and dequeuing under one lock keeps the queue order equal to
	// the recorded order, even for concurrent requests.
	s.mu.Lock()
	s.seen++
	if s.keep != 0 {
		s.reqs = append(s.reqs, req)
		s.trim()
	}
	close(s.grew)
	s.grew = make(chan struct{})
	var rep Reply
	route, routed := s.routes[r.Method+" "+r.URL.Path]
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions":
		if len(s.queue) > 0 {
			rep, s.queue = s.queue[0], s.queue[1:]
		} else {
			rep = s.def
		}
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		rep = s.models
	case routed:
		rep = route
	default:
		rep = Status(http.StatusNotFound, fmt.Sprintf(
			`{"error":{"message":"Invalid URL (%s %s)","type":"invalid_request_error","param":null,"code":null}}`,
			r.Method, r.URL.Path))
	}
	def := s.def
	s.mu.Unlock()

	s.write(w, r, req, resolve(rep, req, def))
}

// sleep waits d and reports whether the reply should go on: false once the
// client has gone or the server is closing.
func (s *Server) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.done:
		return false
	}
}

// until waits for gate to be closed (nil: at once), or the client to leave
// or the server to close, which it reports as false.
func (s *Server) until(ctx context.Context, gate <-chan struct{}) bool {
	if gate == nil {
		return true
	}
	select {
	case <-gate:
		return true
	case <-ctx.Done():
		return false
	case <-s.done:
		return false
	}
}

func (s *Server) write(w http.ResponseWriter, r *http.Request, req Request, rep Reply) {
	ctx := r.Context()
	if !s.sleep(ctx, rep.firstByte) {
		abort(w)
		return
	}
	h := w.Header()
	for k, v := range rep.Header {
		h[k] = slices.Clone(v)
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	rc := http.NewResponseController(w)

	if rep.Events == nil {
		if h.Get("Content-Type") == "" {
			h.Set("Content-Type", "application/json")
		}
		if rep.cut == cutNone {
			w.WriteHeader(status)
			_, _ = io.WriteString(w, rep.Body)
			return
		}
		// The full length is announced so the client knows the body was cut.
		h.Set("Content-Length", fmt.Sprint(len(rep.Body)))
		w.WriteHeader(status)
		_, _ = io.WriteString(w, rep.Body[:min(max(rep.cutAt, 0), len(rep.Body))])
		_ = rc.Flush()
		s.cutOff(ctx, w, rep.cut)
		return
	}

	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "text/event-stream")
	}
	w.WriteHeader(status)
	if rc.Flush() != nil {
		return
	}
	for i, e := range rep.Events {
		if rep.cut != cutNone && i >= rep.cutAt {
			break
		}
		if !s.sleep(ctx, rep.every+e.Delay) || !s.until(ctx, e.After) {
			abort(w)
			return
		}
		if e.usageOnly && !includeUsage(req) {
			continue
		}
		if rep.keepAlive {
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
		}
		if rep.eventName != "" && e.Name == "" && e.Data != "" {
			e.Name = rep.eventName
		}
		if _, err := io.WriteString(w, e.wire()); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
	}
	if rep.cut != cutNone {
		s.cutOff(ctx, w, rep.cut)
	}
}

func (s *Server) cutOff(ctx context.Context, w http.ResponseWriter, c cut) {
	if c == cutStall {
		select {
		case <-ctx.Done():
		case <-s.done:
		}
	}
	abort(w)
}

// abort drops the connection mid-response. Returning from the handler
// instead would let net/http end the body cleanly, which is exactly what a
// crashed server or dead proxy does not do.
func abort(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

func includeUsage(req Request) bool {
	opts, _ := req.JSON["stream_options"].(map[string]any)
	return opts["include_usage"] == true
}
