package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/generation"
	"github.com/llembas/lembas/backend/store"
)

// policy is a fake Policy: a decision per tool name (Run when unnamed),
// with the reason for a refusal.
type policy map[string]Decision

func (p policy) Decide(t Tool, c Call) (Decision, string) {
	d := p[t.Name]
	if d == Refuse {
		return Refuse, "Plan mode only looks: " + t.Name + " is not allowed."
	}
	return d, ""
}

var _ Policy = policy(nil)

// ranCalls records the calls a tool's runner got.
type ranCalls struct {
	mu    sync.Mutex
	calls []Call
}

func (r *ranCalls) tool(name string) Tool {
	return Tool{Name: name, Family: FamilyAgent, Risk: RiskExec, Description: name,
		Parameters: json.RawMessage(`{"type":"object"}`),
		Run: func(ctx context.Context, c Call) Result {
			r.mu.Lock()
			r.calls = append(r.calls, c)
			r.mu.Unlock()
			return Result{Text: "ran " + string(c.Arguments)}
		}}
}

func (r *ranCalls) all() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// askUser is a tool whose calls put their "questions" to the person and
// return the answers.
func (r *ranCalls) askUser() Tool {
	t := r.tool("ask_user")
	t.Risk = RiskInteract
	t.Questions = func(args json.RawMessage) ([]Question, error) {
		var a struct{ Questions []string }
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, fmt.Errorf("The questions are not JSON: %v", err)
		}
		var qs []Question
		for i, q := range a.Questions {
			qs = append(qs, Question{Key: fmt.Sprintf("q%d", i+1), Text: q, Options: []string{"yes", "no"}})
		}
		return qs, nil
	}
	run := t.Run
	t.Run = func(ctx context.Context, c Call) Result {
		run(ctx, c)
		var b strings.Builder
		for _, k := range slices.Sorted(maps.Keys(c.Answers)) {
			fmt.Fprintf(&b, "%s=%s;", k, c.Answers[k])
		}
		return Result{Text: b.String()}
	}
	return t
}

// waitAsk polls Live (as a reloaded page does) until the reply shows a
// card.
func (e *env) waitAsk(t *testing.T) generation.Ask {
	t.Helper()
	var ask generation.Ask
	poll(t, "the reply shows its card", func() bool {
		fr, ok := e.gen.Live(e.user, e.chat)
		if !ok || fr.Ask == nil || fr.Ask.Ask == nil {
			return false
		}
		ask = *fr.Ask.Ask
		return true
	})
	return ask
}

func itemKeys(a generation.Ask) []string {
	var out []string
	for _, it := range a.Items {
		out = append(out, string(it.Kind)+":"+it.Key+":"+it.Tool)
	}
	return out
}

// A round of two calls that ask and one that runs: one card; the person
// approves one and declines the other with a note; only the approved one
// runs, told it was approved, and the one that needed no asking runs too,
// after the card (a round's calls run in order of the answer, never
// before it); the declined call's result says so with the note.
func TestApproveAndDeclineInOneCard(t *testing.T) {
	e := newEnv(t)
	r := &ranCalls{}
	e.llm.Enqueue(fakellm.NewStream().Content("Running.").
		ToolCall(0, "c1", "shell_run", `{"command":"make <all>","cwd":"src dir"}`).
		ToolCall(1, "c2", "shell_run", `{"command":"rm -rf build"}`).
		ToolCall(2, "c3", "file_read", `{"path":"README"}`).Finish("tool_calls").Reply(),
		fakellm.Stream("Done."))
	l := e.loop(NewToolSet(r.tool("shell_run"), r.tool("file_read")), 0)
	l.Policy = policy{"shell_run": Ask}
	e.start(t, l)
	ask := e.waitAsk(t)
	if got := itemKeys(ask); !slices.Equal(got, []string{"approve:c0:shell_run", "approve:c1:shell_run"}) {
		t.Fatalf("card items %v", got)
	}
	if ask.Kind != generation.AskApprove || ask.Items[0].Text != "shell_run: make <all>\nin src dir" || ask.Items[0].CallID != "c1" {
		t.Errorf("card %+v", ask)
	}
	if n := len(r.all()); n != 0 {
		t.Fatalf("%d calls ran before the answer", n)
	}
	if err := e.gen.Answer(e.user, e.msg, generation.Answer{ID: ask.ID, Items: map[string]generation.Reply{
		"c0": {Approve: true}, "c1": {Approve: false, Text: "not the build dir"}}}); err != nil {
		t.Fatal(err)
	}
	m := e.finished(t)
	if m.Status != store.StatusFinal || m.Content != "Running.Done." {
		t.Fatalf("row %s %q", m.Status, m.Content)
	}
	ran := r.all()
	if len(ran) != 2 {
		t.Fatalf("ran %+v", ran)
	}
	for _, c := range ran {
		switch c.ID {
		case "c1":
			if !c.Approved {
				t.Error("the approved call was not told so")
			}
		case "c3":
			if c.Approved {
				t.Error("a call nobody was asked about reads as approved")
			}
		default:
			t.Errorf("call %s ran", c.ID)
		}
	}
	parts := m.Parts()
	if got, want := kinds(parts), "text,tool_call,tool_call,tool_call,pause,tool_result,tool_result,tool_result,text"; got != want {
		t.Fatalf("parts %s, want %s", got, want)
	}
	if p := parts[4]; !strings.HasSuffix(p.Text, "\nApproved 1, declined 1") || !strings.Contains(p.Text, "- shell_run: rm -rf build") {
		t.Errorf("pause part %q", p.Text)
	}
	if p := parts[6]; !p.Error || p.Text != "The person declined this call. Their note: not the build dir" {
		t.Errorf("declined result %+v", p)
	}
	if p := parts[5]; p.Error || !strings.HasPrefix(p.Text, "ran ") {
		t.Errorf("approved result %+v", p)
	}
}

// One card for a round: two calls to approve and an ask_user call with
// three questions are one pause; the three answers reach its runner at
// once, by the tool's own keys.
func TestOneCardForTheRound(t *testing.T) {
	e := newEnv(t)
	r := &ranCalls{}
	e.llm.Enqueue(fakellm.NewStream().
		ToolCall(0, "c1", "shell_run", `{"command":"ls"}`).
		ToolCall(1, "c2", "ask_user", `{"questions":["Which branch?","Run the tests?","<b>Deploy</b>?"]}`).
		ToolCall(2, "c3", "file_write", `{"path":"a.txt","content":"x"}`).Finish("tool_calls").Reply(),
		fakellm.Stream("Thanks."))
	l := e.loop(NewToolSet(r.tool("shell_run"), r.askUser(), r.tool("file_write")), 0)
	l.Policy = policy{"shell_run": Ask, "file_write": Ask}
	e.start(t, l)
	ask := e.waitAsk(t)
	want := []string{"approve:c0:shell_run", "question:c1.q0:ask_user", "question:c1.q1:ask_user", "question:c1.q2:ask_user", "approve:c2:file_write"}
	if got := itemKeys(ask); !slices.Equal(got, want) {
		t.Fatalf("card items %v, want %v", got, want)
	}
	if it := ask.Items[3]; it.Text != "<b>Deploy</b>?" || !slices.Equal(it.Options, []string{"yes", "no"}) {
		t.Errorf("question %+v", it)
	}
	if err := e.gen.Answer(e.user, e.msg, generation.Answer{ID: ask.ID, Items: map[string]generation.Reply{
		"c0": {Approve: true}, "c2": {Approve: true},
		"c1.q0": {Text: "dev"}, "c1.q1": {Text: "yes"}, "c1.q2": {Text: "no"}}}); err != nil {
		t.Fatal(err)
	}
	m := e.finished(t)
	parts := m.Parts()
	if n := strings.Count(kinds(parts), "pause"); n != 1 {
		t.Fatalf("%d pauses: %s", n, kinds(parts))
	}
	var result string
	for _, p := range parts {
		if p.Kind == store.PartToolResult && p.CallID == "c2" {
			result = p.Text
		}
	}
	if result != "q1=dev;q2=yes;q3=no;" {
		t.Errorf("ask_user's result %q", result)
	}
	if n := len(r.all()); n != 3 {
		t.Errorf("%d calls ran", n)
	}
}

// A refused call never runs, and its result is the policy's reason; a
// call the policy lets run is not asked about.
func TestRefusedCallNeverRuns(t *testing.T) {
	e := newEnv(t)
	r := &ranCalls{}
	e.llm.Enqueue(fakellm.NewStream().
		ToolCall(0, "c1", "file_write", `{"path":"a"}`).
		ToolCall(1, "c2", "file_read", `{"path":"a"}`).Finish("tool_calls").Reply(),
		fakellm.Stream("Understood."))
	l := e.loop(NewToolSet(r.tool("file_write"), r.tool("file_read")), 0)
	l.Policy = policy{"file_write": Refuse}
	e.start(t, l)
	m := e.finished(t)
	parts := m.Parts()
	if got := kinds(parts); got != "tool_call,tool_call,tool_result,tool_result,text" {
		t.Fatalf("parts %s", got)
	}
	if p := parts[2]; !p.Error || p.Text != "Plan mode only looks: file_write is not allowed." {
		t.Errorf("refused result %+v", p)
	}
	if ran := r.all(); len(ran) != 1 || ran[0].Name != "file_read" {
		t.Errorf("ran %+v", ran)
	}
}

// Stop while the card waits ends the reply stopped, nothing run and
// nothing more asked of the endpoint.
func TestStopWhileTheCardWaits(t *testing.T) {
	e := newEnv(t)
	r := &ranCalls{}
	e.llm.Enqueue(fakellm.NewStream().ToolCall(0, "c1", "shell_run", `{"command":"ls"}`).Finish("tool_calls").Reply())
	l := e.loop(NewToolSet(r.tool("shell_run")), 0)
	l.Policy = policy{"shell_run": Ask}
	e.start(t, l)
	e.waitAsk(t)
	if !e.gen.Stop(e.user, e.chat) {
		t.Fatal("Stop found no reply")
	}
	m := e.finished(t)
	if m.Status != store.StatusStopped || kinds(m.Parts()) != "tool_call,pause" {
		t.Errorf("row %s, parts %s", m.Status, kinds(m.Parts()))
	}
	if !strings.HasSuffix(m.Parts()[1].Text, "\nStopped") {
		t.Errorf("pause part %q", m.Parts()[1].Text)
	}
	if len(r.all()) != 0 || len(e.llm.Requests()) != 1 {
		t.Errorf("ran %d, %d requests", len(r.all()), len(e.llm.Requests()))
	}
}

// No answer by the deadline: every call of the round gets a failed
// result, none runs, and the reply ends with a notice, asking the
// endpoint nothing more.
func TestCardTimesOut(t *testing.T) {
	e := newEnv(t)
	r := &ranCalls{}
	e.llm.Enqueue(fakellm.NewStream().
		ToolCall(0, "c1", "shell_run", `{"command":"ls"}`).
		ToolCall(1, "c2", "file_read", `{"path":"a"}`).Finish("tool_calls").Reply())
	l := e.loop(NewToolSet(r.tool("shell_run"), r.tool("file_read")), 0)
	l.Policy = policy{"shell_run": Ask}
	l.AskTimeout = 100 * time.Millisecond
	e.start(t, l)
	m := e.finished(t)
	parts := m.Parts()
	if m.Status != store.StatusFinal || kinds(parts) != "tool_call,tool_call,pause,tool_result,tool_result,notice" {
		t.Fatalf("row %s, parts %s", m.Status, kinds(parts))
	}
	if p := parts[3]; !p.Error || p.Text != "No answer within 1 second." {
		t.Errorf("asked call's result %+v", p)
	}
	if p := parts[4]; !p.Error || !strings.HasPrefix(p.Text, "Not run") {
		t.Errorf("other call's result %+v", p)
	}
	if p := parts[5]; p.Text != "No answer came within 1 second; the reply ended." {
		t.Errorf("notice %q", p.Text)
	}
	if !strings.HasSuffix(parts[2].Text, "\nNo answer in time") {
		t.Errorf("pause part %q", parts[2].Text)
	}
	if len(r.all()) != 0 || len(e.llm.Requests()) != 1 {
		t.Errorf("ran %d, %d requests", len(r.all()), len(e.llm.Requests()))
	}
}

// A tool that ends the turn (plan_submit) ran: one more round, whose
// request carries no tools array, and the reply ends there; a call in
// that round runs nothing.
func TestEndsTurnWithdrawsTools(t *testing.T) {
	e := newEnv(t)
	r := &ranCalls{}
	plan := r.tool("plan_submit")
	plan.EndsTurn = true
	e.llm.Enqueue(fakellm.NewStream().ToolCall(0, "c1", "plan_submit", `{"plan":"1. Build"}`).Finish("tool_calls").Reply(),
		fakellm.NewStream().Content("That is my plan.").ToolCall(0, "c2", "shell_run", `{"command":"make"}`).Finish("tool_calls").Reply())
	l := e.loop(NewToolSet(plan, r.tool("shell_run")), 0)
	e.start(t, l)
	m := e.finished(t)
	reqs := e.llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if toolNames(reqs[0]) == nil || toolNames(reqs[1]) != nil {
		t.Errorf("tools offered %v then %v", toolNames(reqs[0]), toolNames(reqs[1]))
	}
	parts := m.Parts()
	if m.Status != store.StatusFinal || kinds(parts) != "tool_call,tool_result,text,notice" || parts[3].Text != PlanNotice {
		t.Errorf("row %s, parts %s", m.Status, kinds(parts))
	}
	if ran := r.all(); len(ran) != 1 || ran[0].Name != "plan_submit" {
		t.Errorf("ran %+v", ran)
	}
}

// A failed plan_submit does not end the turn: the model may try again.
func TestFailedEndsTurnGoesOn(t *testing.T) {
	e := newEnv(t)
	plan := Tool{Name: "plan_submit", EndsTurn: true, Parameters: json.RawMessage(`{"type":"object"}`),
		Run: func(context.Context, Call) Result { return Result{Text: "The plan is empty.", Failed: true} }}
	e.llm.Enqueue(fakellm.NewStream().ToolCall(0, "c1", "plan_submit", `{}`).Finish("tool_calls").Reply(),
		fakellm.Stream("Let me write it."))
	e.start(t, e.loop(NewToolSet(plan), 0))
	e.finished(t)
	if reqs := e.llm.Requests(); len(reqs) != 2 || toolNames(reqs[1]) == nil {
		t.Errorf("%d requests; the second offered %v", len(reqs), toolNames(reqs[len(reqs)-1]))
	}
}

func TestSummary(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{`{"command":"ls -la","cwd":"/srv/my app"}`, "shell_run: ls -la\nin /srv/my app"},
		{`{"path":"a.txt","content":"x","mode":420}`, "shell_run\ncontent: x\nmode: 420\npath: a.txt"},
		{`not json`, "shell_run: not json"},
	} {
		if got := Summary("shell_run", json.RawMessage(tc.args)); got != tc.want {
			t.Errorf("Summary(%s) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

// A round's card is bounded whatever the model sends: sixteen ask_user
// calls of ten questions with long text and pages of long options become
// at most MaxQuestions questions, each cut short; the calls past the bound
// fail, telling the model why.
func TestCardIsBounded(t *testing.T) {
	e := newEnv(t)
	r := &ranCalls{}
	long := strings.Repeat("é", 5000)
	var opts []string
	for i := range 100 {
		opts = append(opts, fmt.Sprintf("%d%s", i, long))
	}
	many := &ranCalls{}
	tool := many.askUser()
	tool.Questions = func(args json.RawMessage) ([]Question, error) {
		var qs []Question
		for j := range 10 {
			qs = append(qs, Question{Key: fmt.Sprintf("q%d", j), Text: long, Options: opts})
		}
		return qs, nil
	}
	s := fakellm.NewStream()
	for i := range 16 {
		s = s.ToolCall(i, fmt.Sprintf("c%d", i), "ask_user", `{}`)
	}
	e.llm.Enqueue(s.Finish("tool_calls").Reply(), fakellm.Stream("Thanks."))
	l := e.loop(NewToolSet(tool, r.tool("shell_run")), 0)
	l.Policy = policy{}
	e.start(t, l)
	ask := e.waitAsk(t)
	if len(ask.Items) > MaxQuestions {
		t.Errorf("%d items in the card, want at most %d", len(ask.Items), MaxQuestions)
	}
	for _, it := range ask.Items {
		if n := utf8.RuneCountInString(it.Text); n > maxQuestionText {
			t.Fatalf("a question of %d runes", n)
		}
		if len(it.Options) > maxOptions {
			t.Fatalf("%d options", len(it.Options))
		}
		for _, o := range it.Options {
			if n := utf8.RuneCountInString(o); n > maxOptionText {
				t.Fatalf("an option of %d runes", n)
			}
		}
	}
	if err := e.gen.Answer(e.user, e.msg, generation.Answer{ID: ask.ID}); err != nil {
		t.Fatal(err)
	}
	m := e.finished(t)
	failed := 0
	for _, p := range m.Parts() {
		if p.Kind == store.PartToolResult && p.Error && strings.Contains(p.Text, "questions are asked in one round") {
			failed++
		}
	}
	if failed != 14 {
		t.Errorf("%d calls failed for the bound, want 14", failed)
	}
}

// A hundred calls needing approval in one round make one card of at most
// MaxCalls items; only the approved ones run.
func TestHundredApprovalsMakeOneBoundedCard(t *testing.T) {
	e := newEnv(t)
	r := &ranCalls{}
	s := fakellm.NewStream()
	for i := range 100 {
		s = s.ToolCall(i, fmt.Sprintf("c%d", i), "shell_run", fmt.Sprintf(`{"command":"echo %d"}`, i))
	}
	e.llm.Enqueue(s.Finish("tool_calls").Reply(), fakellm.Stream("Done."))
	l := e.loop(NewToolSet(r.tool("shell_run")), 0)
	l.Policy = policy{"shell_run": Ask}
	e.start(t, l)
	ask := e.waitAsk(t)
	if len(ask.Items) != MaxCalls {
		t.Fatalf("%d items, want %d", len(ask.Items), MaxCalls)
	}
	ans := generation.Answer{ID: ask.ID, Items: map[string]generation.Reply{}}
	for _, it := range ask.Items[:3] {
		ans.Items[it.Key] = generation.Reply{Approve: true}
	}
	if err := e.gen.Answer(e.user, e.msg, ans); err != nil {
		t.Fatal(err)
	}
	m := e.finished(t)
	if n := strings.Count(kinds(m.Parts()), "pause"); n != 1 {
		t.Errorf("%d pauses", n)
	}
	if n := len(r.all()); n != 3 {
		t.Errorf("%d calls ran, want the 3 approved", n)
	}
}

// A model that asks the person again and again is held to the round
// limit: three rounds, three cards, then a request without tools whose
// further ask_user call runs nothing and ends the reply with the notice.
func TestAskingForeverMeetsTheRoundLimit(t *testing.T) {
	e := newEnv(t)
	r := &ranCalls{}
	for i := range 4 {
		e.llm.Enqueue(fakellm.NewStream().ToolCall(0, fmt.Sprintf("c%d", i), "ask_user", `{"questions":["Again?"]}`).Finish("tool_calls").Reply())
	}
	l := e.loop(NewToolSet(r.askUser()), 3)
	l.Policy = policy{}
	e.start(t, l)
	last := ""
	for range 3 {
		var ask generation.Ask
		poll(t, "the next card", func() bool {
			fr, ok := e.gen.Live(e.user, e.chat)
			if ok && fr.Ask != nil && fr.Ask.Ask != nil && fr.Ask.Ask.ID != last {
				ask = *fr.Ask.Ask
				return true
			}
			return false
		})
		last = ask.ID
		if err := e.gen.Answer(e.user, e.msg, generation.Answer{ID: ask.ID, Items: map[string]generation.Reply{ask.Items[0].Key: {Text: "yes"}}}); err != nil {
			t.Fatal(err)
		}
	}
	m := e.finished(t)
	parts := m.Parts()
	if n := strings.Count(kinds(parts), "pause"); n != 3 {
		t.Errorf("%d pauses: %s", n, kinds(parts))
	}
	if p := parts[len(parts)-1]; p.Kind != store.PartNotice || p.Text != LimitNotice {
		t.Errorf("last part %+v", p)
	}
}
