package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

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

// A round's card is bounded whatever a tool's Questions return: at most
// MaxQuestions questions in all (a call whose questions would pass it
// fails, telling the model), each of at most maxQuestionText runes with at
// most maxOptions options of maxOptionText runes. A model calling ask_user
// sixteen times in a round, each with pages of options, would otherwise
// put all of it in one card (and every Live snapshot).
const (
	MaxQuestions    = 20
	maxQuestionText = 2000
	maxOptions      = 20
	maxOptionText   = 200
)

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
	// endTurn: a call of an EndsTurn tool ran; the next round goes
	// without tools and is the last.
	endTurn bool
}

var _ generation.Producer = (*Loop)(nil)

// PlanNotice ends a reply whose model called tools in the round after a
// call that ends the turn (plan_submit), when tools were withdrawn.
const PlanNotice = "Nothing more runs in this reply once a plan is submitted."

// Round runs one request and, if the model called tools, the calls.
func (l *Loop) Round(ctx context.Context, out *generation.Output) (generation.Round, error) {
	limit := l.MaxRounds
	if limit <= 0 {
		limit = DefaultMaxRounds
	}
	req := l.Request
	req.Messages = append(slices.Clip(l.Request.Messages), l.turns...)
	offer := l.Tools.Len() > 0 && out.Round() < limit && !l.endTurn
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
		notice := LimitNotice
		if l.endTurn {
			notice = PlanNotice
		}
		return generation.Round{Result: res}, out.Add(store.Part{Kind: store.PartNotice, Text: notice})
	}
	calls := res.ToolCalls
	for _, c := range calls {
		if err := out.Add(store.Part{Kind: store.PartToolCall, Name: c.Name, CallID: c.ID, Text: c.Arguments}); err != nil {
			return generation.Round{Result: res}, err
		}
	}
	results, unanswered, err := l.run(ctx, out, calls)
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
		if t, ok := l.Tools.Lookup(c.Name); ok && t.EndsTurn && !results[i].Failed {
			// One more round, with the tools withdrawn: the model says
			// what it proposed and cannot change it any more.
			l.endTurn = true
		}
	}
	if unanswered {
		return generation.Round{Result: res}, out.Add(store.Part{Kind: store.PartNotice,
			Text: fmt.Sprintf("No answer came within %s; the reply ended.", l.askWait())})
	}
	return generation.Round{More: true, Result: res}, nil
}

// askTimeout is how long a pause waits for the person.
func (l *Loop) askTimeout() time.Duration {
	if l.AskTimeout > 0 {
		return l.AskTimeout
	}
	return DefaultAskTimeout
}

// askWait says askTimeout in words: "10 minutes".
func (l *Loop) askWait() string {
	d := l.askTimeout()
	n, unit := int((d+time.Minute-1)/time.Minute), "minute"
	if d < time.Minute {
		n, unit = int((d+time.Second-1)/time.Second), "second"
	}
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// Declined is the result of a call the person declined.
const Declined = "The person declined this call."

// pending is a call of the round that will run unless the person says
// otherwise: the call as its runner gets it, and what the card asks of it.
type pending struct {
	call Call
	// approve: the card's item key of its approval ("" when it runs
	// without asking); questions: its questions, by the card's keys.
	approve   string
	questions map[string]string // card key → the tool's question key
}

// run decides a round's calls (the Policy, when set), asks the person
// about those that need it in one card (Output.Pause), runs the rest
// together, at most Parallel at once, and returns their results indexed
// like calls (never in finishing order: each tool turn must answer its own
// tool_call_id). unanswered: the card's deadline passed, nothing ran, and
// the reply is to end. It returns when every call has finished, or at
// once when ctx ends (Stop), leaving runners that ignore ctx to finish on
// their own.
func (l *Loop) run(ctx context.Context, out *generation.Output, calls []llm.ToolCall) ([]Result, bool, error) {
	caller := out.Caller()
	// Not a named result: runners still going after a Stop write into it.
	results := make([]Result, len(calls))
	todo := make([]*pending, len(calls))
	var items []generation.AskItem
	approvals := false
	asked := 0 // questions in the card
	for i, c := range calls {
		if i >= MaxCalls {
			results[i] = Result{Text: fmt.Sprintf("Not run: at most %d tool calls run in one round.", MaxCalls), Failed: true}
			continue
		}
		p := &pending{call: Call{ID: c.ID, Name: c.Name, Arguments: json.RawMessage(c.Arguments), Caller: caller}}
		todo[i] = p
		t, ok := l.Tools.Lookup(c.Name)
		if !ok || t.Run == nil {
			continue // call answers: no such tool here; nothing to ask
		}
		decision := Run
		if l.Policy != nil {
			var why string
			decision, why = l.decide(t, p.call)
			if decision == Refuse {
				if why == "" {
					why = "This call is not allowed here."
				}
				results[i], todo[i] = Result{Text: why, Failed: true}, nil
				continue
			}
		}
		if t.Questions != nil {
			qs, err := questions(t, p.call.Arguments)
			if err != nil {
				results[i], todo[i] = Result{Text: err.Error(), Failed: true}, nil
				continue
			}
			if asked+len(qs) > MaxQuestions {
				results[i], todo[i] = Result{Text: fmt.Sprintf("Not asked: at most %d questions are asked in one round; ask the rest once these are answered.", MaxQuestions), Failed: true}, nil
				continue
			}
			asked += len(qs)
			p.questions = map[string]string{}
			for j, q := range qs {
				q.Text = cut(q.Text, maxQuestionText)
				q.Options = slices.Clone(q.Options[:min(len(q.Options), maxOptions)])
				for k, o := range q.Options {
					q.Options[k] = cut(o, maxOptionText)
				}
				key := fmt.Sprintf("c%d.q%d", i, j)
				p.questions[key] = q.Key
				items = append(items, generation.AskItem{Key: key, CallID: c.ID, Tool: c.Name,
					Kind: generation.ItemQuestion, Text: q.Text, Options: q.Options})
			}
			// Answering is allowing: a question needs no approval of
			// its own.
			p.call.Approved = decision == Ask
			continue
		}
		if decision == Ask {
			p.approve = fmt.Sprintf("c%d", i)
			approvals = true
			items = append(items, generation.AskItem{Key: p.approve, CallID: c.ID, Tool: c.Name,
				Kind: generation.ItemApprove, Text: Summary(c.Name, p.call.Arguments)})
		}
	}
	if len(items) > 0 {
		kind := generation.AskQuestions
		if approvals {
			kind = generation.AskApprove
		}
		ans, err := out.Pause(ctx, generation.Ask{Kind: kind, Items: items}, l.askTimeout())
		if errors.Is(err, generation.ErrNoAnswer) {
			for i, p := range todo {
				switch {
				case p == nil:
				case p.approve != "" || p.questions != nil:
					results[i] = Result{Text: fmt.Sprintf("No answer within %s.", l.askWait()), Failed: true}
				default:
					results[i] = Result{Text: "Not run: the reply ended waiting for an answer.", Failed: true}
				}
			}
			return results, true, nil
		}
		if err != nil {
			return nil, false, err
		}
		for i, p := range todo {
			if p == nil {
				continue
			}
			if p.approve != "" {
				r := ans.Items[p.approve]
				if !r.Approve {
					results[i], todo[i] = Result{Text: declined(r.Text), Failed: true}, nil
					continue
				}
				p.call.Approved = true
			}
			if p.questions != nil {
				p.call.Answers = map[string]string{}
				for key, q := range p.questions {
					p.call.Answers[q] = ans.Items[key].Text
				}
			}
		}
	}

	var lines []string
	for _, p := range todo {
		if p == nil {
			continue
		}
		if t, ok := l.Tools.Lookup(p.call.Name); ok && t.Activity != nil {
			if a := activity(t, p.call.Arguments); a != "" && !slices.Contains(lines, a) {
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
	for i, p := range todo {
		if p == nil {
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
			// Each runner gets its own copy of its call: only some of the
			// round's calls were approved.
			results[i] = l.call(ctx, p.call)
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return nil, false, context.Cause(ctx)
	}
	if err := ctx.Err(); err != nil {
		return nil, false, context.Cause(ctx)
	}
	return results, false, nil
}

// declined is a declined call's result, with the person's note.
func declined(note string) string {
	if note = strings.TrimSpace(note); note != "" {
		return Declined + " Their note: " + note
	}
	return Declined
}

// decide asks the policy, a panic in it refusing the call.
func (l *Loop) decide(t Tool, c Call) (d Decision, why string) {
	defer func() {
		if p := recover(); p != nil {
			if l.Log != nil {
				l.Log.Error("panic in the agent policy", "tool", t.Name, "panic", p, "stack", string(debug.Stack()))
			}
			d, why = Refuse, "This call could not be checked, so it did not run."
		}
	}()
	return l.Policy.Decide(t, c)
}

// questions reads a call's questions for the card: an error (or none)
// is the call's failed result, a panic too.
func questions(t Tool, args json.RawMessage) (qs []Question, err error) {
	defer func() {
		if recover() != nil {
			qs, err = nil, errors.New("The questions could not be read.")
		}
	}()
	qs, err = t.Questions(args)
	if err == nil && len(qs) == 0 {
		err = errors.New("The call asked no question.")
	}
	return qs, err
}

// Summary is a call as a person approving it reads it: the tool's name
// and its arguments, a command (and the directory it runs in) as written,
// other arguments one per line, each cut short. Plain text.
func Summary(name string, args json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil || m == nil {
		return cut(name+": "+strings.TrimSpace(string(args)), 2000)
	}
	if cmd, ok := m["command"].(string); ok {
		s := name + ": " + cut(cmd, 1500)
		if cwd, _ := m["cwd"].(string); cwd != "" {
			s += "\nin " + cut(cwd, 300)
		}
		return s
	}
	keys := slices.Sorted(maps.Keys(m))
	lines := []string{name}
	for _, k := range keys {
		v, ok := m[k].(string)
		if !ok {
			b, _ := json.Marshal(m[k])
			v = string(b)
		}
		lines = append(lines, k+": "+cut(v, 300))
	}
	return cut(strings.Join(lines, "\n"), 2000)
}

// cut cuts s to at most n runes, with an ellipsis when cut; unlike
// clip it keeps its lines.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
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
