package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/ids"
)

func upstream(names ...string) []UpstreamModel {
	var out []UpstreamModel
	for _, n := range names {
		out = append(out, UpstreamModel{ID: n, Meta: json.RawMessage(`{"id":"` + n + `"}`)})
	}
	return out
}

// order lists the upstream ids user sees, with their positions and missing marks.
func order(t *testing.T, db *DB, user ids.UserID) string {
	t.Helper()
	ms, _, err := db.ListModels(context.Background(), user, ModelFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, m := range ms {
		s := fmt.Sprintf("%s@%d", m.UpstreamID, m.Position)
		if m.Missing {
			s += "!"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

func adminConnection(t *testing.T, db *DB) (ids.UserID, Actor, Connection) {
	t.Helper()
	admin := addUser(t, db, "admin")
	a := Actor{User: admin, Admin: true}
	c, err := db.CreateConnection(context.Background(), a, Connection{Name: "llama", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	return admin, a, c
}

func modelID(t *testing.T, db *DB, user ids.UserID, upstreamID string) ids.ModelID {
	t.Helper()
	ms, _, err := db.ListModels(context.Background(), user, ModelFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.UpstreamID == upstreamID {
			return m.ID
		}
	}
	t.Fatalf("no model %s", upstreamID)
	return 0
}

func TestSyncModelsKeepsOrderAndMarksMissing(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	admin, a, c := adminConnection(t, db)

	res, err := db.SyncModels(ctx, c.ID, upstream("a", "b", "c"))
	if err != nil || res.Added != 3 {
		t.Fatalf("first sync: %+v, %v", res, err)
	}
	if got, want := order(t, db, admin), "a@0 b@1 c@2"; got != want {
		t.Fatalf("after first sync %q, want %q", got, want)
	}
	if err := db.MoveModel(ctx, a, modelID(t, db, admin, "c"), 0); err != nil {
		t.Fatal(err)
	}
	// The endpoint now lists them in another order, drops b and adds d.
	res, err = db.SyncModels(ctx, c.ID, upstream("d", "a", "c"))
	if err != nil || res.Added != 1 || res.Missing != 1 {
		t.Fatalf("second sync: %+v, %v", res, err)
	}
	if got, want := order(t, db, admin), "c@0 a@1 b@2! d@3"; got != want {
		t.Fatalf("after second sync %q, want %q (the admin's order kept, b missing, d last)", got, want)
	}
	res, err = db.SyncModels(ctx, c.ID, upstream("a", "b", "c", "d", "d"))
	if err != nil || res.Returned != 1 || res.Added != 0 || res.Missing != 0 {
		t.Fatalf("third sync: %+v, %v", res, err)
	}
	if got, want := order(t, db, admin), "c@0 a@1 b@2 d@3"; got != want {
		t.Fatalf("after b returned %q, want %q", got, want)
	}
	if _, err := db.SyncModels(ctx, 999, upstream("x")); !errors.Is(err, ErrNotFound) {
		t.Errorf("sync of a missing connection: %v", err)
	}
}

func TestSyncModelsRespectsAdminContextLength(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	admin, a, c := adminConnection(t, db)
	if _, err := db.SyncModels(ctx, c.ID, []UpstreamModel{{ID: "m", ContextLength: 4096}}); err != nil {
		t.Fatal(err)
	}
	id := modelID(t, db, admin, "m")
	if _, err := db.UpdateModel(ctx, a, id, ModelSettings{DisplayName: "M", Enabled: true, ContextLength: 32000}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SyncModels(ctx, c.ID, []UpstreamModel{{ID: "m", ContextLength: 8192}}); err != nil {
		t.Fatal(err)
	}
	m, _ := db.ModelByID(ctx, admin, id)
	if m.ContextLength != 32000 || !m.ContextLengthSet {
		t.Errorf("context length %d (set %v) after refresh, want the admin's 32000", m.ContextLength, m.ContextLengthSet)
	}
	if _, err := db.UpdateModel(ctx, a, id, ModelSettings{DisplayName: "M", Enabled: true}); err != nil {
		t.Fatal(err)
	}
	m, _ = db.ModelByID(ctx, admin, id)
	if m.ContextLength != 8192 || m.ContextLengthSet {
		t.Errorf("context length %d (set %v) after clearing, want the endpoint's 8192", m.ContextLength, m.ContextLengthSet)
	}
	// An endpoint that stops reporting one does not erase what it said.
	if _, err := db.SyncModels(ctx, c.ID, []UpstreamModel{{ID: "m"}}); err != nil {
		t.Fatal(err)
	}
	if m, _ = db.ModelByID(ctx, admin, id); m.ContextLength != 8192 {
		t.Errorf("context length %d after an endpoint without one, want 8192", m.ContextLength)
	}
}

func TestMoveModelRenumbersDensely(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	admin, a, c := adminConnection(t, db)
	if _, err := db.SyncModels(ctx, c.ID, upstream("a", "b", "c", "d", "e")); err != nil {
		t.Fatal(err)
	}
	// Leave a gap in the numbering, as deleted connections do.
	if _, err := db.Write().Exec(`UPDATE models SET position = position * 10`); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		model string
		to    int
		want  string
	}{
		{"e", 0, "e@0 a@1 b@2 c@3 d@4"},
		{"e", 2, "a@0 b@1 e@2 c@3 d@4"},
		{"a", 99, "b@0 e@1 c@2 d@3 a@4"},
		{"c", -3, "c@0 b@1 e@2 d@3 a@4"},
		{"c", 0, "c@0 b@1 e@2 d@3 a@4"},
	}
	for _, tt := range tests {
		if err := db.MoveModel(ctx, a, modelID(t, db, admin, tt.model), tt.to); err != nil {
			t.Fatal(err)
		}
		if got := order(t, db, admin); got != tt.want {
			t.Errorf("move %s to %d: %q, want %q", tt.model, tt.to, got, tt.want)
		}
	}

	// A user's own model moves within the list that user sees; models the
	// user cannot see keep their relative order.
	frodo, sam := addUser(t, db, "frodo"), addUser(t, db, "sam")
	own, _ := db.CreateConnection(ctx, Actor{User: frodo}, Connection{OwnerID: &frodo, Name: "own"})
	samc, _ := db.CreateConnection(ctx, Actor{User: sam}, Connection{OwnerID: &sam, Name: "sam"})
	db.SyncModels(ctx, samc.ID, upstream("s1"))
	db.SyncModels(ctx, own.ID, upstream("f1"))
	if got, want := order(t, db, frodo), "c@0 b@1 e@2 d@3 a@4 f1@6"; got != want {
		t.Fatalf("frodo sees %q, want %q", got, want)
	}
	if err := db.MoveModel(ctx, Actor{User: frodo}, modelID(t, db, frodo, "f1"), 1); err != nil {
		t.Fatal(err)
	}
	if got, want := order(t, db, frodo), "c@0 f1@1 b@2 e@3 d@4 a@5"; got != want {
		t.Errorf("frodo after move %q, want %q", got, want)
	}
	if got, want := order(t, db, sam), "c@0 b@2 e@3 d@4 a@5 s1@6"; got != want {
		t.Errorf("sam after frodo's move %q, want %q", got, want)
	}
	if err := db.MoveModel(ctx, Actor{User: frodo}, modelID(t, db, frodo, "c"), 3); !errors.Is(err, ErrForbidden) {
		t.Errorf("non-admin moved an instance-wide model: %v", err)
	}
	wantNotFound(t, "MoveModel of another user's", db.MoveModel(ctx, Actor{User: sam}, modelID(t, db, frodo, "f1"), 0))
}

func TestModelsAreScopedByConnectionOwner(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	frodo, sam := addUser(t, db, "frodo"), addUser(t, db, "sam")
	own, _ := db.CreateConnection(ctx, Actor{User: frodo}, Connection{OwnerID: &frodo, Name: "own", Enabled: true})
	db.SyncModels(ctx, own.ID, upstream("secret-model"))
	id := modelID(t, db, frodo, "secret-model")

	_, err := db.ModelByID(ctx, sam, id)
	wantNotFound(t, "ModelByID of another user's", err)
	_, err = db.UpdateModel(ctx, Actor{User: sam, Admin: true}, id, ModelSettings{})
	wantNotFound(t, "UpdateModel of another user's", err)
	wantNotFound(t, "SetModelAvatar of another user's", db.SetModelAvatar(ctx, Actor{User: sam}, id, []byte("x"), "image/png"))
	if ms, total, _ := db.ListModels(ctx, sam, ModelFilter{}); len(ms) != 0 || total != 0 {
		t.Errorf("sam lists %d models of frodo's connection", total)
	}

	// Avatars: set, read, cleared; another user gets nothing.
	_, _, err = db.ModelAvatar(ctx, frodo, id)
	wantNotFound(t, "ModelAvatar before one is set", err)
	if err := db.SetModelAvatar(ctx, Actor{User: frodo}, id, []byte("\x89PNG"), "image/png"); err != nil {
		t.Fatal(err)
	}
	data, typ, err := db.ModelAvatar(ctx, frodo, id)
	if err != nil || string(data) != "\x89PNG" || typ != "image/png" {
		t.Errorf("avatar = %q %q %v", data, typ, err)
	}
	_, _, err = db.ModelAvatar(ctx, sam, id)
	wantNotFound(t, "ModelAvatar of another user's", err)
	if m, _ := db.ModelByID(ctx, frodo, id); m.AvatarType != "image/png" {
		t.Errorf("AvatarType = %q", m.AvatarType)
	}
	if err := db.SetModelAvatar(ctx, Actor{User: frodo}, id, nil, "image/png"); err != nil {
		t.Fatal(err)
	}
	_, _, err = db.ModelAvatar(ctx, frodo, id)
	wantNotFound(t, "ModelAvatar after removal", err)
}

func TestListModelsFiltersAndPages(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	admin, a, c := adminConnection(t, db)
	other, _ := db.CreateConnection(ctx, a, Connection{Name: "off", Enabled: false})
	db.SyncModels(ctx, c.ID, upstream("qwen3-8b", "llama-3.1-70b", "gemma-2", "Qwen2.5-Coder", "phi-4"))
	db.SyncModels(ctx, other.ID, upstream("qwen-elsewhere"))
	if _, err := db.UpdateModel(ctx, a, modelID(t, db, admin, "phi-4"),
		ModelSettings{DisplayName: "Phí", Description: "Small but QWEN-adjacent", Enabled: true,
			Capabilities: Capabilities{Reasoning: true}, Params: Params{Temperature: ptr(0.6), ReasoningEffort: ptr("high")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateModel(ctx, a, modelID(t, db, admin, "gemma-2"), ModelSettings{Enabled: false}); err != nil {
		t.Fatal(err)
	}
	ids := func(ms []Model) string {
		var s []string
		for _, m := range ms {
			s = append(s, m.UpstreamID)
		}
		return strings.Join(s, ",")
	}
	tests := []struct {
		f         ModelFilter
		want      string
		wantTotal int
	}{
		{ModelFilter{Query: "QWEN"}, "qwen3-8b,Qwen2.5-Coder,phi-4,qwen-elsewhere", 4},
		{ModelFilter{Query: "qwen", ConnectionID: c.ID}, "qwen3-8b,Qwen2.5-Coder,phi-4", 3},
		{ModelFilter{Query: "qwen", EnabledOnly: true}, "qwen3-8b,Qwen2.5-Coder,phi-4", 3},
		{ModelFilter{Query: "phí"}, "phi-4", 1},
		{ModelFilter{Offset: 1, Limit: 2}, "llama-3.1-70b,gemma-2", 6},
		{ModelFilter{EnabledOnly: true, Offset: 3, Limit: 2}, "phi-4", 4},
		{ModelFilter{Offset: 10, Limit: 2}, "", 6},
	}
	for _, tt := range tests {
		got, total, err := db.ListModels(ctx, admin, tt.f)
		if err != nil {
			t.Fatal(err)
		}
		if ids(got) != tt.want || total != tt.wantTotal {
			t.Errorf("%+v: %s (total %d), want %s (%d)", tt.f, ids(got), total, tt.want, tt.wantTotal)
		}
	}
	m, _ := db.ModelByID(ctx, admin, modelID(t, db, admin, "phi-4"))
	if !m.Capabilities.Reasoning || m.Params.Temperature == nil || *m.Params.Temperature != 0.6 ||
		*m.Params.ReasoningEffort != "high" || m.Params.TopP != nil || string(m.UpstreamMeta) != `{"id":"phi-4"}` {
		t.Errorf("model round trip: %+v", m)
	}
}

// TestMoveModelToTakesTheNeighboursPlace is the Models page's Move up and
// Move down: the place is named by the neighbour, because the page does not
// know the neighbour's index among every row in the one order. Sending the
// neighbour's stored position as an index (what the page did) moved nothing
// once another user's private model sat first in the order.
func TestMoveModelToTakesTheNeighboursPlace(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	admin, a, c := adminConnection(t, db)
	if _, err := db.SyncModels(ctx, c.ID, upstream("a", "b", "c")); err != nil {
		t.Fatal(err)
	}
	frodo := addUser(t, db, "frodo")
	own, _ := db.CreateConnection(ctx, Actor{User: frodo}, Connection{OwnerID: &frodo, Name: "own"})
	db.SyncModels(ctx, own.ID, upstream("f1"))
	if err := db.MoveModel(ctx, Actor{User: frodo}, modelID(t, db, frodo, "f1"), 0); err != nil {
		t.Fatal(err)
	}
	if got, want := order(t, db, admin), "a@1 b@2 c@3"; got != want {
		t.Fatalf("admin sees %q, want %q", got, want)
	}
	id := func(name string) ids.ModelID { return modelID(t, db, admin, name) }
	steps := []struct {
		model, to, want string
	}{
		{"c", "b", "a@1 c@2 b@3"}, // up
		{"a", "c", "c@1 a@2 b@3"}, // down
		{"b", "c", "b@1 c@2 a@3"}, // up past two
		{"b", "b", "b@1 c@2 a@3"}, // onto itself: nothing
	}
	for _, s := range steps {
		if err := db.MoveModelTo(ctx, a, id(s.model), id(s.to)); err != nil {
			t.Fatal(err)
		}
		if got := order(t, db, admin); got != s.want {
			t.Errorf("move %s to %s: %q, want %q", s.model, s.to, got, s.want)
		}
	}
	if got, want := order(t, db, frodo), "f1@0 b@1 c@2 a@3"; got != want {
		t.Errorf("frodo's own model lost its place: %q, want %q", got, want)
	}
	wantNotFound(t, "MoveModelTo a model the mover does not see", db.MoveModelTo(ctx, a, id("a"), modelID(t, db, frodo, "f1")))
}
