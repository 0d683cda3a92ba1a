package api

import (
	"context"

	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/tools"
)

// Tools is the facade for the tools replies may use: the instance's
// switches (administrators), the registered tools (read-only), and which
// of them the caller's replies may be offered.
type Tools struct {
	tools   *tools.Service
	permits Permits
}

// NewTools returns the Tools facade.
func NewTools(t *tools.Service, permits Permits) *Tools {
	return &Tools{tools: t, permits: permits}
}

// Settings reads the instance's tool settings.
func (c *Tools) Settings(ctx context.Context) (tools.Settings, error) {
	return c.tools.Settings(ctx)
}

// SetSettings changes the instance's tool settings.
func (c *Tools) SetSettings(ctx context.Context, p tools.SettingsPatch) (tools.Settings, error) {
	return c.tools.SetSettings(ctx, p)
}

// List describes every registered tool: name, family, permission,
// description and parameters, as they are sent to models.
func (c *Tools) List(ctx context.Context) ([]tools.Info, error) {
	return c.tools.List(), nil
}

// Available lists the tools the caller's replies may be offered by a
// model flagged for tools with none of its families switched off: the
// instance has them on, the caller holds their permissions, and they are
// ready. A model's own switches (capabilities.toolsOff) narrow it further;
// empty means the composer shows no tools switch.
func (c *Tools) Available(ctx context.Context) ([]tools.Info, error) {
	ctx, err := c.permits.WithCaller(ctx)
	if err != nil {
		return nil, err
	}
	caller, _ := auth.CallerFrom(ctx)
	set, err := c.tools.Resolve(ctx, caller, store.Model{Capabilities: store.Capabilities{Tools: true}}, store.Chat{})
	if err != nil {
		return nil, err
	}
	return set.Info(), nil
}
