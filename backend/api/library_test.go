package api

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/events"
	"github.com/llembas/lembas/backend/files"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/library"
	"github.com/llembas/lembas/backend/render"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/store/storetest"
)

// The Library facade's views: a note is rendered by the one sanitising
// renderer (its lists leave the body out), an own item counts who it is
// shared with and another's does not say, and each change tells the
// owner's windows.
func TestLibraryViews(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	newUser := func(name string) ids.UserID {
		res, err := db.Write().Exec(`INSERT INTO users (username, display_name, status) VALUES (?, ?, 'active')`, name, name)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := res.LastInsertId()
		return ids.UserID(id)
	}
	frodo, sam := newUser("frodo"), newUser("sam")
	log := slog.New(slog.DiscardHandler)
	bus := events.NewBus()
	svc := library.New(db, files.New(db, t.TempDir(), log, files.Limits{}), log)
	svc.PublishTo(bus)
	lib := NewLibrary(svc, render.New(), Permits{})
	as := func(u ids.UserID) context.Context { return WithCaller(ctx, Caller{UserID: int64(u)}) }
	sub := bus.Subscribe(int64(frodo), 64)
	defer sub.Close()

	n, err := lib.CreateNote(as(frodo), NoteInput{Title: "Road", Body: "**Go** <script>alert(1)</script> on\n\nand on " + strings.Repeat("far ", 100)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(n.HTML, "<strong>Go</strong>") || strings.Contains(n.HTML, "<script") {
		t.Errorf("the note's html %q: want the Markdown rendered and the script gone", n.HTML)
	}
	if !n.Mine || n.SharedWith != 0 || n.Owner.ID != frodo || n.Owner.Name != "frodo" {
		t.Errorf("the owner's view of a new note: %+v", n)
	}
	if r := []rune(n.Excerpt); len(r) > 200 || strings.Contains(n.Excerpt, "\n") || !strings.HasPrefix(n.Excerpt, "**Go**") {
		t.Errorf("excerpt %q: want one line of at most 200 characters", n.Excerpt)
	}
	if _, err := lib.SetShares(as(frodo), SharesInput{Kind: "note", ID: int64(n.ID), To: []store.Grantee{{UserID: sam}}}); err != nil {
		t.Fatal(err)
	}
	list, err := lib.Notes(as(frodo), NotesQuery{})
	if err != nil || len(list) != 1 {
		t.Fatalf("frodo's notes: %+v %v", list, err)
	}
	b, _ := json.Marshal(list[0])
	if strings.Contains(string(b), `"body"`) || strings.Contains(string(b), `"html"`) || list[0].SharedWith != 1 ||
		!strings.HasPrefix(list[0].Excerpt, "Go <script>") || strings.Contains(list[0].Excerpt, "&lt;") {
		t.Errorf("a note in the list: %s; want no body or html, a plain excerpt, shared with 1", b)
	}
	found, err := lib.Notes(as(frodo), NotesQuery{Query: "far"})
	if err != nil || len(found) != 1 || !strings.Contains(found[0].Snippet, "<mark>far</mark>") || strings.Contains(found[0].Excerpt, "<mark>") {
		t.Errorf("a note found: %+v %v; want the match marked in the snippet only", found, err)
	}
	theirs, err := lib.Note(as(sam), n.ID)
	if err != nil {
		t.Fatal(err)
	}
	if theirs.Mine || theirs.SharedWith != 0 || theirs.Owner.Name != "frodo" || theirs.HTML != n.HTML {
		t.Errorf("the grantee's view: %+v; want not mine, no count, the owner named, the same html", theirs)
	}

	m, err := lib.AddMemory(as(frodo), MemoryInput{Text: "Likes mushrooms."})
	if err != nil {
		t.Fatal(err)
	}
	if !m.On || len(m.Items) != 1 || m.Items[0].Source != "person" || m.Used != len("Likes mushrooms.") ||
		m.MaxLength != library.MaxMemory || m.MaxTotal != library.MaxMemoryTotal || m.MaxCount != library.MaxMemoryCount {
		t.Errorf("memories after one: %+v", m)
	}

	var kinds []string
	for len(kinds) < 3 {
		select {
		case ev := <-sub.C():
			if ev.Topic == "library" {
				b, _ := json.Marshal(ev.Data)
				kinds = append(kinds, string(b))
			}
		default:
			t.Fatalf("frodo's windows heard %d library events (%q), want 3: the note, its shares, the memory", len(kinds), kinds)
		}
	}
	if !strings.Contains(kinds[0], `"kind":"note"`) || !strings.Contains(kinds[2], `"kind":"memory"`) {
		t.Errorf("library events %q", kinds)
	}
}
