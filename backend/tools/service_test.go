package tools

import (
	"context"
	"testing"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/store/storetest"
)

// The instance's switches start off with the default round limit, keep
// what an admin sets, and refuse what is not a family or a limit.
func TestSettings(t *testing.T) {
	ctx := context.Background()
	s := New(storetest.Open(t), &fakeWeb{ready: true})
	st, err := s.Settings(ctx)
	if err != nil || st.Families[FamilyWebSearch] || st.Families[FamilyFetch] || st.MaxRounds != DefaultMaxRounds {
		t.Fatalf("defaults %+v %v", st, err)
	}
	n := 3
	if st, err = s.SetSettings(ctx, SettingsPatch{Families: map[Family]bool{FamilyFetch: true}, MaxRounds: &n}); err != nil ||
		!st.Families[FamilyFetch] || st.Families[FamilyWebSearch] || st.MaxRounds != 3 {
		t.Fatalf("after set %+v %v", st, err)
	}
	bad := 0
	for _, p := range []SettingsPatch{{Families: map[Family]bool{"shell": true}}, {MaxRounds: &bad}} {
		if _, err := s.SetSettings(ctx, p); apperr.KindOf(err) != apperr.Invalid {
			t.Errorf("%+v: %v, want invalid", p, err)
		}
	}
	// Nothing is offered without a Web.
	none := New(storetest.Open(t), nil)
	set, err := none.Resolve(ctx, auth.Caller{Perms: auth.NewSet(true)}, store.Model{Capabilities: store.Capabilities{Tools: true}}, store.Chat{})
	if err != nil || set.Len() != 0 || len(none.List()) != 0 {
		t.Errorf("without a Web: %v %v", set.Names(), err)
	}
}
