package api

import (
	"context"
	"net/http"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// AvatarStore implements httpapi.Avatars over the store: anyone who may use
// a model sees its avatar; only an admin changes it.
type AvatarStore struct{ DB *store.DB }

// Avatar returns a model's avatar image.
func (a AvatarStore) Avatar(ctx context.Context, c Caller, id int64) ([]byte, string, error) {
	data, ctype, err := a.DB.ModelAvatar(ctx, ids.UserID(c.UserID), ids.ModelID(id))
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

// SetAvatar stores a model's avatar.
func (a AvatarStore) SetAvatar(ctx context.Context, c Caller, id int64, data []byte) error {
	if !c.Admin {
		return apperr.New(apperr.Forbidden, "only an administrator can change avatars")
	}
	ctype := http.DetectContentType(data)
	if !avatarTypes[ctype] {
		return apperr.New(apperr.Invalid, "the avatar must be a PNG, JPEG, GIF or WebP image (this file is %s)", ctype)
	}
	return storeErr(a.DB.SetModelAvatar(ctx, store.Actor{User: ids.UserID(c.UserID), Admin: c.Admin}, ids.ModelID(id), data, ctype), "model")
}

// DeleteAvatar removes a model's avatar.
func (a AvatarStore) DeleteAvatar(ctx context.Context, c Caller, id int64) error {
	if !c.Admin {
		return apperr.New(apperr.Forbidden, "only an administrator can change avatars")
	}
	return storeErr(a.DB.SetModelAvatar(ctx, store.Actor{User: ids.UserID(c.UserID), Admin: c.Admin}, ids.ModelID(id), nil, ""), "model")
}
