package auth

import (
	"context"
	"encoding/base64"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

func TestTokensAreRandomAndOnlyTheirHashIsStored(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, cheap)
	u := f.user(t, "frodo", "ring-bearer-1", store.StatusActive, true)
	token, _, err := f.sessions.Create(ctx, ids.UserID(u.ID), Client{UserAgent: "Firefox", IP: "192.0.2.1"})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(raw) != 32 {
		t.Errorf("token %q is not 32 bytes of base64url: %d bytes, %v", token, len(raw), err)
	}
	other, _ := NewToken()
	if other == token {
		t.Error("two tokens are equal")
	}
	list, _ := f.db.UserSessions(ctx, ids.UserID(u.ID))
	if len(list) != 1 || list[0].TokenHash != HashToken(token) || list[0].UserAgent != "Firefox" {
		t.Fatalf("stored sessions = %+v", list)
	}
	// The token never reaches the disk, in the database or its WAL.
	for _, name := range []string{f.db.Path(), f.db.Path() + "-wal"} {
		b, _ := os.ReadFile(name)
		if strings.Contains(string(b), token) {
			t.Errorf("%s contains the token", name)
		}
	}
}

func TestValidateRefusesBadExpiredAndRevokedTokens(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, cheap)
	u := f.user(t, "sam", "po-tay-toes", store.StatusActive, false)
	token, _, err := f.sessions.Create(ctx, ids.UserID(u.ID), Client{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.sessions.Validate(ctx, token)
	if err != nil || got.ID != u.ID {
		t.Fatalf("Validate = %+v, %v", got, err)
	}
	other, _ := NewToken()
	for name, tok := range map[string]string{
		"empty": "", "unknown": other, "too long": token + "A", "bad characters": token[:42] + "+",
		"the hash instead of the token": HashToken(token),
	} {
		_, err := f.sessions.Validate(ctx, tok)
		wantKind(t, name, err, apperr.Unauthorized)
	}
	if err := f.sessions.Revoke(ctx, token); err != nil {
		t.Fatal(err)
	}
	_, err = f.sessions.Validate(ctx, token)
	wantKind(t, "revoked", err, apperr.Unauthorized)
	if err := f.sessions.Revoke(ctx, token); err != nil {
		t.Errorf("revoking twice: %v", err)
	}
}

func TestIdleAndAbsoluteExpiry(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, cheap)
	u := f.user(t, "merry", "brandybuck!", store.StatusActive, false)
	uid := ids.UserID(u.ID)
	start := f.clock.Now()

	used, _, _ := f.sessions.Create(ctx, uid, Client{})
	// Each use renews the idle limit: used every 20 days, the session
	// outlives 30 days...
	for day := 20; day <= 80; day += 20 {
		f.clock.Add(20 * 24 * time.Hour)
		if _, err := f.sessions.Validate(ctx, used); err != nil {
			t.Fatalf("used on day %d: %v", day, err)
		}
	}
	f.clock.Add(start.Add(90*24*time.Hour - time.Second).Sub(f.clock.Now()))
	if _, err := f.sessions.Validate(ctx, used); err != nil {
		t.Fatalf("a second before 90 days: %v", err)
	}
	// ...but not 90 days after sign-in, however recently it was used.
	f.clock.Add(time.Second)
	_, err := f.sessions.Validate(ctx, used)
	wantKind(t, "at the absolute limit", err, apperr.Unauthorized)

	unused, _, _ := f.sessions.Create(ctx, uid, Client{})
	other, _, _ := f.sessions.Create(ctx, uid, Client{})
	f.clock.Add(30*24*time.Hour - time.Second)
	if _, err := f.sessions.Validate(ctx, other); err != nil {
		t.Fatalf("a second before the idle limit: %v", err)
	}
	f.clock.Add(time.Second)
	_, err = f.sessions.Validate(ctx, unused)
	wantKind(t, "unused for 30 days", err, apperr.Unauthorized)

	if n, err := f.sessions.ExpireOld(ctx); err != nil || n != 2 {
		t.Errorf("ExpireOld = %d, %v; want both", n, err)
	}
}

func TestRenewalWritesAtMostOncePerMinute(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, cheap)
	u := f.user(t, "pippin", "fool-of-a-took", store.StatusActive, false)
	token, _, _ := f.sessions.Create(ctx, ids.UserID(u.ID), Client{})
	seen := func() int64 {
		list, _ := f.db.UserSessions(ctx, ids.UserID(u.ID))
		return list[0].LastSeenAt
	}
	first := seen()
	f.clock.Add(59 * time.Second)
	f.sessions.Validate(ctx, token)
	if seen() != first {
		t.Error("renewed within a minute")
	}
	f.clock.Add(time.Second)
	f.sessions.Validate(ctx, token)
	if got := seen(); got != f.clock.Now().UnixMilli() {
		t.Errorf("after a minute last_seen_at = %d, want %d", got, f.clock.Now().UnixMilli())
	}
}

func TestInactiveUsersGetNoSessions(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, cheap)
	f.user(t, "gandalf", "you-shall-not-pass", store.StatusActive, true)
	pending := f.user(t, "pippin", "fool-of-a-took", store.StatusPending, false)
	disabled := f.user(t, "bill", "the-pony-bill", store.StatusDisabled, false)
	for _, u := range []store.User{pending, disabled} {
		_, _, err := f.sessions.Create(ctx, ids.UserID(u.ID), Client{})
		wantKind(t, u.Status+" user's session", err, apperr.Forbidden)
	}
	_, _, err := f.sessions.Create(ctx, 9999, Client{})
	wantKind(t, "missing user's session", err, apperr.Unauthorized)

	// Disabling a user stops the sessions they have.
	sam := f.user(t, "sam", "po-tay-toes", store.StatusActive, false)
	token, _, _ := f.sessions.Create(ctx, ids.UserID(sam.ID), Client{})
	if err := f.db.SetStatus(ctx, ids.UserID(sam.ID), store.StatusDisabled); err != nil {
		t.Fatal(err)
	}
	_, err = f.sessions.Validate(ctx, token)
	wantKind(t, "disabled user's old session", err, apperr.Unauthorized)
}

func TestSignOutEverywhere(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, cheap)
	sam := ids.UserID(f.user(t, "sam", "po-tay-toes", store.StatusActive, false).ID)
	rosie := ids.UserID(f.user(t, "rosie", "green-dragon", store.StatusActive, false).ID)
	var toks []string
	for range 3 {
		tok, _, _ := f.sessions.Create(ctx, sam, Client{})
		toks = append(toks, tok)
	}
	hers, _, _ := f.sessions.Create(ctx, rosie, Client{})

	if n, err := f.sessions.RevokeOthers(ctx, sam, HashToken(toks[0])); err != nil || n != 2 {
		t.Errorf("RevokeOthers = %d, %v; want 2", n, err)
	}
	if _, err := f.sessions.Validate(ctx, toks[0]); err != nil {
		t.Errorf("the kept session was ended: %v", err)
	}
	_, err := f.sessions.Validate(ctx, toks[1])
	wantKind(t, "another device after RevokeOthers", err, apperr.Unauthorized)

	if n, err := f.sessions.RevokeAll(ctx, sam); err != nil || n != 1 {
		t.Errorf("RevokeAll = %d, %v; want 1", n, err)
	}
	for _, tok := range toks {
		_, err := f.sessions.Validate(ctx, tok)
		wantKind(t, "after sign out everywhere", err, apperr.Unauthorized)
	}
	if _, err := f.sessions.Validate(ctx, hers); err != nil {
		t.Errorf("another user's session ended: %v", err)
	}
}
