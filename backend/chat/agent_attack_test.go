package chat_test

import (
	"testing"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/fakellm"
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
