package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/llembas/lembas/backend/generation"
	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/store"
)

// Parallel is how many of a round's calls run at once.
const Parallel = 4

// MaxCalls is how many of a round's calls run; the rest get an error
// result (every call needs its tool turn). A model, or a page it read,
// asking for hundreds of fetches in one round would otherwise have them
// all made.
const MaxCalls = 16

// LimitNotice ends a reply whose model still called tools in the request
// sent without them (the round limit was reached).
const LimitNotice = "The reply reached the limit of tool rounds."

// Decision is what a Policy decides for one call.
type Decision int

// The decisions.
const (
	Run Decision = iota
	Ask
	Refuse
)

// DefaultAskTimeout bounds a pause when the loop is given none.
const DefaultAskTimeout = 10 * time.Minute

// Policy decides each call of an agent chat's reply from its tool's Risk
// and the chat's mode, read once per reply (backend/agent's table).
type Policy interface {
	// Decide returns the decision for call of t; for Refuse, why (plain
	// text the model reads as the call's result).
	Decide(t Tool, call Call) (Decision, string)
}

// Loop is the producer of a reply that may use tools: each round streams
// the request with the offered tools; when the model calls some, they run
// together, their calls and results are added to the reply, and the next
// round asks again with the assistant turn and the tool turns appended.
// Up to MaxRounds requests carry tools; the one after them goes without,
// so the model answers with what it has.
type Loop struct {
	Client  generation.Streamer
	Request llm.ChatRequest
	Tools   ToolSet
	// MaxRounds is how many requests may carry tools (0: DefaultMaxRounds).
	MaxRounds int
	Log       *slog.Logger
	// Policy, when set (an agent chat), decides each call: run it, ask
	// the person (one card for the round's calls), or refuse it. nil runs
	// every offered call.
	Policy Policy
	// AskTimeout bounds a pause for the person (0: DefaultAskTimeout).
	AskTimeout time.Duration

	// turns are the assistant and tool turns of the rounds so far.
	turns []llm.Message
}

var _ generation.Producer = (*Loop)(nil)

// Round runs one request and, if the model called tools, the calls.
func (l *Loop) Round(ctx context.Context, out *generation.Output) (generation.Round, error) {
	limit := l.MaxRounds
	if limit <= 0 {
		limit = DefaultMaxRounds
	}
	req := l.Request
	req.Messages = append(slices.Clip(l.Request.Messages), l.turns...)
	offer := l.Tools.Len() > 0 && out.Round() < limit
	req.Tools = nil
	if offer {
		req.Tools = l.Tools.Schemas()
	}
	var text strings.Builder
	res, err := l.Client.Chat(ctx, req, func(d llm.Delta) error {
		text.WriteString(d.Content)
		return out.Delta(d.Content, d.Reasoning)
	})
	if err != nil || len(res.ToolCalls) == 0 {
		return generation.Round{Result: res}, err
	}
	if !offer {
		// Called without being offered anything: nothing runs.
		return generation.Round{Result: res}, out.Add(store.Part{Kind: store.PartNotice, Text: LimitNotice})
	}
	calls := res.ToolCalls
	for _, c := range calls {
		if err := out.Add(store.Part{Kind: store.PartToolCall, Name: c.Name, CallID: c.ID, Text: c.Arguments}); err != nil {
			return generation.Round{Result: res}, err
		}
	}
	results, err := l.run(ctx, out, calls)
	if err != nil {
		return generation.Round{Result: res}, err
	}
	asst := llm.Message{Role: string(store.RoleAssistant), Content: text.String(), ToolCalls: calls}
	l.turns = append(l.turns, asst)
	for i, c := range calls {
		if err := out.Add(store.Part{Kind: store.PartToolResult, Name: c.Name, CallID: c.ID, Text: results[i].Text, Error: results[i].Failed}); err != nil {
			return generation.Round{Result: res}, err
		}
		l.turns = append(l.turns, llm.Message{Role: string(store.RoleTool), ToolCallID: c.ID, Content: results[i].Text})
	}
	return generation.Round{More: true, Result: res}, nil
}

// run runs a round's calls together, at most Parallel at once, and
// returns their results indexed like calls (never in finishing order: each
// tool turn must answer its own tool_call_id). It returns when every call
// has finished, or at once when ctx ends (Stop), leaving runners that
// ignore ctx to finish on their own.
func (l *Loop) run(ctx context.Context, out *generation.Output, calls []llm.ToolCall) ([]Result, error) {
	caller := out.Caller()
	results := make([]Result, len(calls))
	var lines []string
	for _, c := range calls[:min(len(calls), MaxCalls)] {
		if t, ok := l.Tools.Lookup(c.Name); ok && t.Activity != nil {
			if a := activity(t, json.RawMessage(c.Arguments)); a != "" && !slices.Contains(lines, a) {
				lines = append(lines, a)
			}
		}
	}
	if len(lines) == 0 {
		lines = append(lines, "Running tools…")
	}
	out.SetActivity(strings.Join(lines, " · "))
	defer out.SetActivity("")

	sem := make(chan struct{}, Parallel)
	var wg sync.WaitGroup
	for i, c := range calls {
		if i >= MaxCalls {
			results[i] = Result{Text: fmt.Sprintf("Not run: at most %d tool calls run in one round.", MaxCalls), Failed: true}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				results[i] = Result{Text: "Stopped.", Failed: true}
				return
			}
			defer func() { <-sem }()
			results[i] = l.call(ctx, Call{ID: c.ID, Name: c.Name, Arguments: json.RawMessage(c.Arguments), Caller: caller})
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx)
	}
	return results, nil
}

// call runs one call: a tool that was not offered is an error result,
// never a run, and a runner that panics is a failed result, never the
// reply's end.
func (l *Loop) call(ctx context.Context, c Call) (res Result) {
	t, ok := l.Tools.Lookup(c.Name)
	if !ok || t.Run == nil {
		return Result{Text: fmt.Sprintf("There is no tool named %q here. The tools you may call are: %s.", c.Name, strings.Join(l.Tools.Names(), ", ")), Failed: true}
	}
	defer func() {
		if p := recover(); p != nil {
			if l.Log != nil {
				l.Log.Error("panic in a tool", "tool", c.Name, "panic", p, "stack", string(debug.Stack()))
			}
			res = Result{Text: "The tool failed unexpectedly.", Failed: true}
		}
	}()
	return t.Run(ctx, c)
}

// activity is a tool's activity line, with a panic in it costing only
// the line.
func activity(t Tool, args json.RawMessage) (s string) {
	defer func() {
		if recover() != nil {
			s = ""
		}
	}()
	return t.Activity(args)
}
