package fakellm_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/fakellm"
)

const streamBody = `{"model":"tiny-qwen35","stream":true,"messages":[{"role":"user","content":"hi"}]}`

const usageBody = `{"model":"tiny-qwen35","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`

// client gives each test its own connection pool, so one test's dropped
// connections cannot leak into another's.
func client(t *testing.T) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func do(t *testing.T, ctx context.Context, method, url, body string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer sk-test")
	return client(t).Do(req)
}

// post bounds every exchange in time, so a regression that withholds bytes
// fails the test instead of hanging it.
func post(t *testing.T, s *fakellm.Server, body string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	resp, err := do(t, ctx, http.MethodPost, s.URL()+"/chat/completions", body)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// dataLines reads a stream the way a client would and returns the payloads
// of its data lines.
func dataLines(r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		}
	}
	return out, sc.Err()
}

func readFixture(t *testing.T, name string) (head, body string) {
	t.Helper()
	raw, err := os.ReadFile("fixtures/" + name + ".http")
	if err != nil {
		t.Fatal(err)
	}
	head, body, _ = strings.Cut(string(raw), "\n\n")
	return head, body
}

func TestFixturesReplayByteForByte(t *testing.T) {
	for _, name := range []string{
		"stream-reasoning-usage", "stream-think-tags", "stream-no-reasoning", "stream-tool-call",
		"stream-after-tool-result", "stream-length-cutoff", "nonstream",
		"error-bad-json", "error-bad-role", "error-context-exceeded",
	} {
		t.Run(name, func(t *testing.T) {
			s := fakellm.New(t)
			s.Enqueue(fakellm.Fixture(name))
			resp := post(t, s, streamBody)
			got, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			head, want := readFixture(t, name)
			if string(got) != want {
				t.Errorf("body differs from the capture:\n got %.200q\nwant %.200q", got, want)
			}
			if status := strings.Fields(head)[1]; fmt.Sprint(resp.StatusCode) != status {
				t.Errorf("status %d, capture has %s", resp.StatusCode, status)
			}
			for line := range strings.SplitSeq(head, "\n") {
				k, v, ok := strings.Cut(line, ": ")
				if !ok || slices.Contains([]string{"Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive"}, k) {
					continue
				}
				if vs, ok := resp.Header[k]; !ok || vs[0] != v {
					t.Errorf("header %s = %q, capture has %q", k, vs, v)
				}
			}
			if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				if resp.ContentLength != -1 {
					t.Errorf("stream has Content-Length %d, want chunked", resp.ContentLength)
				}
				lines, err := dataLines(strings.NewReader(string(got)))
				if err != nil || len(lines) < 3 || lines[len(lines)-1] != "[DONE]" {
					t.Errorf("stream data lines: %d, last %q, err %v", len(lines), lines[len(lines)-1], err)
				}
			} else if resp.ContentLength != int64(len(want)) {
				t.Errorf("Content-Length %d, want %d", resp.ContentLength, len(want))
			}
		})
	}
}

func TestModelsAndUnknownPaths(t *testing.T) {
	s := fakellm.New(t)
	resp, err := do(t, t.Context(), http.MethodGet, s.URL()+"/models", "")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var models struct {
		Data []struct{ ID string } `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&models); err != nil || len(models.Data) != 1 || models.Data[0].ID != "tiny-qwen35" {
		t.Fatalf("models: %+v, %v", models, err)
	}

	s.SetModels(fakellm.Status(http.StatusUnauthorized, ""))
	resp2, err := do(t, t.Context(), http.MethodGet, s.URL()+"/models", "")
	if err != nil {
		t.Fatal(err)
	}
	resp2.Body.Close()
	if resp2.StatusCode != http.StatusUnauthorized {
		t.Errorf("SetModels: status %d", resp2.StatusCode)
	}

	resp3, err := do(t, t.Context(), http.MethodPost, s.URL()+"/embeddings", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	defer resp3.Body.Close()
	var e struct{ Error struct{ Message string } }
	if err := json.NewDecoder(resp3.Body).Decode(&e); err != nil || resp3.StatusCode != http.StatusNotFound ||
		e.Error.Message != "Invalid URL (POST /v1/embeddings)" {
		t.Errorf("unknown path: %d %+v %v", resp3.StatusCode, e, err)
	}
}

func TestChunksArriveSeparately(t *testing.T) {
	s := fakellm.New(t)
	// The server sends nothing after the first event, so a client that
	// sees it saw it on its own.
	s.Enqueue(fakellm.Fixture("stream-no-reasoning").StallAfter(1))
	resp := post(t, s, streamBody)
	sc := bufio.NewScanner(resp.Body)
	if !sc.Scan() {
		t.Fatalf("no first line: %v", sc.Err())
	}
	_, body := readFixture(t, "stream-no-reasoning")
	if want, _, _ := strings.Cut(body, "\n"); sc.Text() != want {
		t.Errorf("first line %q, want %q", sc.Text(), want)
	}
}

func TestEveryPacesEvents(t *testing.T) {
	s := fakellm.New(t)
	const every = 20 * time.Millisecond
	s.Enqueue(fakellm.Stream("a", "b", "c").Every(every))
	start := time.Now()
	resp := post(t, s, streamBody)
	lines, err := dataLines(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	// role, 3 pieces, finish, [DONE]
	if len(lines) != 6 {
		t.Fatalf("got %d events", len(lines))
	}
	if took := time.Since(start); took < 6*every {
		t.Errorf("6 events at %v each took only %v", every, took)
	}
}

func TestEventAfterWaitsForTheGate(t *testing.T) {
	s := fakellm.New(t)
	gate := make(chan struct{})
	s.Enqueue(fakellm.NewStream().Content("before").Event(fakellm.Event{Comment: "held", After: gate}).Content("after").Reply())
	resp := post(t, s, streamBody)
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	for l := range lines {
		if strings.Contains(l, `"before"`) {
			break
		}
	}
	// Nothing past the gate may have been written yet.
	for done := false; !done; {
		select {
		case l := <-lines:
			if strings.Contains(l, "held") || strings.Contains(l, `"after"`) {
				t.Fatalf("%q arrived before the gate opened", l)
			}
		default:
			done = true
		}
	}
	close(gate)
	var rest []string
	for l := range lines {
		rest = append(rest, l)
	}
	if got := strings.Join(rest, "\n"); !strings.Contains(got, ": held") || !strings.Contains(got, `"after"`) || !strings.Contains(got, "[DONE]") {
		t.Errorf("after the gate: %s", got)
	}
}

func TestFirstByteAfter(t *testing.T) {
	s := fakellm.New(t)
	const delay = 50 * time.Millisecond
	s.Enqueue(fakellm.Stream("late").FirstByteAfter(delay))
	start := time.Now()
	resp := post(t, s, streamBody)
	if took := time.Since(start); took < delay {
		t.Errorf("headers after %v, want at least %v", took, delay)
	}
	if _, err := dataLines(resp.Body); err != nil {
		t.Error(err)
	}

	// A delay far beyond the test must be cut short by the client leaving.
	s.Enqueue(fakellm.Stream("never").FirstByteAfter(time.Hour))
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := do(t, ctx, http.MethodPost, s.URL()+"/chat/completions", streamBody); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want deadline exceeded", err)
	}
}

func TestResetAfter(t *testing.T) {
	s := fakellm.New(t)
	s.Enqueue(fakellm.Stream("a", "b", "c").ResetAfter(2))
	resp := post(t, s, streamBody)
	lines, err := dataLines(resp.Body)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("got %v, want unexpected EOF", err)
	}
	if len(lines) != 2 || !strings.Contains(lines[1], `"content":"a"`) {
		t.Errorf("before the reset: %q", lines)
	}

	s.Enqueue(fakellm.Fixture("nonstream").ResetAfter(100))
	resp = post(t, s, `{}`)
	body, err := io.ReadAll(resp.Body)
	if !errors.Is(err, io.ErrUnexpectedEOF) || len(body) != 100 {
		t.Errorf("body reset: %d bytes, %v", len(body), err)
	}

	// The server must still answer after dropping a connection.
	if lines, err := dataLines(post(t, s, streamBody).Body); err != nil || lines[len(lines)-1] != "[DONE]" {
		t.Errorf("after reset: %v", err)
	}
}

func TestStallIsCutByClientContext(t *testing.T) {
	s := fakellm.New(t)
	s.Enqueue(fakellm.Stream("a", "b").StallAfter(2))
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	resp, err := do(t, ctx, http.MethodPost, s.URL()+"/chat/completions", streamBody)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines, err := dataLines(resp.Body)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want deadline exceeded", err)
	}
	if len(lines) != 2 {
		t.Errorf("before the stall: %q", lines)
	}
}

func TestCloseEndsStalledReplies(t *testing.T) {
	errc := make(chan error, 1)
	t.Run("stalled", func(t *testing.T) {
		s := fakellm.New(t)
		s.Enqueue(fakellm.Stream("a").StallAfter(1))
		resp, err := do(t, context.Background(), http.MethodPost, s.URL()+"/chat/completions", streamBody)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			_, err := io.Copy(io.Discard, resp.Body)
			errc <- err
		}()
		// Returning now runs the server's cleanup with the reply stalled.
	})
	select {
	case err := <-errc:
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("got %v, want unexpected EOF", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("stalled body still open after cleanup")
	}
}

func TestRejectStreamOptions(t *testing.T) {
	s := fakellm.New(t)
	s.SetDefault(fakellm.Stream("fine"))
	s.Enqueue(fakellm.RejectStreamOptions(), fakellm.RejectStreamOptions())

	resp := post(t, s, usageBody)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "Unrecognized request argument supplied: stream_options") {
		t.Errorf("with stream_options: %d %s", resp.StatusCode, body)
	}

	resp = post(t, s, streamBody)
	lines, err := dataLines(resp.Body)
	if resp.StatusCode != http.StatusOK || err != nil || !strings.Contains(strings.Join(lines, "\n"), `"content":"fine"`) {
		t.Errorf("without stream_options: %d %q %v", resp.StatusCode, lines, err)
	}

	// As the default it cannot defer to itself, so it falls back to the
	// built-in default.
	s.SetDefault(fakellm.RejectStreamOptions())
	if resp := post(t, s, usageBody); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("default, with stream_options: %d", resp.StatusCode)
	}
	resp = post(t, s, streamBody)
	got, _ := io.ReadAll(resp.Body)
	if _, want := readFixture(t, "stream-no-reasoning"); string(got) != want {
		t.Errorf("default, without stream_options: %d %.100q", resp.StatusCode, got)
	}
}

func TestRequestsAreRecorded(t *testing.T) {
	s := fakellm.New(t)
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			body := fmt.Sprintf(`{"model":"m%d","stream":true,"messages":[{"role":"user","content":"hi"}]}`, i)
			resp, err := do(t, t.Context(), http.MethodPost, s.URL()+"/chat/completions", body)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			if _, err := dataLines(resp.Body); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	resp, err := do(t, t.Context(), http.MethodGet, s.URL()+"/models", "")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := s.WaitRequests(ctx, n+1); err != nil {
		t.Fatal(err)
	}
	reqs := s.Requests()
	if len(reqs) != n+1 {
		t.Fatalf("%d requests recorded", len(reqs))
	}
	models := map[string]bool{}
	for _, r := range reqs[:n] {
		if r.Method != http.MethodPost || r.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-test" {
			t.Errorf("recorded %s %s %v", r.Method, r.Path, r.Header)
		}
		msgs, _ := r.JSON["messages"].([]any)
		if len(msgs) != 1 || r.JSON["stream"] != true || !json.Valid(r.Body) {
			t.Errorf("decoded %v from %s", r.JSON, r.Body)
		}
		models[r.JSON["model"].(string)] = true
	}
	if len(models) != n {
		t.Errorf("models seen: %v", models)
	}
	if last := reqs[n]; last.Method != http.MethodGet || last.Path != "/v1/models" || last.JSON != nil {
		t.Errorf("last request %s %s %v", last.Method, last.Path, last.JSON)
	}

	short, cancel2 := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel2()
	if err := s.WaitRequests(short, n+2); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting for a request that never comes: %v", err)
	}
}

// A long-running fake keeps only as many requests as it is told: devllm
// kept every request of a long chat (each holding the whole history) and
// grew to 23 GB.
func TestKeepRequestsBoundsTheLog(t *testing.T) {
	s := fakellm.New(t)
	s.KeepRequests(2)
	for i := range 5 {
		resp := post(t, s, fmt.Sprintf(`{"model":"m%d","stream":true,"messages":[{"role":"user","content":"hi"}]}`, i))
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := s.WaitRequests(ctx, 5); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range s.Requests() {
		got = append(got, r.JSON["model"].(string))
	}
	if want := []string{"m3", "m4"}; !slices.Equal(got, want) {
		t.Errorf("kept %v, want %v", got, want)
	}

	s.KeepRequests(0)
	resp := post(t, s, `{"model":"m5","stream":true,"messages":[]}`)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err := s.WaitRequests(ctx, 6); err != nil {
		t.Fatal(err)
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests kept after KeepRequests(0)", n)
	}
}

func TestStatusBodies(t *testing.T) {
	for _, tc := range []struct {
		code int
		want string
	}{
		{http.StatusUnauthorized, `"code":"invalid_api_key"`},
		{http.StatusNotFound, "The model `gpt-nope` does not exist"},
		{http.StatusTooManyRequests, `"code":"rate_limit_exceeded"`},
		{http.StatusInternalServerError, `"type":"server_error"`},
		{http.StatusBadGateway, `"message":"Bad Gateway"`},
	} {
		s := fakellm.New(t)
		s.Enqueue(fakellm.Status(tc.code, ""))
		resp := post(t, s, `{"model":"gpt-nope","stream":true}`)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != tc.code || !json.Valid(body) || !strings.Contains(string(body), tc.want) ||
			resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%d: got %d %s %s", tc.code, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		if got := resp.Header.Get("Retry-After"); (tc.code == http.StatusTooManyRequests) != (got == "1") {
			t.Errorf("%d: Retry-After %q", tc.code, got)
		}
	}

	s := fakellm.New(t)
	s.Enqueue(fakellm.Status(http.StatusTooManyRequests, `{"error":{"message":"slow down"}}`).WithHeader("Retry-After", "0"))
	resp := post(t, s, `{}`)
	body, _ := io.ReadAll(resp.Body)
	if string(body) != `{"error":{"message":"slow down"}}` || resp.Header.Get("Retry-After") != "0" {
		t.Errorf("custom 429: %s, Retry-After %q", body, resp.Header.Get("Retry-After"))
	}
}

// chunks decodes a stream's data lines, stopping at [DONE].
func chunks(t *testing.T, r io.Reader) []map[string]any {
	t.Helper()
	lines, err := dataLines(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) == 0 || lines[len(lines)-1] != "[DONE]" {
		t.Fatalf("stream does not end with [DONE]: %q", lines)
	}
	var out []map[string]any
	for _, l := range lines[:len(lines)-1] {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("data line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

func delta(c map[string]any) map[string]any {
	choices := c["choices"].([]any)
	return choices[0].(map[string]any)["delta"].(map[string]any)
}

func finishReason(c map[string]any) any {
	return c["choices"].([]any)[0].(map[string]any)["finish_reason"]
}

func TestStreamBuilder(t *testing.T) {
	reply := fakellm.NewStream().
		Reasoning("Let me", " think.").
		Content("Looking", " it up.").
		ToolCall(0, "call_1", "web_search", `{"query":`, `"bree"}`).
		Usage(10, 7).
		Reply()
	s := fakellm.New(t)
	s.Enqueue(reply, reply)

	cs := chunks(t, post(t, s, usageBody).Body)
	if len(cs) != 10 {
		t.Fatalf("got %d chunks: %v", len(cs), cs)
	}
	if d := delta(cs[0]); d["role"] != "assistant" || d["content"] != nil {
		t.Errorf("role chunk %v", d)
	}
	if delta(cs[1])["reasoning_content"] != "Let me" || delta(cs[4])["content"] != " it up." {
		t.Errorf("pieces %v %v", cs[1], cs[4])
	}
	first := delta(cs[5])["tool_calls"].([]any)[0].(map[string]any)
	fn := first["function"].(map[string]any)
	if first["index"] != 0.0 || first["id"] != "call_1" || fn["name"] != "web_search" || fn["arguments"] != "" {
		t.Errorf("first tool fragment %v", first)
	}
	next := delta(cs[6])["tool_calls"].([]any)[0].(map[string]any)
	if _, ok := next["id"]; ok || next["function"].(map[string]any)["arguments"] != `{"query":` {
		t.Errorf("argument fragment %v", next)
	}
	if finishReason(cs[8]) != "tool_calls" {
		t.Errorf("finish %v", cs[8])
	}
	usage, _ := cs[9]["usage"].(map[string]any)
	if choices := cs[9]["choices"].([]any); len(choices) != 0 || usage["total_tokens"] != 17.0 {
		t.Errorf("usage chunk %v", cs[9])
	}

	// Without include_usage a real server sends no usage chunk.
	if cs := chunks(t, post(t, s, streamBody).Body); len(cs) != 9 || cs[8]["usage"] != nil {
		t.Errorf("without include_usage: %d chunks, last %v", len(cs), cs[len(cs)-1])
	}
}

func TestStreamVariants(t *testing.T) {
	s := fakellm.New(t)
	s.Enqueue(
		fakellm.NewStream().ReasoningKey("reasoning").Reasoning("hmm").Content("ok").Finish("length").Reply(),
		fakellm.NewStream().Think("hmm").Content("ok").Reply(),
	)

	cs := chunks(t, post(t, s, streamBody).Body)
	if delta(cs[1])["reasoning"] != "hmm" || delta(cs[1])["reasoning_content"] != nil || finishReason(cs[3]) != "length" {
		t.Errorf("reasoning variant %v", cs)
	}

	resp := post(t, s, streamBody)
	raw, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(raw), `"content":"<think>"`) {
		t.Errorf("<think> should go out unescaped: %s", raw)
	}
	cs = chunks(t, strings.NewReader(string(raw)))
	var content string
	for _, c := range cs[1 : len(cs)-1] {
		content += delta(c)["content"].(string)
	}
	if content != "<think>hmm</think>ok" {
		t.Errorf("content %q", content)
	}
}

func TestGatewayQuirks(t *testing.T) {
	s := fakellm.New(t)
	s.Enqueue(fakellm.Fixture("stream-tool-call").KeepAlive().EventName("message"))
	resp := post(t, s, streamBody)
	var comments, names int
	var data []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		switch line := sc.Text(); {
		case line == ": keep-alive":
			comments++
		case line == "event: message":
			names++
		case strings.HasPrefix(line, "data: "):
			data = append(data, line)
		}
	}
	_, body := readFixture(t, "stream-tool-call")
	want, _ := dataLines(strings.NewReader(body))
	if len(data) != len(want) || comments != len(want) || names != len(want) {
		t.Errorf("%d data lines (want %d), %d comments, %d event lines", len(data), len(want), comments, names)
	}
}

func TestMalformedAndInStreamError(t *testing.T) {
	s := fakellm.New(t)
	s.Enqueue(fakellm.Malformed(), fakellm.InStreamError("model crashed"))

	lines, err := dataLines(post(t, s, streamBody).Body)
	if err != nil {
		t.Fatal(err)
	}
	var bad int
	for _, l := range lines {
		if l != "[DONE]" && !json.Valid([]byte(l)) {
			bad++
		}
	}
	if bad != 1 {
		t.Errorf("want one malformed data line, got %d in %q", bad, lines)
	}

	resp := post(t, s, streamBody)
	lines, err = dataLines(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatal(resp.StatusCode, err)
	}
	var e struct{ Error struct{ Message string } }
	if len(lines) < 2 || json.Unmarshal([]byte(lines[len(lines)-2]), &e) != nil || e.Error.Message != "model crashed" ||
		lines[len(lines)-1] != "[DONE]" {
		t.Errorf("in-stream error: %q", lines)
	}
}

func TestFunc(t *testing.T) {
	s := fakellm.New(t)
	s.SetDefault(fakellm.Func(func(r fakellm.Request) fakellm.Reply {
		if r.JSON["stream"] == true {
			return fakellm.Stream("streamed")
		}
		return fakellm.Fixture("nonstream")
	}).WithHeader("X-Fake", "yes"))
	if resp := post(t, s, streamBody); resp.Header.Get("X-Fake") != "yes" || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("stream: %v", resp.Header)
	}
	if resp := post(t, s, `{"stream":false}`); resp.Header.Get("X-Fake") != "yes" || resp.Header.Get("Server") != "llama.cpp" {
		t.Errorf("non-stream: %v", resp.Header)
	}
}

func TestFixturePanicsOnUnknownName(t *testing.T) {
	defer func() {
		if msg := fmt.Sprint(recover()); !strings.Contains(msg, "stream-tool-call") {
			t.Errorf("panic %q should list known names", msg)
		}
	}()
	fakellm.Fixture("no-such-fixture")
}

func TestFixtureRequest(t *testing.T) {
	var req struct {
		Messages []struct{ Role string } `json:"messages"`
	}
	if err := json.Unmarshal(fakellm.FixtureRequest("stream-after-tool-result"), &req); err != nil ||
		len(req.Messages) != 3 || req.Messages[2].Role != "tool" {
		t.Errorf("request: %+v, %v", req, err)
	}
}
