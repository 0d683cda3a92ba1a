package store

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/llembas/lembas/backend/ids"
)

// move runs reorder in a transaction of its own, as MoveFolder and
// MoveModel do.
func move(db *DB, list orderedList, user ids.UserID, id int64, index int) error {
	return db.WriteTx(context.Background(), func(tx *sql.Tx) error {
		return reorder(context.Background(), tx, list, user, id, index)
	})
}

// wantOrder reports an order that is not want.
func wantOrder(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s: %q, want %q", what, got, want)
	}
}

// folderOrderOf lists user's folders as name@position.
func folderOrderOf(t *testing.T, db *DB, user ids.UserID) string {
	t.Helper()
	fs, err := db.ListFolders(context.Background(), user)
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, f := range fs {
		parts = append(parts, fmt.Sprintf("%s@%d", f.Name, f.Position))
	}
	return strings.Join(parts, " ")
}

func TestReorderMovesOneRowAndRenumbersDensely(t *testing.T) {
	db := syncedTemp(t)
	frodo := addUser(t, db, "frodo")
	id := map[string]int64{}
	for _, n := range []string{"a", "b", "c", "d"} {
		f, err := db.CreateFolder(context.Background(), frodo, n)
		if err != nil {
			t.Fatal(err)
		}
		id[n] = int64(f.ID)
	}
	// Ties and gaps, as older rows and deletions leave them: the order
	// read is (position, id), and the first move numbers it densely.
	if _, err := db.Write().Exec(`UPDATE folders SET position = CASE name WHEN 'd' THEN 7 ELSE 3 END`); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		row   string
		index int
		want  string
	}{
		{"c", 1, "a@0 c@1 b@2 d@3"},
		{"a", 99, "c@0 b@1 d@2 a@3"},
		{"a", -1, "a@0 c@1 b@2 d@3"},
		{"b", 3, "a@0 c@1 d@2 b@3"},
		{"b", 3, "a@0 c@1 d@2 b@3"},
		{"d", 0, "d@0 a@1 c@2 b@3"},
	}
	for _, tt := range tests {
		if err := move(db, folderOrder, frodo, id[tt.row], tt.index); err != nil {
			t.Fatalf("move %s to %d: %v", tt.row, tt.index, err)
		}
		if got := folderOrderOf(t, db, frodo); got != tt.want {
			t.Errorf("move %s to %d: %q, want %q", tt.row, tt.index, got, tt.want)
		}
	}
}

func TestReorderRefusesRowsOutsideTheCallersList(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	frodo, sam := addUser(t, db, "frodo"), addUser(t, db, "sam")
	var frodos []int64
	for _, n := range []string{"a", "b"} {
		f, _ := db.CreateFolder(ctx, frodo, n)
		frodos = append(frodos, int64(f.ID))
	}
	samsFolder, _ := db.CreateFolder(ctx, sam, "garden")
	// A model of sam's own connection: a row of another list, and one
	// frodo does not see in the model list.
	samc, _ := db.CreateConnection(ctx, Actor{User: sam}, Connection{OwnerID: &sam, Name: "sam"})
	db.SyncModels(ctx, samc.ID, upstream("s1", "s2", "s3", "s4"))
	samsModel := int64(modelID(t, db, sam, "s4"))
	if samsModel == frodos[0] || samsModel == frodos[1] {
		t.Fatalf("model id %d is also one of frodo's folder ids; the case below would not test a foreign row", samsModel)
	}

	cases := []struct {
		what string
		list orderedList
		id   int64
	}{
		{"another user's folder", folderOrder, int64(samsFolder.ID)},
		{"a row of another list", folderOrder, samsModel},
		{"a row of nobody", folderOrder, 9999},
		{"another user's model", modelOrder, samsModel},
	}
	for _, c := range cases {
		wantNotFound(t, c.what, move(db, c.list, frodo, c.id, 0))
	}
	wantOrder(t, "frodo's folders after refused moves", folderOrderOf(t, db, frodo), "a@0 b@1")
	wantOrder(t, "sam's folders after refused moves", folderOrderOf(t, db, sam), "garden@0")
	wantOrder(t, "sam's models after refused moves", order(t, db, sam), "s1@0 s2@1 s3@2 s4@3")
}

// TestReorderUnseenRowsKeepTheirPlaces: in the one model order of the
// instance, a user's move passes over rows they do not see without moving
// them.
func TestReorderUnseenRowsKeepTheirPlaces(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	admin, _, c := adminConnection(t, db)
	frodo, sam := addUser(t, db, "frodo"), addUser(t, db, "sam")
	db.SyncModels(ctx, c.ID, upstream("a", "b"))
	samc, _ := db.CreateConnection(ctx, Actor{User: sam}, Connection{OwnerID: &sam, Name: "sam"})
	db.SyncModels(ctx, samc.ID, upstream("s1"))
	own, _ := db.CreateConnection(ctx, Actor{User: frodo}, Connection{OwnerID: &frodo, Name: "own"})
	db.SyncModels(ctx, own.ID, upstream("f1"))

	// Sam puts s1 between a and b; then frodo, who does not see s1, puts
	// f1 before b: after s1, which stays where sam put it.
	if err := move(db, modelOrder, sam, int64(modelID(t, db, sam, "s1")), 1); err != nil {
		t.Fatal(err)
	}
	if err := move(db, modelOrder, frodo, int64(modelID(t, db, frodo, "f1")), 1); err != nil {
		t.Fatal(err)
	}
	wantOrder(t, "frodo sees", order(t, db, frodo), "a@0 f1@2 b@3")
	wantOrder(t, "sam sees", order(t, db, sam), "a@0 s1@1 b@3")
	wantOrder(t, "admin sees", order(t, db, admin), "a@0 b@3")
}

// dense reports unless user's folders are n rows, each once, numbered 0…n-1.
func dense(db *DB, user ids.UserID, n int) error {
	fs, err := db.ListFolders(context.Background(), user)
	if err != nil {
		return err
	}
	seen := map[ids.FolderID]bool{}
	for i, f := range fs {
		if f.Position != int64(i) || seen[f.ID] {
			return fmt.Errorf("folder %d at %d (index %d, seen before %v)", f.ID, f.Position, i, seen[f.ID])
		}
		seen[f.ID] = true
	}
	if len(fs) != n {
		return fmt.Errorf("%d folders, want %d", len(fs), n)
	}
	return nil
}

// TestReorderConcurrentMovesKeepADenseOrder runs many moves at once: each
// reads and writes the order in one transaction, so none works from an order
// another has since rewritten, and every committed order (checked after
// each move, as any reader sees it) is every row once, numbered 0…n-1.
func TestReorderConcurrentMovesKeepADenseOrder(t *testing.T) {
	db := syncedTemp(t)
	frodo := addUser(t, db, "frodo")
	const n = 8
	var rows []int64
	for i := range n {
		f, err := db.CreateFolder(context.Background(), frodo, fmt.Sprint("f", i))
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, int64(f.ID))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for range 40 {
				if err := move(db, folderOrder, frodo, rows[r.IntN(n)], r.IntN(n+2)-1); err != nil {
					errs <- err
					return
				}
				if err := dense(db, frodo, n); err != nil {
					errs <- fmt.Errorf("an order read during concurrent moves: %w", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := dense(db, frodo, n); err != nil {
		t.Errorf("after concurrent moves: %v", err)
	}
}
