package library

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/attach"
	"github.com/llembas/lembas/backend/files"
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

// Limits of knowledge bases and their search.
const (
	// MaxBaseName is the longest base name, in characters.
	MaxBaseName = 100
	// MaxBaseDescription is the longest description, in characters.
	MaxBaseDescription = 500
	// DocumentTextBytes is the most text kept from one document: far more
	// than an attachment's (attach.DefaultLimits), since a document is
	// searched in chunks rather than sent whole.
	DocumentTextBytes = 8 << 20
	// SearchLimit is how many chunks a search returns unless asked;
	// SearchMax the most it returns.
	SearchLimit = 8
	SearchMax   = 50
)

// documentLimits are the processing limits of a document (the upload size
// is the files service's).
var documentLimits = attach.Limits{MaxTextBytes: DocumentTextBytes}

// baseErr turns the store's refusals about a base into what a person reads.
func baseErr(err error) error {
	switch {
	case errors.Is(err, store.ErrForbidden):
		return apperr.Wrap(apperr.Forbidden, err, "this knowledge base is shared with you for reading only")
	case errors.Is(err, store.ErrConflict):
		return apperr.Wrap(apperr.Conflict, err, "you already have a knowledge base with this name")
	}
	return store.Kinded(err, "knowledge base")
}

func docErr(err error) error {
	if errors.Is(err, store.ErrForbidden) {
		return baseErr(err)
	}
	return store.Kinded(err, "document")
}

// checkBase checks a base's name and description, trimmed.
func checkBase(name, description *string) error {
	if name != nil {
		*name = strings.TrimSpace(*name)
		if *name == "" {
			return apperr.New(apperr.Invalid, "a knowledge base needs a name")
		}
		if utf8.RuneCountInString(*name) > MaxBaseName {
			return apperr.New(apperr.Invalid, "a knowledge base's name is at most %d characters", MaxBaseName)
		}
	}
	if description != nil {
		*description = strings.TrimSpace(*description)
		if utf8.RuneCountInString(*description) > MaxBaseDescription {
			return apperr.New(apperr.Invalid, "a knowledge base's description is at most %d characters", MaxBaseDescription)
		}
	}
	return nil
}

// Bases lists the bases user can see, their own first, then shared ones.
func (s *Service) Bases(ctx context.Context, user ids.UserID) ([]store.KnowledgeBase, error) {
	return s.db.KnowledgeBases(ctx, user)
}

// Base returns one base user can see.
func (s *Service) Base(ctx context.Context, user ids.UserID, id ids.BaseID) (store.KnowledgeBase, error) {
	b, err := s.db.KnowledgeBase(ctx, user, id)
	return b, baseErr(err)
}

// CreateBase creates a base owned by user.
func (s *Service) CreateBase(ctx context.Context, user ids.UserID, name, description string) (store.KnowledgeBase, error) {
	if err := checkBase(&name, &description); err != nil {
		return store.KnowledgeBase{}, err
	}
	if err := s.room(ctx, user, func(c store.LibraryCounts) int { return c.Bases }, MaxBases, "knowledge bases", "delete one"); err != nil {
		return store.KnowledgeBase{}, err
	}
	b, err := s.db.CreateKnowledgeBase(ctx, user, name, description)
	if err == nil {
		s.changed(user, nil, "base", int64(b.ID))
	}
	return b, baseErr(err)
}

// UpdateBase changes a base of user's own.
func (s *Service) UpdateBase(ctx context.Context, user ids.UserID, id ids.BaseID, p BasePatch) (store.KnowledgeBase, error) {
	if err := checkBase(p.Name, p.Description); err != nil {
		return store.KnowledgeBase{}, err
	}
	b, err := s.db.UpdateKnowledgeBase(ctx, user, id, p.Name, p.Description)
	if err == nil {
		s.changedItem(ctx, user, store.KindBase, int64(id))
	}
	return b, baseErr(err)
}

// DeleteBase deletes a base of user's own with its documents and their
// files. Messages a document was attached to keep their copies.
func (s *Service) DeleteBase(ctx context.Context, user ids.UserID, id ids.BaseID) error {
	readers := s.readers(ctx, store.KindBase, int64(id))
	names, err := s.db.DeleteKnowledgeBase(ctx, user, id)
	if err != nil {
		return baseErr(err)
	}
	s.files.Remove(names)
	s.changed(user, readers, "base", int64(id))
	return nil
}

// Documents lists the documents of a base user can see, newest first
// (Text not filled).
func (s *Service) Documents(ctx context.Context, user ids.UserID, base ids.BaseID) ([]store.Document, error) {
	docs, err := s.db.Documents(ctx, user, base)
	return docs, baseErr(err)
}

// Document returns one document user can see, with its Text.
func (s *Service) Document(ctx context.Context, user ids.UserID, id ids.DocumentID) (store.Document, error) {
	d, err := s.db.Document(ctx, user, id, true)
	return d, docErr(err)
}

// OpenDocument returns a document user can see and its file, opened for
// reading; the caller closes it.
func (s *Service) OpenDocument(ctx context.Context, user ids.UserID, id ids.DocumentID) (store.Document, *os.File, error) {
	d, err := s.db.Document(ctx, user, id, false)
	if err != nil {
		return store.Document{}, nil, docErr(err)
	}
	f, err := s.files.OpenStored(d.StorageName)
	if err != nil {
		return store.Document{}, nil, err
	}
	return d, f, nil
}

// Ingest files an upload into a base of user's own: through the files
// service's pipeline (typed by bytes, decoding budget, quota), text
// extracted once and split into chunks. name is the user's file name,
// only ever shown.
func (s *Service) Ingest(ctx context.Context, user ids.UserID, base ids.BaseID, name string, r io.Reader) (store.Document, error) {
	// Refused before the upload is read: a base that is not user's own.
	b, err := s.db.KnowledgeBase(ctx, user, base)
	if err != nil {
		return store.Document{}, baseErr(err)
	}
	if b.OwnerID != user {
		return store.Document{}, baseErr(store.ErrForbidden)
	}
	if err := s.room(ctx, user, func(c store.LibraryCounts) int { return c.Documents }, MaxDocuments, "documents in your knowledge bases", "delete some"); err != nil {
		return store.Document{}, err
	}
	display := attach.DisplayName(name)
	t, err := s.files.Take(ctx, user, name, r, files.Intake{
		Limits: documentLimits,
		Check: func(prefix []byte) error {
			if attach.IsImage(prefix) {
				return notImage(display)
			}
			return nil
		},
		Accept: func(res *attach.Result) error {
			switch {
			case res.Kind == attach.KindImage:
				return notImage(display)
			case strings.TrimSpace(res.Text) == "":
				return apperr.New(apperr.Invalid,
					"%s has no text in it (it may be scanned pages), so there is nothing to search; a knowledge base needs a PDF with text, or a text file", display)
			}
			return nil
		},
	})
	if err != nil {
		return store.Document{}, err
	}
	res := t.Result
	d, err := s.db.AddDocument(ctx, user, store.Document{BaseID: base, Kind: string(res.Kind), MIME: res.MIME,
		DisplayName: display, StorageName: t.StorageName, Size: t.Size, Text: res.Text, Note: res.Note},
		Chunks(res.Text), t.Quota)
	if err != nil {
		s.files.Remove([]string{t.StorageName})
		if errors.Is(err, store.ErrQuota) {
			return store.Document{}, s.files.QuotaRefusal(ctx, user, t.Size)
		}
		return store.Document{}, baseErr(err)
	}
	s.changed(user, s.readers(ctx, store.KindBase, int64(base)), "document", int64(d.ID))
	return d, nil
}

func notImage(display string) error {
	return apperr.New(apperr.Invalid,
		"%s is an image; a knowledge base holds documents with text: PDF, text, Markdown, code or HTML", display)
}

// DeleteDocument deletes a document of user's own base, and its file.
func (s *Service) DeleteDocument(ctx context.Context, user ids.UserID, id ids.DocumentID) error {
	d, err := s.db.Document(ctx, user, id, false)
	if err != nil {
		return docErr(err)
	}
	name, err := s.db.DeleteDocument(ctx, user, id)
	if err != nil {
		return docErr(err)
	}
	s.files.Remove([]string{name})
	s.changed(user, s.readers(ctx, store.KindBase, int64(d.BaseID)), "document", int64(id))
	return nil
}

// Search finds query in the chunks of the bases scope allows that user
// can see, best first, at most limit.
func (s *Service) Search(ctx context.Context, user ids.UserID, scope Scope, query string, limit int) ([]store.KnowledgeHit, error) {
	if limit <= 0 {
		limit = SearchLimit
	}
	limit = min(limit, SearchMax)
	if len(scope.Bases) > MaxScopeBases {
		return nil, apperr.New(apperr.Invalid, "a search can be limited to at most %d knowledge bases", MaxScopeBases)
	}
	return s.db.SearchKnowledge(ctx, user, scope.Scoped, scope.Bases, query, limit)
}

// AttachDocument copies a document user can see into a new unsent upload
// of user's (text and file), to send with a message: the message never
// changes when the document does.
func (s *Service) AttachDocument(ctx context.Context, user ids.UserID, id ids.DocumentID) (store.Attachment, error) {
	d, err := s.db.Document(ctx, user, id, true)
	if err != nil {
		return store.Attachment{}, docErr(err)
	}
	// An attachment goes to the model whole, so it keeps an attachment's
	// share of the text.
	text, note := attach.CutText(d.Text, attach.DefaultLimits().MaxTextBytes)
	if note == "" {
		note = d.Note
	}
	// The chip and the model's tag say where it came from: the document's
	// name and its base's.
	label := ""
	if b, err := s.db.KnowledgeBase(ctx, user, d.BaseID); err == nil {
		label = b.Name
	}
	return s.files.Copy(ctx, user, d.StorageName, store.Attachment{Kind: d.Kind, MIME: d.MIME,
		DisplayName: d.DisplayName, Text: text, Note: note, SourcePath: d.DisplayName, SourceLabel: label})
}

// ChatScope returns chat's scope (a chat of user's) and the bases it names
// that user can still see.
func (s *Service) ChatScope(ctx context.Context, user ids.UserID, chat ids.ChatID) (Scope, []store.KnowledgeBase, error) {
	scoped, bases, err := s.db.ChatKnowledgeScope(ctx, user, chat)
	if err != nil {
		return Scope{}, nil, store.Kinded(err, "chat")
	}
	sc := Scope{Scoped: scoped}
	for _, b := range bases {
		sc.Bases = append(sc.Bases, b.ID)
	}
	return sc, bases, nil
}

// SetChatScope limits chat's knowledge search to bases (all visible to
// user), or lifts the limit (scoped false).
func (s *Service) SetChatScope(ctx context.Context, user ids.UserID, chat ids.ChatID, scope Scope) error {
	if len(scope.Bases) > MaxScopeBases {
		return apperr.New(apperr.Invalid, "a chat can be limited to at most %d knowledge bases", MaxScopeBases)
	}
	err := s.db.SetChatKnowledgeScope(ctx, user, chat, scope.Scoped, scope.Bases)
	if errors.Is(err, store.ErrUnseenBase) {
		return apperr.Wrap(apperr.Invalid, err, "a knowledge base chosen for this chat is not one you can see")
	}
	return store.Kinded(err, "chat")
}
