package library

import (
	"context"
	"errors"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// kindNames are how a message names each kind.
var kindNames = map[store.LibraryKind]string{store.KindBase: "knowledge base", store.KindNote: "note", store.KindSkill: "skill"}

func kindName(kind store.LibraryKind) string {
	if n, ok := kindNames[kind]; ok {
		return n
	}
	return "item"
}

// writable checks that user may change the item of kind with id: NotFound
// when they cannot see it (the same answer as for one that does not exist,
// so nobody learns which ids are taken), Forbidden when it is shared with
// them. Being an administrator changes nothing.
func (s *Service) writable(ctx context.Context, user ids.UserID, kind store.LibraryKind, id int64) error {
	what := kindName(kind)
	notFound := apperr.New(apperr.NotFound, "%s not found", what)
	owner, err := s.db.LibraryOwner(ctx, kind, id)
	if errors.Is(err, store.ErrNotFound) {
		return notFound
	}
	if err != nil {
		return err
	}
	if owner == user {
		return nil
	}
	seen, err := s.db.LibraryVisible(ctx, user, kind, id)
	if err != nil {
		return err
	}
	if !seen {
		return notFound
	}
	return apperr.New(apperr.Forbidden, "This %s is shared with you for reading only.", what)
}

// Shares lists who an item of user's own is shared with.
func (s *Service) Shares(ctx context.Context, user ids.UserID, kind store.LibraryKind, id int64) ([]store.Grantee, error) {
	if err := s.writable(ctx, user, kind, id); err != nil {
		return nil, err
	}
	return s.db.Shares(ctx, kind, id)
}

// SetShares replaces who an item of user's own is shared with (reading
// only). The caller has checked library.share.
func (s *Service) SetShares(ctx context.Context, user ids.UserID, kind store.LibraryKind, id int64, to []store.Grantee) ([]store.Grantee, error) {
	if err := s.writable(ctx, user, kind, id); err != nil {
		return nil, err
	}
	for _, g := range to {
		if g.UserID == user && g.GroupID == 0 {
			return nil, apperr.New(apperr.Invalid, "You cannot share a %s with yourself.", kindName(kind))
		}
		if (g.UserID == 0) == (g.GroupID == 0) {
			return nil, apperr.New(apperr.Invalid, "Share with one person or one group at a time.")
		}
	}
	before := s.readers(ctx, kind, id)
	err := s.db.SetShares(ctx, user, kind, id, to)
	if errors.Is(err, store.ErrNoGrantee) {
		return nil, apperr.Wrap(apperr.Invalid, err, "Someone chosen is not an active person or a group any more; choose again.")
	}
	if err != nil {
		return nil, store.Kinded(err, kindName(kind))
	}
	// Those who lost it and those who gained it both see their lists change.
	s.changed(user, append(before, s.readers(ctx, kind, id)...), string(kind), id)
	return s.db.Shares(ctx, kind, id)
}

// People lists who user can share with: the other active people and the
// groups, by name.
func (s *Service) People(ctx context.Context, user ids.UserID) ([]store.Grantee, error) {
	return s.db.ShareTargets(ctx, user)
}
