package chat

import (
	"context"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// Versions returns the versions (siblings, oldest first, itself
// included) of each message of list that has more than one.
func (s *Service) Versions(ctx context.Context, user ids.UserID, chatID ids.ChatID, list []ids.MessageID) (map[ids.MessageID][]ids.MessageID, error) {
	v, err := s.db.Versions(ctx, user, chatID, list)
	return v, storeErr(err, "chat")
}

// SwitchVersion makes msg's branch (its newest) the chat's chosen path:
// what the transcript shows, the next request carries and the next turn
// follows. Refused while a reply is being written. In an agent chat the
// machine stays as the other branch left it: the chat is stamped rewound,
// as an edit stamps it, so the page and the next reply's harness say so.
func (s *Service) SwitchVersion(ctx context.Context, user ids.UserID, msg ids.MessageID) (ids.ChatID, error) {
	m, err := s.db.MessageByID(ctx, user, msg)
	if err != nil {
		return 0, storeErr(err, "message")
	}
	defer s.lockChat(m.ChatID)()
	if err := s.idle(ctx, user, m.ChatID); err != nil {
		return 0, err
	}
	if _, err := s.db.SwitchVersion(ctx, user, msg); err != nil {
		return 0, storeErr(err, "message")
	}
	if err := s.stampIfAgent(ctx, user, m.ChatID); err != nil {
		return 0, err
	}
	// "path": the chat shows other messages; its other tabs read them again.
	s.Notify(user, m.ChatID, "path")
	return m.ChatID, nil
}

// DeleteVersion deletes msg, one of several versions, with everything
// after it (its files released); the only version is refused. When it
// was on the chosen path, the path moves to a neighbouring version.
// Refused while a reply is being written.
func (s *Service) DeleteVersion(ctx context.Context, user ids.UserID, msg ids.MessageID) (ids.ChatID, error) {
	m, err := s.db.MessageByID(ctx, user, msg)
	if err != nil {
		return 0, storeErr(err, "message")
	}
	defer s.lockChat(m.ChatID)()
	if err := s.idle(ctx, user, m.ChatID); err != nil {
		return 0, err
	}
	sib, err := s.db.Versions(ctx, user, m.ChatID, []ids.MessageID{msg})
	if err != nil {
		return 0, storeErr(err, "chat")
	}
	if len(sib[msg]) < 2 {
		return 0, apperr.New(apperr.Conflict, "this is the only version; it cannot be deleted on its own")
	}
	if _, err := s.db.DeleteVersion(ctx, user, msg); err != nil {
		return 0, storeErr(err, "message")
	}
	if err := s.stampIfAgent(ctx, user, m.ChatID); err != nil {
		return 0, err
	}
	// "path": the chat shows other messages; its other tabs read them again.
	s.Notify(user, m.ChatID, "path")
	return m.ChatID, nil
}

// stampIfAgent stamps an agent chat rewound (its path changed; the
// machine did not).
func (s *Service) stampIfAgent(ctx context.Context, user ids.UserID, chatID ids.ChatID) error {
	chat, err := s.db.ChatByID(ctx, user, chatID)
	if err != nil {
		return storeErr(err, "chat")
	}
	if chat.Kind != store.ChatAgent {
		return nil
	}
	_, err = s.db.UpdateChat(ctx, user, chatID, store.ChatPatch{Rewound: true})
	return storeErr(err, "chat")
}
