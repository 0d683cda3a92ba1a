package store

import (
	"context"
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
