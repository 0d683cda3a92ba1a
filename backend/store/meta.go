package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Meta reads one value from the meta table.
func (db *DB) Meta(ctx context.Context, key string) (string, bool, error) {
	var v string
	err := db.r.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read meta %s: %w", key, err)
	}
	return v, true, nil
}

// SetMeta writes one value to the meta table.
func (db *DB) SetMeta(ctx context.Context, key, value string) error {
	_, err := db.w.ExecContext(ctx,
		`INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	if err != nil {
		return fmt.Errorf("write meta %s: %w", key, err)
	}
	return nil
}

// Counts returns the number of rows in each table of the current schema.
func (db *DB) Counts(ctx context.Context) (map[string]int64, error) {
	out := make(map[string]int64, len(Current.Tables))
	for _, t := range Current.Tables {
		var n int64
		if err := db.r.QueryRowContext(ctx, "SELECT count(*) FROM "+quoteIdent(t.Name)).Scan(&n); err != nil {
			return nil, fmt.Errorf("count %s: %w", t.Name, err)
		}
		out[t.Name] = n
	}
	return out, nil
}

// HasEncrypted reports whether any column declared Secret holds a value. A
// new encryption key may only be made while this is false.
func (db *DB) HasEncrypted(ctx context.Context) (bool, error) {
	for _, t := range Current.Tables {
		for _, c := range t.Columns {
			if !c.Secret {
				continue
			}
			var found bool
			q := fmt.Sprintf("SELECT EXISTS (SELECT 1 FROM %s WHERE %s IS NOT NULL AND %s != '')",
				quoteIdent(t.Name), quoteIdent(c.Name), quoteIdent(c.Name))
			if err := db.r.QueryRowContext(ctx, q).Scan(&found); err != nil {
				return false, fmt.Errorf("look for encrypted values in %s.%s: %w", t.Name, c.Name, err)
			}
			if found {
				return true, nil
			}
		}
	}
	for _, k := range SecretSettings {
		if v, _, err := db.Setting(ctx, k); err != nil {
			return false, err
		} else if v != "" {
			return true, nil
		}
	}
	return false, nil
}

// SecretSettings are the instance settings that hold a Fernet token
// (the settings table is key and value, so it has no Secret column to
// mark): HasEncrypted counts them, so that a lost key is noticed rather
// than replaced.
var SecretSettings = []string{SettingWebFirecrawlKey}

// SettingWebFirecrawlKey is the Firecrawl API key of web search
// (backend/web), encrypted.
const SettingWebFirecrawlKey = "web_firecrawl_key"

func nowMillis() int64 { return time.Now().UnixMilli() }
