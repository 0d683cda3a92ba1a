package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/llembas/lembas/backend/ids"
)

// WalkPath gives ChatPath's messages newest first, across its batches, with
// their sizes and their attachments'; CountTurns and PathMessages agree.
func TestWalkPathNewestFirst(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	frodo := addUser(t, db, "frodo")
	sam := addUser(t, db, "sam")
	chat, _, err := db.CreateChat(ctx, frodo, NewChat{}, Message{Role: RoleUser, Content: "q0"})
	if err != nil {
		t.Fatal(err)
	}
	img, err := db.AddAttachment(ctx, frodo, Attachment{Kind: "image", MIME: "image/png", StorageName: "a1", Size: 300, Width: 10, Height: 20})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := db.AddAttachment(ctx, frodo, Attachment{Kind: "text", MIME: "text/plain", StorageName: "a2", Size: 5, Text: "héllo"})
	if err != nil {
		t.Fatal(err)
	}
	const n = 150 // more than two batches
	for i := 1; i < n; i++ {
		m := Message{Role: RoleAssistant, Content: fmt.Sprintf("a%d", i)}
		if i%2 == 0 {
			m.Role = RoleUser
		}
		if i == 100 {
			m.Attachments = []ids.AttachmentID{img.ID, doc.ID}
		}
		if i == n-1 {
			m = Message{Role: RoleAssistant, Status: StatusStreaming}
		}
		if _, err := db.AddMessage(ctx, frodo, chat.ID, m); err != nil {
			t.Fatal(err)
		}
	}
	path, err := db.ChatPath(ctx, frodo, chat.ID)
	if err != nil {
		t.Fatal(err)
	}
	var walked []PathEntry
	if err := db.WalkPath(ctx, frodo, chat.ID, func(e PathEntry) bool { walked = append(walked, e); return true }); err != nil {
		t.Fatal(err)
	}
	if len(walked) != len(path) {
		t.Fatalf("walked %d of %d messages", len(walked), len(path))
	}
	for i, e := range walked {
		m := path[len(path)-1-i]
		if e.ID != m.ID || e.Role != m.Role || e.Status != m.Status || e.Bytes != int64(len(m.Content)) {
			t.Fatalf("entry %d is %+v, message %+v", i, e, m)
		}
		want := PathEntry{ID: m.ID, Role: m.Role, Status: m.Status, Bytes: e.Bytes}
		if m.Content == "u100" || m.Content == "a100" {
			want.DocBytes, want.Images, want.ImageBytes, want.ImagePixels = int64(len("héllo")), 1, 300, 200
		}
		if e != want {
			t.Errorf("entry %+v, want %+v", e, want)
		}
	}

	// Stopping early stops; the rest is counted, not walked.
	var seen []ids.MessageID
	db.WalkPath(ctx, frodo, chat.ID, func(e PathEntry) bool { seen = append(seen, e.ID); return len(seen) < 3 })
	if len(seen) != 3 {
		t.Errorf("walked %d after stopping at 3", len(seen))
	}
	turns, err := db.CountTurns(ctx, frodo, chat.ID, seen[2])
	if err != nil || turns != n-2 { // all but the streaming reply and the one after seen[2]
		t.Errorf("CountTurns = %d, %v; want %d", turns, err, n-2)
	}
	got, err := db.PathMessages(ctx, frodo, chat.ID, []ids.MessageID{seen[2], seen[1]})
	if err != nil || len(got) != 2 || got[0].ID != seen[2] || got[1].ID != seen[1] {
		t.Errorf("PathMessages = %+v, %v", got, err)
	}
	if !slices.Equal(contents(got), []string{path[len(path)-3].Content, path[len(path)-2].Content}) {
		t.Errorf("contents %q", contents(got))
	}

	// From a message back: the same entries as from the newest, minus the
	// newer ones; a message of no such chat is not found.
	var from []ids.MessageID
	if err := db.WalkPathFrom(ctx, frodo, chat.ID, walked[70].ID, func(e PathEntry) bool { from = append(from, e.ID); return true }); err != nil {
		t.Fatal(err)
	}
	var want []ids.MessageID
	for _, e := range walked[70:] {
		want = append(want, e.ID)
	}
	if !slices.Equal(from, want) {
		t.Errorf("walked from entry 70: %d entries, want %d", len(from), len(want))
	}
	other, _, err := db.CreateChat(ctx, frodo, NewChat{}, Message{Role: RoleUser, Content: "elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.WalkPathFrom(ctx, frodo, other.ID, walked[70].ID, func(PathEntry) bool { return true }); !errors.Is(err, ErrNotFound) {
		t.Errorf("walked from another chat's message: %v", err)
	}

	// Another user's chat is not found, by any of them.
	for name, err := range map[string]error{
		"WalkPath":     db.WalkPath(ctx, sam, chat.ID, func(PathEntry) bool { return true }),
		"WalkPathFrom": db.WalkPathFrom(ctx, sam, chat.ID, seen[0], func(PathEntry) bool { return true }),
		"CountTurns":   func() error { _, err := db.CountTurns(ctx, sam, chat.ID, seen[0]); return err }(),
		"PathMessages": func() error { _, err := db.PathMessages(ctx, sam, chat.ID, seen); return err }(),
	} {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("%s as another user: %v", name, err)
		}
	}
}
