package library_test

import (
	"context"
	"testing"

	"github.com/llembas/lembas/backend/store"
)

// TestListsCountShares: the lists of bases, notes and skills carry how
// many each is shared with, counted in the listing query (the facade used
// to ask for each own item's shares, one query per row).
func TestListsCountShares(t *testing.T) {
	s := newShelf(t)
	ctx := context.Background()
	b := s.base(s.frodo, "Maps", nil)
	n, err := s.lib.CreateNote(ctx, s.frodo, "Seeds", "carrots")
	if err != nil {
		t.Fatal(err)
	}
	k, err := s.lib.CreateSkill(ctx, s.frodo, "Garden", "Plant things", "Dig.")
	if err != nil {
		t.Fatal(err)
	}
	to := []store.Grantee{{UserID: s.sam}, {UserID: s.admin}}
	for kind, id := range map[store.LibraryKind]int64{store.KindBase: int64(b.ID), store.KindNote: int64(n.ID), store.KindSkill: int64(k.ID)} {
		if _, err := s.lib.SetShares(ctx, s.frodo, kind, id, to); err != nil {
			t.Fatal(err)
		}
	}
	bases, err := s.lib.Bases(ctx, s.frodo)
	if err != nil || len(bases) != 1 || bases[0].SharedWith != 2 {
		t.Errorf("bases: %+v, %v; want one shared with 2", bases, err)
	}
	notes, err := s.lib.Notes(ctx, s.frodo, "", 0)
	if err != nil || len(notes) != 1 || notes[0].SharedWith != 2 {
		t.Errorf("notes: %+v, %v; want one shared with 2", notes, err)
	}
	found, err := s.lib.Notes(ctx, s.frodo, "carrots", 0)
	if err != nil || len(found) != 1 || found[0].SharedWith != 2 {
		t.Errorf("notes found: %+v, %v; want one shared with 2", found, err)
	}
	skills, err := s.lib.Skills(ctx, s.frodo)
	if err != nil || len(skills) != 1 || skills[0].SharedWith != 2 {
		t.Errorf("skills: %+v, %v; want one shared with 2", skills, err)
	}
	if one, err := s.lib.Note(ctx, s.frodo, n.ID); err != nil || one.SharedWith != 2 {
		t.Errorf("note: %+v, %v; want shared with 2", one, err)
	}
}
