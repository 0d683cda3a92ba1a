package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// tokenLen is the length of a session token: 32 random bytes in unpadded
// base64url.
var tokenLen = base64.RawURLEncoding.EncodedLen(32)

// NewToken returns a new session token (32 random bytes, base64url) and
// the hash under which it is stored. The token itself is never stored.
func NewToken() (token, hash string) {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand since Go 1.24)
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, HashToken(token)
}

// HashToken is what the store keeps of a token: a hex SHA-256 of the token
// string. A fast hash is enough for 256 random bits; hashing the string
// rather than the decoded bytes means only the exact token matches.
func HashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// wellFormed is a cheap check before any database work: the right length
// and only base64url characters.
func wellFormed(token string) bool {
	if len(token) != tokenLen {
		return false
	}
	for i := 0; i < len(token); i++ {
		c := token[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// SessionOptions configure Sessions. Zero values take the defaults.
type SessionOptions struct {
	Idle       time.Duration    // unused this long, a session ends (30 days)
	Absolute   time.Duration    // however used, a session ends this long after sign-in (90 days)
	RenewEvery time.Duration    // a session's last use is written at most this often (1 minute)
	Now        func() time.Time // nil: time.Now
}

// Client describes where a sign-in came from, for the user's list of
// sessions. Neither is trusted for anything.
type Client struct {
	UserAgent string
	IP        string
}

// Sessions issues, checks and ends server-side sessions.
type Sessions struct {
	db *store.DB
	o  SessionOptions
}

// NewSessions returns the session service over db.
func NewSessions(db *store.DB, o SessionOptions) *Sessions {
	if o.Idle <= 0 {
		o.Idle = 30 * 24 * time.Hour
	}
	if o.Absolute <= 0 {
		o.Absolute = 90 * 24 * time.Hour
	}
	if o.RenewEvery <= 0 {
		o.RenewEvery = time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Sessions{db: db, o: o}
}

// Absolute is how long a session can live at most, for the cookie's
// Max-Age.
func (s *Sessions) Absolute() time.Duration { return s.o.Absolute }

// errSignIn is the one answer for every unusable token: which reason
// applies is nobody's business.
var errSignIn = apperr.New(apperr.Unauthorized, "Please sign in.")

// statusError explains why a user who is not active cannot sign in. Call it
// only after the password was verified, or it tells strangers which
// accounts exist.
func statusError(u store.User) error {
	switch u.Status {
	case store.StatusActive:
		return nil
	case store.StatusPending:
		return apperr.New(apperr.Forbidden, "Your account is waiting for an administrator's approval.")
	default:
		return apperr.New(apperr.Forbidden, "This account is disabled; ask an administrator.")
	}
}

// Create starts a session for an active user and returns its token and
// when it expires at the latest. Pending and disabled users get Forbidden.
func (s *Sessions) Create(ctx context.Context, user ids.UserID, c Client) (string, time.Time, error) {
	u, err := s.db.UserByID(ctx, int64(user))
	if errors.Is(err, store.ErrNotFound) {
		return "", time.Time{}, errSignIn
	}
	if err != nil {
		return "", time.Time{}, err
	}
	if err := statusError(u); err != nil {
		return "", time.Time{}, err
	}
	token, hash := NewToken()
	now := s.o.Now()
	absolute := now.Add(s.o.Absolute)
	err = s.db.CreateSession(ctx, store.Session{
		TokenHash:  hash,
		UserID:     user,
		CreatedAt:  now.UnixMilli(),
		LastSeenAt: now.UnixMilli(),
		ExpiresAt:  s.expiry(now, now).UnixMilli(),
		UserAgent:  truncate(c.UserAgent, 256),
		IP:         truncate(c.IP, 64),
	})
	if errors.Is(err, store.ErrNotFound) {
		// Disabled between the read and the insert.
		return "", time.Time{}, apperr.New(apperr.Forbidden, "This account is disabled; ask an administrator.")
	}
	if err != nil {
		return "", time.Time{}, err
	}
	return token, absolute, nil
}

// expiry is the earlier of the idle and the absolute limit.
func (s *Sessions) expiry(created, seen time.Time) time.Time {
	idle, abs := seen.Add(s.o.Idle), created.Add(s.o.Absolute)
	if idle.Before(abs) {
		return idle
	}
	return abs
}

// Validate returns the user a token signs in, renewing the session's idle
// limit (at most once per RenewEvery). An unknown, malformed, expired or
// revoked token, or one whose user is no longer active, is Unauthorized.
func (s *Sessions) Validate(ctx context.Context, token string) (store.User, error) {
	if !wellFormed(token) {
		return store.User{}, errSignIn
	}
	hash := HashToken(token)
	now := s.o.Now()
	sess, u, err := s.db.SessionUser(ctx, hash, now.UnixMilli())
	if errors.Is(err, store.ErrNotFound) {
		return store.User{}, errSignIn
	}
	if err != nil {
		return store.User{}, err
	}
	if now.Sub(time.UnixMilli(sess.LastSeenAt)) >= s.o.RenewEvery {
		exp := s.expiry(time.UnixMilli(sess.CreatedAt), now)
		notAfter := now.Add(-s.o.RenewEvery).UnixMilli()
		if _, err := s.db.TouchSession(ctx, hash, now.UnixMilli(), exp.UnixMilli(), notAfter); err != nil {
			return store.User{}, fmt.Errorf("renew session: %w", err)
		}
	}
	return u, nil
}

// Revoke ends the session of token (signing out). An unknown token is not
// an error: the result is the same.
func (s *Sessions) Revoke(ctx context.Context, token string) error {
	err := s.db.DeleteSession(ctx, HashToken(token))
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}

// RevokeAll ends every session of user ("sign out everywhere") and says how
// many ended.
func (s *Sessions) RevokeAll(ctx context.Context, user ids.UserID) (int64, error) {
	return s.db.DeleteUserSessions(ctx, user, "")
}

// RevokeOthers ends every session of user but the one whose token hashes to
// keepHash (after a password change, the device that made it stays signed
// in); "" ends them all.
func (s *Sessions) RevokeOthers(ctx context.Context, user ids.UserID, keepHash string) (int64, error) {
	return s.db.DeleteUserSessions(ctx, user, keepHash)
}

// Check is Validate that also returns the session's token hash, which
// names the session without being the token.
func (s *Sessions) Check(ctx context.Context, token string) (store.User, string, error) {
	u, err := s.Validate(ctx, token)
	if err != nil {
		return store.User{}, "", err
	}
	return u, HashToken(token), nil
}

// ExpireOld deletes expired sessions and says how many. Validate already
// refuses them; this only keeps the table small.
func (s *Sessions) ExpireOld(ctx context.Context) (int64, error) {
	return s.db.DeleteExpiredSessions(ctx, s.o.Now().UnixMilli())
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n-- // do not cut a UTF-8 sequence
	}
	return s[:n]
}
