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

// CustomTool is an administrator's HTTP tool (backend/customtools owns its
// rules). SecretEnc is a Fernet token; the store never sees plaintext.
// Groups lists who may use a Restricted tool (admins always may).
type CustomTool struct {
	ID          int64
	Name        string
	Description string
	Parameters  string // a JSON schema object
	Method      string
	URL         string
	Headers     []CustomHeader
	Body        string
	SecretEnc   string
	Guidance    string
	Enabled     bool
	Restricted  bool
	Groups      []int64
	CreatedAt   int64
	UpdatedAt   int64
}

// CustomHeader is one request header template.
type CustomHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

const customToolColumns = `t.id, t.name, t.description, t.parameters, t.method, t.url, t.headers, t.body,
	t.secret_enc, t.guidance, t.enabled, t.restricted, t.created_at, t.updated_at,
	(SELECT COALESCE(json_group_array(a.group_id), '[]') FROM custom_tool_access a WHERE a.tool_id = t.id)`

func scanCustomTool(row interface{ Scan(...any) error }) (CustomTool, error) {
	var t CustomTool
	var headers, groups string
	err := row.Scan(&t.ID, &t.Name, &t.Description, &t.Parameters, &t.Method, &t.URL, &headers, &t.Body,
		&t.SecretEnc, &t.Guidance, &t.Enabled, &t.Restricted, &t.CreatedAt, &t.UpdatedAt, &groups)
	if err != nil {
		return t, err
	}
	if json.Unmarshal([]byte(headers), &t.Headers) != nil || t.Headers == nil {
		t.Headers = []CustomHeader{}
	}
	if json.Unmarshal([]byte(groups), &t.Groups) != nil || t.Groups == nil {
		t.Groups = []int64{}
	}
	return t, nil
}

// CustomTools lists every custom tool by name.
func (db *DB) CustomTools(ctx context.Context) ([]CustomTool, error) {
	return db.queryCustomTools(ctx, `SELECT `+customToolColumns+` FROM custom_tools t ORDER BY t.name, t.id`)
}

// CustomToolsFor lists the enabled custom tools user may be offered: those
// open to everyone and those listing one of the user's groups, or all of
// them for an admin. A restricted tool whose groups are gone stays closed.
func (db *DB) CustomToolsFor(ctx context.Context, user ids.UserID, admin bool) ([]CustomTool, error) {
	return db.queryCustomTools(ctx, `SELECT `+customToolColumns+` FROM custom_tools t
		WHERE t.enabled = 1 AND (? OR t.restricted = 0 OR EXISTS (
			SELECT 1 FROM custom_tool_access a JOIN group_members gm ON gm.group_id = a.group_id
			WHERE a.tool_id = t.id AND gm.user_id = ?))
		ORDER BY t.name, t.id`, admin, user)
}

func (db *DB) queryCustomTools(ctx context.Context, q string, args ...any) ([]CustomTool, error) {
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read custom tools: %w", err)
	}
	defer rows.Close()
	out := []CustomTool{}
	for rows.Next() {
		t, err := scanCustomTool(rows)
		if err != nil {
			return nil, fmt.Errorf("read custom tool: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// CustomTool reads one custom tool.
func (db *DB) CustomTool(ctx context.Context, id int64) (CustomTool, error) {
	t, err := scanCustomTool(db.r.QueryRowContext(ctx, `SELECT `+customToolColumns+` FROM custom_tools t WHERE t.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return CustomTool{}, fmt.Errorf("custom tool %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return CustomTool{}, fmt.Errorf("read custom tool %d: %w", id, err)
	}
	return t, nil
}

// SaveCustomTool inserts t (ID 0) or replaces the row t.ID, with its group
// list, in one transaction, and returns it as stored. A name another tool
// has is ErrConflict; unknown groups are ErrNotFound. Restricted is set
// from the group list: any group restricts.
func (db *DB) SaveCustomTool(ctx context.Context, t CustomTool) (CustomTool, error) {
	headers, err := json.Marshal(t.Headers)
	if err != nil {
		return CustomTool{}, err
	}
	if t.Headers == nil {
		headers = []byte("[]")
	}
	t.Restricted = len(t.Groups) > 0
	err = db.WriteTx(ctx, func(tx *sql.Tx) error {
		var taken bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM custom_tools WHERE name = ? AND id != ?)`, t.Name, t.ID).Scan(&taken); err != nil {
			return fmt.Errorf("check custom tool name: %w", err)
		}
		if taken {
			return fmt.Errorf("custom tool %q: %w", t.Name, ErrConflict)
		}
		now := nowMillis()
		if t.ID == 0 {
			res, err := tx.ExecContext(ctx, `INSERT INTO custom_tools (name, description, parameters, method, url, headers, body,
				secret_enc, guidance, enabled, restricted, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				t.Name, t.Description, t.Parameters, t.Method, t.URL, string(headers), t.Body, t.SecretEnc, t.Guidance,
				t.Enabled, t.Restricted, now, now)
			if err != nil {
				return fmt.Errorf("insert custom tool: %w", err)
			}
			t.ID, _ = res.LastInsertId()
		} else {
			res, err := tx.ExecContext(ctx, `UPDATE custom_tools SET name = ?, description = ?, parameters = ?, method = ?, url = ?,
				headers = ?, body = ?, secret_enc = ?, guidance = ?, enabled = ?, restricted = ?, updated_at = ? WHERE id = ?`,
				t.Name, t.Description, t.Parameters, t.Method, t.URL, string(headers), t.Body, t.SecretEnc, t.Guidance,
				t.Enabled, t.Restricted, now, t.ID)
			if err != nil {
				return fmt.Errorf("update custom tool %d: %w", t.ID, err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return fmt.Errorf("custom tool %d: %w", t.ID, ErrNotFound)
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM custom_tool_access WHERE tool_id = ?`, t.ID); err != nil {
				return fmt.Errorf("clear access of custom tool %d: %w", t.ID, err)
			}
		}
		for _, g := range uniq(t.Groups) {
			res, err := tx.ExecContext(ctx, `INSERT INTO custom_tool_access (tool_id, group_id) SELECT ?, id FROM groups WHERE id = ?`, t.ID, g)
			if err != nil {
				return fmt.Errorf("grant custom tool %d to group %d: %w", t.ID, g, err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return fmt.Errorf("group %d: %w", g, ErrNotFound)
			}
		}
		return nil
	})
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE constraint failed") {
			return CustomTool{}, fmt.Errorf("custom tool %q: %w", t.Name, ErrConflict)
		}
		return CustomTool{}, err
	}
	return db.CustomTool(ctx, t.ID)
}

// DeleteCustomTool removes a custom tool (its access rows go with it).
func (db *DB) DeleteCustomTool(ctx context.Context, id int64) error {
	res, err := db.w.ExecContext(ctx, `DELETE FROM custom_tools WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete custom tool %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("custom tool %d: %w", id, ErrNotFound)
	}
	return nil
}
