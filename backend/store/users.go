package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// User is one account. The desktop owner is a User too (IsOwner), an admin
// with no password until sharing is turned on.
type User struct {
	ID          int64
	Username    string
	DisplayName string
	IsAdmin     bool
	IsOwner     bool
	Status      string
	CreatedAt   int64
}

const userColumns = `id, username, display_name, is_admin, is_owner, status, created_at`

func scanUser(row interface{ Scan(...any) error }) (User, error) {
	var u User
	err := row.Scan(&u.ID, &u.Username, &u.DisplayName, &u.IsAdmin, &u.IsOwner, &u.Status, &u.CreatedAt)
	return u, err
}

// ErrNotFound is returned when a row does not exist.
var ErrNotFound = errors.New("not found")

// UserByID reads one user.
func (db *DB) UserByID(ctx context.Context, id int64) (User, error) {
	st, err := db.readStmt(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`)
	if err != nil {
		return User{}, fmt.Errorf("prepare user query: %w", err)
	}
	u, err := scanUser(st.QueryRowContext(ctx, id))
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, fmt.Errorf("user %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return User{}, fmt.Errorf("read user %d: %w", id, err)
	}
	return u, nil
}

// EnsureOwner returns the owner row, creating it as an admin on first run.
// It runs in one write transaction, so two starts racing cannot create two.
func (db *DB) EnsureOwner(ctx context.Context, username, displayName string) (User, error) {
	var u User
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		var err error
		u, err = scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE is_owner = 1 ORDER BY id LIMIT 1`))
		if err == nil {
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("find owner: %w", err)
		}
		name := username
		for i := 2; ; i++ {
			var taken bool
			if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE username = ? COLLATE NOCASE)`, name).Scan(&taken); err != nil {
				return fmt.Errorf("check username: %w", err)
			}
			if !taken {
				break
			}
			name = fmt.Sprintf("%s%d", username, i)
		}
		now := nowMillis()
		res, err := tx.ExecContext(ctx, `
			INSERT INTO users (username, display_name, is_admin, is_owner, status, created_at, updated_at)
			VALUES (?, ?, 1, 1, 'active', ?, ?)`, name, displayName, now, now)
		if err != nil {
			return fmt.Errorf("create owner: %w", err)
		}
		id, _ := res.LastInsertId()
		u, err = scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`, id))
		return err
	})
	return u, err
}

// UserIDs lists every user's id, for instance-wide housekeeping.
func (db *DB) UserIDs(ctx context.Context) ([]int64, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id FROM users ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
