package api

import (
	"context"

	"github.com/llembas/lembas/backend/connections"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// AvatarStore implements httpapi.Avatars over the connections service:
// anyone who may use a model sees its avatar; only an admin changes it.
type AvatarStore struct{ conns *connections.Service }

// NewAvatarStore returns the avatar routes.
func NewAvatarStore(conns *connections.Service) AvatarStore { return AvatarStore{conns: conns} }

func actor(c Caller) store.Actor { return store.Actor{User: ids.UserID(c.UserID), Admin: c.Admin} }

// Avatar returns a model's avatar image.
func (a AvatarStore) Avatar(ctx context.Context, c Caller, id int64) ([]byte, string, error) {
	return a.conns.Avatar(ctx, ids.UserID(c.UserID), ids.ModelID(id))
}

// SetAvatar stores a model's avatar.
func (a AvatarStore) SetAvatar(ctx context.Context, c Caller, id int64, data []byte) error {
	return a.conns.SetAvatar(ctx, actor(c), ids.ModelID(id), data)
}

// DeleteAvatar removes a model's avatar.
func (a AvatarStore) DeleteAvatar(ctx context.Context, c Caller, id int64) error {
	return a.conns.DeleteAvatar(ctx, actor(c), ids.ModelID(id))
}
