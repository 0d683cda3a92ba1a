package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/events"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/generation"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/render"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/store/storetest"
)

// env is one reply's world: a real database with a chat and the reply's
// row, the fake endpoint, and the generation service.
type env struct {
	db     *store.DB
	user   ids.UserID
	model  ids.ModelID
	chat   ids.ChatID
	msg    ids.MessageID
	llm    *fakellm.Server
	client *llm.Client
	bus    *events.Bus
	gen    *generation.Service
}

func newEnv(t testing.TB) *env {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t)
	user, model := storetest.OwnerWithModel(t, db)
	e := &env{db: db, user: user, model: model, llm: fakellm.New(t), bus: events.NewBus()}
	c, _, err := db.CreateChat(ctx, user, store.NewChat{}, store.Message{Role: store.RoleUser, Content: "hi", Status: store.StatusFinal})
	if err != nil {
		t.Fatal(err)
	}
	e.chat = c.ID
	m, err := db.AddMessage(ctx, user, c.ID, store.Message{Role: store.RoleAssistant, Status: store.StatusStreaming})
	if err != nil {
		t.Fatal(err)
	}
	e.msg = m.ID
	if e.client, err = llm.NewClient(llm.Endpoint{BaseURL: e.llm.URL()}, llm.Options{}); err != nil {
		t.Fatal(err)
	}
	e.gen = generation.New(db, e.bus, render.New(), slog.New(slog.DiscardHandler),
		generation.Options{FrameEvery: 5 * time.Millisecond, CheckpointEvery: 20 * time.Millisecond})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		e.gen.Shutdown(ctx)
	})
	return e
}

// loop returns a loop over the fake endpoint offering set.
func (e *env) loop(set ToolSet, maxRounds int) *Loop {
	return &Loop{Client: e.client, Tools: set, MaxRounds: maxRounds, Log: slog.New(slog.DiscardHandler),
		Request: llm.ChatRequest{Model: "m", Messages: []llm.Message{{Role: "user", Content: "hi"}}}}
}

func (e *env) start(t *testing.T, p generation.Producer) {
	t.Helper()
	j := generation.Job{User: e.user, Chat: e.chat, Message: e.msg, Producer: p,
		Caller: auth.Caller{User: e.user, Perms: auth.NewSet(true)}}
	if err := e.gen.Start(j); err != nil {
		t.Fatal(err)
	}
}

// finished waits for the reply to end and reads its row.
func (e *env) finished(t *testing.T) store.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := e.gen.Wait(ctx, e.chat); err != nil {
		t.Fatal(err)
	}
	m, err := e.db.MessageByID(context.Background(), e.user, e.msg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func poll(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// messages decodes a request's messages.
func messages(t *testing.T, r fakellm.Request) []map[string]any {
	t.Helper()
	raw, _ := r.JSON["messages"].([]any)
	out := make([]map[string]any, len(raw))
	for i, m := range raw {
		out[i], _ = m.(map[string]any)
	}
	return out
}

// toolNames is the names in a request's tools array (nil: no array).
func toolNames(r fakellm.Request) []string {
	raw, ok := r.JSON["tools"]
	if !ok {
		return nil
	}
	names := []string{}
	for _, t := range raw.([]any) {
		names = append(names, t.(map[string]any)["function"].(map[string]any)["name"].(string))
	}
	return names
}

// echo is a tool that returns its "q" argument, after wait (if set).
func echo(name string, wait func(ctx context.Context, q string)) Tool {
	return Tool{Name: name, Family: FamilyWebSearch, Permission: PermWebSearch,
		Description: "echo", Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`),
		Activity: func(args json.RawMessage) string {
			var a struct{ Q string }
			json.Unmarshal(args, &a)
			return "Echoing " + a.Q
		},
		Run: func(ctx context.Context, c Call) Result {
			var a struct{ Q string }
			json.Unmarshal(c.Arguments, &a)
			if wait != nil {
				wait(ctx, a.Q)
			}
			return Result{Text: "echo:" + a.Q}
		}}
}

func kinds(parts []store.Part) string {
	var b []string
	for _, p := range parts {
		b = append(b, string(p.Kind))
	}
	return strings.Join(b, ",")
}

// Two rounds: the model writes, calls two tools at once (fragments
// interleaved), the first call finishes after the second, and each tool
// turn still answers its own id, in the order of the calls.
func TestParallelCallsPairByID(t *testing.T) {
	e := newEnv(t)
	e.llm.Enqueue(fakellm.NewStream().Content("Let me look. ").
		ToolCall(0, "call_a", "echo", `{"q":`).
		ToolCall(1, "call_b", "echo", `{"q":"second"}`).
		ToolCall(0, "", "", `"first"}`).Finish("tool_calls").Reply(),
		fakellm.Stream("Both ", "found."))
	secondDone := make(chan struct{})
	var order []string
	var mu sync.Mutex
	set := NewToolSet(echo("echo", func(ctx context.Context, q string) {
		if q == "first" {
			<-secondDone // finishes last
		}
		mu.Lock()
		order = append(order, q)
		mu.Unlock()
		if q == "second" {
			close(secondDone)
		}
	}))
	e.start(t, e.loop(set, 0))
	m := e.finished(t)

	if m.Status != store.StatusFinal || m.Content != "Let me look. Both found." {
		t.Fatalf("row %s %q", m.Status, m.Content)
	}
	if !slices.Equal(order, []string{"second", "first"}) {
		t.Fatalf("tools finished in order %v, want second first", order)
	}
	parts := m.Parts()
	if got, want := kinds(parts), "text,tool_call,tool_call,tool_result,tool_result,text"; got != want {
		t.Fatalf("parts %s, want %s", got, want)
	}
	if parts[3].CallID != "call_a" || parts[3].Text != "echo:first" || parts[4].CallID != "call_b" || parts[4].Text != "echo:second" {
		t.Errorf("results %+v %+v", parts[3], parts[4])
	}
	reqs := e.llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if n := toolNames(reqs[0]); !slices.Equal(n, []string{"echo"}) {
		t.Errorf("first request's tools %v", n)
	}
	msgs := messages(t, reqs[1])
	if len(msgs) != 4 {
		t.Fatalf("second request's messages: %v", msgs)
	}
	asst := msgs[1]
	if asst["role"] != "assistant" || asst["content"] != "Let me look. " {
		t.Errorf("assistant turn %v", asst)
	}
	calls, _ := asst["tool_calls"].([]any)
	if len(calls) != 2 || calls[0].(map[string]any)["id"] != "call_a" || calls[1].(map[string]any)["id"] != "call_b" {
		t.Errorf("assistant's calls %v", calls)
	}
	for i, want := range [][2]string{{"call_a", "echo:first"}, {"call_b", "echo:second"}} {
		tm := msgs[2+i]
		if tm["role"] != "tool" || tm["tool_call_id"] != want[0] || tm["content"] != want[1] {
			t.Errorf("tool turn %d: %v, want %v", i, tm, want)
		}
	}
}

// A model naming a tool it was not offered gets an error result, and the
// tool (which exists elsewhere) never runs.
func TestUnofferedToolIsNeverRun(t *testing.T) {
	e := newEnv(t)
	var ran atomic.Int64
	other := echo("fetch_url", func(context.Context, string) { ran.Add(1) })
	_ = other // registered elsewhere, not in this reply's set
	e.llm.Enqueue(fakellm.NewStream().ToolCall(0, "c1", "fetch_url", `{"q":"x"}`).Finish("tool_calls").Reply(),
		fakellm.Stream("Sorry."))
	e.start(t, e.loop(NewToolSet(echo("echo", nil)), 0))
	m := e.finished(t)
	parts := m.Parts()
	if got := kinds(parts); got != "tool_call,tool_result,text" {
		t.Fatalf("parts %s", got)
	}
	if !parts[1].Error || !strings.Contains(parts[1].Text, `no tool named "fetch_url"`) || ran.Load() != 0 {
		t.Errorf("result %+v; ran %d", parts[1], ran.Load())
	}
	if msgs := messages(t, e.llm.Requests()[1]); msgs[2]["content"] != parts[1].Text {
		t.Errorf("the model was told %v", msgs[2])
	}
}

// A runner that fails and one that panics become failed results the
// model reads; the reply goes on.
func TestFailingAndPanickingRunners(t *testing.T) {
	e := newEnv(t)
	fails := Tool{Name: "fails", Run: func(context.Context, Call) Result {
		return Result{Text: "The search failed: no provider answered.", Failed: true}
	}}
	panics := Tool{Name: "panics", Run: func(context.Context, Call) Result { panic("boom") }}
	e.llm.Enqueue(fakellm.NewStream().ToolCall(0, "c1", "fails", `{}`).ToolCall(1, "c2", "panics", `{}`).Finish("tool_calls").Reply(),
		fakellm.Stream("Neither worked."))
	e.start(t, e.loop(NewToolSet(fails, panics), 0))
	m := e.finished(t)
	parts := m.Parts()
	if m.Status != store.StatusFinal || kinds(parts) != "tool_call,tool_call,tool_result,tool_result,text" {
		t.Fatalf("row %s, parts %s", m.Status, kinds(parts))
	}
	if !parts[2].Error || parts[2].Text != "The search failed: no provider answered." {
		t.Errorf("failed result %+v", parts[2])
	}
	if !parts[3].Error || parts[3].Text != "The tool failed unexpectedly." {
		t.Errorf("panicked result %+v", parts[3])
	}
}

// Stop while a tool runs (one that ignores ctx) ends the reply stopped at
// once, with the calls kept and no further request.
func TestStopWhileAToolRuns(t *testing.T) {
	e := newEnv(t)
	release := make(chan struct{})
	defer close(release)
	var started atomic.Bool
	stuck := echo("stuck", func(ctx context.Context, q string) {
		started.Store(true)
		<-release // ignores ctx
	})
	e.llm.Enqueue(fakellm.NewStream().Content("Checking.").ToolCall(0, "c1", "stuck", `{"q":"x"}`).Finish("tool_calls").Reply())
	e.start(t, e.loop(NewToolSet(stuck), 0))
	poll(t, "the tool runs", started.Load)
	if !e.gen.Stop(e.user, e.chat) {
		t.Fatal("Stop found no reply")
	}
	m := e.finished(t)
	if m.Status != store.StatusStopped || kinds(m.Parts()) != "text,tool_call" {
		t.Errorf("row %s with parts %s", m.Status, kinds(m.Parts()))
	}
	if n := len(e.llm.Requests()); n != 1 {
		t.Errorf("%d requests after Stop", n)
	}
}

// A model that calls tools every time: MaxRounds requests carry tools,
// the next goes without, and a call in that one runs nothing and ends the
// reply with a notice.
func TestRoundLimit(t *testing.T) {
	e := newEnv(t)
	var ran atomic.Int64
	e.llm.SetDefault(fakellm.NewStream().ToolCall(0, "c", "echo", `{"q":"again"}`).Finish("tool_calls").Reply())
	e.start(t, e.loop(NewToolSet(echo("echo", func(context.Context, string) { ran.Add(1) })), 3))
	m := e.finished(t)
	reqs := e.llm.Requests()
	if len(reqs) != 4 || ran.Load() != 3 {
		t.Fatalf("%d requests, %d runs; want 4 and 3", len(reqs), ran.Load())
	}
	for i, r := range reqs {
		if got := toolNames(r); (i < 3) != (got != nil) {
			t.Errorf("request %d's tools %v", i, got)
		}
	}
	parts := m.Parts()
	if m.Status != store.StatusFinal || parts[len(parts)-1].Kind != store.PartNotice || parts[len(parts)-1].Text != LimitNotice {
		t.Errorf("row %s, parts %s", m.Status, kinds(parts))
	}
}

// At the limit, a model that answers gets its answer in the reply.
func TestRoundLimitAnswers(t *testing.T) {
	e := newEnv(t)
	call := fakellm.NewStream().ToolCall(0, "c", "echo", `{"q":"again"}`).Finish("tool_calls").Reply()
	e.llm.Enqueue(call, fakellm.Stream("Here is what I found."))
	e.start(t, e.loop(NewToolSet(echo("echo", nil)), 1))
	m := e.finished(t)
	if reqs := e.llm.Requests(); len(reqs) != 2 || toolNames(reqs[1]) != nil {
		t.Fatalf("requests %d", len(reqs))
	}
	if m.Content != "Here is what I found." || m.Status != store.StatusFinal {
		t.Errorf("row %s %q", m.Status, m.Content)
	}
}

// While a tool runs, followers see its activity line, in frames and in a
// Live snapshot; it is cleared when the tool is done.
func TestActivityWhileAToolRuns(t *testing.T) {
	e := newEnv(t)
	sub := e.bus.Subscribe(int64(e.user), 1<<12)
	defer sub.Close()
	release := make(chan struct{})
	e.llm.Enqueue(fakellm.NewStream().ToolCall(0, "c1", "echo", `{"q":"Bree"}`).Finish("tool_calls").Reply(),
		fakellm.Stream("Done."))
	var started atomic.Bool
	e.start(t, e.loop(NewToolSet(echo("echo", func(context.Context, string) { started.Store(true); <-release })), 0))
	poll(t, "the tool runs", started.Load)
	poll(t, "Live shows the activity", func() bool {
		f, ok := e.gen.Live(e.user, e.chat)
		return ok && f.Activity != nil && *f.Activity == "Echoing Bree"
	})
	// next returns the next frame's activity (nil: unchanged) and whether
	// it is the final frame.
	next := func() (*string, bool) {
		t.Helper()
		for {
			select {
			case ev := <-sub.C():
				if f, ok := ev.Data.(generation.Frame); ok {
					return f.Activity, f.Status != generation.StatusStreaming
				}
			case <-time.After(60 * time.Second):
				t.Fatal("no frame for a minute")
			}
		}
	}
	// The tool is held, so the line reaches followers in a frame, however
	// late the frames run on a busy machine.
	for {
		a, final := next()
		if final {
			t.Fatal("the reply ended while its tool was held")
		}
		if a != nil && *a == "Echoing Bree" {
			break
		}
		if a != nil {
			t.Fatalf("activity %q before the tool's line", *a)
		}
	}
	close(release)
	e.finished(t)
	// Then it is cleared: by a frame of its own, or by the final frame,
	// which clears it by itself (the two may be coalesced).
	for final := false; !final; {
		var a *string
		a, final = next()
		if a != nil && *a != "" {
			t.Errorf("activity %q after the tool ended", *a)
		}
	}
	if f, _ := e.gen.Live(e.user, e.chat); f.Activity != nil {
		t.Errorf("the finished reply's activity %q", *f.Activity)
	}
}

// fakeWeb is a Web whose answers the test sets.
type fakeWeb struct {
	ready bool
	hits  []SearchHit
	page  Page
	err   error
	calls atomic.Int64
}

func (w *fakeWeb) Search(ctx context.Context, q string, n int) ([]SearchHit, error) {
	w.calls.Add(1)
	return w.hits[:min(n, len(w.hits))], w.err
}
func (w *fakeWeb) Fetch(ctx context.Context, u string) (Page, error) {
	w.calls.Add(1)
	return w.page, w.err
}
func (w *fakeWeb) SearchReady(context.Context) bool { return w.ready }

var _ Web = (*fakeWeb)(nil)

// The llama.cpp captures drive the loop: the real tool-call stream (an id
// the server made up, arguments in fragments) runs web_search, and the
// next request answers that id with the numbered hits.
func TestLlamaCaptureDrivesTheLoop(t *testing.T) {
	e := newEnv(t)
	web := &fakeWeb{ready: true, hits: []SearchHit{{Title: "Bree weather", URL: "https://example.org/bree", Snippet: "Rain, 9 C."}}}
	e.llm.Enqueue(fakellm.Fixture("stream-tool-call"), fakellm.Fixture("stream-after-tool-result"))
	e.start(t, e.loop(NewToolSet(Builtins(web)...), 0))
	m := e.finished(t)
	parts := m.Parts()
	if m.Status != store.StatusFinal || web.calls.Load() != 1 {
		t.Fatalf("row %s (%s), %d searches", m.Status, m.Error, web.calls.Load())
	}
	var call, result store.Part
	for _, p := range parts {
		switch p.Kind {
		case store.PartToolCall:
			call = p
		case store.PartToolResult:
			result = p
		}
	}
	if call.Name != "web_search" || call.CallID != "ACQ7Geir4zQ7I1tQUCCahPVeGVigYe9w" || !json.Valid([]byte(call.Text)) {
		t.Errorf("call %+v", call)
	}
	if !strings.Contains(result.Text, "1. Bree weather\n   https://example.org/bree\n   Rain, 9 C.") {
		t.Errorf("result %q", result.Text)
	}
	reqs := e.llm.Requests()
	msgs := messages(t, reqs[1])
	last := msgs[len(msgs)-1]
	if last["role"] != "tool" || last["tool_call_id"] != call.CallID || last["content"] != result.Text {
		t.Errorf("tool turn %v", last)
	}
	if m.Content == "" {
		t.Error("no answer after the tool")
	}
}

// A round of more than MaxCalls calls runs the first MaxCalls; every
// other call gets its tool turn, an error result, and is never run.
func TestCallsPerRoundAreBounded(t *testing.T) {
	e := newEnv(t)
	var ran atomic.Int64
	s := fakellm.NewStream()
	const n = MaxCalls + 40
	for i := range n {
		s = s.ToolCall(i, fmt.Sprintf("c%d", i), "echo", fmt.Sprintf(`{"q":"%d"}`, i))
	}
	e.llm.Enqueue(s.Finish("tool_calls").Reply(), fakellm.Stream("Done."))
	e.start(t, e.loop(NewToolSet(echo("echo", func(context.Context, string) { ran.Add(1) })), 0))
	m := e.finished(t)
	if ran.Load() != MaxCalls {
		t.Errorf("ran %d calls, want %d", ran.Load(), MaxCalls)
	}
	msgs := messages(t, e.llm.Requests()[1])
	var turns, refused int
	for _, msg := range msgs {
		if msg["role"] == "tool" {
			turns++
			if strings.HasPrefix(msg["content"].(string), "Not run") {
				refused++
			}
		}
	}
	if turns != n || refused != n-MaxCalls {
		t.Errorf("tool turns %d (want %d), refused %d (want %d)", turns, n, refused, n-MaxCalls)
	}
	if got := len(m.Parts()); got != 2*n+1 {
		t.Errorf("%d parts, want %d", got, 2*n+1)
	}
}
