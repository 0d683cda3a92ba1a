// Package folders is the service for a user's chat folders: their names
// and their order.
package folders

import (
	"context"
	"strings"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// Service manages folders.
type Service struct{ db *store.DB }

// New returns the service.
func New(db *store.DB) *Service { return &Service{db: db} }

// List returns the user's folders in order.
func (s *Service) List(ctx context.Context, user ids.UserID) ([]store.Folder, error) {
	return s.db.ListFolders(ctx, user)
}

// name is a folder name as typed, trimmed, or why it cannot be one.
func name(n string) (string, error) {
	n = strings.TrimSpace(n)
	if n == "" {
		return "", apperr.New(apperr.Invalid, "a folder needs a name")
	}
	if len(n) > 200 {
		return "", apperr.New(apperr.Invalid, "the folder name is too long")
	}
	return n, nil
}

// Create adds a folder at the end.
func (s *Service) Create(ctx context.Context, user ids.UserID, n string) (store.Folder, error) {
	n, err := name(n)
	if err != nil {
		return store.Folder{}, err
	}
	return s.db.CreateFolder(ctx, user, n)
}

// Rename renames a folder.
func (s *Service) Rename(ctx context.Context, user ids.UserID, id ids.FolderID, n string) error {
	n, err := name(n)
	if err != nil {
		return err
	}
	return store.Kinded(s.db.RenameFolder(ctx, user, id, n), "folder")
}

// Delete removes a folder; its chats move out of it.
func (s *Service) Delete(ctx context.Context, user ids.UserID, id ids.FolderID) error {
	return store.Kinded(s.db.DeleteFolder(ctx, user, id), "folder")
}

// Move puts a folder at a position in the order.
func (s *Service) Move(ctx context.Context, user ids.UserID, id ids.FolderID, position int) error {
	return store.Kinded(s.db.MoveFolder(ctx, user, id, position), "folder")
}
