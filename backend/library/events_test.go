package library_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/llembas/lembas/backend/events"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/library"
	"github.com/llembas/lembas/backend/store"
)

// heard drains the library events sub has queued, as "kind:id" strings.
func heard(t *testing.T, sub *events.Sub) []string {
	t.Helper()
	var out []string
	for {
		select {
		case ev := <-sub.C():
			if ev.Topic != "library" {
				continue
			}
			c, ok := ev.Data.(library.Change)
			if !ok {
				b, _ := json.Marshal(ev.Data)
				t.Fatalf("a library event carries %s", b)
			}
			out = append(out, c.Kind+":"+num(c.ID))
		default:
			return out
		}
	}
}

func num(n int64) string { b, _ := json.Marshal(n); return string(b) }

// TestChangesAreHeardWhoeverMakesThem: what a reply's tools write (a
// memory, a note) reaches the owner's open Library pages as a "library"
// event, as a person's own changes do; sharing tells the people it is
// shared with (and unsharing those it no longer is), and a change to a
// shared item reaches its readers.
func TestChangesAreHeardWhoeverMakesThem(t *testing.T) {
	s := newShelf(t)
	ctx := context.Background()
	bus := events.NewBus()
	s.lib.PublishTo(bus)
	frodo := bus.Subscribe(int64(s.frodo), 64)
	defer frodo.Close()
	sam := bus.Subscribe(int64(s.sam), 64)
	defer sam.Close()

	c := caller(s.frodo, false)
	if r := s.run(c, store.Chat{}, library.NameMemoryAdd, `{"text":"Frodo's pony is Bill."}`); r.Failed {
		t.Fatal(r.Text)
	}
	if r := s.run(c, store.Chat{}, "notes_write", `{"title":"Bill","body":"apples"}`); r.Failed {
		t.Fatal(r.Text)
	}
	got := heard(t, frodo)
	if len(got) != 2 || got[0][:7] != "memory:" || got[1][:5] != "note:" {
		t.Fatalf("frodo heard %q after the model's memory_add and notes_write, want a memory and a note", got)
	}
	if got := heard(t, sam); len(got) != 0 {
		t.Errorf("sam heard %q of frodo's own memory and note", got)
	}

	b := s.base(s.frodo, "Shire maps", nil)
	heard(t, frodo)
	if _, err := s.lib.SetShares(ctx, s.frodo, store.KindBase, int64(b.ID), []store.Grantee{{UserID: s.sam}}); err != nil {
		t.Fatal(err)
	}
	want := "base:" + num(int64(b.ID))
	if got := heard(t, sam); len(got) != 1 || got[0] != want {
		t.Errorf("sam heard %q when a base was shared with him, want %q", got, want)
	}
	if got := heard(t, frodo); len(got) != 1 || got[0] != want {
		t.Errorf("frodo heard %q sharing his base, want %q", got, want)
	}
	if _, err := s.lib.UpdateBase(ctx, s.frodo, b.ID, library.BasePatch{Name: ptr("Maps of the Shire")}); err != nil {
		t.Fatal(err)
	}
	if got := heard(t, sam); len(got) != 1 || got[0] != want {
		t.Errorf("sam heard %q when a base shared with him was renamed, want %q", got, want)
	}
	if _, err := s.lib.SetShares(ctx, s.frodo, store.KindBase, int64(b.ID), nil); err != nil {
		t.Fatal(err)
	}
	if got := heard(t, sam); len(got) != 1 || got[0] != want {
		t.Errorf("sam heard %q when a base was no longer shared with him, want %q", got, want)
	}
	if err := s.lib.DeleteBase(ctx, s.frodo, b.ID); err != nil {
		t.Fatal(err)
	}
	if got := heard(t, sam); len(got) != 0 {
		t.Errorf("sam heard %q of a base no longer his to read", got)
	}

	// A note shared with a group: its members hear of it.
	g, err := s.db.CreateGroup(ctx, "Gardeners", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.db.SetGroupMembers(ctx, g.ID, []ids.UserID{s.sam}); err != nil {
		t.Fatal(err)
	}
	n, err := s.lib.CreateNote(ctx, s.frodo, "Seeds", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.lib.SetShares(ctx, s.frodo, store.KindNote, int64(n.ID), []store.Grantee{{GroupID: ids.GroupID(g.ID)}}); err != nil {
		t.Fatal(err)
	}
	if got := heard(t, sam); len(got) != 1 || got[0] != "note:"+num(int64(n.ID)) {
		t.Errorf("sam heard %q when a note was shared with his group", got)
	}
}

func ptr[T any](v T) *T { return &v }
