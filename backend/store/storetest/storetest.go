// Package storetest opens real SQLite databases for other packages' tests.
package storetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// Open returns a database in a temporary directory with the current schema,
// closed when the test ends.
func Open(t testing.TB) *store.DB {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(dir, "lembas.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Sync(ctx, store.Current, filepath.Join(dir, "backups")); err != nil {
		t.Fatal(err)
	}
	return db
}

// OwnerWithModel adds the owner and one shared model on a connection whose
// endpoint is never called, and returns their ids.
func OwnerWithModel(t testing.TB, db *store.DB) (ids.UserID, ids.ModelID) {
	t.Helper()
	ctx := context.Background()
	owner, err := db.EnsureOwner(ctx, "owner", "Owner")
	if err != nil {
		t.Fatal(err)
	}
	user := ids.UserID(owner.ID)
	conn, err := db.CreateConnection(ctx, store.Actor{User: user, Admin: true},
		store.Connection{Name: "shared", BaseURL: "http://127.0.0.1:9/v1", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.SyncModels(ctx, conn.ID, []store.UpstreamModel{{ID: "m"}}); err != nil {
		t.Fatal(err)
	}
	models, _, err := db.ListModels(ctx, user, store.ModelFilter{})
	if err != nil || len(models) != 1 {
		t.Fatalf("models %v %v", models, err)
	}
	return user, models[0].ID
}
