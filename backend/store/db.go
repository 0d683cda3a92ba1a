// Package store keeps everything LLeMbas persists in one SQLite file, through
// modernc.org/sqlite (pure Go, so the headless server builds with CGO off).
//
// All writes go through one connection (SQLite has one writer anyway, and a
// single Go-side writer turns lock contention into a queue instead of
// SQLITE_BUSY); reads use a separate pool of query-only connections. Pragmas
// are in the DSN so that every pooled connection gets them.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// DB is an open database: one write connection and a read pool.
type DB struct {
	path string
	w    *sql.DB
	r    *sql.DB
	// released is told the storage names of attachments whose rows went
	// with their messages (see OnFilesReleased).
	released func(storageNames []string)
	// stmts are prepared read statements for the queries every request
	// runs (the session check): SQLite's parser costs more than such a
	// query itself.
	stmts sync.Map // query string → *sql.Stmt
}

// readStmt returns the read pool's prepared statement for q, preparing it
// once.
func (db *DB) readStmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := db.stmts.Load(q); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := db.r.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if prev, loaded := db.stmts.LoadOrStore(q, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// prepared is the read pool through statements prepared once (readStmt).
// The reads every send makes (the chat, its model and connection, its
// path) go through it: SQLite's parser cost more than those queries. Only
// constant query strings may go through it: each one stays prepared.
type prepared struct{ db *DB }

// QueryRowContext runs q as a prepared statement.
func (p prepared) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	st, err := p.db.readStmt(ctx, q)
	if err != nil {
		return p.db.r.QueryRowContext(ctx, q, args...) // the Row carries the same error
	}
	return st.QueryRowContext(ctx, args...)
}

// QueryContext runs q as a prepared statement.
func (p prepared) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := p.db.readStmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

var pragmas = []string{
	"busy_timeout(5000)",
	"journal_mode(WAL)",
	"synchronous(FULL)",
	"foreign_keys(1)",
}

func dsn(path string, readOnly bool) string {
	q := url.Values{}
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		// BEGIN IMMEDIATE: take the write lock up front, so a transaction
		// never fails half-way when upgrading from a read lock.
		q.Set("_txlock", "immediate")
	}
	return "file:" + filepath.ToSlash(path) + "?" + q.Encode()
}

// Open opens (creating if needed) the database at path. It does not sync the
// schema; call Sync for that.
func Open(ctx context.Context, path string) (*DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	if err := privateFiles(path); err != nil {
		return nil, err
	}
	w, err := sql.Open("sqlite", dsn(path, false))
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxIdleTime(0)
	if err := w.PingContext(ctx); err != nil {
		w.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	n := max(2, runtime.NumCPU())
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	r.SetConnMaxIdleTime(5 * time.Minute)
	return &DB{path: path, w: w, r: r}, nil
}

// privateFiles makes the database file exist with mode 0600 before SQLite
// opens it, and takes group and other access away from one (or its -wal and
// -shm) left by an older version. SQLite creates a new database 0644 less
// the umask, and gives the -wal and -shm files the mode of the database
// file, so a database created here keeps all three private whatever the
// umask and however old the data directory is.
func privateFiles(path string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("create database %s: %w", path, err)
		}
		if f != nil {
			f.Close()
		}
	}
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		// Best effort: a reader that does not own the files (lembas info
		// as another account) cannot change them and need not.
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o077 != 0 {
			os.Chmod(p, fi.Mode().Perm()&0o700)
		}
	}
	return nil
}

// Path is the database file.
func (db *DB) Path() string { return db.path }

// Close closes both pools.
func (db *DB) Close() error {
	db.stmts.Range(func(_, st any) bool {
		st.(*sql.Stmt).Close()
		return true
	})
	return errors.Join(db.r.Close(), db.w.Close())
}

// Write returns the write connection. Every INSERT, UPDATE, DELETE and DDL
// goes through it.
func (db *DB) Write() *sql.DB { return db.w }

// Read returns the read pool. Its connections refuse writes (query_only).
func (db *DB) Read() *sql.DB { return db.r }

// WriteTx runs fn in a write transaction, committing when fn returns nil.
func (db *DB) WriteTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// Size is the bytes on disk of the database with its WAL.
func (db *DB) Size() int64 {
	var total int64
	for _, p := range []string{db.path, db.path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			total += fi.Size()
		}
	}
	return total
}

// Backup writes a consistent snapshot of the database to dest with VACUUM
// INTO, which is safe while other connections read and write. It writes to a
// temporary file beside dest and renames it, so dest is never half-written;
// an existing dest is refused rather than overwritten.
func (db *DB) Backup(ctx context.Context, dest string) error {
	dest, err := filepath.Abs(dest)
	if err != nil {
		return err
	}
	if _, err := os.Stat(dest); err == nil {
		return fmt.Errorf("%s already exists; choose a new file name", dest)
	}
	if same, _ := sameFile(dest, db.path); same {
		return fmt.Errorf("%s is the live database", dest)
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o700); err != nil {
		return fmt.Errorf("create backup directory: %w", err)
	}
	tmp := fmt.Sprintf("%s.partial-%d", dest, os.Getpid())
	os.Remove(tmp)
	// VACUUM INTO accepts an empty file and keeps its mode: created 0600
	// here, the snapshot is never readable by others, not even until the
	// chmod below.
	if f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close()
	}
	// The read pool is query_only, which VACUUM INTO respects; the write
	// connection would queue behind streaming checkpoints. A dedicated
	// connection does neither.
	c, err := sql.Open("sqlite", dsn(db.path, false))
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.ExecContext(ctx, "VACUUM INTO ?", tmp); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("snapshot to %s: %w", dest, err)
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, dest); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("move snapshot into place: %w", err)
	}
	return nil
}

func sameFile(a, b string) (bool, error) {
	fa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(fa, fb), nil
}
