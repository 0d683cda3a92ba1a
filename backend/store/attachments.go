package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/llembas/lembas/backend/ids"
)

// Attachment is an uploaded file's row. The bytes are on disk under
// StorageName (see backend/files); MessageID is nil until the upload is
// sent with a message.
type Attachment struct {
	ID          ids.AttachmentID
	UserID      ids.UserID
	MessageID   *ids.MessageID
	Kind        string // image, pdf or text (attach.Kind)
	MIME        string
	DisplayName string
	StorageName string
	Size        int64
	Text        string
	Note        string
	Width       int
	Height      int
	CreatedAt   int64
	// SourcePath and SourceLabel say where a file chosen with @ came
	// from: a project file's path and "user@host:dir", a library
	// document's name and its base's. Empty for an upload.
	SourcePath  string
	SourceLabel string
}

const attachmentColumns = `a.id, a.user_id, a.message_id, a.kind, a.mime, a.display_name, a.storage_name,
	a.size, a.text, a.note, a.width, a.height, a.created_at, a.source_path, a.source_label`

func scanAttachment(row interface{ Scan(...any) error }) (Attachment, error) {
	var a Attachment
	var msg sql.NullInt64
	err := row.Scan(&a.ID, &a.UserID, &msg, &a.Kind, &a.MIME, &a.DisplayName, &a.StorageName,
		&a.Size, &a.Text, &a.Note, &a.Width, &a.Height, &a.CreatedAt, &a.SourcePath, &a.SourceLabel)
	if msg.Valid {
		m := ids.MessageID(msg.Int64)
		a.MessageID = &m
	}
	return a, err
}

// OnFilesReleased sets fn to be told the storage names of attachments
// whose rows were deleted with their messages (emptying the trash, a
// rewind), after the deleting transaction committed, so that their files
// can go too. Set it once, before the database is used.
func (db *DB) OnFilesReleased(fn func(storageNames []string)) { db.released = fn }

func (db *DB) release(names []string) {
	if len(names) > 0 && db.released != nil {
		db.released(names)
	}
}

// AddAttachment stores an unbound upload of user (MessageID is ignored).
func (db *DB) AddAttachment(ctx context.Context, user ids.UserID, a Attachment) (Attachment, error) {
	return db.AddAttachmentWithin(ctx, user, a, 0, 0)
}

// ErrQuota is the refusal of an upload that would take its owner past
// their storage quota.
var ErrQuota = errors.New("storage quota reached")

// AddAttachmentWithin is AddAttachment refusing, with ErrConflict, when
// user already holds maxUnbound unsent uploads (0: no limit), and with
// ErrQuota when user's files, sent or not, would come to more than quota
// bytes (0: no limit). The checks and the insert are one transaction, so
// uploads finishing at the same moment cannot pass a limit together.
func (db *DB) AddAttachmentWithin(ctx context.Context, user ids.UserID, a Attachment, maxUnbound int, quota int64) (Attachment, error) {
	var out Attachment
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		if maxUnbound > 0 {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM attachments WHERE user_id = ? AND message_id IS NULL`, user).Scan(&n); err != nil {
				return fmt.Errorf("count uploads: %w", err)
			}
			if n >= maxUnbound {
				return fmt.Errorf("%d unsent uploads: %w", n, ErrConflict)
			}
		}
		if quota > 0 {
			var used int64
			if err := tx.QueryRowContext(ctx, userBytes, user, user).Scan(&used); err != nil {
				return fmt.Errorf("sum uploads: %w", err)
			}
			if used+a.Size > quota {
				return fmt.Errorf("%d of %d bytes used: %w", used, quota, ErrQuota)
			}
		}
		res, err := tx.ExecContext(ctx, `
			INSERT INTO attachments (user_id, kind, mime, display_name, storage_name, size, text, note, width, height, created_at,
				source_path, source_label)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			user, a.Kind, a.MIME, a.DisplayName, a.StorageName, a.Size, a.Text, a.Note, a.Width, a.Height, nowMillis(),
			a.SourcePath, a.SourceLabel)
		if err != nil {
			return fmt.Errorf("insert attachment: %w", err)
		}
		id, _ := res.LastInsertId()
		out, err = scanAttachment(tx.QueryRowContext(ctx, `SELECT `+attachmentColumns+` FROM attachments a WHERE a.id = ?`, id))
		return err
	})
	return out, err
}

// AttachmentByID reads one of user's attachments, sent or not. Anyone
// else's is ErrNotFound.
func (db *DB) AttachmentByID(ctx context.Context, user ids.UserID, id ids.AttachmentID) (Attachment, error) {
	a, err := scanAttachment(db.r.QueryRowContext(ctx, `
		SELECT `+attachmentColumns+` FROM attachments a WHERE a.id = ? AND a.user_id = ?`, id, user))
	if errors.Is(err, sql.ErrNoRows) {
		return Attachment{}, fmt.Errorf("attachment %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Attachment{}, fmt.Errorf("read attachment %d: %w", id, err)
	}
	return a, nil
}

// userBytes sums the files a user's quota counts (two arguments: the user
// twice): attachments, sent or not, and the documents of their knowledge
// bases.
const userBytes = `SELECT (SELECT COALESCE(SUM(size), 0) FROM attachments WHERE user_id = ?)
	+ (SELECT COALESCE(SUM(size), 0) FROM documents WHERE owner_id = ?)`

// AttachmentBytes is how many bytes user's files take: attachments, sent
// or not (those of chats in the trash included: they go when the trash is
// emptied), and the documents in their knowledge bases.
func (db *DB) AttachmentBytes(ctx context.Context, user ids.UserID) (int64, error) {
	var n int64
	err := db.r.QueryRowContext(ctx, userBytes, user, user).Scan(&n)
	return n, err
}

// CountUnbound returns how many uploads user has not sent yet.
func (db *DB) CountUnbound(ctx context.Context, user ids.UserID) (int, error) {
	var n int
	err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM attachments WHERE user_id = ? AND message_id IS NULL`, user).Scan(&n)
	return n, err
}

// DeleteUnbound deletes one of user's uploads that has not been sent and
// returns its storage name, for the caller to remove the file. Someone
// else's is ErrNotFound; a sent one is ErrConflict (it goes with its chat).
func (db *DB) DeleteUnbound(ctx context.Context, user ids.UserID, id ids.AttachmentID) (string, error) {
	var name string
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		var msg sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT storage_name, message_id FROM attachments WHERE id = ? AND user_id = ?`, id, user).Scan(&name, &msg)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("attachment %d: %w", id, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read attachment %d: %w", id, err)
		}
		if msg.Valid {
			return fmt.Errorf("attachment %d was sent: %w", id, ErrConflict)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM attachments WHERE id = ?`, id)
		return err
	})
	return name, err
}

// DeleteStaleUploads deletes every upload not sent by olderThan (unix
// milliseconds) and returns their storage names.
func (db *DB) DeleteStaleUploads(ctx context.Context, olderThan int64) ([]string, error) {
	var names []string
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		names = names[:0]
		rows, err := tx.QueryContext(ctx, `SELECT storage_name FROM attachments WHERE message_id IS NULL AND created_at <= ?`, olderThan)
		if err != nil {
			return err
		}
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				rows.Close()
				return err
			}
			names = append(names, n)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM attachments WHERE message_id IS NULL AND created_at <= ?`, olderThan)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sweep uploads: %w", err)
	}
	return names, nil
}

// StorageNameKnown reports whether a file name in the files directory
// belongs to an attachment row or a library document (the orphan sweep
// keeps only those).
func (db *DB) StorageNameKnown(ctx context.Context, name string) (bool, error) {
	var ok bool
	err := db.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM attachments WHERE storage_name = ?)
		OR EXISTS (SELECT 1 FROM documents WHERE storage_name = ?)`, name, name).Scan(&ok)
	return ok, err
}

// AttachmentsOf returns the attachments of the given messages of user's
// chats, by message, in the order they were attached.
func (db *DB) AttachmentsOf(ctx context.Context, user ids.UserID, msgs []ids.MessageID) (map[ids.MessageID][]Attachment, error) {
	out := map[ids.MessageID][]Attachment{}
	for start := 0; start < len(msgs); start += 500 {
		chunk := msgs[start:min(start+500, len(msgs))]
		args := make([]any, 0, len(chunk)+1)
		args = append(args, user)
		for _, id := range chunk {
			args = append(args, id)
		}
		rows, err := db.r.QueryContext(ctx, `
			SELECT `+attachmentColumns+` FROM attachments a
			WHERE a.user_id = ? AND a.message_id IN (`+placeholders(len(chunk))+`)
			ORDER BY a.message_id, a.position, a.id`, args...)
		if err != nil {
			return nil, fmt.Errorf("read attachments: %w", err)
		}
		for rows.Next() {
			a, err := scanAttachment(rows)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("read attachments: %w", err)
			}
			out[*a.MessageID] = append(out[*a.MessageID], a)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read attachments: %w", err)
		}
	}
	return out, nil
}

func placeholders(n int) string {
	if n <= 0 {
		return "NULL"
	}
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// bindAttachments binds uploads of user to message msg, in the order given.
// Only user's unbound uploads can be bound: an id of someone else's, or one
// already sent, is ErrNotFound (a forged id must not pull in another
// person's file) and the transaction is to be rolled back.
func bindAttachments(ctx context.Context, tx *sql.Tx, user ids.UserID, msg ids.MessageID, list []ids.AttachmentID) error {
	for i, id := range list {
		res, err := tx.ExecContext(ctx, `
			UPDATE attachments SET message_id = ?, position = ?
			WHERE id = ? AND user_id = ? AND message_id IS NULL`, msg, i, id, user)
		if err != nil {
			return fmt.Errorf("bind attachment %d: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("attachment %d: %w", id, ErrNotFound)
		}
	}
	return nil
}

// SetMessageAttachments makes list the attachments of one of user's
// messages (an edit): those listed that are already the message's stay,
// user's unbound uploads are bound, and the message's others are unbound
// (the upload sweep takes them later). Any other id is ErrNotFound and
// nothing changes.
func (db *DB) SetMessageAttachments(ctx context.Context, user ids.UserID, msg ids.MessageID, list []ids.AttachmentID) error {
	return db.WriteTx(ctx, func(tx *sql.Tx) error {
		var ok bool
		if err := tx.QueryRowContext(ctx, `
			SELECT EXISTS (SELECT 1 FROM messages m JOIN chats c ON c.id = m.chat_id WHERE m.id = ? AND c.user_id = ?)`,
			msg, user).Scan(&ok); err != nil {
			return fmt.Errorf("read message %d: %w", msg, err)
		}
		if !ok {
			return fmt.Errorf("message %d: %w", msg, ErrNotFound)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE attachments SET message_id = NULL, position = 0 WHERE message_id = ? AND user_id = ?`, msg, user); err != nil {
			return fmt.Errorf("unbind attachments of message %d: %w", msg, err)
		}
		return bindAttachments(ctx, tx, user, msg, list)
	})
}

// deleteAttachmentsOf deletes the attachment rows of the given messages and
// returns their storage names.
func deleteAttachmentsOf(ctx context.Context, tx *sql.Tx, msgs []ids.MessageID) ([]string, error) {
	var names []string
	for start := 0; start < len(msgs); start += 500 {
		chunk := msgs[start:min(start+500, len(msgs))]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		rows, err := tx.QueryContext(ctx, `SELECT storage_name FROM attachments WHERE message_id IN (`+placeholders(len(chunk))+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("read attachments: %w", err)
		}
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				rows.Close()
				return nil, err
			}
			names = append(names, n)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM attachments WHERE message_id IN (`+placeholders(len(chunk))+`)`, args...); err != nil {
			return nil, fmt.Errorf("delete attachments: %w", err)
		}
	}
	return names, nil
}
