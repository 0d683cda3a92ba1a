// Package library is the person's library (issue 14): knowledge bases of
// documents, notes, memories and skills, and who may read them.
//
// Each store reaches the model in the way its cost allows. A document is
// uploaded by a person and searched by the model (knowledge_search), never
// injected. A note is written by the model or its owner and searched
// (notes_search, notes_read, notes_write): a dozen of them would fill the
// window. A memory is injected whole into every request, so each is short
// and their total is capped. A skill's index (name and one line) is
// injected; its body is read by tool (skill_read) when the model decides
// it needs it.
//
// Who can see a base, a note or a skill is decided by one rule,
// store.Visible, used by every listing, search and tool here. Sharing
// grants reading only; only an owner changes an item; administrators do
// not bypass the rule.
//
// The package never imports backend/api; it takes user ids and returns
// store types.
package library

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/llembas/lembas/backend/events"
	"github.com/llembas/lembas/backend/files"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// Service is the library.
type Service struct {
	db    *store.DB
	files *files.Service // where documents' bytes live, and the upload pipeline
	log   *slog.Logger
	now   func() time.Time
	// notify hears of every change, once per person it concerns (nil:
	// nobody listens). See PublishTo.
	notify func(user ids.UserID, c Change)
}

// Change is what a "library" event carries: the kind changed ("base",
// "document", "note", "memory" or "skill") and its id (0 for the memory
// switch).
type Change struct {
	Kind string `json:"kind"`
	ID   int64  `json:"id"`
}

// PublishTo sends a "library" event on bus for every change to the
// library, whoever made it (a person on a page, or a reply's tool), to its
// owner and to the people it is shared with, so every open Library page
// follows. Core calls it once, before the service is used.
func (s *Service) PublishTo(bus events.Publisher) {
	s.notify = func(user ids.UserID, c Change) {
		bus.Publish(events.Event{Topic: "library", UserID: int64(user), Data: c})
	}
}

// readers lists who may read a shared item through its shares (not its
// owner), to be told of a change; read before a change that drops the
// shares (a delete, new shares). A failure is logged: the change stands.
func (s *Service) readers(ctx context.Context, kind store.LibraryKind, id int64) []ids.UserID {
	if s.notify == nil {
		return nil
	}
	r, err := s.db.LibraryReaders(ctx, kind, id)
	if err != nil {
		s.log.Warn("library readers", "kind", kind, "id", id, "err", err)
	}
	return r
}

// changed tells owner and others (each once) of a change.
func (s *Service) changed(owner ids.UserID, others []ids.UserID, kind string, id int64) {
	if s.notify == nil {
		return
	}
	s.notify(owner, Change{Kind: kind, ID: id})
	seen := []ids.UserID{owner}
	for _, u := range others {
		if !slices.Contains(seen, u) {
			seen = append(seen, u)
			s.notify(u, Change{Kind: kind, ID: id})
		}
	}
}

// changedItem tells owner and the item's readers of a change to a shared
// item that keeps its shares.
func (s *Service) changedItem(ctx context.Context, owner ids.UserID, kind store.LibraryKind, id int64) {
	s.changed(owner, s.readers(ctx, kind, id), string(kind), id)
}

// New returns the library over db; documents' files are kept by files.
func New(db *store.DB, files *files.Service, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	return &Service{db: db, files: files, log: log, now: time.Now}
}
