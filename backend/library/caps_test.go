package library

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/tools"
)

// fill gives owner n rows of the table through SQL (a loop of n creations
// through the service would be slow and test nothing more), each with a
// name of its own.
func fill(t *testing.T, h household, table string, owner ids.UserID, n int, base ids.BaseID) {
	t.Helper()
	cols := map[string]string{
		"notes":           `INSERT INTO notes (owner_id, title, body) SELECT ?1, 'n' || x, '' FROM seq`,
		"skills":          `INSERT INTO skills (owner_id, name, description, body) SELECT ?1, 's' || x, '', '' FROM seq`,
		"knowledge_bases": `INSERT INTO knowledge_bases (owner_id, name) SELECT ?1, 'b' || x FROM seq`,
		"documents": `INSERT INTO documents (base_id, owner_id, kind, mime, display_name, storage_name)
			SELECT ?3, ?1, 'text', 'text/plain', 'd' || x, 'none-' || ?1 || '-' || x FROM seq`,
	}[table]
	q := `WITH RECURSIVE seq(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM seq WHERE x < ?2) ` + cols
	if _, err := h.db.Write().Exec(q, owner, n, base); err != nil {
		t.Fatalf("fill %s: %v", table, err)
	}
}

// Each kind has a count cap with a message that says what to do: without
// one, a script or a model looping notes_write fills the disk with rows
// (the files quota bounds documents' bytes, not their number). Another
// person's items do not count against one's own.
func TestLibraryCountCaps(t *testing.T) {
	ctx := context.Background()
	h := newHousehold(t)
	mine := h.base(t, h.frodo, "Mine")
	fill(t, h, "notes", h.frodo, MaxNotes, 0)
	fill(t, h, "skills", h.frodo, MaxSkills, 0)
	fill(t, h, "knowledge_bases", h.frodo, MaxBases-1, 0) // and Mine
	fill(t, h, "documents", h.frodo, MaxDocuments, mine.ID)

	_, err := h.lib.CreateNote(ctx, h.frodo, "One more", "text")
	wantKindSays(t, "note", err, apperr.Invalid, fmt.Sprintf("You already have %s notes, the most there can be; delete one to make room.", thousands(MaxNotes)))
	_, err = h.lib.CreateSkill(ctx, h.frodo, "One more", "", "text")
	wantKindSays(t, "skill", err, apperr.Invalid, fmt.Sprintf("You already have %d skills", MaxSkills))
	_, err = h.lib.CreateBase(ctx, h.frodo, "One more", "")
	wantKindSays(t, "base", err, apperr.Invalid, fmt.Sprintf("You already have %d knowledge bases", MaxBases))
	_, err = h.lib.Ingest(ctx, h.frodo, mine.ID, "more.txt", strings.NewReader("one more document"))
	wantKindSays(t, "document", err, apperr.Invalid, fmt.Sprintf("You already have %s documents in your knowledge bases", thousands(MaxDocuments)))

	// Sam's count is his own.
	if _, err := h.lib.CreateNote(ctx, h.sam, "Mine", "text"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.lib.CreateSkill(ctx, h.sam, "Mine", "", "text"); err != nil {
		t.Fatal(err)
	}
	b := h.base(t, h.sam, "Mine")
	h.ingest(t, h.sam, b.ID, "a.txt", []byte("a document of sam's"))

	// Deleting one makes room again.
	notes, err := h.lib.Notes(ctx, h.frodo, "", 1)
	if err != nil || len(notes) != 1 {
		t.Fatal(notes, err)
	}
	if err := h.lib.DeleteNote(ctx, h.frodo, notes[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.lib.CreateNote(ctx, h.frodo, "One more", "text"); err != nil {
		t.Fatalf("after a deletion: %v", err)
	}
}

// A grantor's thousand shared skills and hundred shared bases do not fill
// another person's system message: the skills index and the bases'
// sentence are bounded, the person's own come first, and what is left out
// is counted.
func TestHarnessBoundsWhatOthersShare(t *testing.T) {
	ctx := context.Background()
	h := newHousehold(t)
	w := h.db.Write()
	if _, err := w.Exec(`WITH RECURSIVE seq(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM seq WHERE x < 1000)
		INSERT INTO skills (owner_id, name, description, body) SELECT ?, 'a' || x, ?, '' FROM seq`,
		h.frodo, strings.Repeat("d", MaxSkillDescription)); err != nil {
		t.Fatal(err)
	}
	fill(t, h, "knowledge_bases", h.frodo, 100, 0)
	if _, err := w.Exec(`INSERT INTO library_shares (kind, item_id, user_id)
		SELECT 'skill', id, ? FROM skills UNION ALL SELECT 'base', id, ? FROM knowledge_bases`, h.sam, h.sam); err != nil {
		t.Fatal(err)
	}
	if _, err := h.lib.CreateSkill(ctx, h.sam, "zebra", "Sam's own", "Stripes."); err != nil {
		t.Fatal(err)
	}
	h.base(t, h.sam, "Sam's shelf")

	sam := auth.Caller{User: h.sam, Perms: auth.NewSet(false, auth.LibraryUse)}
	lib, err := h.lib.Harness(ctx, sam, store.Chat{}, []tools.Family{tools.FamilySkills, tools.FamilyKnowledge})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(lib.Skills, "\n")
	if len(lib.Skills) > maxIndexBytes+100 || len(lines) > maxIndexSkills+1 {
		t.Errorf("skills index: %d bytes, %d lines", len(lib.Skills), len(lines))
	}
	if lines[0] != "- zebra: Sam's own" {
		t.Errorf("the person's own skill is not first: %q", lines[0])
	}
	if last := lines[len(lines)-1]; last != fmt.Sprintf("- (%d more skills shared with the person are not listed here.)", 1001-len(lines)+1) {
		t.Errorf("last line %q", last)
	}
	if len(lib.KnowledgeBases) > 3000 || !strings.Contains(lib.KnowledgeBases, "“Sam's shelf”") || !strings.Contains(lib.KnowledgeBases, "and 81 more") {
		t.Errorf("bases sentence (%d bytes): %.300q", len(lib.KnowledgeBases), lib.KnowledgeBases)
	}
}

// An existing chat's scope has the same cap as a new chat's (CheckScope):
// each base in it is a query in the write transaction, and the bases are
// named to the model.
func TestChatScopeCap(t *testing.T) {
	ctx := context.Background()
	h := newHousehold(t)
	fill(t, h, "knowledge_bases", h.frodo, MaxScopeBases+1, 0)
	bases, err := h.lib.Bases(ctx, h.frodo)
	if err != nil {
		t.Fatal(err)
	}
	var all []ids.BaseID
	for _, b := range bases {
		all = append(all, b.ID)
	}
	chat := h.chat(t, h.frodo)
	err = h.lib.SetChatScope(ctx, h.frodo, chat, Scope{Scoped: true, Bases: all})
	wantKindSays(t, "scope", err, apperr.Invalid, fmt.Sprintf("at most %d knowledge bases", MaxScopeBases))
	if err := h.lib.SetChatScope(ctx, h.frodo, chat, Scope{Scoped: true, Bases: all[:MaxScopeBases]}); err != nil {
		t.Fatal(err)
	}
}

// A search names at most MaxScopeBases bases, as a scope does: each is a
// bound variable, and SQLite's limit of them turned a long list into an
// internal error.
func TestSearchScopeCap(t *testing.T) {
	h := newHousehold(t)
	many := make([]ids.BaseID, 40000)
	for i := range many {
		many[i] = ids.BaseID(i + 1)
	}
	_, err := h.lib.Search(context.Background(), h.frodo, Scope{Scoped: true, Bases: many}, "bees", 5)
	wantKindSays(t, "search", err, apperr.Invalid, fmt.Sprintf("at most %d knowledge bases", MaxScopeBases))
}
