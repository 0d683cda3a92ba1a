package api

import (
	"context"

	"github.com/llembas/lembas/backend/mcp"
)

// MCP is the facade for the remote MCP servers (administrators): add,
// edit and remove servers (the token and headers write-only), refresh
// their tools, switch each tool on or off.
type MCP struct{ mcp *mcp.Service }

// NewMCP returns the MCP facade.
func NewMCP(m *mcp.Service) *MCP { return &MCP{mcp: m} }

// MCPServer is a server as the page sees it: the token only as whether
// one is set, headers by name, its discovered tools (untrusted text the
// page escapes) each with its switch, and the last refresh's error.
type MCPServer = mcp.Server

// MCPServerInput adds (id 0) or changes a server. token and headers are
// write-only: absent keeps what is stored, "" or {} clears it.
type MCPServerInput = mcp.Input

// MCPServerRef names a server.
type MCPServerRef struct {
	ID int64 `json:"id"`
}

// MCPToolSwitch switches one of a server's tools (by the server's own
// name for it) on or off.
type MCPToolSwitch struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	On   bool   `json:"on"`
}

// List returns every server.
func (m *MCP) List(ctx context.Context) ([]MCPServer, error) { return m.mcp.List(ctx) }

// Save adds or changes a server and refreshes its tools; a refresh that
// failed is the result's refreshError, not an error.
func (m *MCP) Save(ctx context.Context, in MCPServerInput) (MCPServer, error) {
	return m.mcp.Save(ctx, in)
}

// Delete removes a server.
func (m *MCP) Delete(ctx context.Context, in MCPServerRef) error { return m.mcp.Delete(ctx, in.ID) }

// Refresh asks a server for its tools again.
func (m *MCP) Refresh(ctx context.Context, in MCPServerRef) (MCPServer, error) {
	return m.mcp.Refresh(ctx, in.ID)
}

// SetTool switches one of a server's tools on or off.
func (m *MCP) SetTool(ctx context.Context, in MCPToolSwitch) (MCPServer, error) {
	return m.mcp.SetTool(ctx, in.ID, in.Name, in.On)
}
