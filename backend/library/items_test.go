package library

import (
	"context"
	"testing"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/store/storetest"
)

// itemsWorld is a household for the notes, memories, skills and shares
// tests: an administrator, two members and a group holding one of them,
// over a real SQLite file.
type itemsWorld struct {
	db         *store.DB
	lib        *Service
	admin      ids.UserID
	ann, bob   ids.UserID
	readers    ids.GroupID // bob is in it
	carl       ids.UserID  // disabled
	annName    string
	readerName string
}

func newItemsWorld(t *testing.T) itemsWorld {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t)
	user := func(name, display string, admin bool, status string) ids.UserID {
		u, err := db.CreateUser(ctx, store.NewUser{Username: name, DisplayName: display, IsAdmin: admin, Status: status})
		if err != nil {
			t.Fatal(err)
		}
		return ids.UserID(u.ID)
	}
	w := itemsWorld{db: db, lib: New(db, nil, nil)}
	w.admin = user("root", "Root", true, "")
	w.ann = user("ann", "Ann Example", false, "")
	w.bob = user("bob", "", false, "")
	w.carl = user("carl", "Carl", false, store.StatusDisabled)
	g, err := db.CreateGroup(ctx, "Readers", nil)
	if err != nil {
		t.Fatal(err)
	}
	w.readers = ids.GroupID(g.ID)
	if err := db.AddGroupMember(ctx, g.ID, w.bob); err != nil {
		t.Fatal(err)
	}
	w.annName, w.readerName = "Ann Example", "Readers"
	return w
}

// wantKind fails unless err is an application error of kind.
func wantKind(t *testing.T, err error, kind apperr.Kind) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", kind)
	}
	if got := apperr.KindOf(err); got != kind {
		t.Fatalf("error %v is %s, want %s", err, got, kind)
	}
}

func wantMessage(t *testing.T, err error, kind apperr.Kind, msg string) {
	t.Helper()
	wantKind(t, err, kind)
	if _, got := apperr.Public(err); got != msg {
		t.Fatalf("message %q, want %q", got, msg)
	}
}
