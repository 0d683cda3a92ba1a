package store

import (
	"context"
	"errors"
	"testing"

	"github.com/llembas/lembas/backend/ids"
)

func newSession(hash string, user ids.UserID, now, expires int64) Session {
	return Session{TokenHash: hash, UserID: user, CreatedAt: now, LastSeenAt: now, ExpiresAt: expires, UserAgent: "test", IP: "192.0.2.1"}
}

func TestSessionsLiveUntilTheyExpire(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	u := addUser(t, db, "frodo")
	if err := db.CreateSession(ctx, newSession("h1", u, 1000, 5000)); err != nil {
		t.Fatal(err)
	}
	s, got, err := db.SessionUser(ctx, "h1", 4999)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != int64(u) || s.UserAgent != "test" || s.IP != "192.0.2.1" || s.ExpiresAt != 5000 {
		t.Errorf("SessionUser = %+v, %+v", s, got)
	}
	_, _, err = db.SessionUser(ctx, "h1", 5000)
	wantNotFound(t, "session at its expiry", err)
	_, _, err = db.SessionUser(ctx, "nope", 0)
	wantNotFound(t, "unknown session", err)

	// Renewal happens once per interval, even if asked twice.
	if ok, err := db.TouchSession(ctx, "h1", 2000, 9000, 1500); err != nil || !ok {
		t.Fatalf("first touch = %v, %v", ok, err)
	}
	if ok, _ := db.TouchSession(ctx, "h1", 2001, 9001, 1500); ok {
		t.Error("second touch within the interval renewed again")
	}
	if _, _, err := db.SessionUser(ctx, "h1", 8000); err != nil {
		t.Errorf("renewed session refused before its new expiry: %v", err)
	}

	n, err := db.DeleteExpiredSessions(ctx, 9000)
	if err != nil || n != 1 {
		t.Errorf("DeleteExpiredSessions = %d, %v; want 1", n, err)
	}
	wantNotFound(t, "DeleteSession(swept)", db.DeleteSession(ctx, "h1"))
}

func TestSessionsOnlyForActiveUsers(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	u, err := db.CreateUser(ctx, NewUser{Username: "pippin", Status: StatusPending})
	if err != nil {
		t.Fatal(err)
	}
	uid := ids.UserID(u.ID)
	wantNotFound(t, "session for a pending user", db.CreateSession(ctx, newSession("p", uid, 0, 1e15)))
	wantNotFound(t, "session for a missing user", db.CreateSession(ctx, newSession("m", 9999, 0, 1e15)))

	if err := db.SetStatus(ctx, uid, StatusActive); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateSession(ctx, newSession("p", uid, 0, 1e15)); err != nil {
		t.Fatal(err)
	}
	// A session whose user is disabled by hand (not through SetStatus)
	// is still refused: the status is checked on every read.
	if _, err := db.Write().Exec(`UPDATE users SET status = 'disabled' WHERE id = ?`, uid); err != nil {
		t.Fatal(err)
	}
	_, _, err = db.SessionUser(ctx, "p", 1)
	wantNotFound(t, "session of a disabled user", err)
	// SetStatus also removes the rows.
	db.Write().Exec(`UPDATE users SET status = 'active' WHERE id = ?`, uid)
	if err := db.SetStatus(ctx, uid, StatusDisabled); err != nil {
		t.Fatal(err)
	}
	if list, _ := db.UserSessions(ctx, uid); len(list) != 0 {
		t.Errorf("disabled user still has %d sessions", len(list))
	}
}

func TestSignOutEverywhere(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	a := addUser(t, db, "sam")
	b := addUser(t, db, "rosie")
	for _, s := range []Session{newSession("a1", a, 1, 1e15), newSession("a2", a, 2, 1e15), newSession("a3", a, 3, 1e15), newSession("b1", b, 1, 1e15)} {
		if err := db.CreateSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.CreateSession(ctx, newSession("a1", a, 1, 1e15)); err == nil {
		t.Error("a duplicate token hash was stored")
	}
	n, err := db.DeleteUserSessions(ctx, a, "a2")
	if err != nil || n != 2 {
		t.Errorf("DeleteUserSessions keeping a2 = %d, %v; want 2", n, err)
	}
	list, _ := db.UserSessions(ctx, a)
	if len(list) != 1 || list[0].TokenHash != "a2" {
		t.Errorf("sam's sessions = %+v, want only a2", list)
	}
	if n, _ := db.DeleteUserSessions(ctx, a, ""); n != 1 {
		t.Errorf("DeleteUserSessions all = %d, want 1", n)
	}
	if _, _, err := db.SessionUser(ctx, "b1", 10); err != nil {
		t.Errorf("another user's session was touched: %v", err)
	}
	if err := db.DeleteSession(ctx, "b1"); err != nil {
		t.Error(err)
	}
	if _, _, err := db.SessionUser(ctx, "b1", 10); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted session still valid: %v", err)
	}
}
