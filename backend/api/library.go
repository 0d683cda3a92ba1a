package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html"
	"io"
	"strings"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/library"
	"github.com/llembas/lembas/backend/render"
	"github.com/llembas/lembas/backend/store"
)

// Library is the facade for the person's library (issue 14): knowledge
// bases and their documents, notes, memories and skills, and sharing.
// Who can see what is the service's (store.Visible); the facade decodes,
// calls one service method as the caller, and translates to views.
//
// The facade publishes nothing: the service tells of every change itself
// (library.Service.PublishTo), a reply's tools' included.
type Library struct {
	lib    *library.Service
	render *render.Renderer
	// permits checks files.upload for AttachDocument.
	permits Permits
}

// NewLibrary returns the Library facade; render draws notes.
func NewLibrary(lib *library.Service, render *render.Renderer, permits Permits) *Library {
	return &Library{lib: lib, render: render, permits: permits}
}

// noteExcerpt is how many characters of a note's body its list row shows.
const noteExcerpt = 200

// OwnerRef names an item's owner.
type OwnerRef struct {
	ID   ids.UserID `json:"id"`
	Name string     `json:"name"`
}

// BaseView is a knowledge base as the Library shows it.
type BaseView struct {
	ID          ids.BaseID `json:"id"`
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Owner       OwnerRef   `json:"owner"`
	Mine        bool       `json:"mine"`
	SharedWith  int        `json:"sharedWith"`
	Documents   int        `json:"documents"`
	Bytes       int64      `json:"bytes"`
	CreatedAt   int64      `json:"createdAt"`
	UpdatedAt   int64      `json:"updatedAt"`
}

// DocumentView is a document of a base; URL downloads the original.
type DocumentView struct {
	ID        ids.DocumentID `json:"id"`
	BaseID    ids.BaseID     `json:"baseId"`
	Name      string         `json:"name"`
	Kind      string         `json:"kind"`
	MIME      string         `json:"mime"`
	Size      int64          `json:"size"`
	Note      string         `json:"note,omitempty"`
	Chunks    int            `json:"chunks"`
	CreatedAt int64          `json:"createdAt"`
	URL       string         `json:"url"`
}

// DocumentTextView is a document with its extracted text.
type DocumentTextView struct {
	DocumentView
	Text string `json:"text"`
}

// HitView is one search hit. Snippet is HTML (escaped text with <mark>).
type HitView struct {
	DocumentID   ids.DocumentID `json:"documentId"`
	DocumentName string         `json:"documentName"`
	BaseID       ids.BaseID     `json:"baseId"`
	BaseName     string         `json:"baseName"`
	Seq          int            `json:"seq"`
	Snippet      string         `json:"snippet"`
}

// NoteView is a note; in lists Body and HTML are left out.
type NoteView struct {
	ID      ids.NoteID `json:"id"`
	Title   string     `json:"title"`
	Body    string     `json:"body,omitempty"`
	HTML    string     `json:"html,omitempty"`
	Excerpt string     `json:"excerpt"`
	// Snippet is HTML (escaped text, a search's matches in <mark>) for
	// lists and searches.
	Snippet    string   `json:"snippet,omitempty"`
	Owner      OwnerRef `json:"owner"`
	Mine       bool     `json:"mine"`
	SharedWith int      `json:"sharedWith"`
	CreatedAt  int64    `json:"createdAt"`
	UpdatedAt  int64    `json:"updatedAt"`
}

// MemoryView is one memory.
type MemoryView struct {
	ID        ids.MemoryID `json:"id"`
	Text      string       `json:"text"`
	Source    string       `json:"source"`
	CreatedAt int64        `json:"createdAt"`
}

// MemoriesView is the caller's memories, whether they are on, and the caps.
type MemoriesView struct {
	On        bool         `json:"on"`
	Items     []MemoryView `json:"items"`
	MaxLength int          `json:"maxLength"`
	MaxTotal  int          `json:"maxTotal"`
	MaxCount  int          `json:"maxCount"`
	Used      int          `json:"used"`
}

// SkillView is a skill.
type SkillView struct {
	ID          ids.SkillID `json:"id"`
	Name        string      `json:"name"`
	Description string      `json:"description"`
	Body        string      `json:"body"`
	Owner       OwnerRef    `json:"owner"`
	Mine        bool        `json:"mine"`
	SharedWith  int         `json:"sharedWith"`
	CreatedAt   int64       `json:"createdAt"`
	UpdatedAt   int64       `json:"updatedAt"`
}

// ScopeRef names a base in a chat's scope.
type ScopeRef struct {
	ID   ids.BaseID `json:"id"`
	Name string     `json:"name"`
}

// ScopeView is which bases a chat's knowledge search reads: all the
// caller can see (scoped false), or those listed.
type ScopeView struct {
	Scoped bool       `json:"scoped"`
	Bases  []ScopeRef `json:"bases"`
}

// BaseInput creates a base.
type BaseInput struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// SearchInput searches the bases listed, or every base the caller can
// see (Bases empty).
type SearchInput struct {
	Query string       `json:"query"`
	Bases []ids.BaseID `json:"bases,omitempty"`
}

// ScopeInput sets a chat's scope.
type ScopeInput struct {
	Scoped bool         `json:"scoped"`
	Bases  []ids.BaseID `json:"bases"`
}

// NotesQuery filters the notes list.
type NotesQuery struct {
	Query string `json:"query,omitempty"`
}

// NoteInput creates a note.
type NoteInput struct {
	Title string `json:"title"`
	Body  string `json:"body"`
}

// PreviewMarkdown is Markdown to preview.
type PreviewMarkdown struct {
	Markdown string `json:"markdown"`
}

// PreviewHTML is the rendered, sanitised preview.
type PreviewHTML struct {
	HTML string `json:"html"`
}

// MemoryInput is a memory's text.
type MemoryInput struct {
	Text string `json:"text"`
}

// MemoryOnInput turns memory on or off.
type MemoryOnInput struct {
	On bool `json:"on"`
}

// SkillInput creates a skill.
type SkillInput struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Body        string `json:"body"`
}

// ShareTarget names a shareable item: kind "base", "note" or "skill".
type ShareTarget struct {
	Kind string `json:"kind"`
	ID   int64  `json:"id"`
}

// SharesInput replaces who an item is shared with.
type SharesInput struct {
	Kind string          `json:"kind"`
	ID   int64           `json:"id"`
	To   []store.Grantee `json:"to"`
}

// The largest number of rows a list or search returns.
const (
	libraryListLimit   = 500
	librarySearchLimit = 30
)

// sharedWith is how many an item is shared with, for its owner; others
// are not told.
func sharedWith(mine bool, n int) int {
	if !mine {
		return 0
	}
	return n
}

func (l *Library) baseView(ctx context.Context, b store.KnowledgeBase) (BaseView, error) {
	mine := b.OwnerID == user(ctx)
	return BaseView{ID: b.ID, Name: b.Name, Description: b.Description, Owner: OwnerRef{b.OwnerID, b.OwnerName},
		Mine: mine, SharedWith: sharedWith(mine, b.SharedWith), Documents: b.Documents, Bytes: b.Bytes, CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt}, nil
}

// DocumentViewOf returns the view of a document.
func DocumentViewOf(d store.Document) DocumentView {
	return DocumentView{ID: d.ID, BaseID: d.BaseID, Name: d.DisplayName, Kind: d.Kind, MIME: d.MIME, Size: d.Size,
		Note: d.Note, Chunks: d.Chunks, CreatedAt: d.CreatedAt, URL: fmt.Sprintf("/api/library/documents/%d", d.ID)}
}

// Bases lists the bases the caller can see: their own, then shared ones.
func (l *Library) Bases(ctx context.Context) ([]BaseView, error) {
	list, err := l.lib.Bases(ctx, user(ctx))
	if err != nil {
		return nil, err
	}
	out := make([]BaseView, 0, len(list))
	for _, b := range list {
		v, err := l.baseView(ctx, b)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// CreateBase creates a base of the caller's.
func (l *Library) CreateBase(ctx context.Context, in BaseInput) (BaseView, error) {
	b, err := l.lib.CreateBase(ctx, user(ctx), in.Name, in.Description)
	if err != nil {
		return BaseView{}, err
	}
	return l.baseView(ctx, b)
}

// UpdateBase renames or redescribes a base of the caller's own.
func (l *Library) UpdateBase(ctx context.Context, id ids.BaseID, p library.BasePatch) (BaseView, error) {
	b, err := l.lib.UpdateBase(ctx, user(ctx), id, p)
	if err != nil {
		return BaseView{}, err
	}
	return l.baseView(ctx, b)
}

// DeleteBase deletes a base of the caller's own with its documents.
func (l *Library) DeleteBase(ctx context.Context, id ids.BaseID) error {
	if err := l.lib.DeleteBase(ctx, user(ctx), id); err != nil {
		return err
	}
	return nil
}

// Documents lists the documents of a base the caller can see.
func (l *Library) Documents(ctx context.Context, base ids.BaseID) ([]DocumentView, error) {
	list, err := l.lib.Documents(ctx, user(ctx), base)
	if err != nil {
		return nil, err
	}
	out := make([]DocumentView, len(list))
	for i, d := range list {
		out[i] = DocumentViewOf(d)
	}
	return out, nil
}

// Document returns one document the caller can see, with its text.
func (l *Library) Document(ctx context.Context, id ids.DocumentID) (DocumentTextView, error) {
	d, err := l.lib.Document(ctx, user(ctx), id)
	if err != nil {
		return DocumentTextView{}, err
	}
	return DocumentTextView{DocumentView: DocumentViewOf(d), Text: d.Text}, nil
}

// DeleteDocument deletes a document of a base of the caller's own.
func (l *Library) DeleteDocument(ctx context.Context, id ids.DocumentID) error {
	if err := l.lib.DeleteDocument(ctx, user(ctx), id); err != nil {
		return err
	}
	return nil
}

// Search finds words in the documents of the bases the caller can see
// (those listed, or all).
func (l *Library) Search(ctx context.Context, in SearchInput) ([]HitView, error) {
	scope := library.Scope{Scoped: len(in.Bases) > 0, Bases: in.Bases}
	hits, err := l.lib.Search(ctx, user(ctx), scope, in.Query, librarySearchLimit)
	if err != nil {
		return nil, err
	}
	out := make([]HitView, len(hits))
	for i, h := range hits {
		out[i] = HitView{DocumentID: h.DocumentID, DocumentName: h.DocumentName, BaseID: h.BaseID, BaseName: h.BaseName,
			Seq: h.Seq, Snippet: h.Snippet}
	}
	return out, nil
}

// AttachDocument copies a document the caller can see into a new unsent
// upload, to join the composer's files.
func (l *Library) AttachDocument(ctx context.Context, id ids.DocumentID) (AttachmentView, error) {
	// An unsent upload, as any file attached to a message.
	if err := l.permits.Require(ctx, auth.FilesUpload); err != nil {
		return AttachmentView{}, err
	}
	a, err := l.lib.AttachDocument(ctx, user(ctx), id)
	if err != nil {
		return AttachmentView{}, err
	}
	return AttachmentViewOf(a), nil
}

func scopeView(s library.Scope, bases []store.KnowledgeBase) ScopeView {
	v := ScopeView{Scoped: s.Scoped, Bases: make([]ScopeRef, 0, len(bases))}
	for _, b := range bases {
		v.Bases = append(v.Bases, ScopeRef{ID: b.ID, Name: b.Name})
	}
	return v
}

// ChatScope returns which bases a chat of the caller's searches.
func (l *Library) ChatScope(ctx context.Context, chat ids.ChatID) (ScopeView, error) {
	s, bases, err := l.lib.ChatScope(ctx, user(ctx), chat)
	if err != nil {
		return ScopeView{}, err
	}
	return scopeView(s, bases), nil
}

// SetChatScope limits a chat of the caller's to some bases, or lifts the
// limit.
func (l *Library) SetChatScope(ctx context.Context, chat ids.ChatID, in ScopeInput) (ScopeView, error) {
	if err := l.lib.SetChatScope(ctx, user(ctx), chat, library.Scope{Scoped: in.Scoped, Bases: in.Bases}); err != nil {
		return ScopeView{}, err
	}
	return l.ChatScope(ctx, chat)
}

func (l *Library) noteView(ctx context.Context, n store.Note, whole bool) (NoteView, error) {
	mine := n.OwnerID == user(ctx)
	text := n.Body
	if text == "" {
		// Lists and searches carry no body, only the snippet: escaped
		// text whose only tags are <mark>.
		text = html.UnescapeString(strings.NewReplacer("<mark>", "", "</mark>", "").Replace(n.Snippet))
	}
	v := NoteView{ID: n.ID, Title: n.Title, Excerpt: excerpt(text, noteExcerpt), Snippet: n.Snippet, Owner: OwnerRef{n.OwnerID, n.OwnerName},
		Mine: mine, SharedWith: sharedWith(mine, n.SharedWith), CreatedAt: n.CreatedAt, UpdatedAt: n.UpdatedAt}
	if whole {
		v.Body = n.Body
		v.HTML = l.render.Markdown(n.Body)
	}
	return v, nil
}

// excerpt is the start of s as one line of plain text, at most n runes.
func excerpt(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return strings.TrimSpace(string(r[:n-1])) + "…"
	}
	return s
}

// Notes lists the notes the caller can see, or those matching a query.
func (l *Library) Notes(ctx context.Context, q NotesQuery) ([]NoteView, error) {
	list, err := l.lib.Notes(ctx, user(ctx), q.Query, libraryListLimit)
	if err != nil {
		return nil, err
	}
	out := make([]NoteView, 0, len(list))
	for _, n := range list {
		v, err := l.noteView(ctx, n, false)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Note returns one note the caller can see, rendered.
func (l *Library) Note(ctx context.Context, id ids.NoteID) (NoteView, error) {
	n, err := l.lib.Note(ctx, user(ctx), id)
	if err != nil {
		return NoteView{}, err
	}
	return l.noteView(ctx, n, true)
}

// CreateNote creates a note of the caller's.
func (l *Library) CreateNote(ctx context.Context, in NoteInput) (NoteView, error) {
	n, err := l.lib.CreateNote(ctx, user(ctx), in.Title, in.Body)
	if err != nil {
		return NoteView{}, err
	}
	return l.noteView(ctx, n, true)
}

// UpdateNote changes a note of the caller's own.
func (l *Library) UpdateNote(ctx context.Context, id ids.NoteID, p library.NotePatch) (NoteView, error) {
	n, err := l.lib.UpdateNote(ctx, user(ctx), id, p)
	if err != nil {
		return NoteView{}, err
	}
	return l.noteView(ctx, n, true)
}

// DeleteNote deletes a note of the caller's own.
func (l *Library) DeleteNote(ctx context.Context, id ids.NoteID) error {
	if err := l.lib.DeleteNote(ctx, user(ctx), id); err != nil {
		return err
	}
	return nil
}

// maxPreview bounds the Markdown the preview renders.
const maxPreview = 1 << 20

// Preview renders Markdown as a note would be (the one sanitising
// renderer).
func (l *Library) Preview(ctx context.Context, in PreviewMarkdown) (PreviewHTML, error) {
	if len(in.Markdown) > maxPreview {
		return PreviewHTML{}, apperr.New(apperr.Invalid, "the text is too long to preview")
	}
	return PreviewHTML{HTML: l.render.Markdown(in.Markdown)}, nil
}

// Memories returns the caller's memories.
func (l *Library) Memories(ctx context.Context) (MemoriesView, error) {
	u := user(ctx)
	list, err := l.lib.Memories(ctx, u)
	if err != nil {
		return MemoriesView{}, err
	}
	on, err := l.lib.MemoryOn(ctx, u)
	if err != nil {
		return MemoriesView{}, err
	}
	v := MemoriesView{On: on, Items: make([]MemoryView, 0, len(list)), MaxLength: library.MaxMemory, MaxTotal: library.MaxMemoryTotal, MaxCount: library.MaxMemoryCount}
	for _, m := range list {
		v.Items = append(v.Items, MemoryView{ID: m.ID, Text: m.Text, Source: m.Source, CreatedAt: m.CreatedAt})
		v.Used += len([]rune(m.Text))
	}
	return v, nil
}

// AddMemory stores a memory the caller wrote.
func (l *Library) AddMemory(ctx context.Context, in MemoryInput) (MemoriesView, error) {
	if _, err := l.lib.AddMemory(ctx, user(ctx), in.Text, "person"); err != nil {
		return MemoriesView{}, err
	}
	return l.Memories(ctx)
}

// UpdateMemory changes a memory of the caller's.
func (l *Library) UpdateMemory(ctx context.Context, id ids.MemoryID, in MemoryInput) (MemoriesView, error) {
	if _, err := l.lib.UpdateMemory(ctx, user(ctx), id, in.Text); err != nil {
		return MemoriesView{}, err
	}
	return l.Memories(ctx)
}

// DeleteMemory forgets a memory of the caller's.
func (l *Library) DeleteMemory(ctx context.Context, id ids.MemoryID) (MemoriesView, error) {
	if err := l.lib.DeleteMemory(ctx, user(ctx), id); err != nil {
		return MemoriesView{}, err
	}
	return l.Memories(ctx)
}

// SetMemoryOn turns the caller's memory on or off.
func (l *Library) SetMemoryOn(ctx context.Context, in MemoryOnInput) (MemoriesView, error) {
	if err := l.lib.SetMemoryOn(ctx, user(ctx), in.On); err != nil {
		return MemoriesView{}, err
	}
	return l.Memories(ctx)
}

func (l *Library) skillView(ctx context.Context, s store.Skill) (SkillView, error) {
	mine := s.OwnerID == user(ctx)
	return SkillView{ID: s.ID, Name: s.Name, Description: s.Description, Body: s.Body, Owner: OwnerRef{s.OwnerID, s.OwnerName},
		Mine: mine, SharedWith: sharedWith(mine, s.SharedWith), CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}, nil
}

// Skills lists the skills the caller can see.
func (l *Library) Skills(ctx context.Context) ([]SkillView, error) {
	list, err := l.lib.Skills(ctx, user(ctx))
	if err != nil {
		return nil, err
	}
	out := make([]SkillView, 0, len(list))
	for _, s := range list {
		v, err := l.skillView(ctx, s)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Skill returns one skill the caller can see.
func (l *Library) Skill(ctx context.Context, id ids.SkillID) (SkillView, error) {
	s, err := l.lib.Skill(ctx, user(ctx), id)
	if err != nil {
		return SkillView{}, err
	}
	return l.skillView(ctx, s)
}

// CreateSkill creates a skill of the caller's.
func (l *Library) CreateSkill(ctx context.Context, in SkillInput) (SkillView, error) {
	s, err := l.lib.CreateSkill(ctx, user(ctx), in.Name, in.Description, in.Body)
	if err != nil {
		return SkillView{}, err
	}
	return l.skillView(ctx, s)
}

// UpdateSkill changes a skill of the caller's own.
func (l *Library) UpdateSkill(ctx context.Context, id ids.SkillID, p library.SkillPatch) (SkillView, error) {
	s, err := l.lib.UpdateSkill(ctx, user(ctx), id, p)
	if err != nil {
		return SkillView{}, err
	}
	return l.skillView(ctx, s)
}

// DeleteSkill deletes a skill of the caller's own.
func (l *Library) DeleteSkill(ctx context.Context, id ids.SkillID) error {
	if err := l.lib.DeleteSkill(ctx, user(ctx), id); err != nil {
		return err
	}
	return nil
}

func shareKind(kind string) (store.LibraryKind, error) {
	switch k := store.LibraryKind(kind); k {
	case store.KindBase, store.KindNote, store.KindSkill:
		return k, nil
	}
	return "", apperr.New(apperr.Invalid, "only knowledge bases, notes and skills are shared")
}

// Shares lists who an item of the caller's own is shared with.
func (l *Library) Shares(ctx context.Context, t ShareTarget) ([]store.Grantee, error) {
	k, err := shareKind(t.Kind)
	if err != nil {
		return nil, err
	}
	return nonNil(l.lib.Shares(ctx, user(ctx), k, t.ID))
}

// SetShares replaces who an item of the caller's own is shared with.
func (l *Library) SetShares(ctx context.Context, in SharesInput) ([]store.Grantee, error) {
	k, err := shareKind(in.Kind)
	if err != nil {
		return nil, err
	}
	out, err := l.lib.SetShares(ctx, user(ctx), k, in.ID, in.To)
	if err != nil {
		return nil, err
	}
	return nonNil(out, nil)
}

// People lists who the caller can share with.
func (l *Library) People(ctx context.Context) ([]store.Grantee, error) {
	return nonNil(l.lib.People(ctx, user(ctx)))
}

func nonNil(g []store.Grantee, err error) ([]store.Grantee, error) {
	if err != nil {
		return nil, err
	}
	if g == nil {
		g = []store.Grantee{}
	}
	return g, nil
}

// LibraryRoutes implements the HTTP document routes (httpapi.Documents)
// over the library, as the resolved caller.
type LibraryRoutes struct {
	lib     *library.Service
	permits Permits
}

// NewLibraryRoutes returns the document routes.
func NewLibraryRoutes(lib *library.Service, permits Permits) LibraryRoutes {
	return LibraryRoutes{lib: lib, permits: permits}
}

// Ingest files one upload into a base of the caller's own.
func (l LibraryRoutes) Ingest(ctx context.Context, c Caller, base int64, name string, r io.Reader) (DocumentView, error) {
	ctx = WithCaller(ctx, c)
	if err := l.permits.Require(ctx, auth.LibraryUse); err != nil {
		return DocumentView{}, err
	}
	d, err := l.lib.Ingest(ctx, ids.UserID(c.UserID), ids.BaseID(base), name, r)
	if err != nil {
		return DocumentView{}, err
	}
	return DocumentViewOf(d), nil
}

// OpenDocument opens a document the caller can see for a download.
func (l LibraryRoutes) OpenDocument(ctx context.Context, c Caller, id int64) (FileContent, error) {
	ctx = WithCaller(ctx, c)
	if err := l.permits.Require(ctx, auth.LibraryUse); err != nil {
		return FileContent{}, err
	}
	d, file, err := l.lib.OpenDocument(ctx, ids.UserID(c.UserID), ids.DocumentID(id))
	if err != nil {
		return FileContent{}, err
	}
	sum := sha256.Sum256([]byte(d.StorageName))
	return FileContent{View: AttachmentView{Kind: d.Kind, Name: d.DisplayName, MIME: d.MIME, Size: d.Size},
		Body: file, ETag: `"` + hex.EncodeToString(sum[:12]) + `"`, ModTime: time.UnixMilli(d.CreatedAt)}, nil
}
