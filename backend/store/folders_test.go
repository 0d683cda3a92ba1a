package store

import (
	"context"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/ids"
)

func folderNames(t *testing.T, db *DB, user ids.UserID) string {
	t.Helper()
	fs, err := db.ListFolders(context.Background(), user)
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, f := range fs {
		s = append(s, f.Name)
	}
	return strings.Join(s, ",")
}

func TestFolders(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	frodo, sam := addUser(t, db, "frodo"), addUser(t, db, "sam")
	var fs []Folder
	for _, n := range []string{"Shire", "Rivendell", "Moria"} {
		f, err := db.CreateFolder(ctx, frodo, n)
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, f)
	}
	if _, err := db.CreateFolder(ctx, sam, "Garden"); err != nil {
		t.Fatal(err)
	}
	if got := folderNames(t, db, frodo); got != "Shire,Rivendell,Moria" {
		t.Fatalf("folders %s", got)
	}
	if err := db.MoveFolder(ctx, frodo, fs[2].ID, 0); err != nil {
		t.Fatal(err)
	}
	if err := db.RenameFolder(ctx, frodo, fs[0].ID, "Bag End"); err != nil {
		t.Fatal(err)
	}
	if got := folderNames(t, db, frodo); got != "Moria,Bag End,Rivendell" {
		t.Fatalf("after move and rename: %s", got)
	}
	list, _ := db.ListFolders(ctx, frodo)
	for i, f := range list {
		if f.Position != int64(i) {
			t.Errorf("folder %s at position %d, want %d", f.Name, f.Position, i)
		}
	}
	if err := db.MoveFolder(ctx, frodo, fs[2].ID, 99); err != nil {
		t.Fatal(err)
	}
	if got := folderNames(t, db, frodo); got != "Bag End,Rivendell,Moria" {
		t.Fatalf("after move past the end: %s", got)
	}

	// Deleting a folder keeps its chats, out of any folder.
	chat, _, err := db.CreateChat(ctx, frodo, NewChat{FolderID: &fs[1].ID}, Message{Content: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteFolder(ctx, frodo, fs[1].ID); err != nil {
		t.Fatal(err)
	}
	got, err := db.ChatByID(ctx, frodo, chat.ID)
	if err != nil || got.FolderID != nil {
		t.Fatalf("chat after its folder was deleted: %+v, %v", got, err)
	}

	wantNotFound(t, "RenameFolder of another user's", db.RenameFolder(ctx, sam, fs[0].ID, "mine"))
	wantNotFound(t, "MoveFolder of another user's", db.MoveFolder(ctx, sam, fs[0].ID, 0))
	wantNotFound(t, "DeleteFolder of another user's", db.DeleteFolder(ctx, sam, fs[0].ID))
	_, err = db.FolderByID(ctx, sam, fs[0].ID)
	wantNotFound(t, "FolderByID of another user's", err)
	_, _, err = db.CreateChat(ctx, sam, NewChat{FolderID: &fs[0].ID}, Message{Content: "x"})
	wantNotFound(t, "CreateChat in another user's folder", err)
	if got := folderNames(t, db, frodo); got != "Bag End,Moria" {
		t.Errorf("frodo's folders changed by sam: %s", got)
	}
}
