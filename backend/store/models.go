package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/llembas/lembas/backend/ids"
)

// Capabilities are what a model can take or do, as the admin declares them
// (endpoints rarely say).
type Capabilities struct {
	Vision    bool `json:"vision"`
	Tools     bool `json:"tools"`
	Reasoning bool `json:"reasoning"`
	// ToolsOff lists the tool families switched off for this model; a
	// family not listed is on whenever Tools is (rows written before the
	// switches existed keep every tool).
	ToolsOff []string `json:"toolsOff,omitempty"`
}

// Params are sampling defaults, stored as JSON on models and on chats. A nil
// field is not sent, so the next layer's default (the model's, then the
// endpoint's) applies.
type Params struct {
	Temperature      *float64 `json:"temperature,omitempty"`
	TopP             *float64 `json:"top_p,omitempty"`
	TopK             *int64   `json:"top_k,omitempty"`
	MinP             *float64 `json:"min_p,omitempty"`
	MaxTokens        *int64   `json:"max_tokens,omitempty"`
	PresencePenalty  *float64 `json:"presence_penalty,omitempty"`
	FrequencyPenalty *float64 `json:"frequency_penalty,omitempty"`
	Seed             *int64   `json:"seed,omitempty"`
	ReasoningEffort  *string  `json:"reasoning_effort,omitempty"`
}

// Model is one model a connection lists, with the admin's presentation and
// defaults. The avatar image is read separately with ModelAvatar; AvatarType
// is empty when there is none.
type Model struct {
	ID           ids.ModelID
	ConnectionID ids.ConnectionID
	OwnerID      *ids.UserID // the connection's owner; nil for instance-wide
	UpstreamID   string
	DisplayName  string
	Description  string
	AvatarType   string
	Position     int64
	Enabled      bool
	Pinned       bool
	Missing      bool // the endpoint no longer lists it
	Capabilities Capabilities
	// ContextLength is the admin's value when ContextLengthSet, else what the
	// endpoint reported (0 when unknown).
	ContextLength    int64
	ContextLengthSet bool
	Params           Params
	SystemPrompt     string
	UpstreamMeta     json.RawMessage
	CreatedAt        int64
	UpdatedAt        int64
}

// ModelSettings are the fields an admin edits; UpdateModel replaces them
// all. ContextLength 0 means "use what the endpoint reports".
type ModelSettings struct {
	DisplayName   string
	Description   string
	Enabled       bool
	Pinned        bool
	Capabilities  Capabilities
	ContextLength int64
	Params        Params
	SystemPrompt  string
}

// UpstreamModel is one entry of an endpoint's model list.
type UpstreamModel struct {
	ID            string
	ContextLength int64 // 0 when the endpoint does not say
	Meta          json.RawMessage
}

// SyncResult counts what SyncModels changed.
type SyncResult struct {
	Added    int
	Missing  int // newly marked missing
	Returned int // were missing, listed again
}

// ModelFilter selects models for ListModels. Limit 0 means no limit.
type ModelFilter struct {
	Query        string // matches display name, upstream id or description, ignoring case
	ConnectionID ids.ConnectionID
	EnabledOnly  bool // enabled models of enabled connections
	Offset       int
	Limit        int
}

// The effective context length: context_length always holds what the
// endpoint reported, so clearing the admin's override restores it without a
// refresh.
const modelColumns = `m.id, m.connection_id, c.owner_id, m.upstream_id, m.display_name, m.description,
	m.avatar_type, m.position, m.enabled, m.pinned, m.missing, m.capabilities,
	CASE WHEN m.context_length_override > 0 THEN m.context_length_override ELSE m.context_length END,
	m.context_length_override > 0, m.params, m.system_prompt, m.upstream_meta, m.created_at, m.updated_at`

const modelFrom = ` FROM models m JOIN connections c ON c.id = m.connection_id`

func scanModel(row interface{ Scan(...any) error }) (Model, error) {
	var m Model
	var owner sql.NullInt64
	var caps, params, meta string
	err := row.Scan(&m.ID, &m.ConnectionID, &owner, &m.UpstreamID, &m.DisplayName, &m.Description,
		&m.AvatarType, &m.Position, &m.Enabled, &m.Pinned, &m.Missing, &caps,
		&m.ContextLength, &m.ContextLengthSet, &params, &m.SystemPrompt, &meta, &m.CreatedAt, &m.UpdatedAt)
	if err != nil {
		return m, err
	}
	if owner.Valid {
		u := ids.UserID(owner.Int64)
		m.OwnerID = &u
	}
	if err := json.Unmarshal([]byte(caps), &m.Capabilities); err != nil {
		return m, fmt.Errorf("capabilities of model %d: %w", m.ID, err)
	}
	if err := json.Unmarshal([]byte(params), &m.Params); err != nil {
		return m, fmt.Errorf("params of model %d: %w", m.ID, err)
	}
	m.UpstreamMeta = json.RawMessage(meta)
	return m, nil
}

// canChangeModel applies canChangeConnection's rules to a model through its
// connection.
func canChangeModel(ctx context.Context, q queryRower, a Actor, id ids.ModelID) error {
	var owner sql.NullInt64
	err := q.QueryRowContext(ctx, `SELECT c.owner_id`+modelFrom+` WHERE m.id = ?`, id).Scan(&owner)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("model %d: %w", id, ErrNotFound)
	case err != nil:
		return fmt.Errorf("read model %d: %w", id, err)
	case owner.Valid && ids.UserID(owner.Int64) != a.User:
		return fmt.Errorf("model %d: %w", id, ErrNotFound)
	case !owner.Valid && !a.Admin:
		return fmt.Errorf("model %d is instance-wide: %w", id, ErrForbidden)
	}
	return nil
}

// canSeeModel reports ErrNotFound unless user may use model id.
func canSeeModel(ctx context.Context, q queryRower, user ids.UserID, id ids.ModelID) error {
	var ok bool
	err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1`+modelFrom+`
		WHERE m.id = ? AND `+modelVisible+`)`, id, user).Scan(&ok)
	if err != nil {
		return fmt.Errorf("read model %d: %w", id, err)
	}
	if !ok {
		return fmt.Errorf("model %d: %w", id, ErrNotFound)
	}
	return nil
}

func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

func rawJSONText(m json.RawMessage) string {
	if len(m) == 0 {
		return "{}"
	}
	return string(m)
}

// SyncModels records connection connID's current model list in one
// transaction. New models go to the end of the order; known ones get the
// endpoint's context length (unless it no longer says one; the admin's, when
// set, still wins) and metadata; models no longer listed are marked missing, never
// deleted, since chats refer to them; listed ones lose the mark. It runs for
// the refresher, not on a user's behalf.
func (db *DB) SyncModels(ctx context.Context, connID ids.ConnectionID, list []UpstreamModel) (SyncResult, error) {
	var res SyncResult
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		var exists bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM connections WHERE id = ?)`, connID).Scan(&exists); err != nil {
			return fmt.Errorf("read connection %d: %w", connID, err)
		}
		if !exists {
			return fmt.Errorf("connection %d: %w", connID, ErrNotFound)
		}
		type known struct {
			id      ids.ModelID
			missing bool
		}
		have := map[string]known{}
		rows, err := tx.QueryContext(ctx, `SELECT id, upstream_id, missing FROM models WHERE connection_id = ?`, connID)
		if err != nil {
			return fmt.Errorf("read models of connection %d: %w", connID, err)
		}
		for rows.Next() {
			var k known
			var up string
			if err := rows.Scan(&k.id, &up, &k.missing); err != nil {
				rows.Close()
				return err
			}
			have[up] = k
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		var next int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(position), -1) + 1 FROM models`).Scan(&next); err != nil {
			return fmt.Errorf("read model order: %w", err)
		}
		now := nowMillis()
		listed := map[string]bool{}
		for _, u := range list {
			if u.ID == "" || listed[u.ID] {
				continue
			}
			listed[u.ID] = true
			if k, ok := have[u.ID]; ok {
				if _, err := tx.ExecContext(ctx, `
					UPDATE models SET context_length = CASE WHEN ? > 0 THEN ? ELSE context_length END,
						upstream_meta = ?, missing = 0, updated_at = ?
					WHERE id = ?`, u.ContextLength, u.ContextLength, rawJSONText(u.Meta), now, k.id); err != nil {
					return fmt.Errorf("update model %s: %w", u.ID, err)
				}
				if k.missing {
					res.Returned++
				}
				continue
			}
			if _, err := tx.ExecContext(ctx, `
				INSERT INTO models (connection_id, upstream_id, position, context_length, upstream_meta, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, ?, ?)`, connID, u.ID, next, u.ContextLength, rawJSONText(u.Meta), now, now); err != nil {
				return fmt.Errorf("insert model %s: %w", u.ID, err)
			}
			next++
			res.Added++
		}
		for up, k := range have {
			if listed[up] || k.missing {
				continue
			}
			if _, err := tx.ExecContext(ctx, `UPDATE models SET missing = 1, updated_at = ? WHERE id = ?`, now, k.id); err != nil {
				return fmt.Errorf("mark model %s missing: %w", up, err)
			}
			res.Missing++
		}
		return nil
	})
	return res, err
}

// ListModels returns the models user may use that match f, ordered by
// position then id, and how many match in all (for paging). The text query
// is applied in Go: a model list is hundreds of rows, and SQLite's LIKE and
// lower() fold only ASCII.
func (db *DB) ListModels(ctx context.Context, user ids.UserID, f ModelFilter) ([]Model, int, error) {
	q := `SELECT ` + modelColumns + modelFrom + ` WHERE ` + modelVisible
	args := []any{user}
	if f.ConnectionID != 0 {
		q += ` AND m.connection_id = ?`
		args = append(args, f.ConnectionID)
	}
	if f.EnabledOnly {
		q += ` AND m.enabled = 1 AND c.enabled = 1`
	}
	q += ` ORDER BY m.position, m.id`
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list models: %w", err)
	}
	defer rows.Close()
	needle := strings.ToLower(strings.TrimSpace(f.Query))
	var all []Model
	for rows.Next() {
		m, err := scanModel(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("list models: %w", err)
		}
		if needle != "" && !strings.Contains(strings.ToLower(m.DisplayName), needle) &&
			!strings.Contains(strings.ToLower(m.UpstreamID), needle) &&
			!strings.Contains(strings.ToLower(m.Description), needle) {
			continue
		}
		all = append(all, m)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list models: %w", err)
	}
	total := len(all)
	lo := min(max(f.Offset, 0), total)
	hi := total
	if f.Limit > 0 {
		hi = min(lo+f.Limit, total)
	}
	return all[lo:hi], total, nil
}

// ModelByID reads one model that user may use.
func (db *DB) ModelByID(ctx context.Context, user ids.UserID, id ids.ModelID) (Model, error) {
	return modelByID(ctx, prepared{db}, user, id)
}

func modelByID(ctx context.Context, q queryRower, user ids.UserID, id ids.ModelID) (Model, error) {
	m, err := scanModel(q.QueryRowContext(ctx, `SELECT `+modelColumns+modelFrom+`
		WHERE m.id = ? AND `+modelVisible, id, user))
	if errors.Is(err, sql.ErrNoRows) {
		return Model{}, fmt.Errorf("model %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Model{}, fmt.Errorf("read model %d: %w", id, err)
	}
	return m, nil
}

// UpdateModel replaces the admin's settings of model id.
func (db *DB) UpdateModel(ctx context.Context, a Actor, id ids.ModelID, s ModelSettings) (Model, error) {
	caps, err := jsonText(s.Capabilities)
	if err != nil {
		return Model{}, err
	}
	params, err := jsonText(s.Params)
	if err != nil {
		return Model{}, err
	}
	var out Model
	err = db.WriteTx(ctx, func(tx *sql.Tx) error {
		if err := canChangeModel(ctx, tx, a, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `
			UPDATE models SET display_name = ?, description = ?, enabled = ?, pinned = ?, capabilities = ?,
				context_length_override = ?, params = ?, system_prompt = ?, updated_at = ?
			WHERE id = ?`,
			s.DisplayName, s.Description, s.Enabled, s.Pinned, caps,
			max(s.ContextLength, 0), params, s.SystemPrompt, nowMillis(), id)
		if err != nil {
			return fmt.Errorf("update model %d: %w", id, err)
		}
		out, err = modelByID(ctx, tx, a.User, id)
		return err
	})
	return out, err
}

// SetModelAvatar replaces the avatar image of model id; nil data removes it.
func (db *DB) SetModelAvatar(ctx context.Context, a Actor, id ids.ModelID, data []byte, contentType string) error {
	if len(data) == 0 {
		data, contentType = nil, ""
	}
	return db.WriteTx(ctx, func(tx *sql.Tx) error {
		if err := canChangeModel(ctx, tx, a, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE models SET avatar = ?, avatar_type = ?, updated_at = ? WHERE id = ?`,
			data, contentType, nowMillis(), id); err != nil {
			return fmt.Errorf("set avatar of model %d: %w", id, err)
		}
		return nil
	})
}

// ModelAvatar reads the avatar image of a model user may use, with its
// content type. A model without one is ErrNotFound.
func (db *DB) ModelAvatar(ctx context.Context, user ids.UserID, id ids.ModelID) ([]byte, string, error) {
	var data []byte
	var typ string
	err := db.r.QueryRowContext(ctx, `SELECT m.avatar, m.avatar_type`+modelFrom+`
		WHERE m.id = ? AND `+modelVisible+` AND m.avatar IS NOT NULL`, id, user).Scan(&data, &typ)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", fmt.Errorf("avatar of model %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, "", fmt.Errorf("read avatar of model %d: %w", id, err)
	}
	return data, typ, nil
}

// MoveModel puts model id at index newPosition of the list a sees (the
// instance-wide models and a's own, by position) and renumbers every model
// densely from 0 in one transaction. The order is one list for the whole
// instance, so models a cannot see keep their places relative to each
// other; an index past the end moves the model last.
func (db *DB) MoveModel(ctx context.Context, a Actor, id ids.ModelID, newPosition int) error {
	return db.WriteTx(ctx, func(tx *sql.Tx) error {
		if err := canChangeModel(ctx, tx, a, id); err != nil {
			return err
		}
		return reorder(ctx, tx, modelOrder, a.User, int64(id), newPosition)
	})
}

// MoveModelTo puts model id where model to is now in the order a sees: just
// before it when moving up, just after it when moving down. A page of the
// Models list knows its neighbours' ids but not their index among every row
// a sees (paging, filters, and the private models of others share the one
// order), so the place is named by a row, never by a number.
func (db *DB) MoveModelTo(ctx context.Context, a Actor, id, to ids.ModelID) error {
	return db.WriteTx(ctx, func(tx *sql.Tx) error {
		if err := canChangeModel(ctx, tx, a, id); err != nil {
			return err
		}
		rows, err := readOrder(ctx, tx, modelOrder, a.User)
		if err != nil {
			return err
		}
		index := -1
		for _, r := range rows {
			if !r.seen {
				continue
			}
			index++
			if r.id == int64(to) {
				return reorder(ctx, tx, modelOrder, a.User, int64(id), index)
			}
		}
		return fmt.Errorf("model %d: %w", to, ErrNotFound)
	})
}
