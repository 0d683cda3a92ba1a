package connections

import (
	"context"
	"testing"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/store/storetest"
)

// newService is the service over a real database holding the owner and
// one shared model (its endpoint is never called).
func newService(t *testing.T) (*Service, ids.UserID, ids.ModelID) {
	t.Helper()
	db := storetest.Open(t)
	user, model := storetest.OwnerWithModel(t, db)
	return New(db, nil, nil, Options{}), user, model
}

// The picker shows a shared model's system prompt only to a manager, and
// says to everyone else that there is one.
func TestPickerWithholdsSharedPromptsFromNonManagers(t *testing.T) {
	s, user, model := newService(t)
	ctx := context.Background()
	prompt := "Answer like a hobbit."
	if _, _, err := s.UpdateModel(ctx, store.Actor{User: user, Admin: true}, model, ModelPatch{SystemPrompt: &prompt}); err != nil {
		t.Fatal(err)
	}
	for _, manager := range []bool{true, false} {
		list, err := s.Picker(ctx, user, manager)
		if err != nil || len(list.Items) != 1 {
			t.Fatalf("picker %+v %v", list, err)
		}
		got, withheld := list.Items[0].SystemPrompt, list.Withheld[model]
		if manager && (got != prompt || withheld) || !manager && (got != "" || !withheld) {
			t.Errorf("manager %v: prompt %q, withheld %v", manager, got, withheld)
		}
		if list.Names[list.Items[0].ConnectionID] != "shared" {
			t.Errorf("connection names %v", list.Names)
		}
	}
}

func TestUpdateModelRefusesWhatCannotBeStored(t *testing.T) {
	s, user, model := newService(t)
	a := store.Actor{User: user, Admin: true}
	neg, bad := int64(-1), "extreme"
	if _, _, err := s.UpdateModel(context.Background(), a, model, ModelPatch{ContextLength: &neg}); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("negative context length: %v", err)
	}
	if _, _, err := s.UpdateModel(context.Background(), a, model, ModelPatch{Params: &store.Params{ReasoningEffort: &bad}}); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("unknown effort: %v", err)
	}
}

func TestAvatarsAreImagesSetByAdministrators(t *testing.T) {
	s, user, model := newService(t)
	ctx := context.Background()
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")
	if err := s.SetAvatar(ctx, store.Actor{User: user}, model, png); apperr.KindOf(err) != apperr.Forbidden {
		t.Errorf("set by a non-admin: %v", err)
	}
	if err := s.SetAvatar(ctx, store.Actor{User: user, Admin: true}, model, []byte("<svg onload=alert(1)>")); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("an SVG: %v", err)
	}
	if err := s.SetAvatar(ctx, store.Actor{User: user, Admin: true}, model, png); err != nil {
		t.Fatal(err)
	}
	if _, ctype, err := s.Avatar(ctx, user, model); err != nil || ctype != "image/png" {
		t.Errorf("avatar %q %v", ctype, err)
	}
	if err := s.DeleteAvatar(ctx, store.Actor{User: user, Admin: true}, model); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Avatar(ctx, user, model); apperr.KindOf(err) != apperr.NotFound {
		t.Errorf("after delete: %v", err)
	}
}

// Stored secrets never follow a connection to another server, nor to a
// connection trusted differently.
func TestSecretsStayWithTheirServer(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"http://a:8080/v1", "http://a:8080/other"},
		{"HTTP://A:8080/v1", "http://a:8080/v1"},
	} {
		if !sameOrigin(tc.a, tc.b) {
			t.Errorf("%s and %s are the same server", tc.a, tc.b)
		}
	}
	for _, tc := range []struct{ a, b string }{
		{"http://a:8080/v1", "http://a:8081/v1"},
		{"http://a/v1", "https://a/v1"},
		{"http://a/v1", "http://b/v1"},
	} {
		if sameOrigin(tc.a, tc.b) {
			t.Errorf("%s and %s are different servers", tc.a, tc.b)
		}
	}
	ca, other := "CA", "OTHER"
	cur := store.Connection{CAPEM: ca}
	for _, tc := range []struct {
		name string
		in   Input
		want bool
	}{
		{"same CA", Input{CAPEM: &ca}, false},
		{"CA kept", Input{}, false},
		{"another CA", Input{CAPEM: &other}, true},
		{"checks off", Input{InsecureTLS: true}, true},
	} {
		if got := widensTrust(cur, tc.in); got != tc.want {
			t.Errorf("%s: widensTrust %v, want %v", tc.name, got, tc.want)
		}
	}
}
