package library

import (
	"context"

	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// Shares lists who an item of user's own is shared with.
func (s *Service) Shares(ctx context.Context, user ids.UserID, kind store.LibraryKind, id int64) ([]store.Grantee, error) {
	return nil, errTodo
}

// SetShares replaces who an item of user's own is shared with (reading
// only). The caller has checked library.share.
func (s *Service) SetShares(ctx context.Context, user ids.UserID, kind store.LibraryKind, id int64, to []store.Grantee) ([]store.Grantee, error) {
	return nil, errTodo
}

// People lists who user can share with: the other active people and the
// groups, by name.
func (s *Service) People(ctx context.Context, user ids.UserID) ([]store.Grantee, error) {
	return nil, errTodo
}
