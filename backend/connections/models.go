package connections

import (
	"context"
	"net/http"
	"strings"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/store"
)

// Models are models with the names of their connections, for the picker
// and the admin page.
type Models struct {
	Items []store.Model
	// Total counts every model the filter matches, beyond this page.
	Total int
	Names map[ids.ConnectionID]string
	// Withheld are the models whose system prompt was left out (Picker):
	// they have one, which the user is not shown.
	Withheld map[ids.ModelID]bool
}

// ModelQuery filters the admin list.
type ModelQuery struct {
	Query        string           `json:"query,omitempty"`
	ConnectionID ids.ConnectionID `json:"connectionId,omitempty"`
	EnabledOnly  bool             `json:"enabledOnly,omitempty"`
	Offset       int              `json:"offset,omitempty"`
	Limit        int              `json:"limit,omitempty"`
}

// models lists the models f selects, with their connections' names.
func (s *Service) models(ctx context.Context, user ids.UserID, f store.ModelFilter) (Models, error) {
	list, total, err := s.db.ListModels(ctx, user, f)
	if err != nil {
		return Models{}, err
	}
	return Models{Items: list, Total: total, Names: s.names(ctx, user)}, nil
}

// names are the names of the connections the user can see.
func (s *Service) names(ctx context.Context, user ids.UserID) map[ids.ConnectionID]string {
	names := map[ids.ConnectionID]string{}
	if list, err := s.db.ListConnections(ctx, user); err == nil {
		for _, c := range list {
			names[c.ID] = c.Name
		}
	}
	return names
}

// ListModels returns a page of the models the user can see (50 unless the
// query asks for 1 to 500).
func (s *Service) ListModels(ctx context.Context, user ids.UserID, q ModelQuery) (Models, error) {
	if q.Limit <= 0 || q.Limit > 500 {
		q.Limit = 50
	}
	return s.models(ctx, user, store.ModelFilter{Query: q.Query, ConnectionID: q.ConnectionID,
		EnabledOnly: q.EnabledOnly, Offset: q.Offset, Limit: q.Limit})
}

// Picker returns the enabled models the user can chat with, in the
// admin's order. A shared model's system prompt is the administrator's
// configuration, not something every user of the model needs to read:
// only a manager (connections.manage) gets it.
func (s *Service) Picker(ctx context.Context, user ids.UserID, manager bool) (Models, error) {
	all, err := s.models(ctx, user, store.ModelFilter{EnabledOnly: true})
	if err != nil {
		return Models{}, err
	}
	out := all
	out.Items = make([]store.Model, 0, len(all.Items))
	out.Withheld = map[ids.ModelID]bool{}
	for _, m := range all.Items {
		if m.Missing {
			continue
		}
		if !manager && m.OwnerID == nil && m.SystemPrompt != "" {
			out.Withheld[m.ID] = strings.TrimSpace(m.SystemPrompt) != ""
			m.SystemPrompt = ""
		}
		out.Items = append(out.Items, m)
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

// UpdateModel changes a model's presentation and defaults.
func (s *Service) UpdateModel(ctx context.Context, a store.Actor, id ids.ModelID, p ModelPatch) (store.Model, map[ids.ConnectionID]string, error) {
	cur, err := s.db.ModelByID(ctx, a.User, id)
	if err != nil {
		return store.Model{}, nil, storeErr(err, "model")
	}
	m := store.ModelSettings{DisplayName: cur.DisplayName, Description: cur.Description, Enabled: cur.Enabled,
		Pinned: cur.Pinned, Capabilities: cur.Capabilities, Params: cur.Params, SystemPrompt: cur.SystemPrompt}
	if cur.ContextLengthSet {
		m.ContextLength = cur.ContextLength
	}
	if p.DisplayName != nil {
		m.DisplayName = strings.TrimSpace(*p.DisplayName)
	}
	if p.Description != nil {
		m.Description = strings.TrimSpace(*p.Description)
	}
	if p.Enabled != nil {
		m.Enabled = *p.Enabled
	}
	if p.Pinned != nil {
		m.Pinned = *p.Pinned
	}
	if p.Capabilities != nil {
		m.Capabilities = *p.Capabilities
	}
	if p.ContextLength != nil {
		if *p.ContextLength < 0 {
			return store.Model{}, nil, apperr.New(apperr.Invalid, "the context length cannot be negative (0 means unknown)")
		}
		m.ContextLength = *p.ContextLength
	}
	if p.Params != nil {
		if err := llm.CheckEffort(p.Params.ReasoningEffort); err != nil {
			return store.Model{}, nil, err
		}
		m.Params = *p.Params
	}
	if p.SystemPrompt != nil {
		m.SystemPrompt = *p.SystemPrompt
	}
	x, err := s.db.UpdateModel(ctx, a, id, m)
	if err != nil {
		return store.Model{}, nil, storeErr(err, "model")
	}
	return x, s.names(ctx, a.User), nil
}

// MoveModel puts a model where another one is now (before it when moving
// up, after it when moving down) and returns the new order.
func (s *Service) MoveModel(ctx context.Context, a store.Actor, id, to ids.ModelID) (Models, error) {
	if err := s.db.MoveModelTo(ctx, a, id, to); err != nil {
		return Models{}, storeErr(err, "model")
	}
	return s.models(ctx, a.User, store.ModelFilter{})
}

// ModelAccess reads who may use a shared model.
func (s *Service) ModelAccess(ctx context.Context, id ids.ModelID) (store.ModelAccess, error) {
	acc, err := s.db.ModelAccessOf(ctx, id)
	return acc, storeErr(err, "model")
}

// SetModelAccess replaces who may use a shared model.
func (s *Service) SetModelAccess(ctx context.Context, id ids.ModelID, acc store.ModelAccess) (store.ModelAccess, error) {
	if err := s.db.SetModelAccess(ctx, id, acc); err != nil {
		return store.ModelAccess{}, storeErr(err, "model, user or group")
	}
	return s.ModelAccess(ctx, id)
}

// Avatar returns a model's avatar image, to anyone who may use the model.
func (s *Service) Avatar(ctx context.Context, user ids.UserID, id ids.ModelID) ([]byte, string, error) {
	data, ctype, err := s.db.ModelAvatar(ctx, user, id)
	if err != nil {
		return nil, "", storeErr(err, "model")
	}
	if len(data) == 0 {
		return nil, "", apperr.New(apperr.NotFound, "this model has no avatar")
	}
	return data, ctype, nil
}

// avatarTypes are the image types accepted, decided from the bytes: an SVG
// could carry script, so it is refused.
var avatarTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// SetAvatar stores a model's avatar. Only an administrator changes
// avatars.
func (s *Service) SetAvatar(ctx context.Context, a store.Actor, id ids.ModelID, data []byte) error {
	if !a.Admin {
		return onlyAdminAvatars()
	}
	ctype := http.DetectContentType(data)
	if !avatarTypes[ctype] {
		return apperr.New(apperr.Invalid, "the avatar must be a PNG, JPEG, GIF or WebP image (this file is %s)", ctype)
	}
	return storeErr(s.db.SetModelAvatar(ctx, a, id, data, ctype), "model")
}

// DeleteAvatar removes a model's avatar.
func (s *Service) DeleteAvatar(ctx context.Context, a store.Actor, id ids.ModelID) error {
	if !a.Admin {
		return onlyAdminAvatars()
	}
	return storeErr(s.db.SetModelAvatar(ctx, a, id, nil, ""), "model")
}

func onlyAdminAvatars() error {
	return apperr.New(apperr.Forbidden, "only an administrator can change avatars")
}
