package chat

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/generation"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// Answer answers the card user's running reply msg waits on
// (generation.Output.Pause). A card answered already, timed out or gone
// with its reply is a conflict: the page's card outlived it.
//
// In an agent chat the answer approves what runs on a host, so it needs
// agent.use as the caller in ctx holds it now: a reply started before the
// permission was taken away must not go on running what its card asks.
func (s *Service) Answer(ctx context.Context, user ids.UserID, msg ids.MessageID, a generation.Answer) error {
	m, err := s.db.MessageByID(ctx, user, msg)
	if err != nil {
		return storeErr(err, "message")
	}
	ch, err := s.db.ChatByID(ctx, user, m.ChatID)
	if err != nil {
		return storeErr(err, "chat")
	}
	if ch.Kind == store.ChatAgent {
		caller, ok := auth.CallerFrom(ctx)
		if !ok {
			return apperr.New(apperr.Forbidden, "You are not allowed to do this (%s); ask an administrator.", auth.AgentUse)
		}
		if err := caller.Perms.Require(auth.AgentUse); err != nil {
			return err
		}
	}
	err = s.gen.Answer(user, msg, a)
	if apperr.KindOf(err) == apperr.NotFound {
		// The message is the caller's, its reply no longer runs.
		return apperr.New(apperr.Conflict, "This question was already answered.")
	}
	return err
}

// PlanTool is the agent's tool whose call holds a plan (backend/agent),
// with the plan in its "plan" argument.
const PlanTool = "plan_submit"

// CarryOutIntro begins the turn that carries out a plan; the plan follows
// as a quote.
const CarryOutIntro = "Carry out this plan. It is the plan you proposed, quoted:"

// CarryOutPlan carries out the plan of reply msg (its last plan_submit
// call that did not fail): the chat switches to Edit — never Auto: the
// person approved a plan, not every command it may take — and a new turn
// sends the plan back quoted and attributed to the model, not stated as
// the person's: text that came out of a file the model read must not
// arrive with the person's authority.
func (s *Service) CarryOutPlan(ctx context.Context, user ids.UserID, msg ids.MessageID) (Turn, error) {
	m, err := s.db.MessageByID(ctx, user, msg)
	if err != nil {
		return Turn{}, storeErr(err, "message")
	}
	ch, err := s.db.ChatByID(ctx, user, m.ChatID)
	if err != nil {
		return Turn{}, storeErr(err, "chat")
	}
	if ch.Kind != store.ChatAgent {
		return Turn{}, apperr.New(apperr.Invalid, "Only an agent chat carries out plans.")
	}
	plan := planOf(m)
	if m.Role != store.RoleAssistant || plan == "" {
		return Turn{}, apperr.New(apperr.Invalid, "This message holds no plan to carry out.")
	}
	if ch.DeletedAt != nil {
		return Turn{}, apperr.New(apperr.Conflict, "this chat is in the trash; restore it first")
	}
	if s.gen.Running(ch.ID) {
		return Turn{}, apperr.New(apperr.Conflict, "a reply is still being written; stop it or wait")
	}
	edit := store.ModeEdit
	if _, err := s.db.UpdateChat(ctx, user, ch.ID, store.ChatPatch{AgentMode: &edit}); err != nil {
		return Turn{}, storeErr(err, "chat")
	}
	s.Notify(user, ch.ID, "updated")
	return s.Send(ctx, user, SendInput{ChatID: ch.ID, Content: CarryOutIntro + "\n\n" + quote(plan)})
}

// planOf is the plan of m's last plan_submit call that ran and did not
// fail ("" for none): a refused or stopped one was never submitted.
func planOf(m store.Message) string {
	parts := m.Parts()
	ran := map[string]bool{}
	for _, p := range parts {
		if p.Kind == store.PartToolResult && !p.Error {
			ran[p.CallID] = true
		}
	}
	for i := len(parts) - 1; i >= 0; i-- {
		p := parts[i]
		if p.Kind != store.PartToolCall || p.Name != PlanTool || !ran[p.CallID] {
			continue
		}
		var args struct {
			Plan string `json:"plan"`
		}
		if json.Unmarshal([]byte(p.Text), &args) == nil && strings.TrimSpace(args.Plan) != "" {
			return strings.TrimSpace(args.Plan)
		}
	}
	return ""
}

// quote makes text a Markdown block quote, line by line.
func quote(text string) string {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i, l := range lines {
		if l == "" {
			lines[i] = ">"
		} else {
			lines[i] = "> " + l
		}
	}
	return strings.Join(lines, "\n")
}
