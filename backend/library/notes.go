package library

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// NotePatch changes the fields of a note that are set.
type NotePatch struct {
	Title *string `json:"title,omitempty"`
	Body  *string `json:"body,omitempty"`
}

// Limits of a note. A title is a line a person scans in a list; a body is
// Markdown a person or a reply writes, large enough for any real note and
// small enough that notes_read never hands the model a book.
const (
	MaxNoteTitle = 200       // characters
	MaxNoteBody  = 256 << 10 // bytes
)

// Listing limits: a page of notes, and the most one call returns.
const (
	defaultNoteLimit = 50
	maxNoteLimit     = 200
)

// Notes lists the notes user can see, most recently changed first; with a
// query, the ones matching it (full-text), best first. Body is not filled
// (Snippet is); Note reads one whole.
func (s *Service) Notes(ctx context.Context, user ids.UserID, query string, limit int) ([]store.Note, error) {
	if limit <= 0 {
		limit = defaultNoteLimit
	}
	limit = min(limit, maxNoteLimit)
	if strings.TrimSpace(query) == "" {
		return s.db.ListNotes(ctx, user, limit)
	}
	return s.db.SearchNotes(ctx, user, query, limit)
}

// Note returns one note user can see.
func (s *Service) Note(ctx context.Context, user ids.UserID, id ids.NoteID) (store.Note, error) {
	n, err := s.db.NoteByID(ctx, user, id)
	return n, store.Kinded(err, "note")
}

// CreateNote creates a note owned by user.
func (s *Service) CreateNote(ctx context.Context, user ids.UserID, title, body string) (store.Note, error) {
	title, err := noteTitle(title)
	if err != nil {
		return store.Note{}, err
	}
	if err := noteBody(body); err != nil {
		return store.Note{}, err
	}
	if err := s.room(ctx, user, func(c store.LibraryCounts) int { return c.Notes }, MaxNotes, "notes", "delete one"); err != nil {
		return store.Note{}, err
	}
	n, err := s.db.CreateNote(ctx, user, title, body)
	if err == nil {
		s.changed(user, nil, "note", int64(n.ID))
	}
	return n, store.Kinded(err, "note")
}

// UpdateNote changes a note of user's own.
func (s *Service) UpdateNote(ctx context.Context, user ids.UserID, id ids.NoteID, p NotePatch) (store.Note, error) {
	if err := s.writable(ctx, user, store.KindNote, int64(id)); err != nil {
		return store.Note{}, err
	}
	if p.Title != nil {
		t, err := noteTitle(*p.Title)
		if err != nil {
			return store.Note{}, err
		}
		p.Title = &t
	}
	if p.Body != nil {
		if err := noteBody(*p.Body); err != nil {
			return store.Note{}, err
		}
	}
	n, err := s.db.UpdateNote(ctx, user, id, p.Title, p.Body)
	if err == nil {
		s.changedItem(ctx, user, store.KindNote, int64(id))
	}
	return n, store.Kinded(err, "note")
}

// DeleteNote deletes a note of user's own.
func (s *Service) DeleteNote(ctx context.Context, user ids.UserID, id ids.NoteID) error {
	if err := s.writable(ctx, user, store.KindNote, int64(id)); err != nil {
		return err
	}
	readers := s.readers(ctx, store.KindNote, int64(id))
	if err := s.db.DeleteNote(ctx, user, id); err != nil {
		return store.Kinded(err, "note")
	}
	s.changed(user, readers, "note", int64(id))
	return nil
}

func noteTitle(title string) (string, error) {
	title = strings.TrimSpace(title)
	switch {
	case !utf8.ValidString(title):
		return "", apperr.New(apperr.Invalid, "The title is not valid text.")
	case title == "":
		return "", apperr.New(apperr.Invalid, "A note needs a title.")
	case utf8.RuneCountInString(title) > MaxNoteTitle:
		return "", apperr.New(apperr.Invalid, "A note's title is at most %d characters; this one has %d.", MaxNoteTitle, utf8.RuneCountInString(title))
	}
	return title, nil
}

func noteBody(body string) error {
	switch {
	case !utf8.ValidString(body):
		return apperr.New(apperr.Invalid, "The note is not valid text.")
	case len(body) > MaxNoteBody:
		return apperr.New(apperr.Invalid, "A note is at most %d KiB; this one has %d KiB. Split it into several notes.", MaxNoteBody>>10, (len(body)+1023)>>10)
	}
	return nil
}
