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
	"log/slog"
	"time"

	"github.com/llembas/lembas/backend/files"
	"github.com/llembas/lembas/backend/store"
)

// Service is the library.
type Service struct {
	db    *store.DB
	files *files.Service // where documents' bytes live, and the upload pipeline
	log   *slog.Logger
	now   func() time.Time
}

// New returns the library over db; documents' files are kept by files.
func New(db *store.DB, files *files.Service, log *slog.Logger) *Service {
	if log == nil {
		log = slog.Default()
	}
	return &Service{db: db, files: files, log: log, now: time.Now}
}
