package chat

import (
	"context"

	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/tools"
)

// RequestFor builds the request the chat's next reply would be sent,
// without starting it, and says how many earlier turns it leaves out.
func (s *Service) RequestFor(ctx context.Context, user ids.UserID, chatID ids.ChatID) (llm.ChatRequest, int, error) {
	tgt, err := s.prepare(ctx, user, chatID)
	if err != nil {
		return llm.ChatRequest{}, 0, err
	}
	d, err := s.request(ctx, user, 0, nil, nil, tgt)
	if err != nil {
		return llm.ChatRequest{}, 0, err
	}
	return d.req, d.omitted, nil
}

// UseAgent makes agent chats run on a, their replies offered the tools of
// reg (tests replace what core built: its agent needs a host).
func (s *Service) UseAgent(a Agent, reg *tools.Service) { s.agent, s.tools = a, reg }
