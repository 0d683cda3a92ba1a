package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/llembas/lembas/backend/ids"
)

// Compaction is a chat's summary of its earlier turns (issue 16): in
// requests, Summary stands for the chosen path's turns up to and including
// Through, which stay stored and visible.
type Compaction struct {
	Summary string
	Through ids.MessageID
	At      int64
}

// ChatCompaction returns the chat's compaction, or nil when it has none
// or when its message is no longer on the chat's chosen path (a version
// switch, a delete): compacted_through is a plain id, validated here on
// every read, never a foreign key, and so is the message's age: an id
// can be reused.
func (db *DB) ChatCompaction(ctx context.Context, user ids.UserID, chat ids.ChatID) (*Compaction, error) {
	var c Compaction
	var through, at sql.NullInt64
	err := prepared{db}.QueryRowContext(ctx,
		`SELECT compact_summary, compacted_through, compacted_at FROM chats WHERE id = ? AND user_id = ?`,
		chat, user).Scan(&c.Summary, &through, &at)
	if err == sql.ErrNoRows {
		return nil, fmt.Errorf("chat %d: %w", chat, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read compaction of chat %d: %w", chat, err)
	}
	if !through.Valid || c.Summary == "" {
		return nil, nil
	}
	c.Through, c.At = ids.MessageID(through.Int64), at.Int64
	// Message ids are reused once the newest rows are deleted (a rewind):
	// a message made after the compaction is not the one it reached.
	var made int64
	err = prepared{db}.QueryRowContext(ctx, `SELECT created_at FROM messages WHERE id = ? AND chat_id = ?`,
		c.Through, chat).Scan(&made)
	if err == sql.ErrNoRows || (err == nil && made > c.At) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read compaction of chat %d: %w", chat, err)
	}
	on, err := db.OnPath(ctx, user, chat, c.Through)
	if err != nil || !on {
		return nil, err
	}
	return &c, nil
}

// OnPath reports whether message id is on the chat's chosen path (the
// path WalkPath walks). A message's parent is older than it, so the walk
// stops at the first id not above id.
func (db *DB) OnPath(ctx context.Context, user ids.UserID, chat ids.ChatID, id ids.MessageID) (bool, error) {
	found := false
	err := db.WalkPath(ctx, user, chat, func(e PathEntry) bool {
		found = e.ID == id
		return e.ID > id
	})
	return found, err
}

// SetCompaction stores the chat's compaction (nil: none, the full turns
// are sent again).
func (db *DB) SetCompaction(ctx context.Context, user ids.UserID, chat ids.ChatID, c *Compaction) error {
	summary, through, at := "", sql.NullInt64{}, sql.NullInt64{}
	if c != nil {
		summary = c.Summary
		through = sql.NullInt64{Int64: int64(c.Through), Valid: true}
		at = sql.NullInt64{Int64: c.At, Valid: true}
	}
	res, err := db.w.ExecContext(ctx,
		`UPDATE chats SET compact_summary = ?, compacted_through = ?, compacted_at = ? WHERE id = ? AND user_id = ?`,
		summary, through, at, chat, user)
	if err != nil {
		return fmt.Errorf("store compaction of chat %d: %w", chat, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("chat %d: %w", chat, ErrNotFound)
	}
	return nil
}

// CompactionStamp returns when the chat's compaction was stored (0: it
// has none), read before a new summary is asked for: SetCompactionIf
// stores the summary only if it is still the same.
func (db *DB) CompactionStamp(ctx context.Context, user ids.UserID, chat ids.ChatID) (int64, error) {
	var at sql.NullInt64
	err := prepared{db}.QueryRowContext(ctx, `SELECT compacted_at FROM chats WHERE id = ? AND user_id = ?`, chat, user).Scan(&at)
	if err == sql.ErrNoRows {
		return 0, fmt.Errorf("chat %d: %w", chat, ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("read compaction of chat %d: %w", chat, err)
	}
	return at.Int64, nil
}

// MessageMade returns when message id of the chat was made: with its
// id, it names the message (an id is reused once the newest rows are
// deleted).
func (db *DB) MessageMade(ctx context.Context, user ids.UserID, chat ids.ChatID, id ids.MessageID) (int64, error) {
	var made int64
	err := prepared{db}.QueryRowContext(ctx, `SELECT m.created_at FROM messages m JOIN chats c ON c.id = m.chat_id
		WHERE m.id = ? AND m.chat_id = ? AND c.user_id = ?`, id, chat, user).Scan(&made)
	if err == sql.ErrNoRows {
		return 0, fmt.Errorf("message %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("read message %d: %w", id, err)
	}
	return made, nil
}

// SetCompactionIf stores c when nothing changed while its summary was
// being written (the chat's lock is not held that long): the chat's
// compaction is still the one stamped was (CompactionStamp; 0: none), and
// c.Through is still the message made at made (MessageMade, read with
// the turns). Otherwise ErrConflict: another summary or an Undo came
// meanwhile, or the message was deleted with its version and its id
// reused by a newer message, which the summary would then stand for.
func (db *DB) SetCompactionIf(ctx context.Context, user ids.UserID, chat ids.ChatID, c Compaction, was, made int64) error {
	res, err := db.w.ExecContext(ctx,
		`UPDATE chats SET compact_summary = ?, compacted_through = ?, compacted_at = ?
		WHERE id = ? AND user_id = ? AND COALESCE(compacted_at, 0) = ?
			AND EXISTS (SELECT 1 FROM messages WHERE id = ? AND chat_id = ? AND created_at = ?)`,
		c.Summary, int64(c.Through), c.At, chat, user, was, int64(c.Through), chat, made)
	if err != nil {
		return fmt.Errorf("store compaction of chat %d: %w", chat, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		if _, err := db.CompactionStamp(ctx, user, chat); err != nil {
			return err
		}
		return fmt.Errorf("chat %d changed while its summary was written: %w", chat, ErrConflict)
	}
	return nil
}
