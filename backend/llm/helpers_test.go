package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/fakellm"
)

// streamFixtures are the captured streams, each replayed in the tests.
var streamFixtures = []string{
	"stream-reasoning-usage",
	"stream-think-tags",
	"stream-no-reasoning",
	"stream-tool-call",
	"stream-after-tool-result",
	"stream-length-cutoff",
}

func newClient(t testing.TB, base string, opt Options) *Client {
	t.Helper()
	c, err := NewClient(Endpoint{BaseURL: base}, opt)
	if err != nil {
		t.Fatalf("NewClient(%q): %v", base, err)
	}
	return c
}

func ask() ChatRequest {
	return ChatRequest{Model: "tiny-qwen35", Messages: []Message{{Role: "user", Content: "Hello"}}}
}

// reply collects what Chat delivered.
type reply struct {
	mu        sync.Mutex
	deltas    []Delta
	content   strings.Builder
	reasoning strings.Builder
}

func (r *reply) fn(d Delta) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deltas = append(r.deltas, d)
	r.content.WriteString(d.Content)
	r.reasoning.WriteString(d.Reasoning)
	return nil
}

func (r *reply) Content() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.content.String()
}

// wire renders a fakellm stream the way the fake sends it.
func wire(rep fakellm.Reply) []byte {
	var b strings.Builder
	for _, e := range rep.Events {
		if e.Comment != "" {
			b.WriteString(": " + e.Comment + "\n")
		}
		if e.Name != "" {
			b.WriteString("event: " + e.Name + "\n")
		}
		for line := range strings.SplitSeq(e.Data, "\n") {
			b.WriteString("data: " + line + "\n")
		}
		b.WriteString("\n")
	}
	return []byte(b.String())
}

// upstream is what a fixture says, read independently of the code under
// test: the concatenated delta fields and the tool-call fragments.
type upstream struct {
	content, reasoning string
	toolArgs           string
	toolID, toolName   string
	finish             string
}

func readFixture(t testing.TB, name string) upstream {
	t.Helper()
	var u upstream
	for _, e := range fakellm.Fixture(name).Events {
		if e.Data == "[DONE]" || e.Data == "" {
			continue
		}
		var ch struct {
			Choices []struct {
				Delta struct {
					Content          *string `json:"content"`
					ReasoningContent string  `json:"reasoning_content"`
					ToolCalls        []struct {
						ID       string `json:"id"`
						Function struct {
							Name      string `json:"name"`
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if err := json.Unmarshal([]byte(e.Data), &ch); err != nil {
			t.Fatalf("fixture %s: %v", name, err)
		}
		for _, c := range ch.Choices {
			if c.Delta.Content != nil {
				u.content += *c.Delta.Content
			}
			u.reasoning += c.Delta.ReasoningContent
			for _, tc := range c.Delta.ToolCalls {
				if tc.ID != "" {
					u.toolID = tc.ID
				}
				if tc.Function.Name != "" {
					u.toolName = tc.Function.Name
				}
				u.toolArgs += tc.Function.Arguments
			}
			if c.FinishReason != nil {
				u.finish = *c.FinishReason
			}
		}
	}
	return u
}

// checkErr asserts err's kind and that its public message holds every
// word in want (case-insensitively).
func checkErr(t *testing.T, err error, kind apperr.Kind, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s error with %q", kind, want)
	}
	gotKind, msg := apperr.Public(err)
	if gotKind != kind {
		t.Errorf("kind = %s, want %s (error: %v)", gotKind, kind, err)
	}
	for _, w := range want {
		if !strings.Contains(strings.ToLower(msg), strings.ToLower(w)) {
			t.Errorf("message %q does not contain %q", msg, w)
		}
	}
}

func endpointErr(t *testing.T, err error) *EndpointError {
	t.Helper()
	var e *EndpointError
	if !errors.As(err, &e) {
		t.Fatalf("no *EndpointError in %v", err)
	}
	return e
}

// chatRequests returns the chat requests the fake received.
func chatRequests(s *fakellm.Server) []fakellm.Request {
	var out []fakellm.Request
	for _, r := range s.Requests() {
		if strings.HasSuffix(r.Path, "/chat/completions") {
			out = append(out, r)
		}
	}
	return out
}

func root(s *fakellm.Server) string { return strings.TrimSuffix(s.URL(), "/v1") }

// connWatch is a TCP relay in front of an address that reports when a
// client connection closes, so a test can see the client go away.
type connWatch struct {
	addr   string
	closed chan struct{}
	once   sync.Once
}

func watchConns(t *testing.T, target string) *connWatch {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	w := &connWatch{addr: ln.Addr().String(), closed: make(chan struct{})}
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			server, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			go func() { _, _ = io.Copy(client, server); client.Close() }()
			go func() {
				_, _ = io.Copy(server, client)
				// The client closed its side: pass that on to the fake,
				// whose handler then sees its request end.
				server.Close()
				w.once.Do(func() { close(w.closed) })
			}()
		}
	}()
	return w
}

func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s took longer than %s", what, d)
	}
}

func bg() context.Context { return context.Background() }
