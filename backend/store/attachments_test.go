package store

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/ids"
)

func addUpload(t *testing.T, db *DB, user ids.UserID, name string) Attachment {
	t.Helper()
	a, err := db.AddAttachment(context.Background(), user, Attachment{Kind: "text", MIME: "text/plain; charset=utf-8",
		DisplayName: name, StorageName: name + "-stored", Size: 5, Text: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestAttachmentsBindOnlyOwnUnsentUploads(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	sam, rosie := addUser(t, db, "sam"), addUser(t, db, "rosie")
	a1, a2 := addUpload(t, db, sam, "a1"), addUpload(t, db, sam, "a2")
	theirs := addUpload(t, db, rosie, "theirs")

	// A forged id of another user's upload: nothing is created.
	_, _, err := db.CreateChat(ctx, sam, NewChat{}, Message{Content: "look", Attachments: []ids.AttachmentID{a1.ID, theirs.ID}})
	wantNotFound(t, "binding another user's upload", err)
	if list, _ := db.ListChats(ctx, sam, ChatFilter{}); len(list) != 0 {
		t.Fatalf("a chat was created despite the forged id: %+v", list)
	}
	if got, _ := db.AttachmentByID(ctx, rosie, theirs.ID); got.MessageID != nil {
		t.Fatalf("rosie's upload was bound: %+v", got)
	}
	if _, err := db.AttachmentByID(ctx, sam, theirs.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("sam reads rosie's upload: %v", err)
	}

	chat, msg, err := db.CreateChat(ctx, sam, NewChat{}, Message{Content: "look", Attachments: []ids.AttachmentID{a2.ID, a1.ID}})
	if err != nil {
		t.Fatal(err)
	}
	by, err := db.AttachmentsOf(ctx, sam, []ids.MessageID{msg.ID})
	if err != nil {
		t.Fatal(err)
	}
	if got := by[msg.ID]; len(got) != 2 || got[0].ID != a2.ID || got[1].ID != a1.ID {
		t.Fatalf("attachments of the message = %+v, want a2, a1 in that order", got)
	}
	if other, _ := db.AttachmentsOf(ctx, rosie, []ids.MessageID{msg.ID}); len(other) != 0 {
		t.Fatalf("rosie sees sam's attachments: %+v", other)
	}
	// A sent upload cannot be sent again, nor deleted as an upload.
	_, err = db.AddMessage(ctx, sam, chat.ID, Message{Content: "again", Attachments: []ids.AttachmentID{a1.ID}})
	wantNotFound(t, "binding a sent attachment again", err)
	if _, err := db.DeleteUnbound(ctx, sam, a1.ID); !errors.Is(err, ErrConflict) {
		t.Fatalf("deleting a sent attachment: %v, want conflict", err)
	}
	if _, err := db.DeleteUnbound(ctx, sam, theirs.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("sam deletes rosie's upload: %v, want not found", err)
	}
	if name, err := db.DeleteUnbound(ctx, rosie, theirs.ID); err != nil || name != "theirs-stored" {
		t.Fatalf("rosie deletes her upload: %q %v", name, err)
	}

	// Editing: a1 stays, a2 is unbound, a new upload is bound.
	a3 := addUpload(t, db, sam, "a3")
	if err := db.SetMessageAttachments(ctx, sam, msg.ID, []ids.AttachmentID{a1.ID, a3.ID}); err != nil {
		t.Fatal(err)
	}
	by, _ = db.AttachmentsOf(ctx, sam, []ids.MessageID{msg.ID})
	if got := by[msg.ID]; len(got) != 2 || got[0].ID != a1.ID || got[1].ID != a3.ID {
		t.Fatalf("after the edit: %+v", got)
	}
	if err := db.SetMessageAttachments(ctx, rosie, msg.ID, nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("rosie edits sam's message's attachments: %v", err)
	}
	if n, _ := db.CountUnbound(ctx, sam); n != 1 {
		t.Fatalf("sam has %d unsent uploads, want 1 (a2)", n)
	}
}

func TestEmptyTrashAndSweepReleaseFiles(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	var released []string
	db.OnFilesReleased(func(names []string) { released = append(released, names...) })
	merry := addUser(t, db, "merry")
	a1, a2 := addUpload(t, db, merry, "one"), addUpload(t, db, merry, "two")
	chat, _, err := db.CreateChat(ctx, merry, NewChat{}, Message{Content: "first", Attachments: []ids.AttachmentID{a1.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddMessage(ctx, merry, chat.ID, Message{Content: "second", Attachments: []ids.AttachmentID{a2.ID}}); err != nil {
		t.Fatal(err)
	}
	first, _, _ := db.MessagesPage(ctx, merry, chat.ID, 0, 10)
	// A rewind to the first message releases the second's file.
	if _, err := db.DeleteMessagesAfter(ctx, merry, chat.ID, first[0].ID); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(released, []string{"two-stored"}) {
		t.Fatalf("after the rewind released %v", released)
	}
	if err := db.TrashChat(ctx, merry, chat.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.EmptyTrash(ctx, merry, time.Now().Add(time.Minute).UnixMilli()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(released, []string{"two-stored", "one-stored"}) {
		t.Fatalf("after emptying the trash released %v", released)
	}
	if _, err := db.AttachmentByID(ctx, merry, a1.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("attachment row survives its chat: %v", err)
	}

	stale := addUpload(t, db, merry, "stale")
	names, err := db.DeleteStaleUploads(ctx, time.Now().Add(-time.Hour).UnixMilli())
	if err != nil || len(names) != 0 {
		t.Fatalf("a fresh upload was swept: %v %v", names, err)
	}
	names, err = db.DeleteStaleUploads(ctx, time.Now().Add(time.Minute).UnixMilli())
	if err != nil || !slices.Equal(names, []string{"stale-stored"}) {
		t.Fatalf("sweep = %v %v", names, err)
	}
	if _, err := db.AttachmentByID(ctx, merry, stale.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("swept upload still there: %v", err)
	}
}

func TestAudioSettingsScopes(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	pippin := addUser(t, db, "pippin")
	if err := db.SetAudioSettings(ctx, AudioSettings{STTURL: "http://lan:9000/v1", TTSVoice: "alloy", Voices: []string{"alloy", "nova"}}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetAudioSettings(ctx, AudioSettings{UserID: &pippin, TTSURL: "https://tts.example/v1", TTSKeyEnc: "tok"}); err != nil {
		t.Fatal(err)
	}
	// Replacing keeps one row per scope.
	if err := db.SetAudioSettings(ctx, AudioSettings{STTURL: "http://lan:9001/v1", Voices: []string{"nova"}}); err != nil {
		t.Fatal(err)
	}
	inst, err := db.AudioSettings(ctx, nil)
	if err != nil || inst.STTURL != "http://lan:9001/v1" || !slices.Equal(inst.Voices, []string{"nova"}) {
		t.Fatalf("instance = %+v %v", inst, err)
	}
	mine, err := db.AudioSettings(ctx, &pippin)
	if err != nil || mine.TTSURL != "https://tts.example/v1" || mine.STTURL != "" {
		t.Fatalf("user = %+v %v", mine, err)
	}
	if ok, err := db.HasEncrypted(ctx); err != nil || !ok {
		t.Fatalf("an encrypted audio key is not seen by HasEncrypted: %v %v", ok, err)
	}
	var n int
	db.Read().QueryRow(`SELECT COUNT(*) FROM audio_settings`).Scan(&n)
	if n != 2 {
		t.Fatalf("%d rows, want 2", n)
	}
}
