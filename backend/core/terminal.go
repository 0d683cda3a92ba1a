package core

import (
	"context"
	"errors"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/events"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/terminal"
)

// newTerminal builds the terminal panel's shells: reached through the
// chat's SSH profile (or Options.TerminalDialer), open only in the
// caller's own agent chats that are not in the trash.
func (c *Core) newTerminal() *terminal.Service {
	d := c.opt.TerminalDialer
	if d == nil {
		d = terminal.DialFunc(c.dialTerminal)
	}
	return terminal.New(d, terminal.Options{Log: c.Log, Check: c.checkAgentChat})
}

// checkAgentChat says whether chat is user's agent chat, not trashed
// (NotFound otherwise, whoever's it is), while user holds agent.use and
// agent chats are on (Forbidden): the reaper ends the shells it refuses.
func (c *Core) checkAgentChat(ctx context.Context, user ids.UserID, id ids.ChatID) error {
	ch, err := c.DB.ChatByID(ctx, user, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && (ch.DeletedAt != nil || ch.Kind != store.ChatAgent) {
		return apperr.New(apperr.NotFound, "no such agent chat")
	}
	if err != nil {
		return err
	}
	// agent.use as the person holds it now: the reaper ends the shells
	// of someone it was taken from (their sockets end at the next
	// heartbeat; a shell left running would go on for the idle time).
	caller, err := c.permits.CallerOf(ctx, user)
	if err != nil {
		return err
	}
	if err := caller.Perms.Require(auth.AgentUse); err != nil {
		return err
	}
	st, err := c.Agent.Settings(ctx)
	if err != nil {
		return err
	}
	if !st.Enabled {
		return apperr.New(apperr.Forbidden, "Agent chats are turned off on this server.")
	}
	return nil
}

// dialTerminal connects to the host of user's agent chat through its SSH
// profile (agent.Service.Dial: agent chats on, the profile there, its host
// key accepted).
func (c *Core) dialTerminal(ctx context.Context, user ids.UserID, id ids.ChatID) (terminal.Conn, ids.ProfileID, error) {
	cl, ch, err := c.Agent.Dial(ctx, user, id)
	if err != nil {
		return nil, 0, err
	}
	return terminal.SSH(cl), *ch.Agent.Profile, nil
}

// chatBus is the bus as the chat service publishes on it: a chat moved to
// the trash ends its terminal at once (the reaper would find it gone
// within a minute; a shell must not outlive its chat by that much).
type chatBus struct {
	*events.Bus
	term *terminal.Service
}

func (b chatBus) Publish(ev events.Event) {
	if ce, ok := ev.Data.(chat.ChatEvent); ok && ev.Topic == "chat" && ce.Change == "trashed" {
		b.term.EndChat(ce.ChatID)
	}
	b.Bus.Publish(ev)
}
