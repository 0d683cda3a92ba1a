package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Setting reads one instance setting.
func (db *DB) Setting(ctx context.Context, key string) (string, bool, error) {
	var v string
	err := prepared{db}.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read setting %s: %w", key, err)
	}
	return v, true, nil
}

// SetSetting stores an instance setting, replacing any earlier value.
func (db *DB) SetSetting(ctx context.Context, key, value string) error {
	_, err := db.w.ExecContext(ctx, `
		INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
		key, value, nowMillis())
	if err != nil {
		return fmt.Errorf("write setting %s: %w", key, err)
	}
	return nil
}

// SeedSetting stores value only if the setting has never been stored: the
// environment seeds instance settings, but once edited the database wins, or
// a toggle in the app would silently revert at the next restart.
func (db *DB) SeedSetting(ctx context.Context, key, value string) error {
	_, err := db.w.ExecContext(ctx,
		`INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING`,
		key, value, nowMillis())
	if err != nil {
		return fmt.Errorf("seed setting %s: %w", key, err)
	}
	return nil
}
