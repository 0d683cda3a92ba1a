package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/llembas/lembas/backend/ids"
)

// Folder groups a user's chats.
type Folder struct {
	ID        ids.FolderID
	Name      string
	Position  int64
	CreatedAt int64
}

const folderColumns = `id, name, position, created_at`

func scanFolder(row interface{ Scan(...any) error }) (Folder, error) {
	var f Folder
	err := row.Scan(&f.ID, &f.Name, &f.Position, &f.CreatedAt)
	return f, err
}

// ownsFolder reports ErrNotFound unless folder id belongs to user.
func ownsFolder(ctx context.Context, q queryRower, user ids.UserID, id ids.FolderID) error {
	var ok bool
	err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM folders WHERE id = ? AND user_id = ?)`, id, user).Scan(&ok)
	if err != nil {
		return fmt.Errorf("read folder %d: %w", id, err)
	}
	if !ok {
		return fmt.Errorf("folder %d: %w", id, ErrNotFound)
	}
	return nil
}

// CreateFolder adds a folder at the end of user's folders.
func (db *DB) CreateFolder(ctx context.Context, user ids.UserID, name string) (Folder, error) {
	var f Folder
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `
			INSERT INTO folders (user_id, name, position, created_at)
			VALUES (?, ?, (SELECT COALESCE(MAX(position), -1) + 1 FROM folders WHERE user_id = ?), ?)`,
			user, name, user, nowMillis())
		if err != nil {
			return fmt.Errorf("insert folder: %w", err)
		}
		id, _ := res.LastInsertId()
		f, err = scanFolder(tx.QueryRowContext(ctx, `SELECT `+folderColumns+` FROM folders WHERE id = ?`, id))
		return err
	})
	return f, err
}

// RenameFolder renames one of user's folders.
func (db *DB) RenameFolder(ctx context.Context, user ids.UserID, id ids.FolderID, name string) error {
	res, err := db.w.ExecContext(ctx, `UPDATE folders SET name = ? WHERE id = ? AND user_id = ?`, name, id, user)
	if err != nil {
		return fmt.Errorf("rename folder %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("folder %d: %w", id, ErrNotFound)
	}
	return nil
}

// DeleteFolder removes one of user's folders. Its chats are kept and leave
// the folder (the foreign key sets their folder_id to NULL).
func (db *DB) DeleteFolder(ctx context.Context, user ids.UserID, id ids.FolderID) error {
	res, err := db.w.ExecContext(ctx, `DELETE FROM folders WHERE id = ? AND user_id = ?`, id, user)
	if err != nil {
		return fmt.Errorf("delete folder %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("folder %d: %w", id, ErrNotFound)
	}
	return nil
}

// ListFolders returns user's folders in their order.
func (db *DB) ListFolders(ctx context.Context, user ids.UserID) ([]Folder, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+folderColumns+` FROM folders WHERE user_id = ? ORDER BY position, id`, user)
	if err != nil {
		return nil, fmt.Errorf("list folders: %w", err)
	}
	defer rows.Close()
	var out []Folder
	for rows.Next() {
		f, err := scanFolder(rows)
		if err != nil {
			return nil, fmt.Errorf("list folders: %w", err)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// FolderByID reads one of user's folders.
func (db *DB) FolderByID(ctx context.Context, user ids.UserID, id ids.FolderID) (Folder, error) {
	f, err := scanFolder(db.r.QueryRowContext(ctx, `SELECT `+folderColumns+` FROM folders WHERE id = ? AND user_id = ?`, id, user))
	if errors.Is(err, sql.ErrNoRows) {
		return Folder{}, fmt.Errorf("folder %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Folder{}, fmt.Errorf("read folder %d: %w", id, err)
	}
	return f, nil
}

// MoveFolder puts one of user's folders at index position of their list
// (past the end means last) and renumbers the list densely from 0, in one
// transaction. Another user's folder is ErrNotFound.
func (db *DB) MoveFolder(ctx context.Context, user ids.UserID, id ids.FolderID, position int) error {
	return db.WriteTx(ctx, func(tx *sql.Tx) error {
		return reorder(ctx, tx, folderOrder, user, int64(id), position)
	})
}
