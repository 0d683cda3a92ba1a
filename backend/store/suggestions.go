package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/llembas/lembas/backend/ids"
)

// Suggestion is a card of the new-chat screen.
type Suggestion struct {
	ID     int64
	Title  string
	Prompt string
	// Send: choosing the card sends Prompt; else it fills the composer.
	Send bool
	// ModelID set: shown only when that model is chosen.
	ModelID   *ids.ModelID
	Position  int
	CreatedAt int64
	UpdatedAt int64
}

const suggestionColumns = `id, title, prompt, send, model_id, position, created_at, updated_at`

func scanSuggestion(row interface{ Scan(...any) error }) (Suggestion, error) {
	var s Suggestion
	var model sql.NullInt64
	err := row.Scan(&s.ID, &s.Title, &s.Prompt, &s.Send, &model, &s.Position, &s.CreatedAt, &s.UpdatedAt)
	if model.Valid {
		m := ids.ModelID(model.Int64)
		s.ModelID = &m
	}
	return s, err
}

// Suggestions lists every suggestion in order.
func (db *DB) Suggestions(ctx context.Context) ([]Suggestion, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+suggestionColumns+` FROM suggestions ORDER BY position, id`)
	if err != nil {
		return nil, fmt.Errorf("list suggestions: %w", err)
	}
	defer rows.Close()
	out := []Suggestion{}
	for rows.Next() {
		s, err := scanSuggestion(rows)
		if err != nil {
			return nil, fmt.Errorf("list suggestions: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// Suggestion reads one suggestion; ErrNotFound when there is none.
func (db *DB) Suggestion(ctx context.Context, id int64) (Suggestion, error) {
	s, err := scanSuggestion(db.r.QueryRowContext(ctx, `SELECT `+suggestionColumns+` FROM suggestions WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Suggestion{}, fmt.Errorf("suggestion %d: %w", id, ErrNotFound)
	}
	return s, err
}

// CreateSuggestion adds s at the end, refusing with ErrConflict past max
// suggestions.
func (db *DB) CreateSuggestion(ctx context.Context, s Suggestion, max int) (Suggestion, error) {
	var id int64
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		var n, last int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(MAX(position), 0) FROM suggestions`).Scan(&n, &last); err != nil {
			return fmt.Errorf("count suggestions: %w", err)
		}
		if n >= max {
			return fmt.Errorf("%d suggestions: %w", n, ErrConflict)
		}
		now := nowMillis()
		res, err := tx.ExecContext(ctx, `INSERT INTO suggestions (title, prompt, send, model_id, position, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, s.Title, s.Prompt, s.Send, s.ModelID, last+1, now, now)
		if err != nil {
			return fmt.Errorf("insert suggestion: %w", err)
		}
		id, _ = res.LastInsertId()
		return nil
	})
	if err != nil {
		return Suggestion{}, err
	}
	return db.Suggestion(ctx, id)
}

// UpdateSuggestion changes s's title, prompt, send and model.
func (db *DB) UpdateSuggestion(ctx context.Context, s Suggestion) (Suggestion, error) {
	res, err := db.w.ExecContext(ctx, `UPDATE suggestions SET title = ?, prompt = ?, send = ?, model_id = ?, updated_at = ? WHERE id = ?`,
		s.Title, s.Prompt, s.Send, s.ModelID, nowMillis(), s.ID)
	if err != nil {
		return Suggestion{}, fmt.Errorf("update suggestion: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Suggestion{}, fmt.Errorf("suggestion %d: %w", s.ID, ErrNotFound)
	}
	return db.Suggestion(ctx, s.ID)
}

// DeleteSuggestion deletes one suggestion.
func (db *DB) DeleteSuggestion(ctx context.Context, id int64) error {
	res, err := db.w.ExecContext(ctx, `DELETE FROM suggestions WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete suggestion: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("suggestion %d: %w", id, ErrNotFound)
	}
	return nil
}

// ReorderSuggestions puts the suggestions in order (ids not named keep
// their place after them).
func (db *DB) ReorderSuggestions(ctx context.Context, order []int64) error {
	return db.WriteTx(ctx, func(tx *sql.Tx) error {
		for i, id := range order {
			if _, err := tx.ExecContext(ctx, `UPDATE suggestions SET position = ? WHERE id = ?`, i+1, id); err != nil {
				return fmt.Errorf("reorder suggestions: %w", err)
			}
		}
		_, err := tx.ExecContext(ctx, `UPDATE suggestions SET position = position + ? WHERE id NOT IN (`+placeholders(max(len(order), 1))+`)`,
			append([]any{len(order)}, anyIDs(order)...)...)
		return err
	})
}

func anyIDs(list []int64) []any {
	if len(list) == 0 {
		return []any{0}
	}
	out := make([]any, len(list))
	for i, id := range list {
		out[i] = id
	}
	return out
}

// SeedSuggestions inserts list once in the database's life: the setting
// key records that it was done, in the same transaction, so suggestions
// an administrator deleted stay deleted.
func (db *DB) SeedSuggestions(ctx context.Context, key string, list []Suggestion) error {
	return db.WriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO settings (key, value, updated_at) VALUES (?, '1', ?) ON CONFLICT (key) DO NOTHING`, key, nowMillis())
		if err != nil {
			return fmt.Errorf("seed suggestions: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		now := nowMillis()
		for i, s := range list {
			if _, err := tx.ExecContext(ctx, `INSERT INTO suggestions (title, prompt, send, model_id, position, created_at, updated_at)
				VALUES (?, ?, ?, NULL, ?, ?, ?)`, s.Title, s.Prompt, s.Send, i+1, now, now); err != nil {
				return fmt.Errorf("seed suggestions: %w", err)
			}
		}
		return nil
	})
}
