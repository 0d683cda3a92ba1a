package chat_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/attach"
	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/connections"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// secondModel adds another connection to the same endpoint and returns its
// model, for a send that switches the chat's model.
func (e *env) secondModel() ids.ModelID {
	e.t.Helper()
	view, err := e.c.Connections.Create(context.Background(), store.Actor{User: e.user, Admin: true},
		connections.Input{Name: "fake 2", BaseURL: e.llm.URL()})
	if err != nil {
		e.t.Fatal(err)
	}
	models, _, err := e.c.DB.ListModels(context.Background(), e.user, store.ModelFilter{})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, m := range models {
		if m.ConnectionID == view.ID {
			return m.ID
		}
	}
	e.t.Fatalf("no model on the second connection: %+v", models)
	return 0
}

// upload stores an unsent text file of the user's.
func (e *env) upload(name, text string) store.Attachment {
	e.t.Helper()
	a, err := e.c.DB.AddAttachment(context.Background(), e.user, store.Attachment{Kind: "text",
		MIME: "text/plain; charset=utf-8", DisplayName: name, StorageName: attach.StorageName(),
		Size: int64(len(text)), Text: text})
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

// sendState is what a send changes, to compare before and after.
type sendState struct {
	chats, messages, unbound int
	chat                     store.Chat
}

func (e *env) sendState(id ids.ChatID) sendState {
	e.t.Helper()
	var s sendState
	db := e.c.DB.Read()
	for q, v := range map[string]*int{
		`SELECT COUNT(*) FROM chats`:                                &s.chats,
		`SELECT COUNT(*) FROM messages`:                             &s.messages,
		`SELECT COUNT(*) FROM attachments WHERE message_id IS NULL`: &s.unbound,
	} {
		if err := db.QueryRow(q).Scan(v); err != nil {
			e.t.Fatal(err)
		}
	}
	var err error
	if s.chat, err = e.c.DB.ChatByID(context.Background(), e.user, id); err != nil {
		e.t.Fatal(err)
	}
	return s
}

// A send is written whole or not at all: when the reply's row cannot be
// inserted, after the turn was (inside the same transaction), nothing of
// the send is stored — no turn, no chat, the draft and the model as they
// were, the files still unsent — and no reply starts. The turn, the
// chat's changes and the reply row were three transactions, and a failure
// in the last left the turn stored without a reply and the draft gone.
func TestFailedSendStoresNothing(t *testing.T) {
	e := setup(t)
	ctx := t.Context()
	first := e.send(0, "Hello")
	id := first.Chat.ID
	e.wait(id)
	e.c.Chat.Wait() // the automatic title
	other := e.secondModel()
	draft := "half a thought"
	if _, err := e.c.DB.UpdateChat(ctx, e.user, id, store.ChatPatch{Draft: &draft}); err != nil {
		t.Fatal(err)
	}
	file := e.upload("notes.txt", "Some notes.")
	before := e.sendState(id)
	requests := len(e.llm.Requests())

	// A real failure inside the transaction, after the turn's insert.
	db := e.c.DB.Write()
	if _, err := db.Exec(`CREATE TRIGGER test_no_replies BEFORE INSERT ON messages WHEN NEW.role = 'assistant'
		BEGIN SELECT RAISE(ABORT, 'no replies today'); END`); err != nil {
		t.Fatal(err)
	}
	for _, in := range []chat.SendInput{
		{ChatID: id, ModelID: other, Content: "And then?", Attachments: []ids.AttachmentID{file.ID}},
		{ModelID: e.model, Content: "A new chat", Attachments: []ids.AttachmentID{file.ID}},
	} {
		if _, err := e.c.Chat.Send(ctx, e.user, in); err == nil {
			t.Fatalf("Send(%+v) succeeded with the reply row refused", in)
		}
		if after := e.sendState(id); !sameState(after, before) {
			t.Errorf("Send(chat %d) failed but changed what is stored:\n before %+v\n after  %+v", in.ChatID, before, after)
		}
		if e.c.Gen.Running(id) {
			t.Errorf("Send(chat %d) failed but a reply is running", in.ChatID)
		}
	}
	if n := len(e.llm.Requests()); n != requests {
		t.Errorf("the endpoint was asked %d times by failed sends", n-requests)
	}

	// Nothing was left behind that stops the same send from working.
	if _, err := db.Exec(`DROP TRIGGER test_no_replies`); err != nil {
		t.Fatal(err)
	}
	turn, err := e.c.Chat.Send(ctx, e.user, chat.SendInput{ChatID: id, ModelID: other, Content: "And then?",
		Attachments: []ids.AttachmentID{file.ID}})
	if err != nil {
		t.Fatal(err)
	}
	e.wait(id)
	if len(turn.Files) != 1 || turn.Files[0].ID != file.ID {
		t.Errorf("the turn's files: %+v", turn.Files)
	}
}

func (s sendState) String() string {
	model := ids.ModelID(0)
	if s.chat.ModelID != nil {
		model = *s.chat.ModelID
	}
	return fmt.Sprintf("%d chats, %d messages, %d unsent files; chat draft %q, model %d, updated_at %d, last status %q",
		s.chats, s.messages, s.unbound, s.chat.Draft, model, s.chat.UpdatedAt, s.chat.LastStatus)
}

func sameState(a, b sendState) bool {
	return a.chats == b.chats && a.messages == b.messages && a.unbound == b.unbound &&
		a.chat.Draft == b.chat.Draft && a.chat.UpdatedAt == b.chat.UpdatedAt &&
		a.chat.ModelID != nil && b.chat.ModelID != nil && *a.chat.ModelID == *b.chat.ModelID &&
		a.chat.LastStatus == b.chat.LastStatus
}

// What Send returns is what it stored: the chat with its draft cleared, its
// new model and its new activity time, the turn with its files, and the
// reply row streaming.
func TestSendReturnsWhatItStored(t *testing.T) {
	e := setup(t)
	ctx := t.Context()
	first := e.send(0, "Hello")
	id := first.Chat.ID
	e.wait(id)
	e.c.Chat.Wait()
	if !first.Chat.TitleAuto || first.Chat.Title != "Hello" || first.Chat.LastStatus != store.StatusStreaming {
		t.Errorf("new chat %+v", first.Chat)
	}
	other := e.secondModel()
	draft := "half a thought"
	if _, err := e.c.DB.UpdateChat(ctx, e.user, id, store.ChatPatch{Draft: &draft}); err != nil {
		t.Fatal(err)
	}
	a, b := e.upload("a.txt", "First file."), e.upload("b.txt", "Second file.")
	// The reply holds back its first byte until the stored chat is read:
	// its checkpoints move the chat's updated_at.
	gate := make(chan struct{})
	e.llm.Enqueue(fakellm.Func(func(fakellm.Request) fakellm.Reply {
		<-gate
		return fakellm.Stream("Done.")
	}))
	turn, err := e.c.Chat.Send(ctx, e.user, chat.SendInput{ChatID: id, ModelID: other, Content: "Read these",
		Attachments: []ids.AttachmentID{b.ID, a.ID}})
	if err != nil {
		close(gate)
		t.Fatal(err)
	}
	stored, err := e.c.DB.ChatByID(ctx, e.user, id)
	close(gate)
	e.wait(id)
	if err != nil {
		t.Fatal(err)
	}
	got := turn.Chat
	if got.Draft != "" || got.ModelID == nil || *got.ModelID != other || got.LastStatus != store.StatusStreaming {
		t.Errorf("returned chat: draft %q, model %v, last status %q", got.Draft, got.ModelID, got.LastStatus)
	}
	if got.Title != stored.Title || got.Draft != stored.Draft || *got.ModelID != *stored.ModelID ||
		got.UpdatedAt != stored.UpdatedAt || got.LastStatus != stored.LastStatus ||
		!reflect.DeepEqual(got.Params, stored.Params) || got.SystemPrompt != stored.SystemPrompt {
		t.Errorf("returned chat differs from the stored one:\n returned %+v\n stored   %+v", got, stored)
	}
	if turn.Assistant.Status != store.StatusStreaming || turn.Assistant.ParentID == nil || *turn.Assistant.ParentID != turn.User.ID {
		t.Errorf("reply row %+v after turn %d", turn.Assistant, turn.User.ID)
	}
	if len(turn.Files) != 2 || turn.Files[0].ID != b.ID || turn.Files[1].ID != a.ID ||
		turn.Files[0].MessageID == nil || *turn.Files[0].MessageID != turn.User.ID {
		t.Errorf("the turn's files: %+v", turn.Files)
	}
	have, err := e.c.DB.AttachmentsOf(ctx, e.user, []ids.MessageID{turn.User.ID})
	if err != nil || len(have[turn.User.ID]) != 2 || have[turn.User.ID][0].ID != b.ID {
		t.Errorf("stored files of the turn: %+v %v", have, err)
	}
}

// A turn whose files cannot fit the model's context is refused before it
// is stored, as a turn whose text cannot (the files were counted only once
// the turn was stored, which left it without a reply).
func TestTurnWhoseFilesDoNotFitIsRefused(t *testing.T) {
	e := setup(t)
	ctx := t.Context()
	first := e.send(0, "Hello")
	id := first.Chat.ID
	e.wait(id)
	e.c.Chat.Wait()
	e.setContext(2048)
	file := e.upload("long.txt", strings.Repeat("word ", 2000))
	before := e.sendState(id)
	_, err := e.c.Chat.Send(ctx, e.user, chat.SendInput{ChatID: id, Content: "Summarise this",
		Attachments: []ids.AttachmentID{file.ID}})
	if apperr.KindOf(err) != apperr.Invalid || !strings.Contains(err.Error(), "too long for the model") {
		t.Fatalf("err = %v", err)
	}
	if after := e.sendState(id); !sameState(after, before) {
		t.Errorf("the refused turn changed what is stored:\n before %+v\n after  %+v", before, after)
	}
}
