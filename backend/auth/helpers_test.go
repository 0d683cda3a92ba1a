package auth

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/store/storetest"
)

// cheap are argon2id parameters fast enough for tests that hash a lot.
var cheap = Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}

// testDB opens a real database file with the current schema.
func testDB(t *testing.T) *store.DB {
	t.Helper()
	db := storetest.Open(t)
	return db
}

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// wantKind fails unless err is an apperr of kind k.
func wantKind(t *testing.T, what string, err error, k apperr.Kind) {
	t.Helper()
	if err == nil || apperr.KindOf(err) != k {
		t.Errorf("%s: err = %v, want kind %s", what, err, k)
	}
}

// fixture is a database with the services over it, on a test clock.
type fixture struct {
	db       *store.DB
	clock    *clock
	sessions *Sessions
	accounts *Accounts
}

func newFixture(t *testing.T, p Params) *fixture {
	t.Helper()
	f := &fixture{db: testDB(t), clock: newClock()}
	f.sessions = NewSessions(f.db, SessionOptions{Now: f.clock.Now})
	f.accounts = NewAccounts(f.db, f.sessions, AccountOptions{Params: p})
	return f
}

// user creates an account directly with a cheap hash of password.
func (f *fixture) user(t *testing.T, name, password, status string, admin bool) store.User {
	t.Helper()
	h, err := cheap.Hash(password)
	if err != nil {
		t.Fatal(err)
	}
	u, err := f.db.CreateUser(context.Background(), store.NewUser{Username: name, PasswordHash: h, Status: status, IsAdmin: admin})
	if err != nil {
		t.Fatal(err)
	}
	return u
}
