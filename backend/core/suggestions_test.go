package core

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/apperr"
)

// TestMemberCannotEditSuggestions: a member lists the cards and changes
// none of them; an administrator can.
func TestMemberCannotEditSuggestions(t *testing.T) {
	w := newWorld(t)
	c := w.c
	ctx := context.Background()
	member := api.Caller{UserID: int64(mkUser(t, w)), Via: "test"}
	call := func(who api.Caller, method string, args ...any) api.Result {
		b, _ := json.Marshal(args)
		return c.Dispatcher.Call(ctx, who, method, b)
	}
	res := call(member, "Suggestions.List", nil)
	var list []api.Suggestion
	if b, _ := json.Marshal(res.Result); res.Error != nil || json.Unmarshal(b, &list) != nil || len(list) != 4 {
		t.Fatalf("a member lists the seeded cards: %+v", res)
	}
	for _, m := range []struct {
		name string
		args []any
	}{
		{"Suggestions.Admin", nil},
		{"Suggestions.Create", []any{map[string]any{"title": "x", "prompt": "x"}}},
		{"Suggestions.Update", []any{list[0].ID, map[string]any{"title": "x", "prompt": "x"}}},
		{"Suggestions.Delete", []any{list[0].ID}},
		{"Suggestions.Reorder", []any{[]int64{list[1].ID, list[0].ID}}},
	} {
		if r := call(member, m.name, m.args...); r.Error == nil || r.Error.Kind != apperr.Forbidden {
			t.Errorf("%s as a member: %+v", m.name, r)
		}
	}
	if r := call(c.OwnerCaller(), "Suggestions.Delete", list[0].ID); r.Error != nil {
		t.Fatalf("an administrator deletes one: %+v", r.Error)
	}
}
