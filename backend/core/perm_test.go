//go:build unix

package core

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llembas/lembas/frontend"
)

// A data directory that already existed, open to others: starting warns
// about it, and what LLeMbas keeps in it (database, snapshots, files) is
// made private.
func TestDataDirectoryIsKeptPrivate(t *testing.T) {
	cfg := testConfig(t, true)
	if err := os.Chmod(cfg.DataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"backups", "files"} {
		if err := os.Mkdir(filepath.Join(cfg.DataDir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	oldSnap := filepath.Join(cfg.DataDir, "backups", "before-schema-old.db")
	if err := os.WriteFile(oldSnap, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	c, err := Open(context.Background(), cfg, Options{Mode: Serve, Version: "test", Files: frontend.FS(),
		Log: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !strings.Contains(log.String(), "data directory is open to other accounts") || !strings.Contains(log.String(), "mode=0755") {
		t.Errorf("no warning about the open data directory in the log:\n%s", log.String())
	}
	for _, p := range []string{cfg.DBPath(), cfg.DBPath() + "-wal", cfg.DBPath() + "-shm", oldSnap,
		filepath.Join(cfg.DataDir, "backups"), filepath.Join(cfg.DataDir, "files")} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Error(err)
			continue
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v, want private", p, fi.Mode().Perm())
		}
	}
}
