package store

import (
	"context"
	"fmt"

	"github.com/llembas/lembas/backend/ids"
)

// PathIDs returns the ids of the chat's chosen path (the messages ChatPath
// returns), oldest first: ids only, so that an export of a very long chat
// can read its messages a batch at a time (MessagesByIDs) in order.
func (db *DB) PathIDs(ctx context.Context, user ids.UserID, chat ids.ChatID) ([]ids.MessageID, error) {
	if err := ownsChat(ctx, db.r, user, chat); err != nil {
		return nil, err
	}
	rows, err := db.r.QueryContext(ctx, chosenPath+`
		SELECT m.id FROM path JOIN messages m ON m.id = path.id
		WHERE m.chat_id = ?
		ORDER BY path.depth DESC`, chat, chat)
	if err != nil {
		return nil, fmt.Errorf("read path of chat %d: %w", chat, err)
	}
	defer rows.Close()
	var out []ids.MessageID
	for rows.Next() {
		var id ids.MessageID
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("read path of chat %d: %w", chat, err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read path of chat %d: %w", chat, err)
	}
	return out, nil
}

// MessagesByIDs reads the listed messages of one of user's chats, with
// their reasoning, oldest first. Ids that are not the chat's (or no longer
// exist) are left out.
func (db *DB) MessagesByIDs(ctx context.Context, user ids.UserID, chat ids.ChatID, list []ids.MessageID) ([]Message, error) {
	if len(list) == 0 {
		return nil, nil
	}
	args := make([]any, 0, len(list)+2)
	args = append(args, chat, user)
	for _, id := range list {
		args = append(args, id)
	}
	rows, err := db.r.QueryContext(ctx, `
		SELECT `+messageColumns+` FROM messages m JOIN chats c ON c.id = m.chat_id
		WHERE m.chat_id = ? AND c.user_id = ? AND m.id IN (`+placeholders(len(list))+`)
		ORDER BY m.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("read messages of chat %d: %w", chat, err)
	}
	msgs, err := scanMessages(rows)
	if err != nil {
		return nil, fmt.Errorf("read messages of chat %d: %w", chat, err)
	}
	return msgs, nil
}
