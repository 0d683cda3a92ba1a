package library

import (
	"context"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/store"
)

// As for notes: no method lets an administrator read or change a member's
// private skill.
func TestAdminCannotReachPrivateSkill(t *testing.T) {
	w := newItemsWorld(t)
	ctx := context.Background()
	k, err := w.lib.CreateSkill(ctx, w.ann, "Tax return", "How I file mine", "Step 1: the secret folder.")
	if err != nil {
		t.Fatal(err)
	}
	id := k.ID
	calls := []struct {
		name string
		call func() error
	}{
		{"Skill", func() error { _, err := w.lib.Skill(ctx, w.admin, id); return err }},
		{"SkillByName", func() error { _, err := w.lib.SkillByName(ctx, w.admin, "tax return"); return err }},
		{"UpdateSkill", func() error {
			_, err := w.lib.UpdateSkill(ctx, w.admin, id, SkillPatch{Body: ptr("mine")})
			return err
		}},
		{"DeleteSkill", func() error { return w.lib.DeleteSkill(ctx, w.admin, id) }},
		{"Shares", func() error { _, err := w.lib.Shares(ctx, w.admin, store.KindSkill, int64(id)); return err }},
		{"SetShares", func() error {
			_, err := w.lib.SetShares(ctx, w.admin, store.KindSkill, int64(id), []store.Grantee{{UserID: w.admin + 100}})
			return err
		}},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) { wantMessage(t, c.call(), apperr.NotFound, "skill not found") })
	}
	if list, err := w.lib.Skills(ctx, w.admin); err != nil || len(list) != 0 {
		t.Fatalf("the administrator lists %+v, %v", list, err)
	}
	if got, err := w.lib.Skill(ctx, w.ann, id); err != nil || got.Body != k.Body {
		t.Fatalf("ann's skill %+v, %v", got, err)
	}
}

func TestSkillNames(t *testing.T) {
	w := newItemsWorld(t)
	ctx := context.Background()
	k, err := w.lib.CreateSkill(ctx, w.ann, " Écrire un mail ", "Polite French mail", "Bonjour …")
	if err != nil || k.Name != "Écrire un mail" || k.OwnerName != w.annName {
		t.Fatalf("created %+v, %v", k, err)
	}
	// Any letter case, accented letters included (SQLite's NOCASE would
	// take é and É for two letters).
	_, err = w.lib.CreateSkill(ctx, w.ann, "écrire UN MAIL", "", "")
	wantMessage(t, err, apperr.Conflict, `You already have a skill called "écrire UN MAIL"; choose another name.`)
	_, err = w.lib.CreateSkill(ctx, w.ann, "ÉCRIRE UN MAIL", "", "")
	wantKind(t, err, apperr.Conflict)
	if got, err := w.lib.SkillByName(ctx, w.ann, "écrire un MAIL"); err != nil || got.ID != k.ID {
		t.Fatalf("by name %+v, %v", got, err)
	}
	// Another person may use the same name.
	if _, err := w.lib.CreateSkill(ctx, w.bob, "Écrire un mail", "", ""); err != nil {
		t.Fatal(err)
	}
	// Renaming onto another of one's own names is a conflict; keeping
	// one's own name (in another case) is not.
	other, err := w.lib.CreateSkill(ctx, w.ann, "Summaries", "", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.lib.UpdateSkill(ctx, w.ann, other.ID, SkillPatch{Name: ptr("écrire un mail")})
	wantKind(t, err, apperr.Conflict)
	if up, err := w.lib.UpdateSkill(ctx, w.ann, other.ID, SkillPatch{Name: ptr("SUMMARIES")}); err != nil || up.Name != "SUMMARIES" {
		t.Fatalf("rename to own name %+v, %v", up, err)
	}

	for name, c := range map[string]struct{ name, desc, body string }{
		"blank name":     {" ", "", ""},
		"two-line name":  {"a\nb", "", ""},
		"long name":      {strings.Repeat("n", MaxSkillName+1), "", ""},
		"two-line desc":  {"ok", "one\ntwo", ""},
		"long desc":      {"ok", strings.Repeat("d", MaxSkillDescription+1), ""},
		"long body":      {"ok", "", strings.Repeat("b", MaxSkillBody+1)},
		"bad utf-8 body": {"ok", "", "\xff"},
		"bad utf-8 name": {"\xff", "", ""},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := w.lib.CreateSkill(ctx, w.ann, c.name, c.desc, c.body)
			wantKind(t, err, apperr.Invalid)
		})
	}
}

// skill_read names a skill from the index; one's own wins over one shared
// with one under the same name, and a shared one is read, never written.
func TestSkillByNamePrefersOwn(t *testing.T) {
	w := newItemsWorld(t)
	ctx := context.Background()
	shared, err := w.lib.CreateSkill(ctx, w.ann, "Review", "Ann's way", "ann's body")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.lib.SetShares(ctx, w.ann, store.KindSkill, int64(shared.ID), []store.Grantee{{GroupID: w.readers}}); err != nil {
		t.Fatal(err)
	}
	got, err := w.lib.SkillByName(ctx, w.bob, "  review ")
	if err != nil || got.ID != shared.ID {
		t.Fatalf("bob reads %+v, %v", got, err)
	}
	_, err = w.lib.UpdateSkill(ctx, w.bob, shared.ID, SkillPatch{Body: ptr("x")})
	wantMessage(t, err, apperr.Forbidden, "This skill is shared with you for reading only.")

	own, err := w.lib.CreateSkill(ctx, w.bob, "REVIEW", "Bob's way", "bob's body")
	if err != nil {
		t.Fatal(err)
	}
	got, err = w.lib.SkillByName(ctx, w.bob, "Review")
	if err != nil || got.ID != own.ID {
		t.Fatalf("bob reads %+v, want his own %d (%v)", got, own.ID, err)
	}
	// ann still reads hers.
	if got, err := w.lib.SkillByName(ctx, w.ann, "review"); err != nil || got.ID != shared.ID {
		t.Fatalf("ann reads %+v, %v", got, err)
	}
	list, err := w.lib.Skills(ctx, w.bob)
	if err != nil || len(list) != 2 || list[0].ID != own.ID || list[1].ID != shared.ID {
		t.Fatalf("bob's list %+v, %v", list, err)
	}
	_, err = w.lib.SkillByName(ctx, w.bob, "nothing")
	wantMessage(t, err, apperr.NotFound, "skill not found")
}
