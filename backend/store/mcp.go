package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// MCPServer is a remote MCP server (backend/mcp owns its rules).
type MCPServer struct {
	ID   int64
	Name string
	Slug string
	URL  string
	// SecretEnc is a Fernet token of the server's bearer token and
	// headers ("" = none).
	SecretEnc string
	Enabled   bool
	// Groups may use the server; empty is everyone holding tools.mcp.
	Groups   []int64
	Guidance string
	// Tools is the last tools/list as backend/mcp stored it (JSON array).
	Tools json.RawMessage
	// ToolOff are the server's tool names switched off.
	ToolOff      []string
	RefreshedAt  int64
	RefreshError string
	CreatedAt    int64
	UpdatedAt    int64
}

const mcpColumns = `id, name, slug, url, secret_enc, enabled, groups, guidance, tools, tool_off, refreshed_at, refresh_error, created_at, updated_at`

func scanMCPServer(sc interface{ Scan(...any) error }) (MCPServer, error) {
	var s MCPServer
	var groups, tools, off string
	err := sc.Scan(&s.ID, &s.Name, &s.Slug, &s.URL, &s.SecretEnc, &s.Enabled, &groups, &s.Guidance, &tools, &off,
		&s.RefreshedAt, &s.RefreshError, &s.CreatedAt, &s.UpdatedAt)
	if err != nil {
		return s, err
	}
	if json.Unmarshal([]byte(groups), &s.Groups) != nil || s.Groups == nil {
		s.Groups = []int64{}
	}
	if json.Unmarshal([]byte(off), &s.ToolOff) != nil || s.ToolOff == nil {
		s.ToolOff = []string{}
	}
	if !json.Valid([]byte(tools)) {
		tools = "[]"
	}
	s.Tools = json.RawMessage(tools)
	return s, nil
}

// MCPServers lists every MCP server by name.
func (db *DB) MCPServers(ctx context.Context) ([]MCPServer, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+mcpColumns+` FROM mcp_servers ORDER BY name COLLATE NOCASE, id`)
	if err != nil {
		return nil, fmt.Errorf("list mcp servers: %w", err)
	}
	defer rows.Close()
	out := []MCPServer{}
	for rows.Next() {
		s, err := scanMCPServer(rows)
		if err != nil {
			return nil, fmt.Errorf("read mcp server: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// MCPServer reads one server; ErrNotFound when there is none.
func (db *DB) MCPServer(ctx context.Context, id int64) (MCPServer, error) {
	s, err := scanMCPServer(db.r.QueryRowContext(ctx, `SELECT `+mcpColumns+` FROM mcp_servers WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return s, fmt.Errorf("mcp server %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return s, fmt.Errorf("read mcp server: %w", err)
	}
	return s, nil
}

func mcpJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return "[]"
	}
	return string(b)
}

// SaveMCPServer inserts s (ID 0) or updates what an administrator edits
// (name, slug, URL, secret, enabled, groups, guidance); the cached tools
// are left alone. A slug already used is ErrConflict.
func (db *DB) SaveMCPServer(ctx context.Context, s MCPServer) (int64, error) {
	id := s.ID
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		now := nowMillis()
		groups := mcpJSON(s.Groups)
		if id == 0 {
			res, err := tx.ExecContext(ctx, `
				INSERT INTO mcp_servers (name, slug, url, secret_enc, enabled, groups, guidance, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, s.Name, s.Slug, s.URL, s.SecretEnc, s.Enabled, groups, s.Guidance, now, now)
			if err != nil {
				return mcpWriteErr(err)
			}
			id, err = res.LastInsertId()
			return err
		}
		res, err := tx.ExecContext(ctx, `
			UPDATE mcp_servers SET name = ?, slug = ?, url = ?, secret_enc = ?, enabled = ?, groups = ?, guidance = ?, updated_at = ?
			WHERE id = ?`, s.Name, s.Slug, s.URL, s.SecretEnc, s.Enabled, groups, s.Guidance, now, id)
		if err != nil {
			return mcpWriteErr(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("mcp server %d: %w", id, ErrNotFound)
		}
		return nil
	})
	return id, err
}

func mcpWriteErr(err error) error {
	if strings.Contains(err.Error(), "UNIQUE constraint failed") {
		return fmt.Errorf("mcp server slug: %w", ErrConflict)
	}
	return fmt.Errorf("save mcp server: %w", err)
}

// SetMCPTools stores a refresh's outcome: the tools found (kept as they
// were when the refresh failed) and its error ("" when it worked).
func (db *DB) SetMCPTools(ctx context.Context, id int64, tools json.RawMessage, refreshErr string) error {
	return db.WriteTx(ctx, func(tx *sql.Tx) error {
		var err error
		if tools == nil {
			_, err = tx.ExecContext(ctx, `UPDATE mcp_servers SET refresh_error = ?, refreshed_at = ? WHERE id = ?`,
				refreshErr, nowMillis(), id)
		} else {
			_, err = tx.ExecContext(ctx, `UPDATE mcp_servers SET tools = ?, refresh_error = ?, refreshed_at = ? WHERE id = ?`,
				string(tools), refreshErr, nowMillis(), id)
		}
		if err != nil {
			return fmt.Errorf("store mcp tools: %w", err)
		}
		return nil
	})
}

// SetMCPToolOff replaces the list of a server's tools switched off.
func (db *DB) SetMCPToolOff(ctx context.Context, id int64, off []string) error {
	return db.WriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE mcp_servers SET tool_off = ?, updated_at = ? WHERE id = ?`,
			mcpJSON(off), nowMillis(), id)
		if err != nil {
			return fmt.Errorf("store mcp tool switches: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("mcp server %d: %w", id, ErrNotFound)
		}
		return nil
	})
}

// DeleteMCPServer removes a server; ErrNotFound when there is none.
func (db *DB) DeleteMCPServer(ctx context.Context, id int64) error {
	return db.WriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM mcp_servers WHERE id = ?`, id)
		if err != nil {
			return fmt.Errorf("delete mcp server: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("mcp server %d: %w", id, ErrNotFound)
		}
		return nil
	})
}
