package library

import (
	"context"
	"testing"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/store"
)

// Sharing a knowledge base goes through the same rule as a note's (bases
// themselves are made by the knowledge side; the row is written here).
func TestShareBase(t *testing.T) {
	w := newItemsWorld(t)
	ctx := context.Background()
	res, err := w.db.Write().Exec(`INSERT INTO knowledge_bases (owner_id, name) VALUES (?, 'Manuals')`, w.ann)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := res.LastInsertId()

	_, err = w.lib.SetShares(ctx, w.admin, store.KindBase, id, []store.Grantee{{UserID: w.admin}})
	wantMessage(t, err, apperr.NotFound, "knowledge base not found")
	if seen, _ := w.db.LibraryVisible(ctx, w.bob, store.KindBase, id); seen {
		t.Fatal("bob sees an unshared base")
	}
	sh, err := w.lib.SetShares(ctx, w.ann, store.KindBase, id, []store.Grantee{{UserID: w.bob}})
	if err != nil || len(sh) != 1 || sh[0].UserID != w.bob || sh[0].Name != "bob" {
		t.Fatalf("shares %+v, %v", sh, err)
	}
	if seen, _ := w.db.LibraryVisible(ctx, w.bob, store.KindBase, id); !seen {
		t.Fatal("bob does not see the shared base")
	}
	_, err = w.lib.SetShares(ctx, w.bob, store.KindBase, id, nil)
	wantMessage(t, err, apperr.Forbidden, "This knowledge base is shared with you for reading only.")
	if seen, _ := w.db.LibraryVisible(ctx, w.admin, store.KindBase, id); seen {
		t.Fatal("the administrator sees ann's base")
	}
	owner, err := w.db.LibraryOwner(ctx, store.KindBase, id)
	if err != nil || owner != w.ann {
		t.Fatalf("owner %d, %v", owner, err)
	}
	_, err = w.lib.Shares(ctx, w.ann, store.LibraryKind("chat"), id)
	wantKind(t, err, apperr.NotFound)
}
