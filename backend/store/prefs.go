package store

import (
	"context"
	"fmt"
)

// Prefs returns every preference a user has stored.
func (db *DB) Prefs(ctx context.Context, userID int64) (map[string]string, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT key, value FROM user_prefs WHERE user_id = ?`, userID)
	if err != nil {
		return nil, fmt.Errorf("read preferences: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, rows.Err()
}

// SetPref stores one preference of a user.
func (db *DB) SetPref(ctx context.Context, userID int64, key, value string) error {
	_, err := db.w.ExecContext(ctx, `
		INSERT INTO user_prefs (user_id, key, value) VALUES (?, ?, ?)
		ON CONFLICT (user_id, key) DO UPDATE SET value = excluded.value`, userID, key, value)
	if err != nil {
		return fmt.Errorf("write preference %s: %w", key, err)
	}
	return nil
}
