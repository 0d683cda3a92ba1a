package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/llembas/lembas/backend/ids"
)

func contents(ms []Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Content)
	}
	return out
}

func TestMessagesPage(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	frodo := addUser(t, db, "frodo")
	chat, first, err := db.CreateChat(ctx, frodo, NewChat{}, Message{Content: "m1"})
	if err != nil {
		t.Fatal(err)
	}
	prev := first
	for i := 2; i <= 7; i++ {
		m, err := db.AddMessage(ctx, frodo, chat.ID, Message{Content: fmt.Sprintf("m%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		if m.ParentID == nil || *m.ParentID != prev.ID {
			t.Fatalf("m%d parent %v, want %d", i, m.ParentID, prev.ID)
		}
		prev = m
	}
	var before ids.MessageID
	var pages [][]string
	for {
		page, more, err := db.MessagesPage(ctx, frodo, chat.ID, before, 3)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, contents(page))
		if !more {
			break
		}
		before = page[0].ID
	}
	want := [][]string{{"m5", "m6", "m7"}, {"m2", "m3", "m4"}, {"m1"}}
	if fmt.Sprint(pages) != fmt.Sprint(want) {
		t.Errorf("pages %v, want %v", pages, want)
	}
	page, more, _ := db.MessagesPage(ctx, frodo, chat.ID, 0, 7)
	if len(page) != 7 || more {
		t.Errorf("exact page: %d messages, more=%v", len(page), more)
	}
}

func TestChatPathLeavesOutReasoning(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	frodo := addUser(t, db, "frodo")
	chat, _, _ := db.CreateChat(ctx, frodo, NewChat{}, Message{Content: "q1"})
	db.AddMessage(ctx, frodo, chat.ID, Message{Role: RoleAssistant, Content: "a1", Reasoning: "thinking hard", ModelLabel: "qwen"})
	db.AddMessage(ctx, frodo, chat.ID, Message{Content: "q2"})
	path, err := db.ChatPath(ctx, frodo, chat.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := contents(path); !slices.Equal(got, []string{"q1", "a1", "q2"}) {
		t.Fatalf("path %v", got)
	}
	for _, m := range path {
		if m.Reasoning != "" {
			t.Errorf("reasoning replayed: %+v", m)
		}
	}
	if path[1].Role != RoleAssistant || path[1].ModelLabel != "qwen" {
		t.Errorf("assistant message %+v", path[1])
	}
	full, _ := db.MessageByID(ctx, frodo, path[1].ID)
	if full.Reasoning != "thinking hard" {
		t.Errorf("reasoning not stored: %q", full.Reasoning)
	}
	empty, _, _ := db.CreateChat(ctx, frodo, NewChat{}, Message{Content: "only"})
	if path, _ := db.ChatPath(ctx, frodo, empty.ID); len(path) != 1 {
		t.Errorf("one-message path: %v", contents(path))
	}
}

func TestDeleteMessagesAfterRewinds(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	frodo := addUser(t, db, "frodo")
	chat, q1, _ := db.CreateChat(ctx, frodo, NewChat{}, Message{Content: "q1 lembas"})
	db.AddMessage(ctx, frodo, chat.ID, Message{Role: RoleAssistant, Content: "a1 lembas"})
	db.AddMessage(ctx, frodo, chat.ID, Message{Content: "q2 lembas"})
	db.AddMessage(ctx, frodo, chat.ID, Message{Role: RoleAssistant, Content: "a2 lembas", Status: StatusStreaming})
	other, _, _ := db.CreateChat(ctx, frodo, NewChat{}, Message{Content: "other lembas"})

	n, err := db.DeleteMessagesAfter(ctx, frodo, chat.ID, q1.ID)
	if err != nil || n != 3 {
		t.Fatalf("DeleteMessagesAfter: %d, %v", n, err)
	}
	if _, err := db.UpdateMessageContent(ctx, frodo, q1.ID, "q1 edited"); err != nil {
		t.Fatal(err)
	}
	path, _ := db.ChatPath(ctx, frodo, chat.ID)
	if got := contents(path); !slices.Equal(got, []string{"q1 edited"}) {
		t.Errorf("after rewind %v", got)
	}
	if m, _ := db.AddMessage(ctx, frodo, chat.ID, Message{Role: RoleAssistant, Content: "a1'"}); m.ParentID == nil || *m.ParentID != q1.ID {
		t.Errorf("reply after rewind has parent %v, want %d", m.ParentID, q1.ID)
	}
	if page, _, _ := db.MessagesPage(ctx, frodo, other.ID, 0, 10); len(page) != 1 {
		t.Errorf("the other chat lost messages: %v", contents(page))
	}
	hits, _ := db.Search(ctx, frodo, "lembas", 10)
	if len(hits) != 1 || hits[0].ChatID != other.ID {
		t.Errorf("search after rewind and edit: %+v", hits)
	}
	ftsIntegrity(t, db)
}

// messageIDs returns the ids of the message hits of a search.
func messageIDs(t *testing.T, db *DB, user ids.UserID, q string) []ids.MessageID {
	t.Helper()
	hits, err := db.Search(context.Background(), user, q, 50)
	if err != nil {
		t.Fatal(err)
	}
	var out []ids.MessageID
	for _, h := range hits {
		if h.MessageID != 0 {
			out = append(out, h.MessageID)
		}
	}
	return out
}

func TestCheckpointAndSearchIndex(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	frodo := addUser(t, db, "frodo")
	chat, _, _ := db.CreateChat(ctx, frodo, NewChat{}, Message{Content: "tell me of the ents"})
	reply, err := db.AddMessage(ctx, frodo, chat.ID, Message{Role: RoleAssistant, Status: StatusStreaming, ModelLabel: "m"})
	if err != nil {
		t.Fatal(err)
	}
	other, _ := db.AddMessage(ctx, frodo, chat.ID, Message{Role: RoleAssistant, Status: StatusStreaming})
	if got, _ := db.ChatByID(ctx, frodo, chat.ID); got.LastStatus != StatusStreaming {
		t.Errorf("LastStatus %q while streaming", got.LastStatus)
	}

	stale, err := db.Checkpoint(ctx, []MessageUpdate{
		{ID: reply.ID, Content: "Treebeard is the oldest", Reasoning: "recall", Status: StatusStreaming},
		{ID: other.ID, Content: "Fangorn forest"},
	})
	if err != nil || len(stale) != 0 {
		t.Fatalf("checkpoint: %v, %v", stale, err)
	}
	if got := messageIDs(t, db, frodo, "treebeard"); len(got) != 0 {
		t.Errorf("a streaming reply is searchable: %v", got)
	}
	if m, _ := db.MessageByID(ctx, frodo, reply.ID); m.Content != "Treebeard is the oldest" || m.Reasoning != "recall" {
		t.Errorf("checkpointed %+v", m)
	}

	stale, err = db.Checkpoint(ctx, []MessageUpdate{
		{ID: reply.ID, Content: "Treebeard is the oldest ent", Status: StatusFinal, Metrics: []byte(`{"tokens":7}`)},
		{ID: other.ID, Content: "Fangorn forest", Status: StatusError, Error: "upstream 500"},
		{ID: 9999, Content: "gone"},
	})
	if err != nil || !slices.Equal(stale, []ids.MessageID{9999}) {
		t.Fatalf("final checkpoint: stale %v, %v", stale, err)
	}
	if got := messageIDs(t, db, frodo, "treebeard"); !slices.Equal(got, []ids.MessageID{reply.ID}) {
		t.Errorf("final reply hits %v, want [%d]", got, reply.ID)
	}
	var rows int
	db.Read().QueryRow(`SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'treebeard OR fangorn'`).Scan(&rows)
	if rows != 2 {
		t.Errorf("index has %d rows for the two ended replies, want 2", rows)
	}
	m, _ := db.MessageByID(ctx, frodo, reply.ID)
	if m.Status != StatusFinal || string(m.Metrics) != `{"tokens":7}` {
		t.Errorf("final message %+v", m)
	}
	if m, _ := db.MessageByID(ctx, frodo, other.ID); m.Status != StatusError || m.Error != "upstream 500" || string(m.Metrics) != "{}" {
		t.Errorf("errored message %+v", m)
	}

	// An ended reply is not written again by a late checkpoint.
	stale, _ = db.Checkpoint(ctx, []MessageUpdate{{ID: reply.ID, Content: "overwritten"}})
	if !slices.Equal(stale, []ids.MessageID{reply.ID}) {
		t.Errorf("late checkpoint stale = %v", stale)
	}
	if _, err := db.Checkpoint(ctx, []MessageUpdate{{ID: reply.ID, Status: "bogus"}}); err == nil {
		t.Error("an unknown status was accepted")
	}

	// A user edit re-indexes.
	if _, err := db.UpdateMessageContent(ctx, frodo, reply.ID, "Quickbeam is hasty"); err != nil {
		t.Fatal(err)
	}
	if got := messageIDs(t, db, frodo, "treebeard"); len(got) != 0 {
		t.Errorf("old text still found after an edit: %v", got)
	}
	if got := messageIDs(t, db, frodo, "quickbeam"); !slices.Equal(got, []ids.MessageID{reply.ID}) {
		t.Errorf("edited text hits %v", got)
	}
	ftsIntegrity(t, db)
}

func TestInterruptStreaming(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	frodo := addUser(t, db, "frodo")
	chat, _, _ := db.CreateChat(ctx, frodo, NewChat{}, Message{Content: "q"})
	a, _ := db.AddMessage(ctx, frodo, chat.ID, Message{Role: RoleAssistant, Status: StatusStreaming})
	db.Checkpoint(ctx, []MessageUpdate{{ID: a.ID, Content: "half an answer about palantiri"}})
	if _, err := db.UpdateMessageContent(ctx, frodo, a.ID, "edit"); !errors.Is(err, ErrConflict) {
		t.Errorf("edit of a streaming message: %v", err)
	}
	n, err := db.InterruptStreaming(ctx)
	if err != nil || n != 1 {
		t.Fatalf("InterruptStreaming: %d, %v", n, err)
	}
	m, _ := db.MessageByID(ctx, frodo, a.ID)
	if m.Status != StatusInterrupted || m.Content != "half an answer about palantiri" {
		t.Errorf("after interrupt %+v", m)
	}
	if got := messageIDs(t, db, frodo, "palantiri"); !slices.Equal(got, []ids.MessageID{a.ID}) {
		t.Errorf("interrupted reply not searchable: %v", got)
	}
	if n, _ := db.InterruptStreaming(ctx); n != 0 {
		t.Errorf("second InterruptStreaming found %d", n)
	}
	ftsIntegrity(t, db)
}

// AddTurn writes a send whole or not at all: a new chat comes with its
// provisional (still automatic) title, the turn and the reply row after
// it; a chat of someone else's, one in the trash or a model the user may
// not see refuses the whole send, leaving the chat as it was.
func TestAddTurnIsAllOrNothing(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	frodo, sam := addUser(t, db, "frodo"), addUser(t, db, "sam")
	turn := Turn{Title: "Hello the…", User: Message{Role: RoleUser, Content: "Hello there"},
		Reply: Message{Role: RoleAssistant, Status: StatusStreaming}}
	chat, um, rm, err := db.AddTurn(ctx, frodo, turn)
	if err != nil {
		t.Fatal(err)
	}
	if chat.ID == 0 || chat.Title != "Hello the…" || !chat.TitleAuto || chat.LastStatus != StatusStreaming {
		t.Errorf("new chat %+v", chat)
	}
	if rm.ParentID == nil || *rm.ParentID != um.ID || um.ChatID != chat.ID {
		t.Errorf("turn %+v, reply %+v", um, rm)
	}

	draft := "half a thought"
	if chat, err = db.UpdateChat(ctx, frodo, chat.ID, ChatPatch{Draft: &draft}); err != nil {
		t.Fatal(err)
	}
	count := func() (n int) {
		if err := db.Read().QueryRow(`SELECT COUNT(*) FROM messages`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := count()
	unseen := ids.ModelID(99)
	turn.Chat = chat
	for name, try := range map[string]func() error{
		"another's chat": func() error { _, _, _, err := db.AddTurn(ctx, sam, turn); return err },
		"a hidden model": func() error {
			t := turn
			t.Model = &unseen
			_, _, _, err := db.AddTurn(ctx, frodo, t)
			return err
		},
		"a trashed chat": func() error {
			if err := db.TrashChat(ctx, frodo, chat.ID); err != nil {
				return err
			}
			defer db.RestoreChat(ctx, frodo, chat.ID)
			_, _, _, err := db.AddTurn(ctx, frodo, turn)
			if !errors.Is(err, ErrConflict) {
				return fmt.Errorf("want ErrConflict: %w", err)
			}
			return err
		},
	} {
		if err := try(); err == nil {
			t.Errorf("%s: the turn was added", name)
		}
		got, err := db.ChatByID(ctx, frodo, chat.ID)
		if err != nil {
			t.Fatal(err)
		}
		if n := count(); n != before || got.Draft != draft || got.UpdatedAt != chat.UpdatedAt {
			t.Errorf("%s: %d messages (want %d), draft %q, updated_at %d (want %d)", name, n, before, got.Draft, got.UpdatedAt, chat.UpdatedAt)
		}
	}

	next, um2, rm2, err := db.AddTurn(ctx, frodo, turn)
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := db.ChatByID(ctx, frodo, chat.ID)
	if next.Draft != "" || stored.Draft != "" || next.UpdatedAt != stored.UpdatedAt || next.LastStatus != stored.LastStatus {
		t.Errorf("returned %+v, stored %+v", next, stored)
	}
	if um2.ParentID == nil || *um2.ParentID != rm.ID || *rm2.ParentID != um2.ID {
		t.Errorf("the second turn's parents: %v, %v", um2.ParentID, rm2.ParentID)
	}
}
