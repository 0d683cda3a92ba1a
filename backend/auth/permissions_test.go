package auth

import (
	"context"
	"slices"
	"testing"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

func TestPermissionsAreAUnionAndAdminsHaveAll(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, cheap)
	p := NewPermissions(f.db)
	admin := f.user(t, "gandalf", "you-shall-not-pass", store.StatusActive, true)
	sam := f.user(t, "sam", "po-tay-toes", store.StatusActive, false)

	s, err := p.Resolve(ctx, sam)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.List(), DefaultBaseline) {
		t.Errorf("with no setting and no groups: %v, want the default baseline %v", s.List(), DefaultBaseline)
	}

	if err := p.SetBaseline(ctx, []Permission{ChatCreate, ChatCreate}); err != nil {
		t.Fatal(err)
	}
	wantKind(t, "unknown permission in the baseline", p.SetBaseline(ctx, []Permission{"root"}), apperr.Invalid)
	if base, _ := p.Baseline(ctx); !slices.Equal(base, []Permission{ChatCreate}) {
		t.Errorf("stored baseline = %v, want chat.create once", base)
	}

	// Two groups widen the baseline; neither can take chat.create away,
	// and a name no longer known is ignored.
	models, _ := f.db.CreateGroup(ctx, "Model fans", []string{ModelsViewAll})
	builders, _ := f.db.CreateGroup(ctx, "Builders", []string{FilesUpload, ConnectionsOwn, "gone.permission"})
	f.db.CreateGroup(ctx, "Unrelated", []string{ConnectionsManage})
	for _, g := range []int64{models.ID, builders.ID} {
		if err := f.db.AddGroupMember(ctx, g, ids.UserID(sam.ID)); err != nil {
			t.Fatal(err)
		}
	}
	s, _ = p.Resolve(ctx, sam)
	if want := []Permission{ChatCreate, FilesUpload, ModelsViewAll}; !slices.Equal(s.List(), want) {
		t.Errorf("sam = %v, want %v", s.List(), want)
	}
	if s.Has(ConnectionsManage) || s.Has(ChatParams) || s.Admin() {
		t.Error("sam has a permission no group or baseline grants")
	}
	wantKind(t, "Require of a missing permission", s.Require(ConnectionsManage), apperr.Forbidden)
	if s.Has(ConnectionsOwn) {
		t.Error("connections.own, which is not offered yet, was granted")
	}
	if err := s.Require(FilesUpload); err != nil {
		t.Errorf("Require of a granted permission: %v", err)
	}

	// An admin has everything whatever the baseline and groups say.
	p.SetBaseline(ctx, nil)
	a, _ := p.Resolve(ctx, admin)
	if !a.Admin() || !slices.Equal(a.List(), AllPermissions) || !a.Has(ConnectionsManage) {
		t.Errorf("admin = %v, want every permission", a.List())
	}
	s, _ = p.Resolve(ctx, sam)
	if s.Has(ChatCreate) {
		t.Error("empty baseline still grants chat.create")
	}

	// A broken setting is an error, not silently no permissions.
	f.db.SetSetting(ctx, SettingBaseline, "chat.create")
	if _, err := p.Resolve(ctx, sam); err == nil {
		t.Error("malformed baseline setting resolved without error")
	}
}

func TestCheckPermissions(t *testing.T) {
	got, err := CheckPermissions([]Permission{ModelsViewAll, ChatCreate, ModelsViewAll})
	if err != nil || !slices.Equal(got, []Permission{ModelsViewAll, ChatCreate}) {
		t.Errorf("CheckPermissions = %v, %v", got, err)
	}
	if _, err := CheckPermissions([]Permission{"users.manage"}); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("unknown name: %v", err)
	}
}
