package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/llembas/lembas/backend/ids"
)

// SSHProfile is one SSH connection an agent chat works on (ssh_profiles),
// private to its owner. SecretEnc is a Fernet token (the private key in
// OpenSSH PEM for AuthKey, the password for AuthPassword); the store never
// sees plaintext. HostKey is the pinned host key in authorized_keys form,
// valid only while PinnedHost and PinnedPort equal Host and Port.
type SSHProfile struct {
	ID         ids.ProfileID
	UserID     ids.UserID
	Name       string
	Host       string
	Port       int
	Username   string
	Auth       SSHAuth
	SecretEnc  string
	PublicKey  string
	HostKey    string
	PinnedHost string
	PinnedPort int
	CreatedAt  int64 // Unix milliseconds
	UpdatedAt  int64
}

// SSHAuth is how a profile signs in.
type SSHAuth string

// The ways a profile signs in.
const (
	AuthKey      SSHAuth = "key"
	AuthPassword SSHAuth = "password"
)

// Pinned returns the profile's pinned host key, or "" when none is
// pinned for its current host and port.
func (p SSHProfile) Pinned() string {
	if p.HostKey == "" || p.PinnedHost != p.Host || p.PinnedPort != p.Port {
		return ""
	}
	return p.HostKey
}

// ownsProfile checks that profile id is user's: ErrNotFound otherwise
// (another person's profile is indistinguishable from none).
func ownsProfile(ctx context.Context, q queryRower, user ids.UserID, id ids.ProfileID) error {
	var ok bool
	err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM ssh_profiles WHERE id = ? AND user_id = ?)`, id, user).Scan(&ok)
	if err != nil {
		return fmt.Errorf("read ssh profile %d: %w", id, err)
	}
	if !ok {
		return fmt.Errorf("ssh profile %d: %w", id, ErrNotFound)
	}
	return nil
}

// ErrTooMany is a creation refused because its owner already has the most
// there may be.
var ErrTooMany = errors.New("too many")

const sshProfileColumns = `id, user_id, name, host, port, username, auth, secret_enc, public_key, host_key, pinned_host, pinned_port, created_at, updated_at`

func scanSSHProfile(sc interface{ Scan(...any) error }) (SSHProfile, error) {
	var p SSHProfile
	err := sc.Scan(&p.ID, &p.UserID, &p.Name, &p.Host, &p.Port, &p.Username, &p.Auth, &p.SecretEnc, &p.PublicKey,
		&p.HostKey, &p.PinnedHost, &p.PinnedPort, &p.CreatedAt, &p.UpdatedAt)
	return p, err
}

// SSHProfiles lists user's profiles by name.
func (db *DB) SSHProfiles(ctx context.Context, user ids.UserID) ([]SSHProfile, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+sshProfileColumns+` FROM ssh_profiles WHERE user_id = ? ORDER BY name COLLATE NOCASE, id`, user)
	if err != nil {
		return nil, fmt.Errorf("list ssh profiles: %w", err)
	}
	defer rows.Close()
	out := []SSHProfile{}
	for rows.Next() {
		p, err := scanSSHProfile(rows)
		if err != nil {
			return nil, fmt.Errorf("read ssh profile: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// SSHProfile reads one of user's profiles; ErrNotFound when user has none
// of that id (another person's is none).
func (db *DB) SSHProfile(ctx context.Context, user ids.UserID, id ids.ProfileID) (SSHProfile, error) {
	return sshProfile(ctx, db.r, user, id)
}

func sshProfile(ctx context.Context, q queryRower, user ids.UserID, id ids.ProfileID) (SSHProfile, error) {
	p, err := scanSSHProfile(q.QueryRowContext(ctx, `SELECT `+sshProfileColumns+` FROM ssh_profiles WHERE id = ? AND user_id = ?`, id, user))
	if errors.Is(err, sql.ErrNoRows) {
		return p, fmt.Errorf("ssh profile %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return p, fmt.Errorf("read ssh profile %d: %w", id, err)
	}
	return p, nil
}

// CreateSSHProfile stores p as a new profile of user, unless user already
// has max of them (ErrTooMany; counted in the same transaction). Its host
// key starts unpinned.
func (db *DB) CreateSSHProfile(ctx context.Context, user ids.UserID, p SSHProfile, max int) (SSHProfile, error) {
	var out SSHProfile
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM ssh_profiles WHERE user_id = ?`, user).Scan(&n); err != nil {
			return fmt.Errorf("count ssh profiles: %w", err)
		}
		if n >= max {
			return fmt.Errorf("%d ssh profiles: %w", n, ErrTooMany)
		}
		now := nowMillis()
		res, err := tx.ExecContext(ctx, `
			INSERT INTO ssh_profiles (user_id, name, host, port, username, auth, secret_enc, public_key, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			user, p.Name, p.Host, p.Port, p.Username, p.Auth, p.SecretEnc, p.PublicKey, now, now)
		if err != nil {
			return fmt.Errorf("insert ssh profile: %w", err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		out, err = sshProfile(ctx, tx, user, ids.ProfileID(id))
		return err
	})
	return out, err
}

// UpdateSSHProfile writes p's name, host, port, username, auth, secret and
// public key to user's profile p.ID. Moving it to another host or port
// forgets its pinned key (a pin belongs to a host and a port).
func (db *DB) UpdateSSHProfile(ctx context.Context, user ids.UserID, p SSHProfile) (SSHProfile, error) {
	var out SSHProfile
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `
			UPDATE ssh_profiles SET
				host_key = CASE WHEN host = ? AND port = ? THEN host_key ELSE '' END,
				name = ?, host = ?, port = ?, username = ?, auth = ?, secret_enc = ?, public_key = ?, updated_at = ?
			WHERE id = ? AND user_id = ?`,
			p.Host, p.Port, p.Name, p.Host, p.Port, p.Username, p.Auth, p.SecretEnc, p.PublicKey, nowMillis(), p.ID, user)
		if err != nil {
			return fmt.Errorf("update ssh profile %d: %w", p.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("ssh profile %d: %w", p.ID, ErrNotFound)
		}
		out, err = sshProfile(ctx, tx, user, p.ID)
		return err
	})
	return out, err
}

// SetSSHProfileSecret replaces the credential of user's profile id: how it
// signs in, the encrypted secret and the key's public line.
func (db *DB) SetSSHProfileSecret(ctx context.Context, user ids.UserID, id ids.ProfileID, auth SSHAuth, secretEnc, publicKey string) error {
	return db.profileExec(ctx, user, id, `UPDATE ssh_profiles SET auth = ?, secret_enc = ?, public_key = ?, updated_at = ? WHERE id = ? AND user_id = ?`,
		auth, secretEnc, publicKey, nowMillis(), id, user)
}

// PinSSHHostKey pins key as the host key of user's profile id for host and
// port (the address it was captured from: a pin for another address than
// the profile's is no pin, SSHProfile.Pinned).
func (db *DB) PinSSHHostKey(ctx context.Context, user ids.UserID, id ids.ProfileID, key, host string, port int) error {
	return db.profileExec(ctx, user, id, `UPDATE ssh_profiles SET host_key = ?, pinned_host = ?, pinned_port = ?, updated_at = ? WHERE id = ? AND user_id = ?`,
		key, host, port, nowMillis(), id, user)
}

// ForgetSSHHostKey unpins the host key of user's profile id.
func (db *DB) ForgetSSHHostKey(ctx context.Context, user ids.UserID, id ids.ProfileID) error {
	return db.profileExec(ctx, user, id, `UPDATE ssh_profiles SET host_key = '', pinned_host = '', pinned_port = 0, updated_at = ? WHERE id = ? AND user_id = ?`,
		nowMillis(), id, user)
}

// DeleteSSHProfile deletes user's profile id; its chats keep their
// transcript and lose their host (chats.ssh_profile_id becomes NULL).
func (db *DB) DeleteSSHProfile(ctx context.Context, user ids.UserID, id ids.ProfileID) error {
	return db.profileExec(ctx, user, id, `DELETE FROM ssh_profiles WHERE id = ? AND user_id = ?`, id, user)
}

// profileExec runs one statement on user's profile id: ErrNotFound when it
// touched no row.
func (db *DB) profileExec(ctx context.Context, user ids.UserID, id ids.ProfileID, query string, args ...any) error {
	res, err := db.w.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("write ssh profile %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("ssh profile %d: %w", id, ErrNotFound)
	}
	return nil
}
