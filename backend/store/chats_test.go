package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/ids"
)

func TestCreateChatIsAtomic(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	frodo := addUser(t, db, "frodo")
	chat, msg, err := db.CreateChat(ctx, frodo, NewChat{}, Message{Content: "Where is the ring?"})
	if err != nil {
		t.Fatal(err)
	}
	if msg.ChatID != chat.ID || msg.Role != RoleUser || msg.Status != StatusFinal || msg.ParentID != nil {
		t.Errorf("first message %+v", msg)
	}
	if !chat.TitleAuto || chat.Title != "" || chat.LastStatus != StatusFinal {
		t.Errorf("new chat %+v", chat)
	}
	// A first message that cannot be stored leaves no chat behind.
	if _, _, err := db.CreateChat(ctx, frodo, NewChat{Title: "x"}, Message{Role: "wizard"}); err == nil {
		t.Fatal("a message with an unknown role was accepted")
	}
	if _, _, err := db.CreateChat(ctx, frodo, NewChat{ModelID: ptr(ids.ModelID(42))}, Message{Content: "x"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown model: %v", err)
	}
	counts, _ := db.Counts(ctx)
	if counts["chats"] != 1 || counts["messages"] != 1 {
		t.Errorf("counts after failed creations: %v", counts)
	}
}

func TestUpdateChatClearVersusLeave(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	admin, _, c := adminConnection(t, db)
	db.SyncModels(ctx, c.ID, upstream("m1"))
	model := modelID(t, db, admin, "m1")
	folder, _ := db.CreateFolder(ctx, admin, "Work")
	chat, _, err := db.CreateChat(ctx, admin, NewChat{FolderID: &folder.ID, ModelID: &model,
		Params: Params{Temperature: ptr(0.2)}, SystemPrompt: "be brief"}, Message{Content: "hi"})
	if err != nil {
		t.Fatal(err)
	}

	// An empty patch, and one that touches another field, leave everything.
	got, err := db.UpdateChat(ctx, admin, chat.ID, ChatPatch{Pinned: ptr(true)})
	if err != nil {
		t.Fatal(err)
	}
	if got.FolderID == nil || *got.FolderID != folder.ID || got.ModelID == nil || *got.ModelID != model ||
		got.SystemPrompt != "be brief" || *got.Params.Temperature != 0.2 || !got.Pinned || !got.TitleAuto {
		t.Fatalf("leave: %+v", got)
	}
	if got.UpdatedAt != chat.UpdatedAt {
		t.Errorf("a patch moved updated_at from %d to %d", chat.UpdatedAt, got.UpdatedAt)
	}

	// Decoded from JSON: null clears, absent leaves.
	var p ChatPatch
	if err := json.Unmarshal([]byte(`{"Folder": null, "Title": "Plans", "Draft": "half a thought"}`), &p); err != nil {
		t.Fatal(err)
	}
	got, err = db.UpdateChat(ctx, admin, chat.ID, p)
	if err != nil {
		t.Fatal(err)
	}
	if got.FolderID != nil || got.ModelID == nil || got.Title != "Plans" || got.TitleAuto || got.Draft != "half a thought" {
		t.Fatalf("clear folder, set title: %+v", got)
	}
	if ok, err := db.SetAutoTitle(ctx, admin, chat.ID, "Generated"); ok || err != nil {
		t.Errorf("SetAutoTitle over a typed title: %v, %v", ok, err)
	}

	got, err = db.UpdateChat(ctx, admin, chat.ID, ChatPatch{Model: Null[ids.ModelID](), Folder: Some(folder.ID),
		Title: ptr(""), Params: &Params{}, SystemPrompt: ptr("")})
	if err != nil {
		t.Fatal(err)
	}
	if got.ModelID != nil || got.FolderID == nil || !got.TitleAuto || got.Params.Temperature != nil || got.SystemPrompt != "" {
		t.Fatalf("clear model and fields, set folder: %+v", got)
	}
	if ok, err := db.SetAutoTitle(ctx, admin, chat.ID, "Generated"); !ok || err != nil {
		t.Errorf("SetAutoTitle on an automatic title: %v, %v", ok, err)
	}
	if got, _ := db.ChatByID(ctx, admin, chat.ID); got.Title != "Generated" || !got.TitleAuto {
		t.Errorf("after auto title: %q auto=%v", got.Title, got.TitleAuto)
	}
}

func TestListChatsOrderAndStreamingMarker(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	frodo := addUser(t, db, "frodo")
	folder, _ := db.CreateFolder(ctx, frodo, "F")
	var chats []Chat
	for i, title := range []string{"old", "pinned", "filed", "new"} {
		nc := NewChat{Title: title}
		if title == "filed" {
			nc.FolderID = &folder.ID
		}
		c, _, err := db.CreateChat(ctx, frodo, nc, Message{Content: title})
		if err != nil {
			t.Fatal(err)
		}
		// Distinct, increasing activity times without sleeping.
		db.Write().Exec(`UPDATE chats SET updated_at = ? WHERE id = ?`, 1000+i, c.ID)
		chats = append(chats, c)
	}
	db.UpdateChat(ctx, frodo, chats[1].ID, ChatPatch{Pinned: ptr(true)})
	if _, err := db.AddMessage(ctx, frodo, chats[0].ID, Message{Role: RoleAssistant, Status: StatusStreaming}); err != nil {
		t.Fatal(err)
	}
	titles := func(f ChatFilter) string {
		t.Helper()
		cs, err := db.ListChats(ctx, frodo, f)
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, c := range cs {
			s = append(s, c.Title+":"+string(c.LastStatus))
		}
		return strings.Join(s, ",")
	}
	if got, want := titles(ChatFilter{}), "pinned:final,old:streaming,new:final,filed:final"; got != want {
		t.Errorf("all: %s, want %s", got, want)
	}
	if got, want := titles(ChatFilter{FolderID: &folder.ID}), "filed:final"; got != want {
		t.Errorf("folder: %s, want %s", got, want)
	}
	if got, want := titles(ChatFilter{NoFolder: true, Offset: 1, Limit: 1}), "old:streaming"; got != want {
		t.Errorf("unfiled page: %s, want %s", got, want)
	}
	if err := db.MarkUnread(ctx, frodo, chats[3].ID); err != nil {
		t.Fatal(err)
	}
	if c, _ := db.ChatByID(ctx, frodo, chats[3].ID); !c.Unread {
		t.Error("MarkUnread did not mark")
	}
	db.MarkRead(ctx, frodo, chats[3].ID)
	if c, _ := db.ChatByID(ctx, frodo, chats[3].ID); c.Unread {
		t.Error("MarkRead did not clear")
	}
}

func TestChatsAndMessagesRefuseOtherUsers(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	frodo, sam := addUser(t, db, "frodo"), addUser(t, db, "sam")
	chat, msg, err := db.CreateChat(ctx, frodo, NewChat{Title: "secret"}, Message{Content: "my precious"})
	if err != nil {
		t.Fatal(err)
	}
	samFolder, _ := db.CreateFolder(ctx, sam, "mine")
	frodoFolder, _ := db.CreateFolder(ctx, frodo, "mine")
	checks := map[string]func() error{
		"ChatByID":             func() error { _, err := db.ChatByID(ctx, sam, chat.ID); return err },
		"UpdateChat":           func() error { _, err := db.UpdateChat(ctx, sam, chat.ID, ChatPatch{Pinned: ptr(true)}); return err },
		"UpdateChat empty":     func() error { _, err := db.UpdateChat(ctx, sam, chat.ID, ChatPatch{}); return err },
		"SetAutoTitle":         func() error { _, err := db.SetAutoTitle(ctx, sam, chat.ID, "x"); return err },
		"MarkRead":             func() error { return db.MarkRead(ctx, sam, chat.ID) },
		"MarkUnread":           func() error { return db.MarkUnread(ctx, sam, chat.ID) },
		"TrashChat":            func() error { return db.TrashChat(ctx, sam, chat.ID) },
		"RestoreChat":          func() error { return db.RestoreChat(ctx, sam, chat.ID) },
		"AddMessage":           func() error { _, err := db.AddMessage(ctx, sam, chat.ID, Message{Content: "x"}); return err },
		"MessagesPage":         func() error { _, _, err := db.MessagesPage(ctx, sam, chat.ID, 0, 10); return err },
		"ChatPath":             func() error { _, err := db.ChatPath(ctx, sam, chat.ID); return err },
		"MessageByID":          func() error { _, err := db.MessageByID(ctx, sam, msg.ID); return err },
		"UpdateMessageContent": func() error { _, err := db.UpdateMessageContent(ctx, sam, msg.ID, "x"); return err },
		"DeleteMessagesAfter":  func() error { _, err := db.DeleteMessagesAfter(ctx, sam, chat.ID, msg.ID); return err },
		"DeleteMessagesAfter other chat": func() error {
			own, _, _ := db.CreateChat(ctx, sam, NewChat{}, Message{Content: "x"})
			_, err := db.DeleteMessagesAfter(ctx, sam, own.ID, msg.ID)
			return err
		},
		"UpdateChat into another's folder": func() error {
			_, err := db.UpdateChat(ctx, frodo, chat.ID, ChatPatch{Folder: Some(samFolder.ID)})
			return err
		},
		"UpdateChat by another into own folder": func() error {
			_, err := db.UpdateChat(ctx, sam, chat.ID, ChatPatch{Folder: Some(frodoFolder.ID)})
			return err
		},
	}
	for name, f := range checks {
		wantNotFound(t, name, f())
	}
	if n, err := db.EmptyTrash(ctx, sam, time.Now().UnixMilli()+1); n != 0 || err != nil {
		t.Errorf("EmptyTrash by another user: %d, %v", n, err)
	}
	if hits, _ := db.Search(ctx, sam, "precious", 10); len(hits) != 0 {
		t.Errorf("sam finds frodo's message: %+v", hits)
	}
	got, err := db.ChatByID(ctx, frodo, chat.ID)
	if err != nil || got.Pinned || got.DeletedAt != nil || got.Title != "secret" || got.FolderID != nil {
		t.Errorf("frodo's chat changed: %+v, %v", got, err)
	}
	if m, _ := db.MessageByID(ctx, frodo, msg.ID); m.Content != "my precious" {
		t.Errorf("frodo's message changed: %+v", m)
	}
}

func TestTrashAndEmptyTrash(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	frodo, sam := addUser(t, db, "frodo"), addUser(t, db, "sam")
	keep, _, _ := db.CreateChat(ctx, frodo, NewChat{Title: "keep mithril"}, Message{Content: "mithril coat"})
	gone, first, _ := db.CreateChat(ctx, frodo, NewChat{Title: "gone mithril"}, Message{Content: "mithril shirt"})
	for i := range 5 {
		role := RoleAssistant
		if i%2 == 1 {
			role = RoleUser
		}
		if _, err := db.AddMessage(ctx, frodo, gone.ID, Message{Role: role, Content: "more mithril talk"}); err != nil {
			t.Fatal(err)
		}
	}
	samChat, _, _ := db.CreateChat(ctx, sam, NewChat{Title: "sam mithril"}, Message{Content: "mithril too"})
	db.TrashChat(ctx, sam, samChat.ID)

	if err := db.TrashChat(ctx, frodo, gone.ID); err != nil {
		t.Fatal(err)
	}
	c, _ := db.ChatByID(ctx, frodo, gone.ID)
	if c.DeletedAt == nil {
		t.Fatal("trashed chat has no deleted_at")
	}
	trashedAt := *c.DeletedAt
	if err := db.TrashChat(ctx, frodo, gone.ID); err != nil {
		t.Fatal(err)
	}
	if c, _ := db.ChatByID(ctx, frodo, gone.ID); *c.DeletedAt != trashedAt {
		t.Error("trashing again changed when it was trashed")
	}
	list, _ := db.ListChats(ctx, frodo, ChatFilter{})
	trash, _ := db.ListTrash(ctx, frodo)
	if len(list) != 1 || list[0].ID != keep.ID || len(trash) != 1 || trash[0].ID != gone.ID {
		t.Fatalf("list %v trash %v", list, trash)
	}
	hits, err := db.Search(ctx, frodo, "mithril", 20)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.ChatID != keep.ID {
			t.Errorf("search found a trashed or foreign chat: %+v", h)
		}
	}
	if len(hits) != 2 {
		t.Errorf("hits %d, want the title and the message of the kept chat", len(hits))
	}

	if err := db.RestoreChat(ctx, frodo, gone.ID); err != nil {
		t.Fatal(err)
	}
	if hits, _ := db.Search(ctx, frodo, "mithril", 20); len(hits) != 2+7 {
		t.Errorf("after restore %d hits, want 9", len(hits))
	}
	db.TrashChat(ctx, frodo, gone.ID)

	if n, err := db.EmptyTrash(ctx, frodo, trashedAt-1); n != 0 || err != nil {
		t.Fatalf("EmptyTrash before the chat was trashed: %d, %v", n, err)
	}
	if n, err := db.EmptyTrash(ctx, frodo, time.Now().UnixMilli()); n != 1 || err != nil {
		t.Fatalf("EmptyTrash: %d, %v", n, err)
	}
	_, err = db.ChatByID(ctx, frodo, gone.ID)
	wantNotFound(t, "ChatByID after EmptyTrash", err)
	_, err = db.MessageByID(ctx, frodo, first.ID)
	wantNotFound(t, "MessageByID after EmptyTrash", err)
	counts, _ := db.Counts(ctx)
	if counts["chats"] != 2 || counts["messages"] != 2 {
		t.Errorf("counts after EmptyTrash: %v (sam's trash must stay)", counts)
	}
	ftsIntegrity(t, db)
	var indexed int
	db.Read().QueryRow(`SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'mithril'`).Scan(&indexed)
	if indexed != 2 {
		t.Errorf("index holds %d mithril messages, want 2", indexed)
	}
}
