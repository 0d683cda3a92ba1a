package store

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/llembas/lembas/backend/ids"
)

// The transcript, the request's path and the next message follow the
// chat's leaf; a chat with no leaf (from before versions), or one whose
// leaf is not its message, reads as its newest message.
func TestThePathFollowsTheLeaf(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	frodo := addUser(t, db, "frodo")
	chat, m1, err := db.CreateChat(ctx, frodo, NewChat{}, Message{Content: "m1"})
	if err != nil {
		t.Fatal(err)
	}
	add := func(parent *ids.MessageID, text string) Message {
		t.Helper()
		m, err := db.AddMessageAt(ctx, frodo, chat.ID, parent, Message{Content: text})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	page := func(before ids.MessageID, limit int) []string {
		t.Helper()
		p, _, err := db.MessagesPage(ctx, frodo, chat.ID, before, limit)
		if err != nil {
			t.Fatal(err)
		}
		return contents(p)
	}
	m2 := add(&m1.ID, "m2")
	m3 := add(&m2.ID, "m3")
	m2b := add(&m1.ID, "m2b")
	if got := page(0, 10); !slices.Equal(got, []string{"m1", "m2b"}) {
		t.Fatalf("after a second version: %q", got)
	}
	m3b, err := db.AddMessage(ctx, frodo, chat.ID, Message{Content: "m3b"})
	if err != nil || *m3b.ParentID != m2b.ID {
		t.Fatalf("the next message follows the leaf: %+v %v", m3b, err)
	}
	v, err := db.Versions(ctx, frodo, chat.ID, []ids.MessageID{m1.ID, m2.ID, m2b.ID, m3b.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(v) != 2 || !slices.Equal(v[m2.ID], []ids.MessageID{m2.ID, m2b.ID}) || !slices.Equal(v[m2b.ID], v[m2.ID]) {
		t.Fatalf("versions %v", v)
	}

	if _, err := db.SwitchVersion(ctx, frodo, m2.ID); err != nil {
		t.Fatal(err)
	}
	if got := page(0, 10); !slices.Equal(got, []string{"m1", "m2", "m3"}) {
		t.Fatalf("after switching: %q", got)
	}
	// Paging walks the path, not the chat's ids (m2b and m3b lie between).
	if got := page(m3.ID, 1); !slices.Equal(got, []string{"m2"}) {
		t.Fatalf("page before m3: %q", got)
	}
	path, err := db.ChatPath(ctx, frodo, chat.ID)
	if err != nil || !slices.Equal(contents(path), []string{"m1", "m2", "m3"}) {
		t.Fatalf("ChatPath %q %v", contents(path), err)
	}
	var walked []ids.MessageID
	db.WalkPath(ctx, frodo, chat.ID, func(e PathEntry) bool { walked = append(walked, e.ID); return true })
	if !slices.Equal(walked, []ids.MessageID{m3.ID, m2.ID, m1.ID}) {
		t.Fatalf("WalkPath saw %v", walked)
	}

	for _, leaf := range []any{nil, 999999} {
		if _, err := db.Write().Exec(`UPDATE chats SET leaf_id = ? WHERE id = ?`, leaf, chat.ID); err != nil {
			t.Fatal(err)
		}
		if got := page(0, 10); !slices.Equal(got, []string{"m1", "m2b", "m3b"}) {
			t.Fatalf("leaf %v reads as the newest: %q", leaf, got)
		}
	}

	// Deleting the chosen version chooses the one before it (none after).
	if _, err := db.DeleteVersion(ctx, frodo, m2b.ID); err != nil {
		t.Fatal(err)
	}
	if got := page(0, 10); !slices.Equal(got, []string{"m1", "m2", "m3"}) {
		t.Fatalf("after deleting the chosen version: %q", got)
	}
	if _, err := db.MessageByID(ctx, frodo, m3b.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("the deleted version's reply: %v", err)
	}
	if _, err := db.DeleteVersion(ctx, frodo, m2.ID); !errors.Is(err, ErrConflict) {
		t.Errorf("deleting the only version: %v", err)
	}
	sam := addUser(t, db, "sam")
	if _, err := db.SwitchVersion(ctx, sam, m2.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("another's message: %v", err)
	}
}
