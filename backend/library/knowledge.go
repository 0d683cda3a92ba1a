package library

import (
	"context"
	"io"
	"os"

	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// BasePatch changes the fields of a base that are set.
type BasePatch struct {
	Name        *string `json:"name,omitempty"`
	Description *string `json:"description,omitempty"`
}

// Scope is which bases a chat's knowledge search may read. Scoped false:
// every base the person can see. Scoped with no Bases: none (the bases
// chosen for the chat are gone) — never everything.
type Scope struct {
	Scoped bool
	Bases  []ids.BaseID
}

// Bases lists the bases user can see, their own first, then shared ones.
func (s *Service) Bases(ctx context.Context, user ids.UserID) ([]store.KnowledgeBase, error) {
	return nil, errTodo
}

// Base returns one base user can see.
func (s *Service) Base(ctx context.Context, user ids.UserID, id ids.BaseID) (store.KnowledgeBase, error) {
	return store.KnowledgeBase{}, errTodo
}

// CreateBase creates a base owned by user.
func (s *Service) CreateBase(ctx context.Context, user ids.UserID, name, description string) (store.KnowledgeBase, error) {
	return store.KnowledgeBase{}, errTodo
}

// UpdateBase changes a base of user's own.
func (s *Service) UpdateBase(ctx context.Context, user ids.UserID, id ids.BaseID, p BasePatch) (store.KnowledgeBase, error) {
	return store.KnowledgeBase{}, errTodo
}

// DeleteBase deletes a base of user's own with its documents and their
// files. Messages a document was attached to keep their copies.
func (s *Service) DeleteBase(ctx context.Context, user ids.UserID, id ids.BaseID) error {
	return errTodo
}

// Documents lists the documents of a base user can see, newest first
// (Text not filled).
func (s *Service) Documents(ctx context.Context, user ids.UserID, base ids.BaseID) ([]store.Document, error) {
	return nil, errTodo
}

// Document returns one document user can see, with its Text.
func (s *Service) Document(ctx context.Context, user ids.UserID, id ids.DocumentID) (store.Document, error) {
	return store.Document{}, errTodo
}

// OpenDocument returns a document user can see and its file, opened for
// reading; the caller closes it.
func (s *Service) OpenDocument(ctx context.Context, user ids.UserID, id ids.DocumentID) (store.Document, *os.File, error) {
	return store.Document{}, nil, errTodo
}

// Ingest files an upload into a base of user's own: through the files
// service's pipeline (typed by bytes, decoding budget, quota), text
// extracted once and split into chunks. name is the user's file name,
// only ever shown.
func (s *Service) Ingest(ctx context.Context, user ids.UserID, base ids.BaseID, name string, r io.Reader) (store.Document, error) {
	return store.Document{}, errTodo
}

// DeleteDocument deletes a document of user's own base, and its file.
func (s *Service) DeleteDocument(ctx context.Context, user ids.UserID, id ids.DocumentID) error {
	return errTodo
}

// Search finds query in the chunks of the bases scope allows that user
// can see, best first, at most limit.
func (s *Service) Search(ctx context.Context, user ids.UserID, scope Scope, query string, limit int) ([]store.KnowledgeHit, error) {
	return nil, errTodo
}

// AttachDocument copies a document user can see into a new unsent upload
// of user's (text and file), to send with a message: the message never
// changes when the document does.
func (s *Service) AttachDocument(ctx context.Context, user ids.UserID, id ids.DocumentID) (store.Attachment, error) {
	return store.Attachment{}, errTodo
}

// ChatScope returns chat's scope (a chat of user's) and the bases it names
// that user can still see.
func (s *Service) ChatScope(ctx context.Context, user ids.UserID, chat ids.ChatID) (Scope, []store.KnowledgeBase, error) {
	return Scope{}, nil, errTodo
}

// SetChatScope limits chat's knowledge search to bases (all visible to
// user), or lifts the limit (scoped false).
func (s *Service) SetChatScope(ctx context.Context, user ids.UserID, chat ids.ChatID, scope Scope) error {
	return errTodo
}
