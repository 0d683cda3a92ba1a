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
	return s.movePath(ctx, user, msg, func(ids.ChatID) error {
		_, err := s.db.SwitchVersion(ctx, user, msg)
		return storeErr(err, "message")
	})
}

// DeleteVersion deletes msg, one of several versions, with everything
// after it (its files released); the only version is refused. When it
// was on the chosen path, the path moves to a neighbouring version.
// Refused while a reply is being written.
func (s *Service) DeleteVersion(ctx context.Context, user ids.UserID, msg ids.MessageID) (ids.ChatID, error) {
	return s.movePath(ctx, user, msg, func(chatID ids.ChatID) error {
		sib, err := s.db.Versions(ctx, user, chatID, []ids.MessageID{msg})
		if err != nil {
			return storeErr(err, "chat")
		}
		if len(sib[msg]) < 2 {
			return apperr.New(apperr.Conflict, "this is the only version; it cannot be deleted on its own")
		}
		_, err = s.db.DeleteVersion(ctx, user, msg)
		return storeErr(err, "message")
	})
}

// movePath runs change, which moves the chosen path of msg's chat, under
// the chat's lock once no reply is being written; then an agent chat is
// stamped rewound and the chat's tabs are told its path moved ("path":
// they read its messages again).
func (s *Service) movePath(ctx context.Context, user ids.UserID, msg ids.MessageID, change func(ids.ChatID) error) (ids.ChatID, error) {
	m, err := s.db.MessageByID(ctx, user, msg)
	if err != nil {
		return 0, storeErr(err, "message")
	}
	defer s.lockChat(m.ChatID)()
	if err := s.idle(ctx, user, m.ChatID); err != nil {
		return 0, err
	}
	if err := change(m.ChatID); err != nil {
		return 0, err
	}
	if err := s.stampIfAgent(ctx, user, m.ChatID); err != nil {
		return 0, err
	}
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
