package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/llembas/lembas/backend/ids"
)

// leafSQL is the chosen path's last message of the chat aliased c: its
// leaf_id while that is one of its messages, else its newest message (a
// chat from before versions, or one whose leaf went), NULL when it has
// none.
const leafSQL = `COALESCE(
	(SELECT lm.id FROM messages lm WHERE lm.id = c.leaf_id AND lm.chat_id = c.id),
	(SELECT lm.id FROM messages lm WHERE lm.chat_id = c.id ORDER BY lm.id DESC LIMIT 1))`

// chosenPath is a common table expression, path(id, depth): the chat's
// chosen path from its leaf (depth 0) back to its first message. Its one
// parameter is the chat's id; a query using it still checks m.chat_id (a
// stale leaf_id is read as the newest message, never another chat's). A
// parent always has a smaller id than its child, so the walk ends.
const chosenPath = `WITH RECURSIVE path(id, depth) AS (
			SELECT ` + leafSQL + `, 0 FROM chats c WHERE c.id = ?
			UNION ALL
			SELECT m.parent_id, path.depth + 1 FROM messages m JOIN path ON m.id = path.id
			WHERE m.parent_id IS NOT NULL
		)`

// leafOf returns the chat's leaf (0: the chat has no message).
func leafOf(ctx context.Context, q queryRower, chat ids.ChatID) (ids.MessageID, error) {
	var leaf sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT `+leafSQL+` FROM chats c WHERE c.id = ?`, chat).Scan(&leaf)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("read leaf of chat %d: %w", chat, err)
	}
	return ids.MessageID(leaf.Int64), nil
}

// Versions returns, for each message of list in one of user's chats that
// has siblings (the messages of the same role sharing its parent: the
// versions a regeneration or an edit made), every sibling's id, itself
// included, oldest first. A message with no sibling is absent.
func (db *DB) Versions(ctx context.Context, user ids.UserID, chat ids.ChatID, list []ids.MessageID) (map[ids.MessageID][]ids.MessageID, error) {
	if err := ownsChat(ctx, db.r, user, chat); err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, nil
	}
	b, _ := json.Marshal(list)
	rows, err := db.r.QueryContext(ctx, `
		SELECT m.id, s.id FROM messages m
		JOIN messages s ON s.chat_id = m.chat_id AND s.parent_id IS m.parent_id AND s.role = m.role
		WHERE m.chat_id = ? AND m.id IN (SELECT value FROM json_each(?))
		ORDER BY m.id, s.id`, chat, string(b))
	if err != nil {
		return nil, fmt.Errorf("read versions in chat %d: %w", chat, err)
	}
	defer rows.Close()
	out := map[ids.MessageID][]ids.MessageID{}
	for rows.Next() {
		var m, s ids.MessageID
		if err := rows.Scan(&m, &s); err != nil {
			return nil, fmt.Errorf("read versions in chat %d: %w", chat, err)
		}
		out[m] = append(out[m], s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read versions in chat %d: %w", chat, err)
	}
	for id, sib := range out {
		if len(sib) < 2 {
			delete(out, id)
		}
	}
	return out, nil
}

// versionOf reads one of user's messages as a version: its chat, parent
// and role.
func versionOf(ctx context.Context, tx *sql.Tx, user ids.UserID, msg ids.MessageID) (ids.ChatID, sql.NullInt64, Role, error) {
	var chat ids.ChatID
	var parent sql.NullInt64
	var role Role
	err := tx.QueryRowContext(ctx, `
		SELECT m.chat_id, m.parent_id, m.role FROM messages m JOIN chats c ON c.id = m.chat_id
		WHERE m.id = ? AND c.user_id = ?`, msg, user).Scan(&chat, &parent, &role)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, parent, "", fmt.Errorf("message %d: %w", msg, ErrNotFound)
	}
	if err != nil {
		return 0, parent, "", fmt.Errorf("read message %d: %w", msg, err)
	}
	return chat, parent, role, nil
}

// subtreeSQL selects message ? and its descendants.
const subtreeSQL = `WITH RECURSIVE sub(id) AS (
	SELECT ?
	UNION ALL
	SELECT m.id FROM messages m JOIN sub ON m.parent_id = sub.id
)`

// newestIn returns the newest message of msg's subtree: a leaf (a child
// is always newer than its parent), the end of msg's newest branch.
func newestIn(ctx context.Context, tx *sql.Tx, msg ids.MessageID) (ids.MessageID, error) {
	var leaf ids.MessageID
	if err := tx.QueryRowContext(ctx, subtreeSQL+` SELECT max(id) FROM sub`, msg).Scan(&leaf); err != nil {
		return 0, fmt.Errorf("read branch of message %d: %w", msg, err)
	}
	return leaf, nil
}

// SwitchVersion makes the branch of one of user's messages (a version)
// the chat's chosen path: the chat's leaf becomes the newest message
// under it. It returns the chat.
func (db *DB) SwitchVersion(ctx context.Context, user ids.UserID, msg ids.MessageID) (ids.ChatID, error) {
	var chat ids.ChatID
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		var err error
		if chat, _, _, err = versionOf(ctx, tx, user, msg); err != nil {
			return err
		}
		leaf, err := newestIn(ctx, tx, msg)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE chats SET leaf_id = ? WHERE id = ?`, leaf, chat); err != nil {
			return fmt.Errorf("choose version in chat %d: %w", chat, err)
		}
		return nil
	})
	return chat, err
}

// DeleteVersion deletes one of user's messages that has siblings (a
// version) with everything after it, their attachments' files released
// once committed. The only version of a turn is ErrConflict. When the
// chosen path ran through it, the path moves to its next sibling (else
// the one before) and that one's newest branch. It returns the chat.
func (db *DB) DeleteVersion(ctx context.Context, user ids.UserID, msg ids.MessageID) (ids.ChatID, error) {
	var chat ids.ChatID
	var files []string
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		files = files[:0]
		c, parent, role, err := versionOf(ctx, tx, user, msg)
		if err != nil {
			return err
		}
		chat = c
		var sibs []ids.MessageID
		rows, err := tx.QueryContext(ctx, `SELECT id FROM messages WHERE chat_id = ? AND parent_id IS ? AND role = ? ORDER BY id`,
			chat, parent, role)
		if err != nil {
			return fmt.Errorf("read versions of message %d: %w", msg, err)
		}
		for rows.Next() {
			var id ids.MessageID
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return err
			}
			sibs = append(sibs, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(sibs) < 2 {
			return fmt.Errorf("message %d is the only version: %w", msg, ErrConflict)
		}
		leaf, err := leafOf(ctx, tx, chat)
		if err != nil {
			return err
		}
		var onPath bool
		if err := tx.QueryRowContext(ctx, subtreeSQL+` SELECT EXISTS (SELECT 1 FROM sub WHERE id = ?)`, msg, leaf).Scan(&onPath); err != nil {
			return fmt.Errorf("read branch of message %d: %w", msg, err)
		}
		var streaming bool
		if err := tx.QueryRowContext(ctx, subtreeSQL+` SELECT EXISTS (SELECT 1 FROM sub JOIN messages m ON m.id = sub.id WHERE m.status = 'streaming')`,
			msg).Scan(&streaming); err != nil {
			return fmt.Errorf("read branch of message %d: %w", msg, err)
		}
		if streaming {
			return fmt.Errorf("a reply under message %d is still streaming: %w", msg, ErrConflict)
		}
		if _, err := deleteMessagesNewestFirst(ctx, tx, &files, subtreeSQL+` SELECT id FROM sub ORDER BY id DESC`, msg); err != nil {
			return fmt.Errorf("delete version %d: %w", msg, err)
		}
		if onPath {
			i := 0
			for i < len(sibs) && sibs[i] != msg {
				i++
			}
			next := sibs[0]
			switch {
			case i+1 < len(sibs):
				next = sibs[i+1]
			case i > 0:
				next = sibs[i-1]
			}
			leaf, err := newestIn(ctx, tx, next)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE chats SET leaf_id = ? WHERE id = ?`, leaf, chat); err != nil {
				return fmt.Errorf("choose version in chat %d: %w", chat, err)
			}
		}
		return nil
	})
	if err == nil {
		db.release(files)
	}
	return chat, err
}
