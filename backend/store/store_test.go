package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func openTemp(t *testing.T) (*DB, string) {
	t.Helper()
	dir := t.TempDir()
	db, err := Open(context.Background(), filepath.Join(dir, "lembas.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, dir
}

func columnNames(t *testing.T, db *DB, table string) []string {
	t.Helper()
	cols, err := db.columns(context.Background(), table)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range cols {
		out = append(out, c.name)
	}
	return out
}

func TestFreshDatabaseReachesCurrentSchema(t *testing.T) {
	ctx := context.Background()
	db, dir := openTemp(t)
	rep, err := db.Sync(ctx, Current, filepath.Join(dir, "backups"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Snapshot != "" {
		t.Errorf("fresh database got a snapshot %s; nothing to protect yet", rep.Snapshot)
	}
	for _, tb := range Current.Tables {
		got := columnNames(t, db, tb.Name)
		var want []string
		for _, c := range tb.Columns {
			want = append(want, c.Name)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("table %s columns = %v, want %v", tb.Name, got, want)
		}
	}
	// Idempotent: a second sync finds nothing to do and takes no snapshot.
	rep, err = db.Sync(ctx, Current, filepath.Join(dir, "backups"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Applied) != 0 || rep.Snapshot != "" {
		t.Errorf("second sync applied %v (snapshot %q), want nothing", rep.Applied, rep.Snapshot)
	}
}

func TestOlderDatabaseGainsColumnsWithRowsIntact(t *testing.T) {
	ctx := context.Background()
	db, dir := openTemp(t)
	// The users table as an older release might have left it.
	for _, q := range []string{
		`CREATE TABLE users (id INTEGER PRIMARY KEY, username TEXT NOT NULL, is_admin INTEGER NOT NULL DEFAULT 0)`,
		`INSERT INTO users (username, is_admin) VALUES ('frodo', 1), ('sam', 0)`,
		`CREATE TABLE legacy_thing (x TEXT)`,
	} {
		if _, err := db.Write().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := db.Sync(ctx, Current, filepath.Join(dir, "backups"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Snapshot == "" {
		t.Fatal("no snapshot taken before changing a database with data")
	}
	snap, err := Open(ctx, rep.Snapshot)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	var n int
	if err := snap.Read().QueryRow(`SELECT count(*) FROM users`).Scan(&n); err != nil || n != 2 {
		t.Errorf("snapshot users = %d (%v), want 2", n, err)
	}
	if got := columnNames(t, snap, "users"); len(got) != 3 {
		t.Errorf("snapshot has columns %v; it should be the database before the change", got)
	}

	rows, err := db.Read().Query(`SELECT username, is_admin, display_name, status FROM users ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var name, display, status string
		var admin bool
		if err := rows.Scan(&name, &admin, &display, &status); err != nil {
			t.Fatal(err)
		}
		got = append(got, name+":"+map[bool]string{true: "admin", false: "user"}[admin]+":"+display+":"+status)
	}
	if want := "frodo:admin::active,sam:user::active"; strings.Join(got, ",") != want {
		t.Errorf("rows after sync = %v, want %s", got, want)
	}
	if !strings.Contains(strings.Join(rep.Extra, ","), "table legacy_thing") {
		t.Errorf("undeclared table not reported: %v", rep.Extra)
	}
	if _, err := db.Write().Exec(`SELECT x FROM legacy_thing`); err != nil {
		t.Errorf("undeclared table was touched: %v", err)
	}
}

func TestSyncRefusesNonAdditiveChanges(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		before string
		schema Schema
		want   string
	}{
		{
			name:   "retype",
			before: `CREATE TABLE t (id INTEGER PRIMARY KEY, n TEXT)`,
			schema: Schema{Tables: []Table{{Name: "t", Columns: []Column{{Name: "id", Type: "INTEGER PRIMARY KEY"}, {Name: "n", Type: "INTEGER"}}}}},
			want:   "column t.n is TEXT in the database but INTEGER",
		},
		{
			name:   "not null without default",
			before: `CREATE TABLE t (id INTEGER PRIMARY KEY)`,
			schema: Schema{Tables: []Table{{Name: "t", Columns: []Column{{Name: "id", Type: "INTEGER PRIMARY KEY"}, {Name: "n", Type: "TEXT NOT NULL"}}}}},
			want:   "needs a DEFAULT",
		},
		{
			name:   "unique column",
			before: `CREATE TABLE t (id INTEGER PRIMARY KEY)`,
			schema: Schema{Tables: []Table{{Name: "t", Columns: []Column{{Name: "id", Type: "INTEGER PRIMARY KEY"}, {Name: "n", Type: "TEXT UNIQUE"}}}}},
			want:   "cannot add a PRIMARY KEY or UNIQUE column",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, dir := openTemp(t)
			if _, err := db.Write().Exec(tt.before); err != nil {
				t.Fatal(err)
			}
			_, err := db.Sync(ctx, tt.schema, dir)
			if !IsManual(err) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want a manual-steps error containing %q", err, tt.want)
			}
			if got := columnNames(t, db, "t"); strings.Contains(strings.Join(got, ","), "n") && tt.name != "retype" {
				t.Errorf("column added despite the error: %v", got)
			}
		})
	}
}

var docsSchema = Schema{
	Tables: []Table{{
		Name: "docs",
		Columns: []Column{
			{Name: "id", Type: "INTEGER PRIMARY KEY"},
			{Name: "body", Type: "TEXT NOT NULL DEFAULT ''"},
			{Name: "status", Type: "TEXT NOT NULL DEFAULT 'final'"},
		},
	}},
}

func withFTS(s Schema) Schema {
	s.FTS = []FTS{{Name: "docs_fts", Table: "docs", RowID: "id", Columns: []string{"body"}, When: "status = 'final'"}}
	return s
}

func match(t *testing.T, db *DB, q string) []int64 {
	t.Helper()
	rows, err := db.Read().Query(`SELECT rowid FROM docs_fts WHERE docs_fts MATCH ? ORDER BY rowid`, q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		rows.Scan(&id)
		ids = append(ids, id)
	}
	return ids
}

func TestFTSIndexFollowsOnlyFinalRows(t *testing.T) {
	ctx := context.Background()
	db, dir := openTemp(t)
	if _, err := db.Sync(ctx, docsSchema, dir); err != nil {
		t.Fatal(err)
	}
	// Rows that exist before the index does are indexed when it is created.
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Write().Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`INSERT INTO docs (id, body) VALUES (1, 'lembas bread')`)
	exec(`INSERT INTO docs (id, body, status) VALUES (2, 'lembas draft', 'streaming')`)
	rep, err := db.Sync(ctx, withFTS(docsSchema), dir)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Snapshot == "" {
		t.Error("no snapshot before adding the FTS index")
	}
	if got := match(t, db, "lembas"); len(got) != 1 || got[0] != 1 {
		t.Fatalf("after fill: %v, want [1]", got)
	}
	exec(`UPDATE docs SET body = 'lembas waybread', status = 'final' WHERE id = 2`)
	exec(`INSERT INTO docs (id, body, status) VALUES (3, 'lembas growing', 'streaming')`)
	exec(`UPDATE docs SET body = 'lembas growing more' WHERE id = 3`)
	if got := match(t, db, "lembas"); len(got) != 2 {
		t.Fatalf("after updates: %v, want [1 2]", got)
	}
	exec(`UPDATE docs SET body = 'cram' WHERE id = 1`)
	exec(`DELETE FROM docs WHERE id = 2`)
	if got := match(t, db, "lembas"); len(got) != 0 {
		t.Fatalf("after edit and delete: %v, want none", got)
	}
	if got := match(t, db, "cram"); len(got) != 1 {
		t.Fatalf("edited row not indexed: %v", got)
	}
	// The index must agree with its content table (a delete that does not
	// mirror its insert corrupts an external-content index).
	if _, err := db.Write().Exec(`INSERT INTO docs_fts(docs_fts, rank) VALUES ('integrity-check', 0)`); err != nil {
		t.Fatalf("integrity-check: %v", err)
	}
	rep, err = db.Sync(ctx, withFTS(docsSchema), dir)
	if err != nil || len(rep.Applied) != 0 {
		t.Fatalf("second sync: %v %v", rep.Applied, err)
	}
}

func TestDriftedTriggerIsReplaced(t *testing.T) {
	ctx := context.Background()
	db, dir := openTemp(t)
	if _, err := db.Sync(ctx, withFTS(docsSchema), dir); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Write().Exec(`DROP TRIGGER docs_fts_au; CREATE TRIGGER docs_fts_au AFTER UPDATE ON docs BEGIN SELECT 1; END`); err != nil {
		t.Fatal(err)
	}
	rep, err := db.Sync(ctx, withFTS(docsSchema), dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(rep.Applied, ","), "replace trigger docs_fts_au") {
		t.Fatalf("applied %v, want the trigger replaced", rep.Applied)
	}
}

func TestReadPoolRefusesWrites(t *testing.T) {
	db, dir := openTemp(t)
	if _, err := db.Sync(context.Background(), Current, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Read().Exec(`INSERT INTO meta (key, value) VALUES ('x', 'y')`); err == nil {
		t.Fatal("read pool accepted a write")
	}
	var mode string
	db.Read().QueryRow(`PRAGMA journal_mode`).Scan(&mode)
	var fk int
	db.Read().QueryRow(`PRAGMA foreign_keys`).Scan(&fk)
	if mode != "wal" || fk != 1 {
		t.Errorf("read connection pragmas: journal_mode=%s foreign_keys=%d", mode, fk)
	}
}

func TestLockDirIsExclusive(t *testing.T) {
	dir := t.TempDir()
	l, err := LockDir(dir, "serve")
	if err != nil {
		t.Fatal(err)
	}
	_, err = LockDir(dir, "desktop")
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock: %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), "LLeMbas serve (pid") {
		t.Errorf("message does not say who holds it: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l2, err := LockDir(dir, "desktop")
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	l2.Release()
}

func TestBackupWhileWriting(t *testing.T) {
	ctx := context.Background()
	db, dir := openTemp(t)
	if _, err := db.Sync(ctx, Current, dir); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			db.SetSetting(ctx, "k", strings.Repeat("x", i%100))
		}
	}()
	dest := filepath.Join(dir, "snap", "backup.db")
	err := db.Backup(ctx, dest)
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dest)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("backup mode %v, want 0600 (it holds encrypted keys and chats)", fi.Mode().Perm())
	}
	snap, err := sql.Open("sqlite", dest)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	var res string
	if err := snap.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Errorf("integrity_check = %q, %v", res, err)
	}
	if err := db.Backup(ctx, dest); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("backup over an existing file: %v", err)
	}
	if err := db.Backup(ctx, db.Path()); err == nil {
		t.Error("backup onto the live database was allowed")
	}
	matches, _ := filepath.Glob(dest + ".partial-*")
	if len(matches) != 0 {
		t.Errorf("partial files left behind: %v", matches)
	}
}

func TestEnsureOwnerOnce(t *testing.T) {
	ctx := context.Background()
	db, dir := openTemp(t)
	if _, err := db.Sync(ctx, Current, dir); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	ids := make([]int64, 8)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u, err := db.EnsureOwner(ctx, "owner", "Owner")
			if err != nil {
				t.Error(err)
			}
			ids[i] = u.ID
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("owner ids differ: %v", ids)
		}
	}
	u, err := db.UserByID(ctx, ids[0])
	if err != nil || !u.IsAdmin || !u.IsOwner {
		t.Fatalf("owner = %+v, %v; want an admin owner", u, err)
	}
	counts, err := db.Counts(ctx)
	if err != nil || counts["users"] != 1 {
		t.Fatalf("counts = %v, %v", counts, err)
	}
}

func TestSeedSettingDoesNotOverwrite(t *testing.T) {
	ctx := context.Background()
	db, dir := openTemp(t)
	if _, err := db.Sync(ctx, Current, dir); err != nil {
		t.Fatal(err)
	}
	db.SeedSetting(ctx, "instance_name", "From env")
	db.SetSetting(ctx, "instance_name", "Edited")
	db.SeedSetting(ctx, "instance_name", "From env")
	if v, _, _ := db.Setting(ctx, "instance_name"); v != "Edited" {
		t.Fatalf("instance_name = %q; the database must win over the seed", v)
	}
}

// BenchmarkWrite is one durable write (synchronous=FULL, WAL) through the
// single write connection.
func BenchmarkWrite(b *testing.B) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(b.TempDir(), "lembas.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Sync(ctx, Current, b.TempDir()); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := db.SetSetting(ctx, "k", "v"); err != nil {
			b.Fatal(err)
		}
	}
}

func TestFTSUpdateTriggerWatchesOnlyItsColumns(t *testing.T) {
	f := FTS{Name: "docs_fts", Table: "docs", RowID: "id", Columns: []string{"body"}, When: "status != 'streaming' AND kind = 'x'"}
	if got := strings.Join(updateColumns(f), ","); got != "body,status,kind" {
		t.Errorf("update columns %q", got)
	}
	ctx := context.Background()
	db, dir := openTemp(t)
	if _, err := db.Sync(ctx, withFTS(docsSchema), dir); err != nil {
		t.Fatal(err)
	}
	var q string
	db.Read().QueryRow(`SELECT sql FROM sqlite_master WHERE name = 'docs_fts_au'`).Scan(&q)
	if !strings.Contains(q, "AFTER UPDATE OF body, status ON") {
		t.Errorf("trigger %s", q)
	}
}

func TestChangedFTSRuleRebuildsTheIndex(t *testing.T) {
	ctx := context.Background()
	db, dir := openTemp(t)
	if _, err := db.Sync(ctx, withFTS(docsSchema), dir); err != nil {
		t.Fatal(err)
	}
	exec := func(q string) {
		t.Helper()
		if _, err := db.Write().Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`INSERT INTO docs (id, body, status) VALUES (1, 'lembas final', 'final'), (2, 'lembas stopped', 'stopped')`)
	wider := docsSchema
	wider.FTS = []FTS{{Name: "docs_fts", Table: "docs", RowID: "id", Columns: []string{"body"}, When: "status != 'streaming'"}}
	rep, err := db.Sync(ctx, wider, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(rep.Applied, ","), "rebuild full-text index docs_fts") {
		t.Errorf("applied %v, want a rebuild", rep.Applied)
	}
	// Under the old index this update would delete a row never indexed.
	exec(`UPDATE docs SET body = 'cram stopped' WHERE id = 2`)
	if got := match(t, db, "lembas"); len(got) != 1 || got[0] != 1 {
		t.Errorf("after rebuild and edit: %v, want [1]", got)
	}
	if got := match(t, db, "cram"); len(got) != 1 {
		t.Errorf("edited stopped row not indexed under the new rule: %v", got)
	}
	exec(`INSERT INTO docs_fts(docs_fts, rank) VALUES ('integrity-check', 0)`)
	if rep, err := db.Sync(ctx, wider, dir); err != nil || len(rep.Applied) != 0 {
		t.Errorf("second sync: %v %v", rep.Applied, err)
	}
}
