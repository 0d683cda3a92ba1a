package store

import (
	"context"
	"fmt"
)

// PromptOverrides reads every stored fragment override, by key.
func (db *DB) PromptOverrides(ctx context.Context) (map[string]string, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT key, text FROM prompt_overrides`)
	if err != nil {
		return nil, fmt.Errorf("read prompt overrides: %w", err)
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

// SetPromptOverrides stores the overrides in set and deletes those named
// in drop, in one transaction.
func (db *DB) SetPromptOverrides(ctx context.Context, set map[string]string, drop []string) error {
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	now := nowMillis()
	for k, v := range set {
		if _, err := tx.ExecContext(ctx, `
			INSERT INTO prompt_overrides (key, text, updated_at) VALUES (?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET text = excluded.text, updated_at = excluded.updated_at`, k, v, now); err != nil {
			return fmt.Errorf("write prompt override %s: %w", k, err)
		}
	}
	for _, k := range drop {
		if _, err := tx.ExecContext(ctx, `DELETE FROM prompt_overrides WHERE key = ?`, k); err != nil {
			return fmt.Errorf("delete prompt override %s: %w", k, err)
		}
	}
	return tx.Commit()
}
