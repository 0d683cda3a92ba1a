package tools

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/generation"
	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/store"
)

// timed is a Streamer that notes when each request leaves and when each
// round's stream has ended.
type timed struct {
	inner        generation.Streamer
	mu           sync.Mutex
	starts, ends []time.Time
}

func (s *timed) Chat(ctx context.Context, req llm.ChatRequest, fn func(llm.Delta) error) (llm.Result, error) {
	s.mu.Lock()
	s.starts = append(s.starts, time.Now())
	s.mu.Unlock()
	res, err := s.inner.Chat(ctx, req, fn)
	s.mu.Lock()
	s.ends = append(s.ends, time.Now())
	s.mu.Unlock()
	return res, err
}

// BenchmarkToolRound measures tool_round_overhead_ms: from the endpoint's
// finished tool-call round (its stream has ended) to the next request
// leaving, minus the tool's own time, over replies of two rounds (one
// search, one answer) against the fake endpoint; p50 in ms.
func BenchmarkToolRound(b *testing.B) {
	e := newEnv(b)
	e.llm.SetDefault(fakellm.Func(func(r fakellm.Request) fakellm.Reply {
		if msgs, _ := r.JSON["messages"].([]any); len(msgs) > 1 {
			return fakellm.Stream("It rains.")
		}
		return fakellm.NewStream().Content("Looking. ").ToolCall(0, "c1", "web_search", `{"query":"Bree"}`).Finish("tool_calls").Reply()
	}))
	web := &fakeWeb{ready: true, hits: []SearchHit{{Title: "Bree", URL: "https://example.org/bree", Snippet: "Rain."}}}
	var toolMu sync.Mutex
	var toolTime time.Duration
	set := NewToolSet(Builtins(web)...)
	search, _ := set.Lookup(NameWebSearch)
	run := search.Run
	search.Run = func(ctx context.Context, c Call) Result {
		t0 := time.Now()
		defer func() { toolMu.Lock(); toolTime = time.Since(t0); toolMu.Unlock() }()
		return run(ctx, c)
	}
	set = NewToolSet(search)
	var overheads []float64
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		m, err := e.db.AddMessage(ctx, e.user, e.chat, store.Message{Role: store.RoleAssistant, Status: store.StatusStreaming})
		if err != nil {
			b.Fatal(err)
		}
		st := &timed{inner: e.client}
		l := &Loop{Client: st, Tools: set, Request: llm.ChatRequest{Model: "m", Messages: []llm.Message{{Role: "user", Content: "hi"}}}}
		b.StartTimer()
		if err := e.gen.Start(generation.Job{User: e.user, Chat: e.chat, Message: m.ID, Producer: l,
			Caller: auth.Caller{User: e.user, Perms: auth.NewSet(true)}}); err != nil {
			b.Fatal(err)
		}
		if err := e.gen.Wait(ctx, e.chat); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if len(st.starts) != 2 {
			b.Fatalf("%d requests", len(st.starts))
		}
		toolMu.Lock()
		over := st.starts[1].Sub(st.ends[0]) - toolTime
		toolMu.Unlock()
		overheads = append(overheads, float64(over.Microseconds())/1000)
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(overheads)
	b.ReportMetric(overheads[(len(overheads)-1)/2], "p50_ms")
}
