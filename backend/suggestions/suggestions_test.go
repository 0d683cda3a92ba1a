package suggestions

import (
	"context"
	"testing"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store/storetest"
)

func titles(list []Suggestion) []string {
	out := []string{}
	for _, s := range list {
		out = append(out, s.Title)
	}
	return out
}

// TestSeededOnce: the defaults arrive once; deleting them sticks across
// a second Seed (a restart).
func TestSeededOnce(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	user, _ := storetest.OwnerWithModel(t, db)
	s := New(db)
	if err := s.Seed(ctx); err != nil {
		t.Fatal(err)
	}
	list, err := s.List(ctx, user, nil)
	if err != nil || len(list) != len(Defaults) {
		t.Fatalf("seeded: %v %v", titles(list), err)
	}
	for _, x := range list {
		if err := s.Delete(ctx, x.ID); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Seed(ctx); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.List(ctx, user, nil); len(list) != 0 {
		t.Fatalf("after deleting them and seeding again: %v", titles(list))
	}
}

// TestPerModelAndOrder: a model's own cards come first and only with it;
// a model the person cannot use counts as none; Reorder orders.
func TestPerModelAndOrder(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	user, model := storetest.OwnerWithModel(t, db)
	s := New(db)
	a, err := s.Create(ctx, Input{Title: "A", Prompt: "a"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := s.Create(ctx, Input{Title: "B", Prompt: "b", Send: true})
	m, err := s.Create(ctx, Input{Title: "Only with the model", Prompt: "m", ModelID: &model})
	if err != nil || m.ModelID == nil || *m.ModelID != model {
		t.Fatalf("per-model: %+v %v", m, err)
	}
	if got := titles(must(s.List(ctx, user, nil))); len(got) != 2 || got[0] != "A" || got[1] != "B" {
		t.Errorf("no model: %v", got)
	}
	if got := titles(must(s.List(ctx, user, &model))); len(got) != 3 || got[0] != "Only with the model" {
		t.Errorf("with the model: %v", got)
	}
	other := ids.ModelID(999)
	if got := titles(must(s.List(ctx, user, &other))); len(got) != 2 {
		t.Errorf("a model not there: %v", got)
	}
	if err := s.Reorder(ctx, []int64{b.ID, a.ID}); err != nil {
		t.Fatal(err)
	}
	if got := titles(must(s.Admin(ctx))); got[0] != "B" || got[1] != "A" || got[2] != "Only with the model" {
		t.Errorf("reordered: %v", got)
	}
	for _, in := range []Input{{Title: "", Prompt: "x"}, {Title: "x", Prompt: " "}, {Title: "two\nlines", Prompt: "x"}} {
		if _, err := s.Create(ctx, in); apperr.KindOf(err) != apperr.Invalid {
			t.Errorf("%+v: %v", in, err)
		}
	}
	if _, err := s.Update(ctx, 999, Input{Title: "x", Prompt: "x"}); apperr.KindOf(err) != apperr.NotFound {
		t.Errorf("update of none: %v", err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
