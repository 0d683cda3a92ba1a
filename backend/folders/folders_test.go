package folders

import (
	"context"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store/storetest"
)

func TestFolderNamesAreTrimmedAndBounded(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	owner, err := db.EnsureOwner(ctx, "owner", "Owner")
	if err != nil {
		t.Fatal(err)
	}
	s, user := New(db), ids.UserID(owner.ID)
	for _, bad := range []string{"", "   ", strings.Repeat("f", 201)} {
		if _, err := s.Create(ctx, user, bad); apperr.KindOf(err) != apperr.Invalid {
			t.Errorf("Create(%.10q): %v", bad, err)
		}
	}
	f, err := s.Create(ctx, user, "  Quests  ")
	if err != nil || f.Name != "Quests" {
		t.Fatalf("created %+v %v", f, err)
	}
	if err := s.Rename(ctx, user, f.ID, " "); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("rename to blank: %v", err)
	}
	if err := s.Rename(ctx, user, f.ID+1, "Other"); apperr.KindOf(err) != apperr.NotFound {
		t.Errorf("rename of a missing folder: %v", err)
	}
	if err := s.Rename(ctx, user, f.ID, " Roads "); err != nil {
		t.Fatal(err)
	}
	if list, err := s.List(ctx, user); err != nil || len(list) != 1 || list[0].Name != "Roads" {
		t.Errorf("list %+v %v", list, err)
	}
}
