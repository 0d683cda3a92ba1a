package store

import (
	"fmt"

	"github.com/llembas/lembas/backend/ids"
)

// The library (issue 14): knowledge bases and their documents, notes,
// memories and skills. backend/library owns the rules; this file holds the
// row types and the one rule of who can see a shared item (Visible). The
// queries live in library_*.go beside it.

// LibraryKind names a kind of library item that can be shared. Documents
// are not one: a document is seen through its base.
type LibraryKind string

// The shareable kinds.
const (
	KindBase  LibraryKind = "base"
	KindNote  LibraryKind = "note"
	KindSkill LibraryKind = "skill"
)

// libraryTables maps a shareable kind to its table.
var libraryTables = map[LibraryKind]string{KindBase: "knowledge_bases", KindNote: "notes", KindSkill: "skills"}

// Visible returns an SQL condition, and its arguments, that holds for the
// rows of kind's table (aliased alias) that user may read: their own, and
// those shared with them or with a group they are in. It is the only
// definition of who can see a library item, used by every listing, search
// and tool. There is no administrator branch, on purpose: an administrator
// configures the instance, and that is not reading other people's notes.
// Sharing grants reading only; writing is for the owner (alias.owner_id).
func Visible(kind LibraryKind, alias string, user ids.UserID) (string, []any) {
	if _, ok := libraryTables[kind]; !ok {
		panic(fmt.Sprintf("store.Visible: %q is not a shareable kind", kind))
	}
	return fmt.Sprintf(`(%[1]s.owner_id = ? OR %[1]s.id IN (
		SELECT s.item_id FROM library_shares s
		WHERE s.kind = ? AND (s.user_id = ? OR s.group_id IN (SELECT gm.group_id FROM group_members gm WHERE gm.user_id = ?))))`, alias),
		[]any{user, string(kind), user, user}
}

// KnowledgeBase is a named collection of documents; it is what is shared.
type KnowledgeBase struct {
	ID          ids.BaseID
	OwnerID     ids.UserID
	OwnerName   string // the owner's display name (or username)
	Name        string
	Description string
	Documents   int   // how many documents it holds
	Bytes       int64 // their stored size
	SharedWith  int   // how many people and groups it is shared with
	CreatedAt   int64
	UpdatedAt   int64
}

// Document is a file filed into a knowledge base. Text is the whole
// extracted text and is only filled where a method says so.
type Document struct {
	ID          ids.DocumentID
	BaseID      ids.BaseID
	OwnerID     ids.UserID
	Kind        string // pdf or text (attach.Kind); images are not documents
	MIME        string
	DisplayName string
	StorageName string
	Size        int64
	Text        string
	Note        string // what a person should know about Text (cut, no text)
	Chunks      int
	CreatedAt   int64
}

// KnowledgeHit is one chunk found by a knowledge search.
type KnowledgeHit struct {
	ChunkID      int64
	DocumentID   ids.DocumentID
	DocumentName string
	BaseID       ids.BaseID
	BaseName     string
	Seq          int    // the chunk's place in its document, from 0
	Text         string // the chunk's whole text (for the model)
	Snippet      string // HTML: escaped text with <mark> around matches (for pages)
}

// Note is Markdown written by its owner or by the model for them.
type Note struct {
	ID        ids.NoteID
	OwnerID   ids.UserID
	OwnerName string
	Title     string
	Body      string // empty in a listing or a search (see Snippet)
	// Snippet is HTML for a listing or a search: escaped plain text, the
	// start of the body or (searching) the passage that matched with the
	// matches in <mark>. Empty for a single note, which carries Body.
	Snippet    string
	SharedWith int // how many people and groups it is shared with
	CreatedAt  int64
	UpdatedAt  int64
}

// Memory is one short fact about its owner. Source is "person" or "model".
type Memory struct {
	ID        ids.MemoryID
	OwnerID   ids.UserID
	Text      string
	Source    string
	CreatedAt int64
}

// Skill is a named instruction: Name and Description are the index the
// model is shown; Body is read by tool.
type Skill struct {
	ID          ids.SkillID
	OwnerID     ids.UserID
	OwnerName   string
	Name        string
	Description string
	Body        string
	SharedWith  int // how many people and groups it is shared with
	CreatedAt   int64
	UpdatedAt   int64
}

// Grantee is who an item is shared with: a person (UserID) or a group
// (GroupID), exactly one of them set; Name is for display.
type Grantee struct {
	UserID  ids.UserID  `json:"userId,omitempty"`
	GroupID ids.GroupID `json:"groupId,omitempty"`
	Name    string      `json:"name"`
}
