package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrLocked is returned by LockDir when another process holds the data
// directory.
var ErrLocked = errors.New("data directory is in use")

// Lock is an exclusive lock on a data directory, held for the life of the
// process. One process per data directory: a desktop app and a --serve must
// never share a database (generation, checkpoints and the key record all
// assume a single owner).
type Lock struct {
	f    *os.File
	path string
}

// LockDir takes the exclusive lock on dir, recording who holds it (mode and
// pid) so that a refused second process can say who is in the way.
func LockDir(dir, mode string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	path := filepath.Join(dir, "lembas.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := lockFile(f); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		who := strings.TrimSpace(string(holder))
		if who == "" {
			who = "another process"
		}
		return nil, fmt.Errorf("%w: %s is already using %s (stop it, or point LEMBAS_DATA_DIR elsewhere): %w",
			ErrLocked, who, dir, err)
	}
	f.Truncate(0)
	fmt.Fprintf(f, "LLeMbas %s (pid %d)\n", mode, os.Getpid())
	f.Sync()
	return &Lock{f: f, path: path}, nil
}

// Release drops the lock. The file stays: removing it would race with a
// process that has just opened it.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	l.f.Truncate(0)
	err := unlockFile(l.f)
	l.f.Close()
	l.f = nil
	return err
}
