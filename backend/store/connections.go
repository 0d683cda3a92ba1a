package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/llembas/lembas/backend/ids"
)

// ErrForbidden is returned when a user tries to change a row they may see
// but not change: an instance-wide connection or model without Admin. Rows
// they may not see at all get ErrNotFound instead, which reveals nothing.
var ErrForbidden = errors.New("not allowed")

// Actor is who changes a connection or a model. Everyone reads the
// instance-wide rows and their own; only an Admin changes the instance-wide
// ones, and nobody changes another user's. Deciding who is an admin is the
// caller's job; the store only applies it.
type Actor struct {
	User  ids.UserID
	Admin bool
}

// Connection is an OpenAI-compatible endpoint. OwnerID nil means
// instance-wide. The secrets are stored as the caller encrypted them; the
// store never sees plaintext.
type Connection struct {
	ID                ids.ConnectionID
	OwnerID           *ids.UserID
	Name              string
	BaseURL           string
	APIKeyEnc         string
	HeadersEnc        string
	CAPEM             string
	InsecureTLS       bool
	Enabled           bool
	NoStreamOptions   bool
	LastError         string
	ModelsRefreshedAt int64
	CreatedAt         int64
	UpdatedAt         int64
}

const connectionColumns = `id, owner_id, name, base_url, api_key_enc, headers_enc, ca_pem,
	insecure_tls, enabled, no_stream_options, last_error, models_refreshed_at, created_at, updated_at`

func scanConnection(row interface{ Scan(...any) error }) (Connection, error) {
	var c Connection
	var owner sql.NullInt64
	err := row.Scan(&c.ID, &owner, &c.Name, &c.BaseURL, &c.APIKeyEnc, &c.HeadersEnc, &c.CAPEM,
		&c.InsecureTLS, &c.Enabled, &c.NoStreamOptions, &c.LastError, &c.ModelsRefreshedAt, &c.CreatedAt, &c.UpdatedAt)
	if owner.Valid {
		u := ids.UserID(owner.Int64)
		c.OwnerID = &u
	}
	return c, err
}

// queryRower is a *sql.DB or a *sql.Tx, for checks that run both inside and
// outside a transaction.
type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// nullable turns an optional id into a value database/sql stores as NULL.
func nullable[T ~int64](p *T) any {
	if p == nil {
		return nil
	}
	return int64(*p)
}

// canChangeConnection says whether a may change connection id: ErrNotFound
// when a cannot see it (absent, or another user's), ErrForbidden when it is
// instance-wide and a is not an admin.
func canChangeConnection(ctx context.Context, q queryRower, a Actor, id ids.ConnectionID) error {
	var owner sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT owner_id FROM connections WHERE id = ?`, id).Scan(&owner)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("connection %d: %w", id, ErrNotFound)
	case err != nil:
		return fmt.Errorf("read connection %d: %w", id, err)
	case owner.Valid && ids.UserID(owner.Int64) != a.User:
		return fmt.Errorf("connection %d: %w", id, ErrNotFound)
	case !owner.Valid && !a.Admin:
		return fmt.Errorf("connection %d is instance-wide: %w", id, ErrForbidden)
	}
	return nil
}

// CreateConnection stores a new connection. c.OwnerID nil makes it
// instance-wide, which needs a.Admin; otherwise it must be a's own id.
func (db *DB) CreateConnection(ctx context.Context, a Actor, c Connection) (Connection, error) {
	if c.OwnerID == nil && !a.Admin {
		return Connection{}, fmt.Errorf("create instance-wide connection: %w", ErrForbidden)
	}
	if c.OwnerID != nil && *c.OwnerID != a.User {
		return Connection{}, fmt.Errorf("create connection for another user: %w", ErrForbidden)
	}
	now := nowMillis()
	var out Connection
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `
			INSERT INTO connections (owner_id, name, base_url, api_key_enc, headers_enc, ca_pem,
				insecure_tls, enabled, no_stream_options, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			nullable(c.OwnerID), c.Name, c.BaseURL, c.APIKeyEnc, c.HeadersEnc, c.CAPEM,
			c.InsecureTLS, c.Enabled, c.NoStreamOptions, now, now)
		if err != nil {
			return fmt.Errorf("insert connection: %w", err)
		}
		id, _ := res.LastInsertId()
		out, err = scanConnection(tx.QueryRowContext(ctx, `SELECT `+connectionColumns+` FROM connections WHERE id = ?`, id))
		return err
	})
	return out, err
}

// UpdateConnection replaces the editable fields of connection c.ID (name,
// base URL, CA, TLS check, enabled). Secrets, owner and status are left
// alone: they have their own setters, so a form that never shows a secret
// cannot blank it by accident.
func (db *DB) UpdateConnection(ctx context.Context, a Actor, c Connection) (Connection, error) {
	var out Connection
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		if err := canChangeConnection(ctx, tx, a, c.ID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `
			UPDATE connections SET name = ?, base_url = ?, ca_pem = ?, insecure_tls = ?, enabled = ?, updated_at = ?
			WHERE id = ?`,
			c.Name, c.BaseURL, c.CAPEM, c.InsecureTLS, c.Enabled, nowMillis(), c.ID)
		if err != nil {
			return fmt.Errorf("update connection %d: %w", c.ID, err)
		}
		out, err = scanConnection(tx.QueryRowContext(ctx, `SELECT `+connectionColumns+` FROM connections WHERE id = ?`, c.ID))
		return err
	})
	return out, err
}

// SetConnectionSecrets replaces the encrypted API key and/or headers of a
// connection; a nil argument leaves that secret as it is, and an empty
// string clears it.
func (db *DB) SetConnectionSecrets(ctx context.Context, a Actor, id ids.ConnectionID, apiKeyEnc, headersEnc *string) error {
	return db.WriteTx(ctx, func(tx *sql.Tx) error {
		if err := canChangeConnection(ctx, tx, a, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `
			UPDATE connections SET api_key_enc = COALESCE(?, api_key_enc), headers_enc = COALESCE(?, headers_enc), updated_at = ?
			WHERE id = ?`, apiKeyEnc, headersEnc, nowMillis(), id)
		if err != nil {
			return fmt.Errorf("set secrets of connection %d: %w", id, err)
		}
		return nil
	})
}

// ListConnections returns the connections user may use: the instance-wide
// ones first, then the user's own, each by name.
func (db *DB) ListConnections(ctx context.Context, user ids.UserID) ([]Connection, error) {
	rows, err := db.r.QueryContext(ctx, `
		SELECT `+connectionColumns+` FROM connections
		WHERE owner_id IS NULL OR owner_id = ?
		ORDER BY owner_id IS NOT NULL, name COLLATE NOCASE, id`, user)
	if err != nil {
		return nil, fmt.Errorf("list connections: %w", err)
	}
	defer rows.Close()
	var out []Connection
	for rows.Next() {
		c, err := scanConnection(rows)
		if err != nil {
			return nil, fmt.Errorf("list connections: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// ConnectionByID reads one connection that user may use.
func (db *DB) ConnectionByID(ctx context.Context, user ids.UserID, id ids.ConnectionID) (Connection, error) {
	c, err := scanConnection(prepared{db}.QueryRowContext(ctx, `
		SELECT `+connectionColumns+` FROM connections
		WHERE id = ? AND (owner_id IS NULL OR owner_id = ?)`, id, user))
	if errors.Is(err, sql.ErrNoRows) {
		return Connection{}, fmt.Errorf("connection %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Connection{}, fmt.Errorf("read connection %d: %w", id, err)
	}
	return c, nil
}

// DeleteConnection removes a connection and its models. Chats that used one
// of its models keep their messages and lose only the model reference.
func (db *DB) DeleteConnection(ctx context.Context, a Actor, id ids.ConnectionID) error {
	return db.WriteTx(ctx, func(tx *sql.Tx) error {
		if err := canChangeConnection(ctx, tx, a, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM connections WHERE id = ?`, id); err != nil {
			return fmt.Errorf("delete connection %d: %w", id, err)
		}
		return nil
	})
}

// SetConnectionStatus records what the last contact with the endpoint
// taught: its error (empty when it worked), when the model list was last
// refreshed (0 leaves the previous time, so a failed refresh does not erase
// when the list was last good), and whether it rejects stream_options. It is
// called by the service that talks to the endpoint, not on a user's behalf,
// so it takes no user.
func (db *DB) SetConnectionStatus(ctx context.Context, id ids.ConnectionID, lastError string, refreshedAt int64, noStreamOptions bool) error {
	res, err := db.w.ExecContext(ctx, `
		UPDATE connections SET last_error = ?,
			models_refreshed_at = CASE WHEN ? > 0 THEN ? ELSE models_refreshed_at END,
			no_stream_options = ?
		WHERE id = ?`, lastError, refreshedAt, refreshedAt, noStreamOptions, id)
	if err != nil {
		return fmt.Errorf("set status of connection %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("connection %d: %w", id, ErrNotFound)
	}
	return nil
}
