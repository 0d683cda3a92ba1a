package api

import (
	"context"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// views maps what a service listed to the views a facade returns. The
// result is never nil, so an empty list is [] on the wire.
func views[T, V any](list []T, view func(T) V) []V {
	out := make([]V, 0, len(list))
	for _, x := range list {
		out = append(out, view(x))
	}
	return out
}

// Permits answers whether the caller in a context holds a permission: the
// dispatcher's Perm guards, and the facades whose checks depend on the
// call (chat.params when a call sets parameters, files.upload when it adds
// files).
type Permits struct{ perms *auth.Permissions }

// NewPermits returns the permits resolved by perms; without perms only
// administrators hold a permission.
func NewPermits(perms *auth.Permissions) Permits { return Permits{perms: perms} }

// Require returns Forbidden unless the caller has permission p. Admins
// (and the desktop owner, who is one) pass without a lookup.
func (p Permits) Require(ctx context.Context, perm auth.Permission) error {
	c := CallerFrom(ctx)
	if c.Admin {
		return nil
	}
	// Resolved once already for this call (WithCaller).
	if rc, ok := auth.CallerFrom(ctx); ok {
		return rc.Perms.Require(perm)
	}
	if p.perms == nil {
		return apperr.New(apperr.Forbidden, "You are not allowed to do this (%s); ask an administrator.", perm)
	}
	set, err := p.perms.Resolve(ctx, store.User{ID: c.UserID})
	if err != nil {
		return err
	}
	return set.Require(perm)
}

// WithCaller returns ctx carrying the caller's permissions, resolved once
// (auth.Caller): a reply started with it carries them, so each of its
// steps decides what it may do where it acts; Require reads them too.
func (p Permits) WithCaller(ctx context.Context) (context.Context, error) {
	c := CallerFrom(ctx)
	rc := auth.Caller{User: ids.UserID(c.UserID), Perms: auth.NewSet(c.Admin)}
	if !c.Admin && p.perms != nil {
		set, err := p.perms.Resolve(ctx, store.User{ID: c.UserID})
		if err != nil {
			return ctx, err
		}
		rc.Perms = set
	}
	return auth.WithCaller(ctx, rc), nil
}

// CallerOf returns another user as a reply would act for them, with their
// permissions (an administrator's preview of what they would be sent).
func (p Permits) CallerOf(ctx context.Context, user ids.UserID) (auth.Caller, error) {
	if p.perms == nil {
		return auth.Caller{User: user, Perms: auth.NewSet(false)}, nil
	}
	set, err := p.perms.ResolveID(ctx, user)
	if err != nil {
		return auth.Caller{}, err
	}
	return auth.Caller{User: user, Perms: set}, nil
}
