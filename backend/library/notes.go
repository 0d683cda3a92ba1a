package library

import (
	"context"

	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// NotePatch changes the fields of a note that are set.
type NotePatch struct {
	Title *string `json:"title,omitempty"`
	Body  *string `json:"body,omitempty"`
}

// Notes lists the notes user can see, most recently changed first; with a
// query, the ones matching it (full-text), best first.
func (s *Service) Notes(ctx context.Context, user ids.UserID, query string, limit int) ([]store.Note, error) {
	return nil, errTodo
}

// Note returns one note user can see.
func (s *Service) Note(ctx context.Context, user ids.UserID, id ids.NoteID) (store.Note, error) {
	return store.Note{}, errTodo
}

// CreateNote creates a note owned by user.
func (s *Service) CreateNote(ctx context.Context, user ids.UserID, title, body string) (store.Note, error) {
	return store.Note{}, errTodo
}

// UpdateNote changes a note of user's own.
func (s *Service) UpdateNote(ctx context.Context, user ids.UserID, id ids.NoteID, p NotePatch) (store.Note, error) {
	return store.Note{}, errTodo
}

// DeleteNote deletes a note of user's own.
func (s *Service) DeleteNote(ctx context.Context, user ids.UserID, id ids.NoteID) error {
	return errTodo
}
