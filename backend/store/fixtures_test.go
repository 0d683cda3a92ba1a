package store

import (
	"context"
	"errors"
	"testing"

	"github.com/llembas/lembas/backend/ids"
)

// syncedTemp is openTemp with the current schema applied.
func syncedTemp(t *testing.T) *DB {
	t.Helper()
	db, dir := openTemp(t)
	if _, err := db.Sync(context.Background(), Current, dir); err != nil {
		t.Fatal(err)
	}
	return db
}

// addUser inserts a plain user row directly, without the account rules of
// CreateAccount, for tests that only need a second owner of data.
func addUser(t testing.TB, db *DB, name string) ids.UserID {
	t.Helper()
	res, err := db.Write().Exec(`INSERT INTO users (username, created_at) VALUES (?, ?)`, name, nowMillis())
	if err != nil {
		t.Fatal(err)
	}
	id, _ := res.LastInsertId()
	return ids.UserID(id)
}

// wantNotFound fails unless err wraps ErrNotFound.
func wantNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("%s: err = %v, want ErrNotFound", what, err)
	}
}

// ftsIntegrity runs FTS5's integrity check, which fails when an
// external-content index disagrees with its table.
func ftsIntegrity(t *testing.T, db *DB) {
	t.Helper()
	for _, f := range []string{"messages_fts", "chats_fts"} {
		if _, err := db.Write().Exec(`INSERT INTO ` + f + `(` + f + `, rank) VALUES ('integrity-check', 0)`); err != nil {
			t.Fatalf("%s integrity-check: %v", f, err)
		}
	}
}

func ptr[T any](v T) *T { return &v }
