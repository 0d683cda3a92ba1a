package auth

import (
	"context"

	"github.com/llembas/lembas/backend/ids"
)

// Caller is who work done on someone's behalf acts for: the user and what
// they may do, resolved once when their call came in. A reply carries it,
// so each step decides what it may do where it acts (a tool it may run),
// not only the facade that started it.
type Caller struct {
	User  ids.UserID
	Perms Set
}

// NewSet returns a set of the named permissions (every one for an admin),
// for callers whose permissions are already known, and tests.
func NewSet(admin bool, names ...Permission) Set {
	s := Set{admin: admin, names: map[Permission]bool{}}
	for _, n := range names {
		s.names[n] = true
	}
	return s
}

type callerKey struct{}

// WithCaller returns ctx carrying c.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller ctx carries, if any.
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}
