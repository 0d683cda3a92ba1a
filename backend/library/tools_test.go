package library_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/files"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/library"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/store/storetest"
	"github.com/llembas/lembas/backend/tools"
)

// shelf is a library over a real database and files directory, for the
// tools: the owner (an administrator), frodo and sam.
type shelf struct {
	t                 *testing.T
	lib               *library.Service
	db                *store.DB
	admin, frodo, sam ids.UserID
}

func newShelf(t *testing.T) *shelf {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t)
	owner, err := db.EnsureOwner(ctx, "owner", "Owner")
	if err != nil {
		t.Fatal(err)
	}
	user := func(name string) ids.UserID {
		u, err := db.CreateUser(ctx, store.NewUser{Username: name, DisplayName: strings.ToUpper(name[:1]) + name[1:]})
		if err != nil {
			t.Fatal(err)
		}
		return ids.UserID(u.ID)
	}
	log := slog.New(slog.DiscardHandler)
	return &shelf{t: t, lib: library.New(db, files.New(db, t.TempDir(), log, files.Limits{}), log), db: db,
		admin: ids.UserID(owner.ID), frodo: user("frodo"), sam: user("sam")}
}

// caller is user as a reply acts for them: holding library.use (admin: an
// administrator, who holds everything).
func caller(user ids.UserID, admin bool) auth.Caller {
	if admin {
		return auth.Caller{User: user, Perms: auth.NewSet(true)}
	}
	return auth.Caller{User: user, Perms: auth.NewSet(false, auth.ChatCreate, auth.LibraryUse)}
}

// offered is every library tool offered to c in chat, by name.
func (s *shelf) offered(c auth.Caller, chat store.Chat) map[string]tools.Tool {
	s.t.Helper()
	out := map[string]tools.Tool{}
	for _, src := range s.lib.Sources() {
		ts, guide, err := src.Tools(context.Background(), c, chat, func(string) bool { return false })
		if err != nil {
			s.t.Fatalf("%s: %v", src.Gate(), err)
		}
		if len(guide) != 0 {
			s.t.Errorf("%s returned guidance; the library's is built-in", src.Gate())
		}
		for _, tl := range ts {
			if tl.Family != src.Gate() || tl.Permission != auth.LibraryUse || !json.Valid(tl.Parameters) {
				s.t.Errorf("%s: family %s, permission %s, schema %s", tl.Name, tl.Family, tl.Permission, tl.Parameters)
			}
			out[tl.Name] = tl
		}
	}
	return out
}

// run calls the offered tool name with args for c.
func (s *shelf) run(c auth.Caller, chat store.Chat, name, args string) tools.Result {
	s.t.Helper()
	tl, ok := s.offered(c, chat)[name]
	if !ok {
		s.t.Fatalf("%s is not offered", name)
	}
	return tl.Run(context.Background(), tools.Call{ID: "c1", Name: name, Arguments: json.RawMessage(args), Caller: c})
}

func (s *shelf) base(owner ids.UserID, name string, docs map[string]string) store.KnowledgeBase {
	s.t.Helper()
	ctx := context.Background()
	b, err := s.lib.CreateBase(ctx, owner, name, "")
	if err != nil {
		s.t.Fatal(err)
	}
	for file, text := range docs {
		if _, err := s.lib.Ingest(ctx, owner, b.ID, file, bytes.NewReader([]byte(text))); err != nil {
			s.t.Fatalf("ingest %s: %v", file, err)
		}
	}
	return b
}

func (s *shelf) share(owner ids.UserID, kind store.LibraryKind, id int64, to ids.UserID) {
	s.t.Helper()
	if _, err := s.lib.SetShares(context.Background(), owner, kind, id, []store.Grantee{{UserID: to}}); err != nil {
		s.t.Fatal(err)
	}
}

// A chat scoped to one base never gets another base's text from
// knowledge_search, whether the scope is a new chat's (not stored yet) or
// a stored chat's; unscoped, it searches every base the person can see;
// scoped to a base that is gone, it finds nothing and says why.
func TestKnowledgeSearchKeepsToTheChatsScope(t *testing.T) {
	s := newShelf(t)
	ctx := context.Background()
	contracts := s.base(s.frodo, "Contracts", map[string]string{"lease.md": "# Lease\n\nThe mithril lease of Bag End runs until the spring. CONTRACTS-ONLY."})
	recipes := s.base(s.frodo, "Recipes", map[string]string{"stew.md": "# Stew\n\nA mithril pot makes the best rabbit stew. RECIPES-ONLY."})
	frodo := caller(s.frodo, false)

	stored, _, err := s.db.CreateChat(ctx, s.frodo, store.NewChat{Knowledge: &store.KnowledgeScope{Scoped: true, Bases: []ids.BaseID{contracts.ID}}},
		store.Message{Role: store.RoleUser, Content: "hi", Status: store.StatusFinal})
	if err != nil {
		t.Fatal(err)
	}
	if sc, _, err := s.lib.ChatScope(ctx, s.frodo, stored.ID); err != nil || !sc.Scoped || !slices.Equal(sc.Bases, []ids.BaseID{contracts.ID}) {
		t.Fatalf("the stored chat's scope %+v %v", sc, err)
	}
	for _, tc := range []struct {
		name      string
		chat      store.Chat
		want, not []string
	}{
		{"new chat scoped", store.Chat{Knowledge: &store.KnowledgeScope{Scoped: true, Bases: []ids.BaseID{contracts.ID}}},
			[]string{"CONTRACTS-ONLY", "[1] lease.md — Contracts (part 1)"}, []string{"RECIPES-ONLY", "stew"}},
		{"stored chat scoped", stored, []string{"CONTRACTS-ONLY"}, []string{"RECIPES-ONLY"}},
		{"unscoped", store.Chat{}, []string{"CONTRACTS-ONLY", "RECIPES-ONLY"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := s.run(frodo, tc.chat, library.NameKnowledgeSearch, `{"query":"mithril"}`)
			if res.Failed {
				t.Fatalf("failed: %s", res.Text)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Text, w) {
					t.Errorf("%q missing from %q", w, res.Text)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(res.Text, n) {
					t.Errorf("%q leaked into %q", n, res.Text)
				}
			}
		})
	}
	scoped := store.Chat{Knowledge: &store.KnowledgeScope{Scoped: true, Bases: []ids.BaseID{recipes.ID}}}
	if res := s.run(frodo, scoped, library.NameKnowledgeSearch, `{"query":"lease"}`); res.Failed || res.Text != "No results for “lease” in “Recipes”." {
		t.Errorf("nothing found: %+v", res)
	}
	// The base the stored chat was scoped to is deleted: nothing, never
	// everything.
	if err := s.lib.DeleteBase(ctx, s.frodo, contracts.ID); err != nil {
		t.Fatal(err)
	}
	res := s.run(frodo, stored, library.NameKnowledgeSearch, `{"query":"mithril"}`)
	if strings.Contains(res.Text, "RECIPES-ONLY") || !strings.Contains(res.Text, "no longer available") {
		t.Errorf("scoped to a deleted base: %+v", res)
	}
	lib, err := s.lib.Harness(ctx, frodo, stored, []tools.Family{tools.FamilyKnowledge})
	if err != nil || lib.KnowledgeBases != "The knowledge bases chosen for this chat are no longer available, so searches find nothing." {
		t.Errorf("the harness of a chat scoped to a deleted base: %q %v", lib.KnowledgeBases, err)
	}
}

// knowledge_search is offered to whoever can see a base (their own or one
// shared with them), never to others, administrators included; a grantee
// searches the shared base through the same rule.
func TestKnowledgeSearchIsOfferedWithAVisibleBase(t *testing.T) {
	s := newShelf(t)
	if _, ok := s.offered(caller(s.frodo, false), store.Chat{})[library.NameKnowledgeSearch]; ok {
		t.Error("offered with no base at all")
	}
	b := s.base(s.frodo, "Red Book", map[string]string{"book.md": "There and back again, by Bilbo Baggins."})
	if _, ok := s.offered(caller(s.frodo, false), store.Chat{})[library.NameKnowledgeSearch]; !ok {
		t.Error("not offered to the base's owner")
	}
	for _, who := range []auth.Caller{caller(s.sam, false), caller(s.admin, true)} {
		if _, ok := s.offered(who, store.Chat{})[library.NameKnowledgeSearch]; ok {
			t.Errorf("offered to user %d, who sees no base", who.User)
		}
	}
	s.share(s.frodo, store.KindBase, int64(b.ID), s.sam)
	res := s.run(caller(s.sam, false), store.Chat{}, library.NameKnowledgeSearch, `{"query":"Bilbo"}`)
	if res.Failed || !strings.Contains(res.Text, "There and back again") || !strings.Contains(res.Text, "Red Book") {
		t.Errorf("the grantee's search: %+v", res)
	}
	// Without library.use nothing of the library is offered at all.
	if got := s.offered(auth.Caller{User: s.frodo, Perms: auth.NewSet(false, auth.ChatCreate)}, store.Chat{}); len(got) != 0 {
		t.Errorf("without library.use: %v", slices.Collect(maps.Keys(got)))
	}
}

// Arguments are checked before anything runs, with results that say what
// is wanted.
func TestToolArgumentsAreChecked(t *testing.T) {
	s := newShelf(t)
	s.base(s.frodo, "Contracts", map[string]string{"a.md": "Some text."})
	s.lib.CreateSkill(context.Background(), s.frodo, "tidy", "Tidy a list", "Sort it.")
	frodo := caller(s.frodo, false)
	for _, tc := range []struct{ tool, args, want string }{
		{library.NameKnowledgeSearch, `not json`, `"query"`},
		{library.NameKnowledgeSearch, `{}`, `"query" must be non-empty`},
		{library.NameKnowledgeSearch, `{"query":"  "}`, `"query" must be non-empty`},
		{library.NameKnowledgeSearch, `{"query":"x","limit":0}`, `"limit" is 1 to 10`},
		{library.NameKnowledgeSearch, `{"query":"x","limit":"3"}`, `JSON object`},
		{library.NameKnowledgeSearch, `{"query":"x","bases":[1]}`, `JSON object`},
		{library.NameNotesRead, `{"id":"7"}`, `JSON object`},
		{library.NameNotesRead, `{}`, `"id" must be`},
		{library.NameNotesRead, `{"id":-1}`, `"id" must be`},
		{library.NameNotesWrite, `{"title":"No body"}`, `give "title" (non-empty) and "body"`},
		{library.NameNotesWrite, `{"body":"No title"}`, `give "title" (non-empty) and "body"`},
		{library.NameNotesWrite, `{"id":3}`, `Give "title", "body" or both`},
		{library.NameMemoryAdd, `{"text":""}`, `"text" must be non-empty`},
		{library.NameMemoryForget, `{"id":0}`, `"id" must be`},
		{library.NameSkillRead, `{"name":" "}`, `"name" must be`},
	} {
		res := s.run(frodo, store.Chat{}, tc.tool, tc.args)
		if !res.Failed || !strings.Contains(res.Text, tc.want) {
			t.Errorf("%s(%s) = %+v, want a failure saying %q", tc.tool, tc.args, res, tc.want)
		}
	}
}

// notes_write creates a note, changes only what it is given, and refuses
// a note shared with the person (read-only) without changing it; no tool
// reads a note the person cannot see, an administrator's replies included.
func TestNotesTools(t *testing.T) {
	s := newShelf(t)
	ctx := context.Background()
	frodo, sam, admin := caller(s.frodo, false), caller(s.sam, false), caller(s.admin, true)
	for _, n := range []string{library.NameNotesSearch, library.NameNotesRead, library.NameNotesWrite} {
		if _, ok := s.offered(sam, store.Chat{})[n]; !ok {
			t.Errorf("%s not offered", n)
		}
	}
	res := s.run(frodo, store.Chat{}, library.NameNotesWrite, `{"title":"Road","body":"The road goes ever on."}`)
	notes, _ := s.lib.Notes(ctx, s.frodo, "", 10)
	if res.Failed || len(notes) != 1 || res.Text != "Created note "+itoa(int64(notes[0].ID))+": Road." {
		t.Fatalf("create: %+v, notes %+v", res, notes)
	}
	id := itoa(int64(notes[0].ID))
	if res := s.run(frodo, store.Chat{}, library.NameNotesWrite, `{"id":`+id+`,"body":"And on."}`); res.Failed {
		t.Fatalf("update: %+v", res)
	}
	n, _ := s.lib.Note(ctx, s.frodo, notes[0].ID)
	if n.Title != "Road" || n.Body != "And on." {
		t.Errorf("after a body-only update: %+v", n)
	}
	// Shared with sam: readable, listed as read-only, not writable.
	s.share(s.frodo, store.KindNote, int64(n.ID), s.sam)
	if res := s.run(sam, store.Chat{}, library.NameNotesSearch, `{"query":"road"}`); !strings.Contains(res.Text, "Note "+id+": Road") ||
		!strings.Contains(res.Text, "Shared with the person by Frodo, read-only.") {
		t.Errorf("sam's search: %+v", res)
	}
	if res := s.run(sam, store.Chat{}, library.NameNotesRead, `{"id":`+id+`}`); res.Failed || !strings.Contains(res.Text, "And on.") {
		t.Errorf("sam's read: %+v", res)
	}
	res = s.run(sam, store.Chat{}, library.NameNotesWrite, `{"id":`+id+`,"body":"Sam was here."}`)
	if !res.Failed || !strings.Contains(res.Text, "for reading only") {
		t.Errorf("sam's write: %+v", res)
	}
	if n, _ := s.lib.Note(ctx, s.frodo, n.ID); n.Body != "And on." {
		t.Errorf("the shared note changed: %q", n.Body)
	}
	// A long note is read in part, cut on a character, saying so.
	long, err := s.lib.CreateNote(ctx, s.frodo, "Long", strings.Repeat("é", library.MaxNoteRead))
	if err != nil {
		t.Fatal(err)
	}
	res = s.run(frodo, store.Chat{}, library.NameNotesRead, `{"id":`+itoa(int64(long.ID))+`}`)
	if res.Failed || len(res.Text) > library.MaxNoteRead+200 || !utf8.ValidString(res.Text) || !strings.Contains(res.Text, "[The note goes on; it was cut here, at 48 KB of 96 KB.]") {
		t.Errorf("a long note: %d bytes, ends %q", len(res.Text), res.Text[max(0, len(res.Text)-80):])
	}
	// The administrator, not a grantee: the note does not exist for them.
	for _, call := range []struct{ tool, args string }{
		{library.NameNotesRead, `{"id":` + id + `}`},
		{library.NameNotesWrite, `{"id":` + id + `,"title":"Mine"}`},
	} {
		if res := s.run(admin, store.Chat{}, call.tool, call.args); !res.Failed || res.Text != "There is no note "+id+"; notes_search lists the notes and their ids." {
			t.Errorf("admin %s: %+v", call.tool, res)
		}
	}
	if res := s.run(admin, store.Chat{}, library.NameNotesSearch, `{"query":"road"}`); res.Failed || strings.Contains(res.Text, "And on") {
		t.Errorf("admin search: %+v", res)
	}
}

// The memory tools exist only while the person's memory is on; over a cap
// the service's message comes back as a failed result.
func TestMemoryTools(t *testing.T) {
	s := newShelf(t)
	ctx := context.Background()
	frodo := caller(s.frodo, false)
	if err := s.lib.SetMemoryOn(ctx, s.frodo, false); err != nil {
		t.Fatal(err)
	}
	got := s.offered(frodo, store.Chat{})
	if _, ok := got[library.NameMemoryAdd]; ok {
		t.Error("memory_add offered with memory off")
	}
	if _, ok := got[library.NameMemoryForget]; ok {
		t.Error("memory_forget offered with memory off")
	}
	if lib, _ := s.lib.Harness(ctx, frodo, store.Chat{}, []tools.Family{tools.FamilyMemory}); lib.Memories != "" {
		t.Errorf("memories with memory off: %q", lib.Memories)
	}
	s.lib.SetMemoryOn(ctx, s.frodo, true)
	res := s.run(frodo, store.Chat{}, library.NameMemoryAdd, `{"text":"Frodo prefers mushrooms."}`)
	mems, _ := s.lib.Memories(ctx, s.frodo)
	if res.Failed || len(mems) != 1 || mems[0].Source != "model" || !strings.Contains(res.Text, "memory "+itoa(int64(mems[0].ID))) {
		t.Fatalf("add: %+v %+v", res, mems)
	}
	long := strings.Repeat("x", library.MaxMemory+1)
	res = s.run(frodo, store.Chat{}, library.NameMemoryAdd, `{"text":"`+long+`"}`)
	if _, want := apperr.Public(func() error { _, err := s.lib.AddMemory(ctx, s.frodo, long, "model"); return err }()); !res.Failed || res.Text != want {
		t.Errorf("over the cap: %+v, want %q", res, want)
	}
	lib, _ := s.lib.Harness(ctx, frodo, store.Chat{}, []tools.Family{tools.FamilyMemory})
	if want := "- [" + itoa(int64(mems[0].ID)) + "] Frodo prefers mushrooms."; lib.Memories != want {
		t.Errorf("memories with the tools: %q, want %q", lib.Memories, want)
	}
	if lib, _ := s.lib.Harness(ctx, frodo, store.Chat{}, nil); lib.Memories != "- Frodo prefers mushrooms." {
		t.Errorf("memories without the tools: %q", lib.Memories)
	}
	if res := s.run(frodo, store.Chat{}, library.NameMemoryForget, `{"id":`+itoa(int64(mems[0].ID))+`}`); res.Failed {
		t.Errorf("forget: %+v", res)
	}
	if res := s.run(frodo, store.Chat{}, library.NameMemoryForget, `{"id":`+itoa(int64(mems[0].ID))+`}`); !res.Failed {
		t.Errorf("forget again: %+v", res)
	}
	if lib, _ := s.lib.Harness(ctx, frodo, store.Chat{}, []tools.Family{tools.FamilyMemory}); lib.Memories != "(No memories are stored yet.)" {
		t.Errorf("no memories, tools offered: %q", lib.Memories)
	}
	if lib, _ := s.lib.Harness(ctx, frodo, store.Chat{}, nil); lib.Memories != "" {
		t.Errorf("no memories, no tools: %q", lib.Memories)
	}
}

// skill_read is offered only with a skill to read; it reads by name (any
// case), the person's own before a shared one of the same name, and the
// index lists name and description.
func TestSkillRead(t *testing.T) {
	s := newShelf(t)
	ctx := context.Background()
	sam := caller(s.sam, false)
	if _, ok := s.offered(sam, store.Chat{})[library.NameSkillRead]; ok {
		t.Error("skill_read offered with no skill")
	}
	shared, err := s.lib.CreateSkill(ctx, s.frodo, "Packing", "Pack for a journey", "Frodo's list.")
	if err != nil {
		t.Fatal(err)
	}
	s.share(s.frodo, store.KindSkill, int64(shared.ID), s.sam)
	if res := s.run(sam, store.Chat{}, library.NameSkillRead, `{"name":"packing"}`); res.Failed || !strings.Contains(res.Text, "Frodo's list.") {
		t.Errorf("the shared skill: %+v", res)
	}
	if _, err := s.lib.CreateSkill(ctx, s.sam, "packing", "Pack the pots", "Sam's list."); err != nil {
		t.Fatal(err)
	}
	res := s.run(sam, store.Chat{}, library.NameSkillRead, `{"name":"PACKING"}`)
	if res.Failed || res.Text != "Skill packing: Pack the pots\n\nSam's list." {
		t.Errorf("own before shared: %+v", res)
	}
	if res := s.run(sam, store.Chat{}, library.NameSkillRead, `{"name":"cooking"}`); !res.Failed || !strings.Contains(res.Text, "The skills are: ") {
		t.Errorf("unknown: %+v", res)
	}
	lib, err := s.lib.Harness(ctx, sam, store.Chat{}, []tools.Family{tools.FamilySkills})
	if err != nil || !strings.Contains(lib.Skills, "- packing: Pack the pots") || !strings.Contains(lib.Skills, "- Packing: Pack for a journey") {
		t.Errorf("index %q %v", lib.Skills, err)
	}
	if lib, _ := s.lib.Harness(ctx, caller(s.admin, true), store.Chat{}, []tools.Family{tools.FamilySkills}); lib.Skills != "" {
		t.Errorf("the administrator sees an index: %q", lib.Skills)
	}
}

// A new chat's scope is checked before anything is stored: a base the
// person cannot see is refused, the administrator's included.
func TestCheckScope(t *testing.T) {
	s := newShelf(t)
	b := s.base(s.frodo, "Private", nil)
	if err := s.lib.CheckScope(context.Background(), s.frodo, []ids.BaseID{b.ID}); err != nil {
		t.Errorf("own base: %v", err)
	}
	for _, u := range []ids.UserID{s.sam, s.admin} {
		if err := s.lib.CheckScope(context.Background(), u, []ids.BaseID{b.ID}); apperr.KindOf(err) != apperr.Invalid {
			t.Errorf("user %d: %v, want invalid", u, err)
		}
	}
	// And the store refuses it in the transaction too.
	_, _, err := s.db.CreateChat(context.Background(), s.sam, store.NewChat{Knowledge: &store.KnowledgeScope{Scoped: true, Bases: []ids.BaseID{b.ID}}},
		store.Message{Role: store.RoleUser, Content: "hi", Status: store.StatusFinal})
	if err == nil {
		t.Error("the store scoped a chat to a base its person cannot see")
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// Every library tool is in its family's catalog (what Settings → Tools
// lists, and the names no custom or MCP tool may take), offered or not.
func TestCatalogListsEveryTool(t *testing.T) {
	s := newShelf(t)
	var got []string
	for _, src := range s.lib.Sources() {
		for _, tl := range src.(tools.Fixed).Catalog() {
			if tl.Family != src.Gate() || tl.Run == nil || tl.Activity == nil || !json.Valid(tl.Parameters) {
				t.Errorf("%s: %+v", tl.Name, tl)
			}
			got = append(got, tl.Name)
		}
	}
	want := []string{library.NameKnowledgeSearch, library.NameNotesSearch, library.NameNotesRead, library.NameNotesWrite,
		library.NameMemoryAdd, library.NameMemoryForget, library.NameSkillRead}
	if !slices.Equal(got, want) {
		t.Errorf("catalog %v, want %v", got, want)
	}
}

// notes_search gives the model each note's first lines (or the passage
// found) as plain text: a listing's notes carry no body, only the store's
// snippet, which is HTML for pages.
func TestNotesSearchShowsTheText(t *testing.T) {
	s := newShelf(t)
	frodo := caller(s.frodo, false)
	if res := s.run(frodo, store.Chat{}, library.NameNotesWrite, `{"title":"Tale","body":"There & back again: a hobbit's <b>tale</b>."}`); res.Failed {
		t.Fatal(res)
	}
	for _, q := range []string{"", "hobbit"} {
		res := s.run(frodo, store.Chat{}, library.NameNotesSearch, `{"query":"`+q+`"}`)
		if res.Failed || !strings.Contains(res.Text, "There & back again: a hobbit's <b>tale</b>.") || strings.Contains(res.Text, "<mark>") {
			t.Errorf("query %q: %+v", q, res)
		}
	}
}

// Every library tool states its risk, which an agent chat's mode decides
// on: what only reads runs in Plan mode, what writes does not.
func TestLibraryToolsDeclareTheirRisks(t *testing.T) {
	want := map[string]tools.Risk{
		library.NameKnowledgeSearch: tools.RiskRead, library.NameNotesSearch: tools.RiskRead, library.NameNotesRead: tools.RiskRead, library.NameSkillRead: tools.RiskRead,
		library.NameNotesWrite: tools.RiskWrite, library.NameMemoryAdd: tools.RiskWrite, library.NameMemoryForget: tools.RiskWrite,
	}
	s := library.New(nil, nil, nil)
	n := 0
	for _, src := range s.Sources() {
		for _, tl := range src.(tools.Fixed).Catalog() {
			n++
			if tl.Risk != want[tl.Name] || tl.Risk == "" {
				t.Errorf("%s: risk %q, want %q", tl.Name, tl.Risk, want[tl.Name])
			}
		}
	}
	if n != len(want) {
		t.Errorf("%d library tools, %d risks known", n, len(want))
	}
}
