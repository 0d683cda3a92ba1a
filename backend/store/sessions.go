package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/llembas/lembas/backend/ids"
)

// Session is one server-side login. TokenHash is a hash of the token the
// browser holds (backend/auth makes both); times are Unix milliseconds.
type Session struct {
	TokenHash  string
	UserID     ids.UserID
	CreatedAt  int64
	LastSeenAt int64
	ExpiresAt  int64
	UserAgent  string
	IP         string
}

const sessionColumns = `token_hash, user_id, created_at, last_seen_at, expires_at, user_agent, ip`

func scanSession(row interface{ Scan(...any) error }) (Session, error) {
	var s Session
	err := row.Scan(&s.TokenHash, &s.UserID, &s.CreatedAt, &s.LastSeenAt, &s.ExpiresAt, &s.UserAgent, &s.IP)
	return s, err
}

// CreateSession stores a session. The insert happens only while the user is
// active, in the same statement, so a user disabled a moment earlier cannot
// get one: that case (and a missing user) is ErrNotFound.
func (db *DB) CreateSession(ctx context.Context, s Session) error {
	res, err := db.w.ExecContext(ctx, `
		INSERT INTO sessions (`+sessionColumns+`)
		SELECT ?, id, ?, ?, ?, ?, ? FROM users WHERE id = ? AND status = 'active'`,
		s.TokenHash, s.CreatedAt, s.LastSeenAt, s.ExpiresAt, s.UserAgent, s.IP, s.UserID)
	if err != nil {
		return fmt.Errorf("insert session: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("active user %d: %w", s.UserID, ErrNotFound)
	}
	return nil
}

var sessionUserQuery = `
		SELECT ` + prefixed("s.", sessionColumns) + `, ` + prefixed("u.", userColumns) + `
		FROM sessions s JOIN users u ON u.id = s.user_id
		WHERE s.token_hash = ? AND s.expires_at > ? AND u.status = 'active'`

// SessionUser reads a session that is still valid at now (Unix ms) with its
// user. An unknown or expired session, or one whose user is no longer
// active, is ErrNotFound.
func (db *DB) SessionUser(ctx context.Context, tokenHash string, now int64) (Session, User, error) {
	var s Session
	var u User
	st, err := db.readStmt(ctx, sessionUserQuery)
	if err != nil {
		return Session{}, User{}, fmt.Errorf("prepare session query: %w", err)
	}
	err = st.QueryRowContext(ctx, tokenHash, now).
		Scan(&s.TokenHash, &s.UserID, &s.CreatedAt, &s.LastSeenAt, &s.ExpiresAt, &s.UserAgent, &s.IP,
			&u.ID, &u.Username, &u.DisplayName, &u.IsAdmin, &u.IsOwner, &u.Status, &u.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return Session{}, User{}, fmt.Errorf("session: %w", ErrNotFound)
	}
	if err != nil {
		return Session{}, User{}, fmt.Errorf("read session: %w", err)
	}
	return s, u, nil
}

// TouchSession renews a session: last seen at seen, expiring at expires. It
// changes nothing (and reports false) when the session was last seen after
// notAfter, which keeps renewals to one write per interval even when many
// requests race.
func (db *DB) TouchSession(ctx context.Context, tokenHash string, seen, expires, notAfter int64) (bool, error) {
	res, err := db.w.ExecContext(ctx, `
		UPDATE sessions SET last_seen_at = ?, expires_at = ?
		WHERE token_hash = ? AND last_seen_at <= ?`, seen, expires, tokenHash, notAfter)
	if err != nil {
		return false, fmt.Errorf("renew session: %w", err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

// UserSessions lists a user's sessions, newest first, including expired
// ones not yet swept.
func (db *DB) UserSessions(ctx context.Context, user ids.UserID) ([]Session, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE user_id = ? ORDER BY created_at DESC`, user)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	defer rows.Close()
	out := []Session{}
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// DeleteSession ends one session; ErrNotFound when there was none.
func (db *DB) DeleteSession(ctx context.Context, tokenHash string) error {
	res, err := db.w.ExecContext(ctx, `DELETE FROM sessions WHERE token_hash = ?`, tokenHash)
	if err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("session: %w", ErrNotFound)
	}
	return nil
}

// DeleteUserSessions ends every session of a user except the one whose hash
// is keep (empty: end them all), and says how many ended.
func (db *DB) DeleteUserSessions(ctx context.Context, user ids.UserID, keep string) (int64, error) {
	res, err := db.w.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ? AND token_hash != ?`, user, keep)
	if err != nil {
		return 0, fmt.Errorf("delete sessions of user %d: %w", user, err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// DeleteExpiredSessions removes sessions that expired at or before now (Unix
// ms) and says how many.
func (db *DB) DeleteExpiredSessions(ctx context.Context, now int64) (int64, error) {
	res, err := db.w.ExecContext(ctx, `DELETE FROM sessions WHERE expires_at <= ?`, now)
	if err != nil {
		return 0, fmt.Errorf("delete expired sessions: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}
