package store

import (
	"context"
	"fmt"

	"github.com/llembas/lembas/backend/ids"
)

// ReopenMessage puts an ended reply back into StatusStreaming so that it can
// be continued. Only a reply that was cut off, stopped or interrupted can be
// reopened; it leaves the search index until it ends again.
func (db *DB) ReopenMessage(ctx context.Context, user ids.UserID, id ids.MessageID) (Message, error) {
	res, err := db.w.ExecContext(ctx, `
		UPDATE messages SET status = 'streaming', error = '', updated_at = ?
		WHERE id = ? AND role = 'assistant' AND status IN ('length', 'stopped', 'interrupted')
		  AND chat_id IN (SELECT id FROM chats WHERE user_id = ?)`, nowMillis(), id, user)
	if err != nil {
		return Message{}, fmt.Errorf("reopen message %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		if _, err := db.MessageByID(ctx, user, id); err != nil {
			return Message{}, err
		}
		return Message{}, fmt.Errorf("message %d cannot be continued: %w", id, ErrConflict)
	}
	return db.MessageByID(ctx, user, id)
}
