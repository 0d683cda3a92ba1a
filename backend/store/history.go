package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/llembas/lembas/backend/ids"
)

// PathEntry is one message of a chat's path described by its sizes, not
// its text: what deciding how much history a request can hold needs.
type PathEntry struct {
	ID     ids.MessageID
	Role   Role
	Status Status
	// Bytes is the length of the content in bytes.
	Bytes int64
	// DocBytes is the length in bytes of the text of its attached
	// documents (PDF and text files).
	DocBytes int64
	// Images is how many images are attached, ImageBytes their stored size
	// and ImagePixels their width × height, summed.
	Images      int
	ImageBytes  int64
	ImagePixels int64
}

// walkBatch is how many path entries WalkPath reads per query.
const walkBatch = 64

// WalkPath calls fn for each message of the chat's path (the messages
// ChatPath returns) from the newest back, until fn returns false. It reads
// sizes, never content, a batch at a time, so its memory does not grow with
// the chat: building a request stops where the model's context is full.
func (db *DB) WalkPath(ctx context.Context, user ids.UserID, chat ids.ChatID, fn func(PathEntry) bool) error {
	return db.WalkPathFrom(ctx, user, chat, 0, fn)
}

// WalkPathFrom is WalkPath starting at message from of the chat instead of
// its leaf (0: the leaf): the path a request will have once the
// messages after from are deleted (Regenerate builds its request before it
// deletes the old reply).
func (db *DB) WalkPathFrom(ctx context.Context, user ids.UserID, chat ids.ChatID, from ids.MessageID, fn func(PathEntry) bool) error {
	if err := ownsChat(ctx, prepared{db}, user, chat); err != nil {
		return err
	}
	var next sql.NullInt64
	var err error
	if from == 0 {
		err = prepared{db}.QueryRowContext(ctx, `SELECT `+leafSQL+` FROM chats c WHERE c.id = ?`, chat).Scan(&next)
		if err == sql.ErrNoRows {
			return nil
		}
	} else {
		err = prepared{db}.QueryRowContext(ctx, `SELECT id FROM messages WHERE id = ? AND chat_id = ?`, from, chat).Scan(&next)
		if err == sql.ErrNoRows {
			return fmt.Errorf("message %d of chat %d: %w", from, chat, ErrNotFound)
		}
	}
	if err != nil {
		return fmt.Errorf("read last message of chat %d: %w", chat, err)
	}
	for next.Valid {
		batch := make([]PathEntry, 0, walkBatch)
		var parent sql.NullInt64
		rows, err := prepared{db}.QueryContext(ctx, `
			WITH RECURSIVE path(id, depth) AS (
				SELECT ?, 0
				UNION ALL
				SELECT m.parent_id, path.depth + 1 FROM messages m JOIN path ON m.id = path.id
				WHERE m.parent_id IS NOT NULL AND path.depth + 1 < ?
			)
			SELECT m.id, m.parent_id, m.role, m.status, length(CAST(m.content AS BLOB)),
				COALESCE(SUM(CASE WHEN a.kind = 'image' THEN 0 ELSE length(CAST(a.text AS BLOB)) END), 0),
				COUNT(CASE WHEN a.kind = 'image' THEN 1 END),
				COALESCE(SUM(CASE WHEN a.kind = 'image' THEN a.size ELSE 0 END), 0),
				COALESCE(SUM(CASE WHEN a.kind = 'image' THEN a.width * a.height ELSE 0 END), 0)
			FROM path JOIN messages m ON m.id = path.id
			LEFT JOIN attachments a ON a.message_id = m.id
			WHERE m.chat_id = ?
			GROUP BY path.depth
			ORDER BY path.depth`, next.Int64, walkBatch, chat)
		if err != nil {
			return fmt.Errorf("read path of chat %d: %w", chat, err)
		}
		for rows.Next() {
			var e PathEntry
			if err := rows.Scan(&e.ID, &parent, &e.Role, &e.Status, &e.Bytes, &e.DocBytes, &e.Images, &e.ImageBytes, &e.ImagePixels); err != nil {
				rows.Close()
				return fmt.Errorf("read path of chat %d: %w", chat, err)
			}
			batch = append(batch, e)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read path of chat %d: %w", chat, err)
		}
		if len(batch) == 0 {
			return nil
		}
		for _, e := range batch {
			if !fn(e) {
				return nil
			}
		}
		next = parent // the last row's parent: where the next batch starts
	}
	return nil
}

// CountTurns counts the messages of the chat's path from one message back
// to the first that a request would carry: user turns, and replies that
// are not streaming and have content. It counts in the database, so a long
// chat costs no memory here.
func (db *DB) CountTurns(ctx context.Context, user ids.UserID, chat ids.ChatID, from ids.MessageID) (int, error) {
	if err := ownsChat(ctx, prepared{db}, user, chat); err != nil {
		return 0, err
	}
	var n int
	err := prepared{db}.QueryRowContext(ctx, `
		WITH RECURSIVE path(id) AS (
			SELECT id FROM messages WHERE id = ? AND chat_id = ?
			UNION ALL
			SELECT m.parent_id FROM messages m JOIN path ON m.id = path.id
			WHERE m.parent_id IS NOT NULL
		)
		SELECT COUNT(*) FROM path JOIN messages m ON m.id = path.id
		WHERE m.role = 'user' OR (m.role = 'assistant' AND m.status != 'streaming' AND m.content != '')`,
		from, chat).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count turns of chat %d: %w", chat, err)
	}
	return n, nil
}

// PathMessages returns the chat's messages with the given ids, oldest
// first, with their content and without reasoning (as ChatPath).
func (db *DB) PathMessages(ctx context.Context, user ids.UserID, chat ids.ChatID, list []ids.MessageID) ([]Message, error) {
	if err := ownsChat(ctx, prepared{db}, user, chat); err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, nil
	}
	b, _ := json.Marshal(list)
	rows, err := prepared{db}.QueryContext(ctx, `
		SELECT m.id, m.chat_id, m.parent_id, m.role, m.content, '', m.status, m.error,
			m.model_label, m.metrics, m.created_at, m.updated_at, m.parts
		FROM messages m
		WHERE m.chat_id = ? AND m.id IN (SELECT value FROM json_each(?))
		ORDER BY m.id`, chat, string(b))
	if err != nil {
		return nil, fmt.Errorf("read messages of chat %d: %w", chat, err)
	}
	msgs, err := scanMessages(rows)
	if err != nil {
		return nil, fmt.Errorf("read messages of chat %d: %w", chat, err)
	}
	if len(msgs) != len(list) {
		return nil, fmt.Errorf("read messages of chat %d: %d of %d found (%s): %w",
			chat, len(msgs), len(list), strings.Trim(string(b), "[]"), ErrNotFound)
	}
	return msgs, nil
}
