package store

import (
	"context"
	"slices"
	"testing"

	"github.com/llembas/lembas/backend/ids"
)

// sees reports whether user may use model id.
func sees(t *testing.T, db *DB, user ids.UserID, id ids.ModelID) bool {
	t.Helper()
	return db.CanSeeModel(context.Background(), user, id) == nil
}

// Deleting the only group (or person) a model was shared with must not open
// the model to everyone: the access rows cascade away, and "no rows" used to
// mean "everyone".
func TestRestrictedModelStaysClosedWhenItsListEmpties(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	admin, _, conn := adminConnection(t, db)
	if _, err := db.Write().Exec(`UPDATE users SET is_admin = 1 WHERE id = ?`, admin); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SyncModels(ctx, conn.ID, upstream("for-cooks", "for-pippin", "open")); err != nil {
		t.Fatal(err)
	}
	cooks, pippin, frodo := addUser(t, db, "sam"), addUser(t, db, "pippin"), addUser(t, db, "frodo")
	g, err := db.CreateGroup(ctx, "Cooks", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.AddGroupMember(ctx, g.ID, cooks); err != nil {
		t.Fatal(err)
	}
	forCooks, forPippin, open := modelID(t, db, admin, "for-cooks"), modelID(t, db, admin, "for-pippin"), modelID(t, db, admin, "open")
	if err := db.SetModelAccess(ctx, forCooks, ModelAccess{Groups: []int64{g.ID}}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetModelAccess(ctx, forPippin, ModelAccess{Users: []ids.UserID{pippin}}); err != nil {
		t.Fatal(err)
	}
	if !sees(t, db, cooks, forCooks) || sees(t, db, frodo, forCooks) || !sees(t, db, pippin, forPippin) || sees(t, db, frodo, forPippin) {
		t.Fatal("the access lists do not apply before anything is deleted")
	}

	if err := db.DeleteGroup(ctx, g.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Write().Exec(`DELETE FROM users WHERE id = ?`, pippin); err != nil {
		t.Fatal(err)
	}
	for _, m := range []ids.ModelID{forCooks, forPippin} {
		for _, u := range []ids.UserID{cooks, frodo} {
			if sees(t, db, u, m) {
				t.Errorf("user %d sees model %d after its list emptied", u, m)
			}
		}
		if !sees(t, db, admin, m) {
			t.Errorf("the administrator lost model %d", m)
		}
		acc, err := db.ModelAccessOf(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		if acc.Everyone() || !acc.Restricted || len(acc.Users)+len(acc.Groups) != 0 {
			t.Errorf("access of model %d = %+v, want restricted to nobody", m, acc)
		}
	}
	if !sees(t, db, frodo, open) {
		t.Error("a model never restricted is closed")
	}
	ms, _, err := db.ListModels(ctx, frodo, ModelFilter{})
	if err != nil || len(ms) != 1 || ms[0].ID != open {
		t.Errorf("frodo lists %+v (%v), want only the open model", ms, err)
	}

	// An administrator opening it again is what opens it.
	if err := db.SetModelAccess(ctx, forCooks, ModelAccess{}); err != nil {
		t.Fatal(err)
	}
	if !sees(t, db, frodo, forCooks) {
		t.Error("opening the model to everyone did not open it")
	}
	if acc, _ := db.ModelAccessOf(ctx, forCooks); !acc.Everyone() {
		t.Errorf("access after opening = %+v", acc)
	}
}

// A database from before the restricted flag: models that had access rows
// become restricted when the column is added, so deleting their groups later
// keeps them closed.
func TestRestrictedFlagIsFilledForExistingLists(t *testing.T) {
	ctx := context.Background()
	db, dir := openTemp(t)
	old := Schema{FTS: Current.FTS}
	for _, tb := range Current.Tables {
		if tb.Name == "models" {
			tb.Columns = slices.DeleteFunc(slices.Clone(tb.Columns), func(c Column) bool { return c.Name == "restricted" })
		}
		old.Tables = append(old.Tables, tb)
	}
	if _, err := db.Sync(ctx, old, dir); err != nil {
		t.Fatal(err)
	}
	_, _, conn := adminConnection(t, db)
	if _, err := db.SyncModels(ctx, conn.ID, upstream("listed", "open")); err != nil {
		t.Fatal(err)
	}
	frodo := addUser(t, db, "frodo")
	// The code of today cannot list models on the old schema: ids by hand.
	var listed, open ids.ModelID
	db.Read().QueryRow(`SELECT id FROM models WHERE upstream_id = 'listed'`).Scan(&listed)
	db.Read().QueryRow(`SELECT id FROM models WHERE upstream_id = 'open'`).Scan(&open)
	res, err := db.Write().Exec(`INSERT INTO groups (name) VALUES ('Cooks')`)
	if err != nil {
		t.Fatal(err)
	}
	g, _ := res.LastInsertId()
	if _, err := db.Write().Exec(`INSERT INTO model_access (model_id, group_id) VALUES (?, ?)`, listed, g); err != nil {
		t.Fatal(err)
	}

	rep, err := db.Sync(ctx, Current, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rep.Applied, "fill column models.restricted") {
		t.Errorf("applied %v, want the fill", rep.Applied)
	}
	if err := db.DeleteGroup(ctx, g); err != nil {
		t.Fatal(err)
	}
	if sees(t, db, frodo, listed) {
		t.Error("a model listed before the upgrade opened when its group was deleted")
	}
	if !sees(t, db, frodo, open) {
		t.Error("a model open before the upgrade is closed")
	}
	// Syncing again changes nothing (the fill runs once, with the column).
	if rep, err := db.Sync(ctx, Current, dir); err != nil || len(rep.Applied) != 0 {
		t.Errorf("second sync: %v %v", rep.Applied, err)
	}
}
