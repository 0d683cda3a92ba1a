package api

import (
	"context"
	"fmt"
	"strings"

	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/connections"
	"github.com/llembas/lembas/backend/folders"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/store"
)

// Connections is the facade for endpoint connections (admin only).
type Connections struct{ conns *connections.Service }

// NewConnections returns the Connections facade.
func NewConnections(conns *connections.Service) *Connections { return &Connections{conns: conns} }

// List returns the connections, secrets masked.
func (c *Connections) List(ctx context.Context) ([]connections.View, error) {
	return c.conns.List(ctx, user(ctx))
}

// Create adds a connection and lists its models.
func (c *Connections) Create(ctx context.Context, in connections.Input) (connections.View, error) {
	a := manager(ctx)
	return c.conns.Create(ctx, a, in)
}

// Update changes a connection; absent secrets are kept.
func (c *Connections) Update(ctx context.Context, id ids.ConnectionID, in connections.Input) (connections.View, error) {
	a := manager(ctx)
	return c.conns.Update(ctx, a, id, in)
}

// Delete removes a connection and its models.
func (c *Connections) Delete(ctx context.Context, id ids.ConnectionID) error {
	a := manager(ctx)
	return c.conns.Delete(ctx, a, id)
}

// Test lists a stored connection's models and says how it went.
func (c *Connections) Test(ctx context.Context, id ids.ConnectionID) (connections.TestResult, error) {
	return c.conns.Test(ctx, user(ctx), id)
}

// TestDraft tests connection settings before they are saved.
func (c *Connections) TestDraft(ctx context.Context, in connections.Input) (connections.TestResult, error) {
	return c.conns.TestDraft(ctx, in)
}

// RefreshModels lists the connection's models again.
func (c *Connections) RefreshModels(ctx context.Context, id ids.ConnectionID) (connections.RefreshResult, error) {
	return c.conns.RefreshModels(ctx, user(ctx), id)
}

// Discover finds model servers on this machine's usual ports (first run).
func (c *Connections) Discover(ctx context.Context) ([]connections.LocalServer, error) {
	return c.conns.Discover(ctx, user(ctx))
}

// Models is the facade for models.
type Models struct {
	conns   *connections.Service
	permits Permits
}

// NewModels returns the Models facade.
func NewModels(conns *connections.Service, permits Permits) *Models {
	return &Models{conns: conns, permits: permits}
}

// ModelView is a model for the picker and the admin page.
type ModelView struct {
	ID             ids.ModelID        `json:"id"`
	ConnectionID   ids.ConnectionID   `json:"connectionId"`
	ConnectionName string             `json:"connectionName"`
	UpstreamID     string             `json:"upstreamId"`
	DisplayName    string             `json:"displayName"`
	Name           string             `json:"name"`
	Description    string             `json:"description"`
	HasAvatar      bool               `json:"hasAvatar"`
	AvatarURL      string             `json:"avatarUrl,omitempty"`
	Position       int64              `json:"position"`
	Enabled        bool               `json:"enabled"`
	Pinned         bool               `json:"pinned"`
	Capabilities   store.Capabilities `json:"capabilities"`
	ContextLength  int64              `json:"contextLength"`
	Params         store.Params       `json:"params"`
	SystemPrompt   string             `json:"systemPrompt"`
	// HasSystemPrompt says the model has a system prompt even where the
	// picker leaves its text out, so chat settings can say one applies.
	HasSystemPrompt bool `json:"hasSystemPrompt"`
	Missing         bool `json:"missing"`
}

func modelView(x store.Model, names map[ids.ConnectionID]string) ModelView {
	v := ModelView{ID: x.ID, ConnectionID: x.ConnectionID, ConnectionName: names[x.ConnectionID], UpstreamID: x.UpstreamID,
		DisplayName: x.DisplayName, Name: x.DisplayName, Description: x.Description, HasAvatar: x.AvatarType != "",
		Position: x.Position, Enabled: x.Enabled, Pinned: x.Pinned, Capabilities: x.Capabilities,
		ContextLength: x.ContextLength, Params: x.Params, SystemPrompt: x.SystemPrompt, Missing: x.Missing,
		HasSystemPrompt: strings.TrimSpace(x.SystemPrompt) != ""}
	if v.Name == "" {
		v.Name = x.UpstreamID
	}
	if v.HasAvatar {
		v.AvatarURL = fmt.Sprintf("api/models/%d/avatar?v=%d", x.ID, x.UpdatedAt)
	}
	return v
}

// ModelQuery filters the admin list.
type ModelQuery = connections.ModelQuery

// ModelList is one page of models.
type ModelList struct {
	Items []ModelView `json:"items"`
	Total int         `json:"total"`
}

func modelViews(list connections.Models) []ModelView {
	return views(list.Items, func(x store.Model) ModelView {
		v := modelView(x, list.Names)
		v.HasSystemPrompt = v.HasSystemPrompt || list.Withheld[x.ID]
		return v
	})
}

// List returns a page of models for the admin page.
func (m *Models) List(ctx context.Context, q ModelQuery) (ModelList, error) {
	list, err := m.conns.ListModels(ctx, user(ctx), q)
	if err != nil {
		return ModelList{}, err
	}
	return ModelList{Items: modelViews(list), Total: list.Total}, nil
}

// Picker returns the enabled models the caller can chat with, in the admin's
// order.
func (m *Models) Picker(ctx context.Context) ([]ModelView, error) {
	list, err := m.conns.Picker(ctx, user(ctx), m.permits.Require(ctx, auth.ConnectionsManage) == nil)
	if err != nil {
		return nil, err
	}
	return modelViews(list), nil
}

// ModelPatch is what the admin changes on a model; absent fields are kept.
type ModelPatch = connections.ModelPatch

// Update changes a model's presentation and defaults.
func (m *Models) Update(ctx context.Context, id ids.ModelID, p ModelPatch) (ModelView, error) {
	x, names, err := m.conns.UpdateModel(ctx, manager(ctx), id, p)
	if err != nil {
		return ModelView{}, err
	}
	return modelView(x, names), nil
}

// Move puts a model where another one is now (before it when moving up,
// after it when moving down) and returns the new order.
func (m *Models) Move(ctx context.Context, id, to ids.ModelID) ([]ModelView, error) {
	list, err := m.conns.MoveModel(ctx, manager(ctx), id, to)
	if err != nil {
		return nil, err
	}
	return modelViews(list), nil
}

// Efforts lists the reasoning efforts a chat or model may set.
func (m *Models) Efforts(ctx context.Context) ([]string, error) { return llm.Efforts, nil }

// Folders is the facade for the caller's chat folders.
type Folders struct{ folders *folders.Service }

// NewFolders returns the Folders facade.
func NewFolders(f *folders.Service) *Folders { return &Folders{folders: f} }

// FolderView is one folder.
type FolderView struct {
	ID       ids.FolderID `json:"id"`
	Name     string       `json:"name"`
	Position int64        `json:"position"`
}

func folderView(x store.Folder) FolderView {
	return FolderView{ID: x.ID, Name: x.Name, Position: x.Position}
}

// List returns the caller's folders in order.
func (f *Folders) List(ctx context.Context) ([]FolderView, error) {
	list, err := f.folders.List(ctx, user(ctx))
	if err != nil {
		return nil, err
	}
	return views(list, folderView), nil
}

// Create adds a folder.
func (f *Folders) Create(ctx context.Context, name string) (FolderView, error) {
	x, err := f.folders.Create(ctx, user(ctx), name)
	if err != nil {
		return FolderView{}, err
	}
	return folderView(x), nil
}

// Rename renames a folder.
func (f *Folders) Rename(ctx context.Context, id ids.FolderID, name string) error {
	return f.folders.Rename(ctx, user(ctx), id, name)
}

// Delete removes a folder; its chats move out of it.
func (f *Folders) Delete(ctx context.Context, id ids.FolderID) error {
	return f.folders.Delete(ctx, user(ctx), id)
}

// Move puts a folder at a position in the order.
func (f *Folders) Move(ctx context.Context, id ids.FolderID, position int) error {
	return f.folders.Move(ctx, user(ctx), id, position)
}
