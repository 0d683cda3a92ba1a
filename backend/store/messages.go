package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/llembas/lembas/backend/ids"
)

// ErrConflict is returned when a change collides with the row's state, such
// as editing a reply that is still streaming.
var ErrConflict = errors.New("conflict")

// Role is who a message is from.
type Role string

// The roles a message can have.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleSystem    Role = "system"
	RoleTool      Role = "tool"
)

func (r Role) valid() bool {
	switch r {
	case RoleUser, RoleAssistant, RoleSystem, RoleTool:
		return true
	}
	return false
}

// Status is where a message is in its life. Only StatusStreaming is
// temporary; the others are final states of a reply.
type Status string

// The statuses a message can have.
const (
	StatusFinal       Status = "final"
	StatusStreaming   Status = "streaming"
	StatusStopped     Status = "stopped"     // the user stopped it
	StatusError       Status = "error"       // the endpoint failed; Error says how
	StatusLength      Status = "length"      // cut off at max_tokens
	StatusInterrupted Status = "interrupted" // the process ended while it streamed
)

func (s Status) valid() bool {
	switch s {
	case StatusFinal, StatusStreaming, StatusStopped, StatusError, StatusLength, StatusInterrupted:
		return true
	}
	return false
}

// Message is one message of a chat. ParentID is the message it answers or
// follows (nil for the first).
type Message struct {
	ID         ids.MessageID
	ChatID     ids.ChatID
	ParentID   *ids.MessageID
	Role       Role
	Content    string
	Reasoning  string
	Status     Status
	Error      string
	ModelLabel string // the model's name when the reply was made, kept if the model goes
	Metrics    json.RawMessage
	CreatedAt  int64
	UpdatedAt  int64
	// layout is the parts column: how Content and Reasoning divide into
	// the reply's parts, and its other parts (see Parts, SetParts).
	layout string
	// Attachments are uploads of the chat's user bound to the message
	// when it is inserted (unbound ones of theirs only; any other id is
	// ErrNotFound). They are not read back: see AttachmentsOf.
	Attachments []ids.AttachmentID
}

// MessageUpdate is the state of a reply being generated, as the generation
// writer checkpoints it. A nil Metrics keeps the stored metrics.
type MessageUpdate struct {
	ID        ids.MessageID
	Content   string
	Reasoning string
	// Parts, when set, is the whole reply; Content and Reasoning are then
	// taken from it (JoinParts). Without it the row has no layout and
	// reads as DefaultParts.
	Parts   []Part
	Status  Status
	Error   string
	Metrics json.RawMessage
	// MarkUnread marks the chat unread with this write: a reply that ended
	// is unread from the moment its final row exists, so a reader who sees
	// its final frame knows that marking the chat read comes after.
	MarkUnread bool
}

const messageColumns = `m.id, m.chat_id, m.parent_id, m.role, m.content, m.reasoning, m.status, m.error,
	m.model_label, m.metrics, m.created_at, m.updated_at, m.parts`

func scanMessage(row interface{ Scan(...any) error }) (Message, error) {
	var m Message
	var parent sql.NullInt64
	var metrics string
	err := row.Scan(&m.ID, &m.ChatID, &parent, &m.Role, &m.Content, &m.Reasoning, &m.Status, &m.Error,
		&m.ModelLabel, &metrics, &m.CreatedAt, &m.UpdatedAt, &m.layout)
	if parent.Valid {
		p := ids.MessageID(parent.Int64)
		m.ParentID = &p
	}
	m.Metrics = json.RawMessage(metrics)
	return m, err
}

func scanMessages(rows *sql.Rows) ([]Message, error) {
	defer rows.Close()
	var out []Message
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// ownsChat reports ErrNotFound unless chat id belongs to user. Trashed chats
// still belong to their user.
func ownsChat(ctx context.Context, q queryRower, user ids.UserID, id ids.ChatID) error {
	var ok bool
	err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM chats WHERE id = ? AND user_id = ?)`, id, user).Scan(&ok)
	if err != nil {
		return fmt.Errorf("read chat %d: %w", id, err)
	}
	if !ok {
		return fmt.Errorf("chat %d: %w", id, ErrNotFound)
	}
	return nil
}

// insertMessage appends m to chat, after the chosen path's last message
// (its leaf), and bumps the chat's updated_at. The caller has checked
// ownership.
func insertMessage(ctx context.Context, tx *sql.Tx, user ids.UserID, chat ids.ChatID, m Message, now int64) (Message, error) {
	leaf, err := leafOf(ctx, tx, chat)
	if err != nil {
		return Message{}, err
	}
	var parent *ids.MessageID
	if leaf != 0 {
		parent = &leaf
	}
	return insertMessageAt(ctx, tx, user, chat, parent, false, m, now)
}

// insertMessageAt adds m to chat as a child of parent (nil: a first
// message), makes it the chat's leaf and bumps the chat's updated_at.
// parent must be a message of chat; the caller has checked ownership.
//
// A chat that never had a version keeps leaf_id NULL (its newest message
// is its leaf, and every message is on its path, which search relies
// on); branch (a version: Regenerate, Edit) stores the leaf, and from
// then on every new message does.
func insertMessageAt(ctx context.Context, tx *sql.Tx, user ids.UserID, chat ids.ChatID, parent *ids.MessageID, branch bool, m Message, now int64) (Message, error) {
	if m.Role == "" {
		m.Role = RoleUser
	}
	if m.Status == "" {
		m.Status = StatusFinal
	}
	if !m.Role.valid() {
		return Message{}, fmt.Errorf("message role %q is not one of user, assistant, system, tool", m.Role)
	}
	if !m.Status.valid() {
		return Message{}, fmt.Errorf("message status %q is not valid", m.Status)
	}
	var p sql.NullInt64
	if parent != nil {
		var ok bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM messages WHERE id = ? AND chat_id = ?)`, *parent, chat).Scan(&ok); err != nil {
			return Message{}, fmt.Errorf("read message %d: %w", *parent, err)
		}
		if !ok {
			return Message{}, fmt.Errorf("message %d of chat %d: %w", *parent, chat, ErrNotFound)
		}
		p = sql.NullInt64{Int64: int64(*parent), Valid: true}
	}
	res, err := tx.ExecContext(ctx, `
		INSERT INTO messages (chat_id, parent_id, role, content, reasoning, status, error, model_label, metrics, created_at, updated_at, parts)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		chat, p, m.Role, m.Content, m.Reasoning, m.Status, m.Error, m.ModelLabel, rawJSONText(m.Metrics), now, now, m.layout)
	if err != nil {
		return Message{}, fmt.Errorf("insert message: %w", err)
	}
	id, _ := res.LastInsertId()
	if _, err := tx.ExecContext(ctx, `UPDATE chats SET updated_at = ?, leaf_id = CASE WHEN ? OR leaf_id IS NOT NULL THEN ? END WHERE id = ?`,
		now, branch, id, chat); err != nil {
		return Message{}, fmt.Errorf("touch chat %d: %w", chat, err)
	}
	if err := bindAttachments(ctx, tx, user, ids.MessageID(id), m.Attachments); err != nil {
		return Message{}, err
	}
	return scanMessage(tx.QueryRowContext(ctx, `SELECT `+messageColumns+` FROM messages m WHERE m.id = ?`, id))
}

// AddMessage appends m to one of user's chats, as the child of the chat's
// leaf (the chosen path's last message), and makes it the leaf. An empty
// Role is user and an empty Status final; a reply about to stream is added
// with StatusStreaming.
func (db *DB) AddMessage(ctx context.Context, user ids.UserID, chat ids.ChatID, m Message) (Message, error) {
	var out Message
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		if err := ownsChat(ctx, tx, user, chat); err != nil {
			return err
		}
		var err error
		out, err = insertMessage(ctx, tx, user, chat, m, nowMillis())
		return err
	})
	return out, err
}

// AddMessageAt adds m to one of user's chats as a child of parent (nil: a
// first message), beside the children it has already, and makes it the
// chat's leaf: a regenerated reply (parent: the turn it answers) or an
// edited turn (parent: the edited turn's). Siblings are versions, never
// replaced.
func (db *DB) AddMessageAt(ctx context.Context, user ids.UserID, chat ids.ChatID, parent *ids.MessageID, m Message) (Message, error) {
	var out Message
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		if err := ownsChat(ctx, tx, user, chat); err != nil {
			return err
		}
		var err error
		out, err = insertMessageAt(ctx, tx, user, chat, parent, true, m, nowMillis())
		return err
	})
	return out, err
}

// Turn is one send as AddTurn writes it: the user's turn and the reply row
// its answer streams into.
type Turn struct {
	// Chat is the chat as the caller read it. ID 0 creates it from New,
	// titled Title for now (automatic titles stay on).
	Chat  Chat
	New   NewChat
	Title string
	// Model, when set, becomes an existing chat's model.
	Model *ids.ModelID
	User  Message
	Reply Message
}

// AddTurn writes one send in a single transaction, so that a send is stored
// whole or not at all: the chat (created, or checked to be user's and out
// of the trash, then given Model and its draft cleared), the user's turn
// with its attachments bound, and the reply row after it.
//
// It returns the chat as written and the two messages. Only a chat it
// creates is read back: an existing one is t.Chat with what was written
// here changed (model, draft, updated_at, last status).
func (db *DB) AddTurn(ctx context.Context, user ids.UserID, t Turn) (Chat, Message, Message, error) {
	chat := t.Chat
	created := chat.ID == 0
	var um, rm Message
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		now := nowMillis()
		var err error
		if created {
			params, err := jsonText(t.New.Params)
			if err != nil {
				return err
			}
			if chat.ID, err = insertChat(ctx, tx, user, t.New, params, t.Title, true, now); err != nil {
				return err
			}
		} else {
			var trashed bool
			err := tx.QueryRowContext(ctx, `SELECT deleted_at IS NOT NULL FROM chats WHERE id = ? AND user_id = ?`,
				chat.ID, user).Scan(&trashed)
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("chat %d: %w", chat.ID, ErrNotFound)
			}
			if err != nil {
				return fmt.Errorf("read chat %d: %w", chat.ID, err)
			}
			if trashed {
				return fmt.Errorf("chat %d is in the trash: %w", chat.ID, ErrConflict)
			}
			set, args := `draft = ''`, []any{}
			if t.Model != nil {
				if err := canSeeModel(ctx, tx, user, *t.Model); err != nil {
					return err
				}
				set, args = set+`, model_id = ?`, append(args, *t.Model)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE chats SET `+set+` WHERE id = ?`, append(args, chat.ID)...); err != nil {
				return fmt.Errorf("update chat %d: %w", chat.ID, err)
			}
		}
		if um, err = insertMessage(ctx, tx, user, chat.ID, t.User, now); err != nil {
			return err
		}
		if rm, err = insertMessage(ctx, tx, user, chat.ID, t.Reply, now); err != nil {
			return err
		}
		if created {
			chat, err = chatByID(ctx, tx, user, chat.ID)
		}
		return err
	})
	if err != nil {
		return t.Chat, Message{}, Message{}, err
	}
	if !created {
		chat.Draft, chat.UpdatedAt, chat.LastStatus = "", rm.UpdatedAt, rm.Status
		if t.Model != nil {
			m := *t.Model
			chat.ModelID = &m
		}
	}
	return chat, um, rm, nil
}

// MessageByID reads one message of user's chats.
func (db *DB) MessageByID(ctx context.Context, user ids.UserID, id ids.MessageID) (Message, error) {
	m, err := scanMessage(db.r.QueryRowContext(ctx, `
		SELECT `+messageColumns+` FROM messages m JOIN chats c ON c.id = m.chat_id
		WHERE m.id = ? AND c.user_id = ?`, id, user))
	if errors.Is(err, sql.ErrNoRows) {
		return Message{}, fmt.Errorf("message %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Message{}, fmt.Errorf("read message %d: %w", id, err)
	}
	return m, nil
}

// MessagesPage returns up to limit messages of the chosen path of one of
// user's chats that come before message beforeID (0: the leaf), oldest
// first, and whether
// older ones remain. A long transcript loads its newest page first and the
// rest as the reader scrolls up.
func (db *DB) MessagesPage(ctx context.Context, user ids.UserID, chat ids.ChatID, beforeID ids.MessageID, limit int) ([]Message, bool, error) {
	if err := ownsChat(ctx, db.r, user, chat); err != nil {
		return nil, false, err
	}
	if limit <= 0 {
		limit = 50
	}
	if beforeID <= 0 {
		beforeID = 1<<63 - 1
	}
	// One extra row says whether there is more, without a count.
	// The chosen path, from its leaf up; a parent's id is smaller than its
	// child's, so the page is the path's messages below beforeID.
	rows, err := db.r.QueryContext(ctx, chosenPath+`
		SELECT `+messageColumns+` FROM path JOIN messages m ON m.id = path.id
		WHERE m.chat_id = ? AND m.id < ? ORDER BY m.id DESC LIMIT ?`, chat, chat, beforeID, limit+1)
	if err != nil {
		return nil, false, fmt.Errorf("read messages of chat %d: %w", chat, err)
	}
	msgs, err := scanMessages(rows)
	if err != nil {
		return nil, false, fmt.Errorf("read messages of chat %d: %w", chat, err)
	}
	more := len(msgs) > limit
	if more {
		msgs = msgs[:limit]
	}
	for i, j := 0, len(msgs)-1; i < j; i, j = i+1, j-1 {
		msgs[i], msgs[j] = msgs[j], msgs[i]
	}
	return msgs, more, nil
}

// ChatPath returns the messages a request to the model is built from: the
// chain of parents from the chat's leaf (the chosen path's last message)
// back to its first, oldest first, whatever their status. Reasoning is left empty: a model's
// reasoning is shown but never sent back.
func (db *DB) ChatPath(ctx context.Context, user ids.UserID, chat ids.ChatID) ([]Message, error) {
	if err := ownsChat(ctx, db.r, user, chat); err != nil {
		return nil, err
	}
	rows, err := db.r.QueryContext(ctx, chosenPath+`
		SELECT m.id, m.chat_id, m.parent_id, m.role, m.content, '', m.status, m.error,
			m.model_label, m.metrics, m.created_at, m.updated_at, m.parts
		FROM path JOIN messages m ON m.id = path.id
		WHERE m.chat_id = ?
		ORDER BY path.depth DESC`, chat, chat)
	if err != nil {
		return nil, fmt.Errorf("read path of chat %d: %w", chat, err)
	}
	msgs, err := scanMessages(rows)
	if err != nil {
		return nil, fmt.Errorf("read path of chat %d: %w", chat, err)
	}
	return msgs, nil
}

// deleteMessagesNewestFirst deletes the messages whose ids the query
// selects, one at a time from the newest. Children are newer than their
// parents, so none is ever orphaned first: deleting a parent before its
// child would make parent_id's ON DELETE SET NULL update the child, and
// every update of a final message re-indexes it in the full-text index
// only for the row to be deleted next.
//
// The attachments of the doomed messages are deleted with them, and their
// storage names appended to *files, so that the caller can remove the
// files once the transaction has committed.
func deleteMessagesNewestFirst(ctx context.Context, tx *sql.Tx, files *[]string, query string, args ...any) (int, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	var doomed []ids.MessageID
	for rows.Next() {
		var id ids.MessageID
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		doomed = append(doomed, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(doomed) == 0 {
		return 0, nil
	}
	names, err := deleteAttachmentsOf(ctx, tx, doomed)
	if err != nil {
		return 0, err
	}
	*files = append(*files, names...)
	stmt, err := tx.PrepareContext(ctx, `DELETE FROM messages WHERE id = ?`)
	if err != nil {
		return 0, err
	}
	defer stmt.Close()
	for _, id := range doomed {
		if _, err := stmt.ExecContext(ctx, id); err != nil {
			return 0, fmt.Errorf("delete message %d: %w", id, err)
		}
	}
	return len(doomed), nil
}

// DeleteMessagesAfter deletes every message of one of user's chats that
// came after message messageID, in one transaction: editing an earlier
// message rewinds the chat to it. It returns how many were deleted.
func (db *DB) DeleteMessagesAfter(ctx context.Context, user ids.UserID, chat ids.ChatID, messageID ids.MessageID) (int, error) {
	var n int
	var files []string
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		files = files[:0]
		if err := ownsChat(ctx, tx, user, chat); err != nil {
			return err
		}
		var inChat bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM messages WHERE id = ? AND chat_id = ?)`, messageID, chat).Scan(&inChat); err != nil {
			return fmt.Errorf("read message %d: %w", messageID, err)
		}
		if !inChat {
			return fmt.Errorf("message %d: %w", messageID, ErrNotFound)
		}
		var err error
		n, err = deleteMessagesNewestFirst(ctx, tx, &files,
			`SELECT id FROM messages WHERE chat_id = ? AND id > ? ORDER BY id DESC`, chat, messageID)
		if err != nil {
			return fmt.Errorf("rewind chat %d: %w", chat, err)
		}
		return nil
	})
	if err == nil {
		db.release(files)
	}
	return n, err
}

// UpdateMessageContent replaces the text of one of user's messages (an
// edit). A reply still streaming is ErrConflict: the next checkpoint would
// overwrite the edit.
func (db *DB) UpdateMessageContent(ctx context.Context, user ids.UserID, id ids.MessageID, content string) (Message, error) {
	var out Message
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		var status Status
		err := tx.QueryRowContext(ctx, `
			SELECT m.status FROM messages m JOIN chats c ON c.id = m.chat_id
			WHERE m.id = ? AND c.user_id = ?`, id, user).Scan(&status)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("message %d: %w", id, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read message %d: %w", id, err)
		}
		if status == StatusStreaming {
			return fmt.Errorf("message %d is still streaming: %w", id, ErrConflict)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET content = ?, parts = '', updated_at = ? WHERE id = ?`, content, nowMillis(), id); err != nil {
			return fmt.Errorf("update message %d: %w", id, err)
		}
		out, err = scanMessage(tx.QueryRowContext(ctx, `SELECT `+messageColumns+` FROM messages m WHERE m.id = ?`, id))
		return err
	})
	return out, err
}

// Checkpoint writes the current state of every reply in ups in one
// transaction; the generation writer calls it every 200 ms with the replies
// that changed, so its cost is one commit, not one per reply. Only replies
// still streaming are written: it returns the ids of those that were not
// (deleted by a rewind, or already ended), whose generation should stop. A
// reply leaving StatusStreaming enters the full-text index then, once (the
// triggers skip streaming rows), and bumps its chat's updated_at.
func (db *DB) Checkpoint(ctx context.Context, ups []MessageUpdate) ([]ids.MessageID, error) {
	if len(ups) == 0 {
		return nil, nil
	}
	for _, u := range ups {
		if u.Status != "" && !u.Status.valid() {
			return nil, fmt.Errorf("checkpoint message %d: status %q is not valid", u.ID, u.Status)
		}
	}
	var stale []ids.MessageID
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		stale = stale[:0]
		upd, err := tx.PrepareContext(ctx, `
			UPDATE messages SET content = ?, reasoning = ?, parts = ?, status = ?, error = ?,
				metrics = COALESCE(?, metrics), updated_at = ?
			WHERE id = ? AND status = 'streaming'`)
		if err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		defer upd.Close()
		now := nowMillis()
		for _, u := range ups {
			status := u.Status
			if status == "" {
				status = StatusStreaming
			}
			var metrics any
			if len(u.Metrics) > 0 {
				metrics = string(u.Metrics)
			}
			content, reasoning, layout := u.Content, u.Reasoning, ""
			if u.Parts != nil {
				content, reasoning, layout = JoinParts(u.Parts)
			}
			res, err := upd.ExecContext(ctx, content, reasoning, layout, status, u.Error, metrics, now, u.ID)
			if err != nil {
				return fmt.Errorf("checkpoint message %d: %w", u.ID, err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				stale = append(stale, u.ID)
				continue
			}
			if status != StatusStreaming {
				if _, err := tx.ExecContext(ctx, `
					UPDATE chats SET updated_at = ?, unread = unread OR ? WHERE id = (SELECT chat_id FROM messages WHERE id = ?)`,
					now, u.MarkUnread, u.ID); err != nil {
					return fmt.Errorf("touch chat of message %d: %w", u.ID, err)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return stale, nil
}

// InterruptStreaming marks every streaming message interrupted and returns
// how many there were. It runs at start-up, before any generation: a reply
// still streaming then was abandoned when the previous process ended.
func (db *DB) InterruptStreaming(ctx context.Context) (int64, error) {
	res, err := db.w.ExecContext(ctx, `UPDATE messages SET status = 'interrupted', updated_at = ? WHERE status = 'streaming'`, nowMillis())
	if err != nil {
		return 0, fmt.Errorf("interrupt streaming messages: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}
