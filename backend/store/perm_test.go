//go:build unix

package store

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// The database and its -wal and -shm files are private whatever the umask,
// including a database left 0644 by an older version, and so are snapshots.
func TestDatabaseFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "lembas.db")
	check := func(when string, paths ...string) {
		t.Helper()
		for _, p := range paths {
			fi, err := os.Stat(p)
			if err != nil {
				t.Errorf("%s: %v", when, err)
				continue
			}
			if fi.Mode().Perm()&0o077 != 0 {
				t.Errorf("%s: %s has mode %v, want no access for group and others", when, filepath.Base(p), fi.Mode().Perm())
			}
		}
	}
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Sync(ctx, Current, filepath.Join(dir, "backups")); err != nil {
		t.Fatal(err)
	}
	check("new database", path, path+"-wal", path+"-shm")
	snap := filepath.Join(dir, "backups", "snap.db")
	if err := db.Backup(ctx, snap); err != nil {
		t.Fatal(err)
	}
	check("snapshot", snap)
	db.Close()

	// An older version left them world-readable.
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if _, err := os.Stat(p); err == nil {
			os.Chmod(p, 0o644)
		}
	}
	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Write().Exec(`INSERT INTO settings (key, value) VALUES ('x', 'y')`); err != nil {
		t.Fatal(err)
	}
	check("reopened database", path, path+"-wal", path+"-shm")
}
