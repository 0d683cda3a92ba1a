package api

import (
	"context"
	"encoding/json"

	"github.com/llembas/lembas/backend/customtools"
)

// CustomTools is the facade for the HTTP tools an administrator defines
// (Settings → Custom tools): the tools, their write-only secrets, and Try,
// which runs a saved tool with arguments as a reply would.
type CustomTools struct{ tools *customtools.Service }

// NewCustomTools returns the CustomTools facade.
func NewCustomTools(s *customtools.Service) *CustomTools { return &CustomTools{tools: s} }

// CustomTool is a custom tool as the page sees it (the secret only as
// whether one is set).
type CustomTool = customtools.View

// CustomToolInput is a tool to save: id 0 creates one; secret absent
// keeps the stored one, "" clears it.
type CustomToolInput = customtools.Input

// CustomToolTry is a saved tool and the arguments (a JSON object) to run
// it with.
type CustomToolTry struct {
	ID        int64           `json:"id"`
	Arguments json.RawMessage `json:"arguments"`
}

// CustomToolTryResult is the request as sent (the secret masked), the
// answer, and the result the model would read.
type CustomToolTryResult = customtools.TryResult

// List returns every custom tool.
func (c *CustomTools) List(ctx context.Context) ([]CustomTool, error) { return c.tools.List(ctx) }

// Get returns one custom tool.
func (c *CustomTools) Get(ctx context.Context, id int64) (CustomTool, error) {
	return c.tools.Get(ctx, id)
}

// Save checks and stores a custom tool.
func (c *CustomTools) Save(ctx context.Context, in CustomToolInput) (CustomTool, error) {
	return c.tools.Save(ctx, in)
}

// Delete removes a custom tool.
func (c *CustomTools) Delete(ctx context.Context, id int64) error { return c.tools.Delete(ctx, id) }

// Try runs a saved tool with arguments, as a reply would.
func (c *CustomTools) Try(ctx context.Context, in CustomToolTry) (CustomToolTryResult, error) {
	return c.tools.Try(ctx, in.ID, in.Arguments)
}
