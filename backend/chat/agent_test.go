package chat_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/agent"
	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/generation"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/prompts"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/tools"
)

// fakeAgent is chat.Agent as these tests need it: a policy from the mode
// of the chat it is handed (asking before commands unless in Auto,
// refusing them in Plan), and a record of every chat it was asked about.
type fakeAgent struct {
	mu      sync.Mutex
	replies []store.Chat
	err     error // Reply's
	newErr  error // CheckNew's
}

func (a *fakeAgent) Reply(ctx context.Context, caller auth.Caller, ch store.Chat) (chat.AgentReply, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.replies = append(a.replies, ch)
	if a.err != nil {
		return chat.AgentReply{}, a.err
	}
	h := prompts.Agent{Host: "frodo@bag-end:2222", Dir: ch.Agent.Dir, Mode: string(ch.Agent.Mode)}
	if ch.Agent.RewoundAt != nil {
		h.Rewound = "The transcript was rewound."
	}
	return chat.AgentReply{Policy: modePolicy(ch.Agent.Mode), MaxRounds: 6, AskTimeout: time.Hour, Harness: h}, nil
}

func (a *fakeAgent) CheckNew(ctx context.Context, caller auth.Caller, ac store.AgentChat) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.newErr
}

func (a *fakeAgent) seen() []store.Chat {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.replies)
}

var _ chat.Agent = (*fakeAgent)(nil)

// modePolicy decides as the agent's table does for these tests' tools.
type modePolicy store.AgentMode

func (m modePolicy) Decide(t tools.Tool, c tools.Call) (tools.Decision, string) {
	switch {
	case t.Risk == tools.RiskInteract, store.AgentMode(m) == store.ModeAuto:
		return tools.Run, ""
	case store.AgentMode(m) == store.ModePlan:
		return tools.Refuse, "Plan mode only looks."
	}
	return tools.Ask, ""
}

// agentTools is the agent's tool source for these tests: shell_run,
// which records its calls, and plan_submit, in agent chats only.
type agentTools struct {
	mu    sync.Mutex
	calls []tools.Call
}

func (s *agentTools) Gate() tools.Family { return tools.FamilyAgent }

func (s *agentTools) Tools(ctx context.Context, caller auth.Caller, ch store.Chat, taken func(string) bool) ([]tools.Tool, []tools.Guidance, error) {
	if ch.Kind != store.ChatAgent {
		return nil, nil, nil
	}
	obj := json.RawMessage(`{"type":"object"}`)
	return []tools.Tool{
		{Name: "shell_run", Family: tools.FamilyAgent, Permission: auth.AgentUse, Risk: tools.RiskExec, Description: "Run a command.", Parameters: obj,
			Run: func(ctx context.Context, c tools.Call) tools.Result {
				s.mu.Lock()
				s.calls = append(s.calls, c)
				s.mu.Unlock()
				return tools.Result{Text: "exit 0"}
			}},
		{Name: "plan_submit", Family: tools.FamilyAgent, Permission: auth.AgentUse, Risk: tools.RiskInteract, EndsTurn: true,
			Description: "Submit the plan.", Parameters: obj,
			Run: func(ctx context.Context, c tools.Call) tools.Result {
				return tools.Result{Text: "The plan was shown to the person."}
			}},
	}, nil, nil
}

func (s *agentTools) ran() []tools.Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// agentEnv is a chat env whose agent chats run on a fake agent and its
// tools, with a profile of the owner's to work on.
type agentEnv struct {
	*env
	agent   *fakeAgent
	tools   *agentTools
	profile ids.ProfileID
	ctx     context.Context
}

func setupAgent(t *testing.T) *agentEnv {
	t.Helper()
	e := setup(t)
	e.toolsOn(t, store.Capabilities{Tools: true})
	a := &agentEnv{env: e, agent: &fakeAgent{}, tools: &agentTools{},
		ctx: auth.WithCaller(context.Background(), auth.Caller{User: e.user, Perms: auth.NewSet(true)})}
	reg := tools.New(e.c.DB, nil)
	reg.AddSource(a.tools)
	e.c.Chat.UseAgent(a.agent, reg)
	a.profile = a.addProfile(e.user, "Bag End")
	return a
}

// addProfile stores an SSH profile of user's (the agent's store functions
// are not this package's).
func (a *agentEnv) addProfile(user ids.UserID, name string) ids.ProfileID {
	a.t.Helper()
	var id int64
	err := a.c.DB.WriteTx(context.Background(), func(tx *sql.Tx) error {
		res, err := tx.Exec(`INSERT INTO ssh_profiles (user_id, name, host, port, username) VALUES (?, ?, 'bag-end', 2222, 'frodo')`, user, name)
		if err != nil {
			return err
		}
		id, err = res.LastInsertId()
		return err
	})
	if err != nil {
		a.t.Fatal(err)
	}
	return ids.ProfileID(id)
}

// newAgentChat sends the first turn of an agent chat in mode.
func (a *agentEnv) newAgentChat(mode store.AgentMode, text string) chat.Turn {
	a.t.Helper()
	turn, err := a.c.Chat.Send(a.ctx, a.user, chat.SendInput{ModelID: a.model, Content: text,
		Agent: &chat.AgentInput{Profile: a.profile, Dir: "/home/frodo/my project", Mode: mode}})
	if err != nil {
		a.t.Fatal(err)
	}
	return turn
}

// card polls Live, as a reloaded page does, until the chat's reply shows
// a card other than the one named not.
func (a *agentEnv) card(chatID ids.ChatID, not string) generation.Ask {
	a.t.Helper()
	var ask generation.Ask
	deadline := time.Now().Add(30 * time.Second)
	for {
		fr, ok, err := a.c.Chat.Live(a.ctx, a.user, chatID)
		if err != nil {
			a.t.Fatal(err)
		}
		if ok && fr.Ask != nil && fr.Ask.Ask != nil && fr.Ask.Ask.ID != not {
			ask = *fr.Ask.Ask
			return ask
		}
		if time.Now().After(deadline) {
			a.t.Fatal("the reply never showed a card")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func approve(ask generation.Ask) generation.Answer {
	ans := generation.Answer{ID: ask.ID, Items: map[string]generation.Reply{}}
	for _, it := range ask.Items {
		ans.Items[it.Key] = generation.Reply{Approve: true}
	}
	return ans
}

func callCommand(t *testing.T, c tools.Call) string {
	t.Helper()
	var a struct{ Command string }
	json.Unmarshal(c.Arguments, &a)
	return a.Command
}

// The mode is read once per reply: switching a Manual chat to Auto while
// its reply waits on a card does not approve what the reply asks next;
// the next reply runs in Auto. A reload (Live) finds the card; the card
// takes one answer.
func TestAgentChatReadsItsModeOncePerReply(t *testing.T) {
	a := setupAgent(t)
	a.llm.Enqueue(
		fakellm.NewStream().Content("Listing.").ToolCall(0, "c1", "shell_run", `{"command":"ls","cwd":"src"}`).Finish("tool_calls").Reply(),
		fakellm.NewStream().ToolCall(0, "c2", "shell_run", `{"command":"make"}`).Finish("tool_calls").Reply(),
		fakellm.Stream("Built."))
	turn := a.newAgentChat(store.ModeManual, "Build it")
	id := turn.Chat.ID
	if turn.Chat.Kind != store.ChatAgent || turn.Chat.Agent.Mode != store.ModeManual || turn.Chat.Agent.Dir != "/home/frodo/my project" ||
		turn.Chat.Agent.Profile == nil || *turn.Chat.Agent.Profile != a.profile {
		t.Fatalf("chat %+v", turn.Chat)
	}
	first := a.card(id, "")
	if len(first.Items) != 1 || first.Items[0].Text != "shell_run: ls\nin src" {
		t.Fatalf("card %+v", first)
	}
	auto := store.ModeAuto
	if _, err := a.c.Chat.Update(a.ctx, a.user, id, chat.Patch{AgentMode: &auto}); err != nil {
		t.Fatal(err)
	}
	if err := a.c.Chat.Answer(a.ctx, a.user, turn.Assistant.ID, approve(first)); err != nil {
		t.Fatal(err)
	}
	second := a.card(id, first.ID)
	if len(second.Items) != 1 || second.Items[0].Text != "shell_run: make" {
		t.Fatalf("second card %+v", second)
	}
	if err := a.c.Chat.Answer(a.ctx, a.user, turn.Assistant.ID, approve(first)); apperr.KindOf(err) != apperr.Conflict {
		t.Errorf("an answer to the first card again: %v", err)
	}
	if err := a.c.Chat.Answer(a.ctx, a.user, turn.Assistant.ID, approve(second)); err != nil {
		t.Fatal(err)
	}
	a.wait(id)
	if m := a.last(id); m.Status != store.StatusFinal || m.Content != "Listing.Built." {
		t.Fatalf("reply %s %q", m.Status, m.Content)
	}
	if got := len(a.agent.seen()); got != 1 {
		t.Errorf("the agent was asked %d times for one reply", got)
	}
	if err := a.c.Chat.Answer(a.ctx, a.user, turn.Assistant.ID, approve(second)); apperr.KindOf(err) != apperr.Conflict ||
		!strings.Contains(err.Error(), "already answered") {
		t.Errorf("an answer after the reply ended: %v", err)
	}

	// The next reply reads Auto: nothing asked.
	a.llm.Enqueue(fakellm.NewStream().ToolCall(0, "c3", "shell_run", `{"command":"make test"}`).Finish("tool_calls").Reply(),
		fakellm.Stream("Tested."))
	if _, err := a.c.Chat.Send(a.ctx, a.user, chat.SendInput{ChatID: id, Content: "Test it"}); err != nil {
		t.Fatal(err)
	}
	a.wait(id)
	ran := a.tools.ran()
	if len(ran) != 3 {
		t.Fatalf("ran %d calls", len(ran))
	}
	for i, want := range []struct {
		cmd      string
		approved bool
	}{{"ls", true}, {"make", true}, {"make test", false}} {
		if got := callCommand(t, ran[i]); got != want.cmd || ran[i].Approved != want.approved {
			t.Errorf("call %d: %q approved %v, want %q %v", i, got, ran[i].Approved, want.cmd, want.approved)
		}
	}
	seen := a.agent.seen()
	if len(seen) != 2 || seen[1].Agent.Mode != store.ModeAuto {
		t.Errorf("the agent saw %+v", seen)
	}
}

// An agent chat that cannot act refuses the turn with the agent's reason,
// and nothing is stored or deleted: a new chat, a regeneration, an edit.
func TestAgentChatThatCannotActIsRefused(t *testing.T) {
	a := setupAgent(t)
	a.llm.Enqueue(fakellm.Stream("Hello."))
	turn := a.newAgentChat(store.ModeEdit, "Hi")
	a.wait(turn.Chat.ID)
	before := a.rows(turn.Chat.ID)

	a.agent.err = apperr.New(apperr.Forbidden, "Agent chats are turned off on this server.")
	_, err := a.c.Chat.Send(a.ctx, a.user, chat.SendInput{ModelID: a.model, Content: "Build it",
		Agent: &chat.AgentInput{Profile: a.profile, Dir: "/srv", Mode: store.ModeAuto}})
	if err == nil || !strings.Contains(err.Error(), "turned off") {
		t.Errorf("a new agent chat: %v", err)
	}
	if _, err := a.c.Chat.Regenerate(a.ctx, a.user, turn.Chat.ID); err == nil || !strings.Contains(err.Error(), "turned off") {
		t.Errorf("regenerate: %v", err)
	}
	if _, err := a.c.Chat.Edit(a.ctx, a.user, turn.User.ID, "Hi again", nil); err == nil || !strings.Contains(err.Error(), "turned off") {
		t.Errorf("edit: %v", err)
	}
	if _, err := a.c.Chat.Send(a.ctx, a.user, chat.SendInput{ChatID: turn.Chat.ID, Content: "More"}); err == nil || !strings.Contains(err.Error(), "turned off") {
		t.Errorf("a turn: %v", err)
	}
	if got := a.rows(turn.Chat.ID); got != before {
		t.Errorf("%d messages after the refusals, %d before", got, before)
	}
	if ch, _ := a.c.DB.ChatByID(context.Background(), a.user, turn.Chat.ID); ch.Agent.RewoundAt != nil {
		t.Error("a refused rewind stamped the chat")
	}

	a.agent.err = nil
	a.agent.newErr = apperr.New(apperr.NotFound, "That SSH connection was not found.")
	if _, err := a.c.Chat.Send(a.ctx, a.user, chat.SendInput{ModelID: a.model, Content: "Build it",
		Agent: &chat.AgentInput{Profile: a.profile + 50, Dir: "/srv"}}); apperr.KindOf(err) != apperr.NotFound {
		t.Errorf("a new agent chat on no profile: %v", err)
	}
	a.agent.newErr = nil
	if _, err := a.c.Chat.Send(a.ctx, a.user, chat.SendInput{ModelID: a.model, Content: "Build it",
		Agent: &chat.AgentInput{Profile: a.profile, Dir: "/srv", Mode: "turbo"}}); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("a new agent chat in no mode: %v", err)
	}
	if _, err := a.c.Chat.Send(a.ctx, a.user, chat.SendInput{ChatID: turn.Chat.ID, Content: "Move",
		Agent: &chat.AgentInput{Profile: a.profile, Dir: "/srv"}}); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("agent fields sent with an existing chat: %v", err)
	}
	list, err := a.c.DB.ListChats(context.Background(), a.user, store.ChatFilter{})
	if err != nil || len(list) != 1 {
		t.Errorf("%d chats after the refusals (%v)", len(list), err)
	}
}

// Only the mode of an agent chat changes: its kind, connection and
// directory are fixed when it is created (the same value is no change),
// and a plain chat has no mode. The view names the profile and host.
func TestAgentChatFixedFields(t *testing.T) {
	a := setupAgent(t)
	a.llm.Enqueue(fakellm.Stream("Hello."))
	turn := a.newAgentChat(store.ModeManual, "Hi")
	id := turn.Chat.ID
	a.wait(id)
	other := a.addProfile(a.user, "Rivendell")
	plain := store.ChatPlain
	dir, same := "/etc", "/home/frodo/my project"
	for _, tc := range []struct {
		name string
		p    chat.Patch
	}{
		{"kind", chat.Patch{Kind: &plain}},
		{"profile", chat.Patch{Profile: &other}},
		{"directory", chat.Patch{Dir: &dir}},
	} {
		_, err := a.c.Chat.Update(a.ctx, a.user, id, tc.p)
		if apperr.KindOf(err) != apperr.Invalid || !strings.Contains(err.Error(), "fixed when the chat was created") {
			t.Errorf("changing the %s: %v", tc.name, err)
		}
	}
	turbo, plan := store.AgentMode("turbo"), store.ModePlan
	if _, err := a.c.Chat.Update(a.ctx, a.user, id, chat.Patch{AgentMode: &turbo}); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("mode turbo: %v", err)
	}
	ch, err := a.c.Chat.Update(a.ctx, a.user, id, chat.Patch{AgentMode: &plan, Dir: &same})
	if err != nil || ch.Agent.Mode != store.ModePlan || ch.Agent.Dir != same || *ch.Agent.Profile != a.profile {
		t.Errorf("mode plan: %+v %v", ch.Agent, err)
	}

	var view api.ChatView
	a.call("Chats.Get", &view, id)
	if view.Kind != store.ChatAgent || view.Agent == nil || view.Agent.ProfileName != "Bag End" || view.Agent.Host != "frodo@bag-end:2222" ||
		view.Agent.Mode != store.ModePlan || view.Agent.Dir != same || view.Agent.RewoundAt != nil {
		t.Errorf("view %+v agent %+v", view, view.Agent)
	}
	r := a.c.Dispatcher.Call(context.Background(), api.Caller{UserID: int64(a.user), Admin: true, Owner: true}, "Chats.Update",
		mustJSON(t, []any{id, map[string]any{"agent": map[string]any{"dir": "/etc"}}}))
	if r.Error == nil || r.Error.Kind != apperr.Invalid {
		t.Errorf("Chats.Update moving the directory: %+v", r.Error)
	}

	a.llm.Enqueue(fakellm.Stream("Plain."))
	p := a.send(0, "A plain chat")
	a.wait(p.Chat.ID)
	if _, err := a.c.Chat.Update(a.ctx, a.user, p.Chat.ID, chat.Patch{AgentMode: &plan}); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("a plain chat's mode: %v", err)
	}
	a.call("Chats.Get", &view, p.Chat.ID)
	if view.Kind != store.ChatPlain || view.Agent != nil {
		t.Errorf("plain view %+v", view)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Regenerating, editing or switching versions in an agent chat changes
// the transcript's path, never the machine: the chat is stamped and the reply's agent is told, so its
// harness can warn; a plain chat is not stamped.
func TestRewindStampsAnAgentChat(t *testing.T) {
	a := setupAgent(t)
	a.llm.Enqueue(fakellm.Stream("Hello."))
	turn := a.newAgentChat(store.ModeEdit, "Hi")
	id := turn.Chat.ID
	a.wait(id)
	if seen := a.agent.seen(); seen[0].Agent.RewoundAt != nil {
		t.Fatal("a first reply reads as rewound")
	}
	for _, step := range []struct {
		name string
		do   func() error
	}{
		{"regenerate", func() error { _, err := a.c.Chat.Regenerate(a.ctx, a.user, id); return err }},
		{"edit", func() error { _, err := a.c.Chat.Edit(a.ctx, a.user, turn.User.ID, "Hi again", nil); return err }},
	} {
		a.llm.Enqueue(fakellm.Stream("Again."))
		before := time.Now().UnixMilli()
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		a.wait(id)
		seen := a.agent.seen()
		if r := seen[len(seen)-1].Agent.RewoundAt; r == nil || *r < before {
			t.Errorf("%s: the agent saw rewoundAt %v", step.name, r)
		}
		ch, _ := a.c.DB.ChatByID(context.Background(), a.user, id)
		if ch.Agent.RewoundAt == nil || *ch.Agent.RewoundAt < before {
			t.Errorf("%s: the chat's rewoundAt %v", step.name, ch.Agent.RewoundAt)
		}
	}
	// Switching back to the first version changes the path, not the
	// machine: stamped too.
	before := time.Now().UnixMilli()
	if _, err := a.c.Chat.SwitchVersion(a.ctx, a.user, turn.User.ID); err != nil {
		t.Fatal(err)
	}
	if ch, _ := a.c.DB.ChatByID(context.Background(), a.user, id); ch.Agent.RewoundAt == nil || *ch.Agent.RewoundAt < before {
		t.Errorf("switch: the chat's rewoundAt %v", ch.Agent.RewoundAt)
	}
	a.llm.Enqueue(fakellm.Stream("Plain."), fakellm.Stream("Again."))
	p := a.send(0, "A plain chat")
	a.wait(p.Chat.ID)
	if _, err := a.c.Chat.Regenerate(a.ctx, a.user, p.Chat.ID); err != nil {
		t.Fatal(err)
	}
	a.wait(p.Chat.ID)
	if ch, _ := a.c.DB.ChatByID(context.Background(), a.user, p.Chat.ID); ch.Agent.RewoundAt != nil {
		t.Error("a plain chat was stamped rewound")
	}
}

// A plan ends the turn (the round after it offers no tools); carrying it
// out switches the chat to Edit — from Plan, and from Auto too — and
// sends it back quoted and attributed as the model's, the new reply
// reading Edit.
func TestCarryOutPlan(t *testing.T) {
	a := setupAgent(t)
	plan := "1. Build with `make`\n\n2. Test <it>"
	args, _ := json.Marshal(map[string]string{"plan": plan})
	a.llm.Enqueue(
		fakellm.NewStream().Content("Planning.").ToolCall(0, "c1", "plan_submit", string(args)).Finish("tool_calls").Reply(),
		fakellm.Stream("That is my plan."))
	turn := a.newAgentChat(store.ModePlan, "Plan the build")
	id := turn.Chat.ID
	a.wait(id)
	if a.offered() != nil {
		t.Errorf("the round after the plan offered %v", a.offered())
	}
	reply := a.last(id)
	if reply.Status != store.StatusFinal || !strings.HasSuffix(reply.Content, "That is my plan.") {
		t.Fatalf("reply %s %q", reply.Status, reply.Content)
	}

	want := chat.CarryOutIntro + "\n\n> 1. Build with `make`\n>\n> 2. Test <it>"
	for _, from := range []store.AgentMode{store.ModePlan, store.ModeAuto} {
		if _, err := a.c.Chat.Update(a.ctx, a.user, id, chat.Patch{AgentMode: &from}); err != nil {
			t.Fatal(err)
		}
		a.llm.Enqueue(fakellm.Stream("On it."))
		got, err := a.c.Chat.CarryOutPlan(a.ctx, a.user, reply.ID)
		if err != nil {
			t.Fatalf("from %s: %v", from, err)
		}
		a.wait(id)
		if got.Chat.Agent.Mode != store.ModeEdit || got.User.Content != want {
			t.Errorf("from %s: mode %s, turn %q", from, got.Chat.Agent.Mode, got.User.Content)
		}
		seen := a.agent.seen()
		if m := seen[len(seen)-1].Agent.Mode; m != store.ModeEdit {
			t.Errorf("from %s: the reply read mode %s", from, m)
		}
		msgs, _ := a.lastReplyRequest()["messages"].([]any)
		if last, _ := msgs[len(msgs)-1].(map[string]any); last["content"] != want {
			t.Errorf("from %s: the request ends with %v", from, last)
		}
	}

	if _, err := a.c.Chat.CarryOutPlan(a.ctx, a.user, turn.User.ID); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("a user turn carried out: %v", err)
	}
	last := a.last(id)
	if _, err := a.c.Chat.CarryOutPlan(a.ctx, a.user, last.ID); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("a reply without a plan carried out: %v", err)
	}
}

// The facade: a new agent chat and its mode need agent.use, which the
// default baseline does not hold.
func TestAgentChatNeedsAgentUse(t *testing.T) {
	a := setupAgent(t)
	ctx := context.Background()
	sam, err := a.c.DB.CreateUser(ctx, store.NewUser{Username: "sam", DisplayName: "Sam"})
	if err != nil {
		t.Fatal(err)
	}
	samProfile := a.addProfile(ids.UserID(sam.ID), "Sam's")
	r := a.c.Dispatcher.Call(ctx, api.Caller{UserID: sam.ID}, "Chats.Send", mustJSON(t, []any{map[string]any{
		"modelId": a.model, "content": "hi", "agent": map[string]any{"profile": samProfile, "dir": "/", "mode": "auto"}}}))
	if r.Error == nil || r.Error.Kind != apperr.Forbidden || !strings.Contains(r.Error.Message, "agent.use") {
		t.Errorf("Send of an agent chat without agent.use: %+v", r.Error)
	}
	r = a.c.Dispatcher.Call(ctx, api.Caller{UserID: sam.ID}, "Chats.CarryOutPlan", mustJSON(t, []any{1}))
	if r.Error == nil || r.Error.Kind != apperr.Forbidden {
		t.Errorf("CarryOutPlan without agent.use: %+v", r.Error)
	}
}

// The agent's part of the harness reaches an agent chat's system message
// (agentContext), with the rewind's warning once the chat was rewound; a
// plain chat's gets none of it (the fragments are gated on the agent's
// tools being offered).
func TestAgentHarnessReachesTheSystemMessage(t *testing.T) {
	a := setupAgent(t)
	system := func() string {
		t.Helper()
		msgs, _ := a.lastReplyRequest()["messages"].([]any)
		first, _ := msgs[0].(map[string]any)
		if first["role"] != "system" {
			t.Fatalf("no system message: %v", first)
		}
		s, _ := first["content"].(string)
		return s
	}
	where := "You are working on the host frodo@bag-end:2222 over SSH, in the project directory /home/frodo/my project."
	a.llm.Enqueue(fakellm.Stream("Hello."))
	turn := a.newAgentChat(store.ModeEdit, "Hi")
	a.wait(turn.Chat.ID)
	if s := system(); !strings.Contains(s, where) || strings.Contains(s, "was rewound") {
		t.Errorf("first reply's system message:\n%s", s)
	}
	a.llm.Enqueue(fakellm.Stream("Again."))
	if _, err := a.c.Chat.Regenerate(a.ctx, a.user, turn.Chat.ID); err != nil {
		t.Fatal(err)
	}
	a.wait(turn.Chat.ID)
	if s := system(); !strings.Contains(s, where) || !strings.Contains(s, "This conversation was rewound on The transcript was rewound.") {
		t.Errorf("after a regeneration:\n%s", s)
	}
	a.llm.Enqueue(fakellm.Stream("Plain."))
	p := a.send(0, "A plain chat")
	a.wait(p.Chat.ID)
	msgs, _ := a.lastReplyRequest()["messages"].([]any)
	if b, _ := json.Marshal(msgs); strings.Contains(string(b), "over SSH") {
		t.Errorf("a plain chat's request: %s", b)
	}
}

// A new agent chat on another person's profile is not found, and nothing
// is stored, even when the agent's own check lets it by: the store checks
// the profile's owner in the transaction that inserts the chat.
func TestAgentChatOnAnothersProfile(t *testing.T) {
	a := setupAgent(t)
	ctx := context.Background()
	sam, err := a.c.DB.CreateUser(ctx, store.NewUser{Username: "sam", DisplayName: "Sam"})
	if err != nil {
		t.Fatal(err)
	}
	theirs := a.addProfile(ids.UserID(sam.ID), "Sam's")
	_, err = a.c.Chat.Send(a.ctx, a.user, chat.SendInput{ModelID: a.model, Content: "Build it",
		Agent: &chat.AgentInput{Profile: theirs, Dir: "/srv", Mode: store.ModeAuto}})
	if apperr.KindOf(err) != apperr.NotFound {
		t.Errorf("an agent chat on Sam's profile: %v", err)
	}
	if list, _ := a.c.DB.ListChats(ctx, a.user, store.ChatFilter{}); len(list) != 0 {
		t.Errorf("%d chats stored", len(list))
	}
	// Update compares a profile with the chat's own, and reads nothing.
	a.llm.Enqueue(fakellm.Stream("Hello."))
	turn := a.newAgentChat(store.ModeEdit, "Hi")
	a.wait(turn.Chat.ID)
	r := a.c.Dispatcher.Call(ctx, api.Caller{UserID: int64(a.user), Admin: true, Owner: true}, "Chats.Update",
		mustJSON(t, []any{turn.Chat.ID, map[string]any{"profile": theirs}}))
	if r.Error == nil || r.Error.Kind != apperr.Invalid || strings.Contains(r.Error.Message, "Sam") {
		t.Errorf("Chats.Update naming Sam's profile: %+v", r.Error)
	}
}

// The agent as core builds it (its policy table and its ask_user and
// plan_submit, which need no host), through the chat service and the
// loop: in Plan mode a command is refused and three questions are one
// card whose answers reach ask_user; the plan ends the turn; carrying it
// out switches to Edit (plan_submit no longer offered); in Manual a
// command asks first, and a declined one never reaches the host.
func TestRealAgentPlansAndAsks(t *testing.T) {
	e := setup(t)
	e.toolsOn(t, store.Capabilities{Tools: true})
	if _, err := e.c.Tools.SetSettings(context.Background(), toolsFamilies(false, false)); err != nil {
		t.Fatal(err)
	}
	ctx := auth.WithCaller(context.Background(), auth.Caller{User: e.user, Perms: auth.NewSet(true)})
	prof, err := e.c.Agent.CreateProfile(ctx, e.user, agent.ProfileInput{Name: "Bag End", Host: "bag-end.invalid", Port: 22,
		Username: "frodo", Auth: store.AuthKey})
	if err != nil {
		t.Fatal(err)
	}
	questions := `{"questions":[{"question":"Which branch?","options":["main","dev"]},{"question":"Run the tests?"},{"question":"<b>Deploy</b>?"}]}`
	plan := "1. Build\n2. Test"
	planArgs, _ := json.Marshal(map[string]string{"plan": plan})
	e.llm.Enqueue(
		fakellm.NewStream().ToolCall(0, "c1", "ask_user", questions).ToolCall(1, "c2", "shell_run", `{"command":"rm -rf /"}`).Finish("tool_calls").Reply(),
		fakellm.NewStream().ToolCall(0, "c3", "plan_submit", string(planArgs)).Finish("tool_calls").Reply(),
		fakellm.Stream("Build, then test."))
	turn, err := e.c.Chat.Send(ctx, e.user, chat.SendInput{ModelID: e.model, Content: "Plan the build",
		Agent: &chat.AgentInput{Profile: prof.ID, Dir: "/home/frodo/project", Mode: store.ModePlan}})
	if err != nil {
		t.Fatal(err)
	}
	id := turn.Chat.ID
	a := &agentEnv{env: e, ctx: ctx}
	card := a.card(id, "")
	var keys []string
	for _, it := range card.Items {
		keys = append(keys, string(it.Kind)+":"+it.Text)
	}
	if want := []string{"question:Which branch?", "question:Run the tests?", "question:<b>Deploy</b>?"}; card.Kind != generation.AskQuestions || !slices.Equal(keys, want) {
		t.Fatalf("card %s %v, want %v", card.Kind, keys, want)
	}
	ans := generation.Answer{ID: card.ID, Items: map[string]generation.Reply{}}
	for i, text := range []string{"dev", "yes", "not yet"} {
		ans.Items[card.Items[i].Key] = generation.Reply{Text: text}
	}
	if err := e.c.Chat.Answer(ctx, e.user, turn.Assistant.ID, ans); err != nil {
		t.Fatal(err)
	}
	e.wait(id)
	reply := e.last(id)
	results := map[string]store.Part{}
	for _, p := range reply.Parts() {
		if p.Kind == store.PartToolResult {
			results[p.CallID] = p
		}
	}
	if r := results["c1"]; r.Error || !strings.Contains(r.Text, "Question: Which branch?\nAnswer: dev") || !strings.Contains(r.Text, "Answer: not yet") {
		t.Errorf("ask_user's result %+v", r)
	}
	if r := results["c2"]; !r.Error || !strings.HasPrefix(r.Text, "Plan mode only looks") {
		t.Errorf("shell_run in Plan mode %+v", r)
	}
	if r := results["c3"]; r.Error {
		t.Errorf("plan_submit's result %+v", r)
	}
	if reply.Status != store.StatusFinal || e.offered() != nil {
		t.Errorf("reply %s; the last round offered %v", reply.Status, e.offered())
	}

	e.llm.Enqueue(fakellm.Stream("On it."))
	carried, err := e.c.Chat.CarryOutPlan(ctx, e.user, reply.ID)
	if err != nil {
		t.Fatal(err)
	}
	e.wait(id)
	if carried.Chat.Agent.Mode != store.ModeEdit || carried.User.Content != chat.CarryOutIntro+"\n\n> 1. Build\n> 2. Test" {
		t.Errorf("carried out: mode %s, turn %q", carried.Chat.Agent.Mode, carried.User.Content)
	}
	if names := e.offered(); slices.Contains(names, "plan_submit") || !slices.Contains(names, "shell_run") {
		t.Errorf("in Edit the reply was offered %v", names)
	}

	manual := store.ModeManual
	if _, err := e.c.Chat.Update(ctx, e.user, id, chat.Patch{AgentMode: &manual}); err != nil {
		t.Fatal(err)
	}
	e.llm.Enqueue(fakellm.NewStream().ToolCall(0, "c4", "shell_run", `{"command":"make","cwd":"src"}`).Finish("tool_calls").Reply(),
		fakellm.Stream("As you wish."))
	next, err := e.c.Chat.Send(ctx, e.user, chat.SendInput{ChatID: id, Content: "Build it"})
	if err != nil {
		t.Fatal(err)
	}
	card = a.card(id, card.ID)
	if len(card.Items) != 1 || card.Items[0].Kind != generation.ItemApprove || card.Items[0].Text != "shell_run: make\nin src" {
		t.Fatalf("approval card %+v", card)
	}
	if err := e.c.Chat.Answer(ctx, e.user, next.Assistant.ID, generation.Answer{ID: card.ID,
		Items: map[string]generation.Reply{card.Items[0].Key: {Approve: false, Text: "not now"}}}); err != nil {
		t.Fatal(err)
	}
	e.wait(id)
	for _, p := range e.last(id).Parts() {
		if p.Kind == store.PartToolResult && p.Text != "The person declined this call. Their note: not now" {
			t.Errorf("declined call's result %+v", p)
		}
	}
}

// An agent chat's replies are offered their tools even when the chat's
// tools switch was turned off (by a call, or before the page hid it):
// without them the agent could not act.
func TestAgentChatIgnoresToolsOff(t *testing.T) {
	a := setupAgent(t)
	a.llm.Enqueue(fakellm.Stream("Hello."), fakellm.Stream("Again."))
	turn := a.newAgentChat(store.ModeAuto, "Hi")
	id := turn.Chat.ID
	a.wait(id)
	off := true
	if _, err := a.c.Chat.Update(a.ctx, a.user, id, chat.Patch{ToolsOff: &off}); err != nil {
		t.Fatal(err)
	}
	n := len(a.llm.Requests())
	if _, err := a.c.Chat.Send(a.ctx, a.user, chat.SendInput{ChatID: id, ModelID: a.model, Content: "Once more"}); err != nil {
		t.Fatal(err)
	}
	a.wait(id)
	reqs := a.llm.Requests()
	if len(reqs) <= n {
		t.Fatal("no request for the second turn")
	}
	if body := string(reqs[len(reqs)-1].Body); !strings.Contains(body, `"shell_run"`) {
		t.Errorf("the agent chat's reply was offered no shell_run after tools off: %.400s", body)
	}
}
