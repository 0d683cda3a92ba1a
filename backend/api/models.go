package api

import (
	"context"
	"fmt"
	"strings"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/connections"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/store"
)

// Connections is the facade for endpoint connections (admin only).
type Connections struct{ deps Deps }

// List returns the connections, secrets masked.
func (c *Connections) List(ctx context.Context) ([]connections.View, error) {
	return c.deps.Connections.List(ctx, user(ctx))
}

// Create adds a connection and lists its models.
func (c *Connections) Create(ctx context.Context, in connections.Input) (connections.View, error) {
	a := manager(ctx)
	return c.deps.Connections.Create(ctx, a, in)
}

// Update changes a connection; absent secrets are kept.
func (c *Connections) Update(ctx context.Context, id ids.ConnectionID, in connections.Input) (connections.View, error) {
	a := manager(ctx)
	return c.deps.Connections.Update(ctx, a, id, in)
}

// Delete removes a connection and its models.
func (c *Connections) Delete(ctx context.Context, id ids.ConnectionID) error {
	a := manager(ctx)
	return c.deps.Connections.Delete(ctx, a, id)
}

// Test lists a stored connection's models and says how it went.
func (c *Connections) Test(ctx context.Context, id ids.ConnectionID) (connections.TestResult, error) {
	return c.deps.Connections.Test(ctx, user(ctx), id)
}

// TestDraft tests connection settings before they are saved.
func (c *Connections) TestDraft(ctx context.Context, in connections.Input) (connections.TestResult, error) {
	return c.deps.Connections.TestDraft(ctx, in)
}

// RefreshModels lists the connection's models again.
func (c *Connections) RefreshModels(ctx context.Context, id ids.ConnectionID) (connections.RefreshResult, error) {
	return c.deps.Connections.RefreshModels(ctx, user(ctx), id)
}

// Discover finds model servers on this machine's usual ports (first run).
func (c *Connections) Discover(ctx context.Context) ([]connections.LocalServer, error) {
	return c.deps.Connections.Discover(ctx, user(ctx))
}

// Models is the facade for models.
type Models struct{ deps Deps }

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

func (m *Models) view(ctx context.Context, x store.Model, names map[ids.ConnectionID]string) ModelView {
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

func (m *Models) connectionNames(ctx context.Context) map[ids.ConnectionID]string {
	names := map[ids.ConnectionID]string{}
	if list, err := m.deps.DB.ListConnections(ctx, user(ctx)); err == nil {
		for _, c := range list {
			names[c.ID] = c.Name
		}
	}
	return names
}

// ModelQuery filters the admin list.
type ModelQuery struct {
	Query        string           `json:"query,omitempty"`
	ConnectionID ids.ConnectionID `json:"connectionId,omitempty"`
	EnabledOnly  bool             `json:"enabledOnly,omitempty"`
	Offset       int              `json:"offset,omitempty"`
	Limit        int              `json:"limit,omitempty"`
}

// ModelList is one page of models.
type ModelList struct {
	Items []ModelView `json:"items"`
	Total int         `json:"total"`
}

// List returns a page of models for the admin page.
func (m *Models) List(ctx context.Context, q ModelQuery) (ModelList, error) {
	if q.Limit <= 0 || q.Limit > 500 {
		q.Limit = 50
	}
	list, total, err := m.deps.DB.ListModels(ctx, user(ctx), store.ModelFilter{Query: q.Query, ConnectionID: q.ConnectionID,
		EnabledOnly: q.EnabledOnly, Offset: q.Offset, Limit: q.Limit})
	if err != nil {
		return ModelList{}, err
	}
	names := m.connectionNames(ctx)
	out := ModelList{Items: make([]ModelView, 0, len(list)), Total: total}
	for _, x := range list {
		out.Items = append(out.Items, m.view(ctx, x, names))
	}
	return out, nil
}

// Picker returns the enabled models the caller can chat with, in the admin's
// order.
func (m *Models) Picker(ctx context.Context) ([]ModelView, error) {
	list, _, err := m.deps.DB.ListModels(ctx, user(ctx), store.ModelFilter{EnabledOnly: true})
	if err != nil {
		return nil, err
	}
	names := m.connectionNames(ctx)
	// A model's system prompt is the administrator's configuration, not
	// something every user of the model needs to read.
	manager := m.deps.require(ctx, auth.ConnectionsManage) == nil
	out := make([]ModelView, 0, len(list))
	for _, x := range list {
		if x.Missing {
			continue
		}
		v := m.view(ctx, x, names)
		if !manager && x.OwnerID == nil {
			v.SystemPrompt = ""
		}
		out = append(out, v)
	}
	return out, nil
}

// ModelPatch is what the admin changes on a model; absent fields are kept.
type ModelPatch struct {
	DisplayName   *string             `json:"displayName,omitempty"`
	Description   *string             `json:"description,omitempty"`
	Enabled       *bool               `json:"enabled,omitempty"`
	Pinned        *bool               `json:"pinned,omitempty"`
	Capabilities  *store.Capabilities `json:"capabilities,omitempty"`
	ContextLength *int64              `json:"contextLength,omitempty"`
	Params        *store.Params       `json:"params,omitempty"`
	SystemPrompt  *string             `json:"systemPrompt,omitempty"`
}

// Update changes a model's presentation and defaults.
func (m *Models) Update(ctx context.Context, id ids.ModelID, p ModelPatch) (ModelView, error) {
	a := manager(ctx)
	cur, err := m.deps.DB.ModelByID(ctx, user(ctx), id)
	if err != nil {
		return ModelView{}, storeErr(err, "model")
	}
	s := store.ModelSettings{DisplayName: cur.DisplayName, Description: cur.Description, Enabled: cur.Enabled,
		Pinned: cur.Pinned, Capabilities: cur.Capabilities, Params: cur.Params, SystemPrompt: cur.SystemPrompt}
	if cur.ContextLengthSet {
		s.ContextLength = cur.ContextLength
	}
	if p.DisplayName != nil {
		s.DisplayName = strings.TrimSpace(*p.DisplayName)
	}
	if p.Description != nil {
		s.Description = strings.TrimSpace(*p.Description)
	}
	if p.Enabled != nil {
		s.Enabled = *p.Enabled
	}
	if p.Pinned != nil {
		s.Pinned = *p.Pinned
	}
	if p.Capabilities != nil {
		s.Capabilities = *p.Capabilities
	}
	if p.ContextLength != nil {
		if *p.ContextLength < 0 {
			return ModelView{}, apperr.New(apperr.Invalid, "the context length cannot be negative (0 means unknown)")
		}
		s.ContextLength = *p.ContextLength
	}
	if p.Params != nil {
		if e := p.Params.ReasoningEffort; e != nil && *e != "" && !validEffort(*e) {
			return ModelView{}, apperr.New(apperr.Invalid, "unknown reasoning effort %q (want %s)", *e, strings.Join(llm.Efforts, ", "))
		}
		s.Params = *p.Params
	}
	if p.SystemPrompt != nil {
		s.SystemPrompt = *p.SystemPrompt
	}
	x, err := m.deps.DB.UpdateModel(ctx, a, id, s)
	if err != nil {
		return ModelView{}, storeErr(err, "model")
	}
	return m.view(ctx, x, m.connectionNames(ctx)), nil
}

// Move puts a model where another one is now (before it when moving up,
// after it when moving down) and returns the new order.
func (m *Models) Move(ctx context.Context, id, to ids.ModelID) ([]ModelView, error) {
	a := manager(ctx)
	if err := m.deps.DB.MoveModelTo(ctx, a, id, to); err != nil {
		return nil, storeErr(err, "model")
	}
	list, _, err := m.deps.DB.ListModels(ctx, user(ctx), store.ModelFilter{})
	if err != nil {
		return nil, err
	}
	names := m.connectionNames(ctx)
	out := make([]ModelView, 0, len(list))
	for _, x := range list {
		out = append(out, m.view(ctx, x, names))
	}
	return out, nil
}

// Efforts lists the reasoning efforts a chat or model may set.
func (m *Models) Efforts(ctx context.Context) ([]string, error) { return llm.Efforts, nil }

// Folders is the facade for the caller's chat folders.
type Folders struct{ deps Deps }

// FolderView is one folder.
type FolderView struct {
	ID       ids.FolderID `json:"id"`
	Name     string       `json:"name"`
	Position int64        `json:"position"`
}

// List returns the caller's folders in order.
func (f *Folders) List(ctx context.Context) ([]FolderView, error) {
	list, err := f.deps.DB.ListFolders(ctx, user(ctx))
	if err != nil {
		return nil, err
	}
	out := make([]FolderView, 0, len(list))
	for _, x := range list {
		out = append(out, FolderView{ID: x.ID, Name: x.Name, Position: x.Position})
	}
	return out, nil
}

func folderName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", apperr.New(apperr.Invalid, "a folder needs a name")
	}
	if len(name) > 200 {
		return "", apperr.New(apperr.Invalid, "the folder name is too long")
	}
	return name, nil
}

// Create adds a folder.
func (f *Folders) Create(ctx context.Context, name string) (FolderView, error) {
	name, err := folderName(name)
	if err != nil {
		return FolderView{}, err
	}
	x, err := f.deps.DB.CreateFolder(ctx, user(ctx), name)
	if err != nil {
		return FolderView{}, err
	}
	return FolderView{ID: x.ID, Name: x.Name, Position: x.Position}, nil
}

// Rename renames a folder.
func (f *Folders) Rename(ctx context.Context, id ids.FolderID, name string) error {
	name, err := folderName(name)
	if err != nil {
		return err
	}
	return storeErr(f.deps.DB.RenameFolder(ctx, user(ctx), id, name), "folder")
}

// Delete removes a folder; its chats move out of it.
func (f *Folders) Delete(ctx context.Context, id ids.FolderID) error {
	return storeErr(f.deps.DB.DeleteFolder(ctx, user(ctx), id), "folder")
}

// Move puts a folder at a position in the order.
func (f *Folders) Move(ctx context.Context, id ids.FolderID, position int) error {
	return storeErr(f.deps.DB.MoveFolder(ctx, user(ctx), id, position), "folder")
}
