package chat_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// A card approves what runs on a host, so answering it needs agent.use as
// the person holds it when answering: a reply started before the
// permission was taken away does not run the command its card asks about.
func TestAnswerNeedsAgentUseNow(t *testing.T) {
	a := setupAgent(t)
	a.llm.Enqueue(
		fakellm.NewStream().ToolCall(0, "c1", "shell_run", `{"command":"rm -rf build"}`).Finish("tool_calls").Reply(),
		fakellm.Stream("Done."))
	turn := a.newAgentChat(store.ModeManual, "Clean it")
	card := a.card(turn.Chat.ID, "")
	without := auth.WithCaller(a.ctx, auth.Caller{User: a.user, Perms: auth.NewSet(false, auth.ChatCreate)})
	if err := a.c.Chat.Answer(without, a.user, turn.Assistant.ID, approve(card)); apperr.KindOf(err) != apperr.Forbidden {
		t.Fatalf("an answer without agent.use: %v, want forbidden", err)
	}
	// The card still waits; with agent.use it is answered.
	if err := a.c.Chat.Answer(a.ctx, a.user, turn.Assistant.ID, approve(card)); err != nil {
		t.Fatal(err)
	}
	a.wait(turn.Chat.ID)
	if n := len(a.tools.ran()); n != 1 {
		t.Errorf("%d commands ran, want the one approved with agent.use", n)
	}
}

// A plan is the model's words quoted into the person's turn: its
// {{variables}} are never filled (only the harness's fragments are), its
// HTML stays text for the renderer; a plan is carried out only from its
// owner's agent chat.
func TestCarryOutPlanIsQuotedAsWritten(t *testing.T) {
	a := setupAgent(t)
	plan := "Run on {{agent_host}} at {{date}}\n<script>alert(1)</script> {{memories}}"
	args, _ := json.Marshal(map[string]string{"plan": plan})
	a.llm.Enqueue(
		fakellm.NewStream().ToolCall(0, "c1", "plan_submit", string(args)).Finish("tool_calls").Reply(),
		fakellm.Stream("That is my plan."))
	turn := a.newAgentChat(store.ModePlan, "Plan it")
	a.wait(turn.Chat.ID)
	reply := a.last(turn.Chat.ID)

	// Another person's reply is not found.
	other, err := a.c.DB.CreateUser(a.ctx, store.NewUser{Username: "sam", DisplayName: "Sam"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.c.Chat.CarryOutPlan(a.ctx, ids.UserID(other.ID), reply.ID); apperr.KindOf(err) != apperr.NotFound {
		t.Errorf("another person's plan: %v, want not found", err)
	}

	a.llm.Enqueue(fakellm.Stream("On it."))
	got, err := a.c.Chat.CarryOutPlan(a.ctx, a.user, reply.ID)
	if err != nil {
		t.Fatal(err)
	}
	a.wait(turn.Chat.ID)
	want := chat.CarryOutIntro + "\n\n> Run on {{agent_host}} at {{date}}\n> <script>alert(1)</script> {{memories}}"
	if got.User.Content != want {
		t.Errorf("turn %q, want %q", got.User.Content, want)
	}
	msgs, _ := a.lastReplyRequest()["messages"].([]any)
	if last, _ := msgs[len(msgs)-1].(map[string]any); last["content"] != want {
		t.Errorf("the request ends with %v", last)
	}
}

// A plain chat carries out no plan.
func TestCarryOutPlanInAPlainChat(t *testing.T) {
	a := setupAgent(t)
	a.llm.Enqueue(fakellm.Stream("Hello."))
	turn := a.send(0, "hi")
	a.wait(turn.Chat.ID)
	reply := a.last(turn.Chat.ID)
	_, err := a.c.Chat.CarryOutPlan(a.ctx, a.user, reply.ID)
	if apperr.KindOf(err) != apperr.Invalid || !strings.Contains(err.Error(), "agent chat") {
		t.Errorf("a plain chat's reply carried out: %v", err)
	}
}
