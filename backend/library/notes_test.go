package library

import (
	"context"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

func ptr[T any](v T) *T { return &v }

// An administrator configures the instance; that is not reading other
// people's notes. Every method that names a note answers them as for a
// note that does not exist, and no listing or search shows it.
func TestAdminCannotReachPrivateNote(t *testing.T) {
	w := newItemsWorld(t)
	ctx := context.Background()
	n, err := w.lib.CreateNote(ctx, w.ann, "Diary", "secret plans about the garden")
	if err != nil {
		t.Fatal(err)
	}
	id := n.ID
	calls := []struct {
		name string
		call func() error
	}{
		{"Note", func() error { _, err := w.lib.Note(ctx, w.admin, id); return err }},
		{"UpdateNote", func() error { _, err := w.lib.UpdateNote(ctx, w.admin, id, NotePatch{Title: ptr("mine")}); return err }},
		{"DeleteNote", func() error { return w.lib.DeleteNote(ctx, w.admin, id) }},
		{"Shares", func() error { _, err := w.lib.Shares(ctx, w.admin, store.KindNote, int64(id)); return err }},
		{"SetShares", func() error {
			_, err := w.lib.SetShares(ctx, w.admin, store.KindNote, int64(id), []store.Grantee{{UserID: w.bob}})
			return err
		}},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			wantMessage(t, err, apperr.NotFound, "note not found")
			// The same answer as for an id nobody has.
			_, err = w.lib.Note(ctx, w.admin, id+1000)
			wantMessage(t, err, apperr.NotFound, "note not found")
		})
	}
	for _, q := range []string{"", "garden", "Diary"} {
		t.Run("Notes "+q, func(t *testing.T) {
			got, err := w.lib.Notes(ctx, w.admin, q, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 0 {
				t.Fatalf("the administrator sees %+v", got)
			}
		})
	}
	// Nothing they tried changed it or shared it.
	got, err := w.lib.Note(ctx, w.ann, id)
	if err != nil || got.Title != "Diary" {
		t.Fatalf("ann's note is %+v, %v", got, err)
	}
	if sh, err := w.lib.Shares(ctx, w.ann, store.KindNote, int64(id)); err != nil || len(sh) != 0 {
		t.Fatalf("shares %+v, %v", sh, err)
	}
}

// A note shared with a group is read by its members and changed only by its
// owner; unshared, or out of the group, it is gone again.
func TestSharedNoteIsReadOnly(t *testing.T) {
	w := newItemsWorld(t)
	ctx := context.Background()
	n, err := w.lib.CreateNote(ctx, w.ann, "  Recipes  ", "Bread: flour, water, salt.")
	if err != nil {
		t.Fatal(err)
	}
	if n.Title != "Recipes" || n.OwnerName != w.annName {
		t.Fatalf("created %+v", n)
	}
	if _, err := w.lib.Note(ctx, w.bob, n.ID); apperr.KindOf(err) != apperr.NotFound {
		t.Fatalf("bob reads an unshared note: %v", err)
	}
	sh, err := w.lib.SetShares(ctx, w.ann, store.KindNote, int64(n.ID), []store.Grantee{{GroupID: w.readers}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sh) != 1 || sh[0].GroupID != w.readers || sh[0].Name != w.readerName {
		t.Fatalf("shares %+v", sh)
	}

	got, err := w.lib.Note(ctx, w.bob, n.ID)
	if err != nil || got.Body != n.Body || got.OwnerName != w.annName {
		t.Fatalf("bob reads %+v, %v", got, err)
	}
	list, err := w.lib.Notes(ctx, w.bob, "", 0)
	if err != nil || len(list) != 1 || list[0].ID != n.ID {
		t.Fatalf("bob's list %+v, %v", list, err)
	}
	hits, err := w.lib.Notes(ctx, w.bob, "flour", 0)
	if err != nil || len(hits) != 1 {
		t.Fatalf("bob's search %+v, %v", hits, err)
	}
	// The administrator is not in the group and still sees nothing.
	if _, err := w.lib.Note(ctx, w.admin, n.ID); apperr.KindOf(err) != apperr.NotFound {
		t.Fatalf("admin reads a note shared with a group they are not in: %v", err)
	}

	const readOnly = "This note is shared with you for reading only."
	_, err = w.lib.UpdateNote(ctx, w.bob, n.ID, NotePatch{Body: ptr("vandalised")})
	wantMessage(t, err, apperr.Forbidden, readOnly)
	wantMessage(t, w.lib.DeleteNote(ctx, w.bob, n.ID), apperr.Forbidden, readOnly)
	_, err = w.lib.SetShares(ctx, w.bob, store.KindNote, int64(n.ID), nil)
	wantMessage(t, err, apperr.Forbidden, readOnly)
	_, err = w.lib.Shares(ctx, w.bob, store.KindNote, int64(n.ID))
	wantMessage(t, err, apperr.Forbidden, readOnly)
	if got, _ := w.lib.Note(ctx, w.ann, n.ID); got.Body != n.Body {
		t.Fatalf("the note changed: %+v", got)
	}

	// Out of the group, bob loses it.
	if err := w.db.RemoveGroupMember(ctx, int64(w.readers), w.bob); err != nil {
		t.Fatal(err)
	}
	if _, err := w.lib.Note(ctx, w.bob, n.ID); apperr.KindOf(err) != apperr.NotFound {
		t.Fatalf("bob out of the group reads it: %v", err)
	}
	if err := w.db.AddGroupMember(ctx, int64(w.readers), w.bob); err != nil {
		t.Fatal(err)
	}
	if _, err := w.lib.Note(ctx, w.bob, n.ID); err != nil {
		t.Fatalf("bob back in the group: %v", err)
	}
	// Unshared, bob loses it, and his update is NotFound again.
	if sh, err := w.lib.SetShares(ctx, w.ann, store.KindNote, int64(n.ID), nil); err != nil || len(sh) != 0 {
		t.Fatalf("unshare: %+v, %v", sh, err)
	}
	if _, err := w.lib.Note(ctx, w.bob, n.ID); apperr.KindOf(err) != apperr.NotFound {
		t.Fatalf("bob reads an unshared note: %v", err)
	}
	_, err = w.lib.UpdateNote(ctx, w.bob, n.ID, NotePatch{Body: ptr("x")})
	wantKind(t, err, apperr.NotFound)

	// The owner still changes it, and a deleted note takes its shares along.
	if _, err := w.lib.SetShares(ctx, w.ann, store.KindNote, int64(n.ID), []store.Grantee{{UserID: w.bob}}); err != nil {
		t.Fatal(err)
	}
	up, err := w.lib.UpdateNote(ctx, w.ann, n.ID, NotePatch{Body: ptr("Bread: flour, water, salt, yeast.")})
	if err != nil || up.Title != "Recipes" || !strings.Contains(up.Body, "yeast") {
		t.Fatalf("owner's update %+v, %v", up, err)
	}
	if err := w.lib.DeleteNote(ctx, w.ann, n.ID); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := w.db.Read().QueryRow(`SELECT count(*) FROM library_shares`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d shares left after the delete (%v)", left, err)
	}
}

func TestSetSharesGrantees(t *testing.T) {
	w := newItemsWorld(t)
	ctx := context.Background()
	n, err := w.lib.CreateNote(ctx, w.ann, "Plans", "")
	if err != nil {
		t.Fatal(err)
	}
	for name, to := range map[string][]store.Grantee{
		"yourself":        {{UserID: w.ann}},
		"disabled person": {{UserID: w.carl}},
		"nobody":          {{UserID: 9999}},
		"no group":        {{GroupID: 9999}},
		"both":            {{UserID: w.bob, GroupID: w.readers}},
		"neither":         {{Name: "Bob"}},
	} {
		t.Run(name, func(t *testing.T) {
			// A valid grantee beside the wrong one is not kept either.
			_, err := w.lib.SetShares(ctx, w.ann, store.KindNote, int64(n.ID), append([]store.Grantee{{UserID: w.bob}}, to...))
			wantKind(t, err, apperr.Invalid)
			if sh, _ := w.lib.Shares(ctx, w.ann, store.KindNote, int64(n.ID)); len(sh) != 0 {
				t.Fatalf("kept %+v", sh)
			}
		})
	}
	sh, err := w.lib.SetShares(ctx, w.ann, store.KindNote, int64(n.ID),
		[]store.Grantee{{GroupID: w.readers}, {UserID: w.bob}, {UserID: w.bob}, {UserID: w.admin}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range sh {
		names = append(names, g.Name)
	}
	if got, want := strings.Join(names, ","), "bob,Readers,Root"; got != want {
		t.Fatalf("shares %s, want %s", got, want)
	}
	people, err := w.lib.People(ctx, w.ann)
	if err != nil {
		t.Fatal(err)
	}
	names = nil
	for _, g := range people {
		names = append(names, g.Name)
	}
	// Not ann herself, not carl (disabled).
	if got, want := strings.Join(names, ","), "bob,Readers,Root"; got != want {
		t.Fatalf("people %s, want %s", got, want)
	}
}

func TestNoteLimits(t *testing.T) {
	w := newItemsWorld(t)
	ctx := context.Background()
	for name, c := range map[string]struct{ title, body string }{
		"blank title": {"  ", "x"},
		"long title":  {strings.Repeat("é", MaxNoteTitle+1), ""},
		"bad utf-8":   {"ok", "\xff\xfe"},
		"long body":   {"ok", strings.Repeat("a", MaxNoteBody+1)},
		"bad utf-8 t": {"\xc3", ""},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := w.lib.CreateNote(ctx, w.ann, c.title, c.body)
			wantKind(t, err, apperr.Invalid)
		})
	}
	if _, err := w.lib.CreateNote(ctx, w.ann, strings.Repeat("é", MaxNoteTitle), strings.Repeat("a", MaxNoteBody)); err != nil {
		t.Fatalf("a note at the limits: %v", err)
	}
}

// Notes search ranks a title match above a body match, honours a quoted
// phrase and never lets what was typed be FTS syntax.
func TestNotesSearch(t *testing.T) {
	w := newItemsWorld(t)
	ctx := context.Background()
	mk := func(title, body string) ids.NoteID {
		n, err := w.lib.CreateNote(ctx, w.ann, title, body)
		if err != nil {
			t.Fatal(err)
		}
		return n.ID
	}
	// The title match is the older note and its word is rarer in it than
	// in the other's body: only ranking with the title weighted puts it
	// first.
	inTitle := mk("Tomato sauce for the winter", "Simmer for an hour with basil, garlic and a little sugar; keep in jars.")
	inBody := mk("Garden", "The **tomato** plants need water twice a week; tomato seeds.")
	mk("Car", "Oil change in spring; the tyres are fine.")
	mk("Words", "water plants the")
	// bob's note never shows in ann's search.
	if _, err := w.lib.CreateNote(ctx, w.bob, "Tomato", "bob's tomato tomato tomato"); err != nil {
		t.Fatal(err)
	}

	got, err := w.lib.Notes(ctx, w.ann, "tomato", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != inTitle || got[1].ID != inBody {
		t.Fatalf("ranked %+v", got)
	}
	if got[1].Snippet != "The <mark>tomato</mark> plants need water twice a week; <mark>tomato</mark> seeds." || got[1].Body != "" {
		t.Fatalf("snippet %q body %q", got[1].Snippet, got[1].Body)
	}

	phrase, err := w.lib.Notes(ctx, w.ann, `"plants need water"`, 0)
	if err != nil || len(phrase) != 1 || phrase[0].ID != inBody {
		t.Fatalf("phrase %+v, %v", phrase, err)
	}
	words, err := w.lib.Notes(ctx, w.ann, `plants need water`, 0)
	if err != nil || len(words) != 1 {
		t.Fatalf("words %+v, %v", words, err)
	}

	for _, q := range []string{`"`, `tomato"`, `NEAR(tomato basil`, `NEAR(`, `title:tomato`, `body:`, `col:x`,
		`tomato OR`, `AND`, `-tomato`, `^tomato`, `*`, `(`, `{title body}: x`, `"unclosed phrase`, "\x00"} {
		t.Run(q, func(t *testing.T) {
			if _, err := w.lib.Notes(ctx, w.ann, q, 0); err != nil {
				t.Fatalf("%q: %v", q, err)
			}
		})
	}
	// A column filter is the phrase of its words, not a filter.
	if got, err := w.lib.Notes(ctx, w.ann, `body:tomato`, 0); err != nil || len(got) != 0 {
		t.Fatalf("body:tomato matched %+v, %v", got, err)
	}
}

func TestNotesListOrderAndLimit(t *testing.T) {
	w := newItemsWorld(t)
	ctx := context.Background()
	var made []ids.NoteID
	for i := range 5 {
		n, err := w.lib.CreateNote(ctx, w.ann, "n"+string(rune('a'+i)), "# Heading\n\nSome **text**.")
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, n.ID)
	}
	// Distinct past times, so the order does not hang on the clock.
	if _, err := w.db.Write().Exec(`UPDATE notes SET updated_at = id`); err != nil {
		t.Fatal(err)
	}
	// Changing the oldest makes it the newest.
	if _, err := w.lib.UpdateNote(ctx, w.ann, made[0], NotePatch{Title: ptr("changed")}); err != nil {
		t.Fatal(err)
	}
	got, err := w.lib.Notes(ctx, w.ann, "", 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].ID != made[0] {
		t.Fatalf("list %+v", got)
	}
	if got[0].Snippet != "Heading Some text." {
		t.Fatalf("excerpt %q", got[0].Snippet)
	}
}
