package chat_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/ids"
)

// callErr runs a facade method as the owner and returns its error kind
// ("" when it succeeded).
func (e *env) callErr(method string, args ...any) string {
	e.t.Helper()
	b, _ := json.Marshal(args)
	r := e.c.Dispatcher.Call(context.Background(), api.Caller{UserID: int64(e.user), Admin: true, Owner: true}, method, b)
	if r.Error == nil {
		return ""
	}
	return string(r.Error.Kind)
}

// transcript reads the chat's chosen path as the page does (Chats.Messages).
func (e *env) transcript(id ids.ChatID) []api.MessageView {
	e.t.Helper()
	var page api.MessagesPage
	e.call("Chats.Messages", &page, id, 0, 0)
	return page.Messages
}

func contentsOf(msgs []api.MessageView) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Content
	}
	return out
}

// sentTurns is the conversation the newest reply's request carried,
// without the system message.
func (e *env) sentTurns() []string {
	e.t.Helper()
	var out []string
	for _, m := range e.lastReplyRequest()["messages"].([]any) {
		m := m.(map[string]any)
		if m["role"] == "system" {
			continue
		}
		c, _ := m["content"].(string)
		out = append(out, c)
	}
	return out
}

// Regenerating keeps every reply as a version: the page shows the newest
// with ‹ n/n ›, switching chooses another, and the next request, the
// transcript after a reload and the next turn follow the chosen one.
// Deleting a version moves the path to its neighbour; the last one left
// cannot be deleted.
func TestRegenerateKeepsVersionsAndThePathFollowsTheChosenOne(t *testing.T) {
	e := setup(t)
	e.llm.Enqueue(fakellm.Stream("answer 0"))
	turn := e.send(0, "question")
	id := turn.Chat.ID
	e.wait(id)
	for i := 1; i <= 3; i++ {
		e.llm.Enqueue(fakellm.Stream("answer " + string(rune('0'+i))))
		var v api.MessageView
		e.call("Chats.Regenerate", &v, id)
		e.wait(id)
		if v.Versions == nil || v.Versions.Count != i+1 || v.Versions.Index != i {
			t.Fatalf("regeneration %d: versions %+v, want %d/%d", i, v.Versions, i+1, i+1)
		}
	}
	msgs := e.transcript(id)
	if got := contentsOf(msgs); !slices.Equal(got, []string{"question", "answer 3"}) {
		t.Fatalf("transcript after three regenerations: %q", got)
	}
	vs := msgs[1].Versions
	if vs == nil || vs.Count != 4 || vs.Index != 3 || len(vs.IDs) != 4 || vs.IDs[3] != msgs[1].ID {
		t.Fatalf("the reply's versions: %+v", vs)
	}
	if msgs[0].Versions != nil {
		t.Errorf("the question has one version, shown with %+v", msgs[0].Versions)
	}

	// Choose the second reply: the page, the next request and a reload follow it.
	var pv api.PathView
	e.call("Chats.SwitchVersion", &pv, vs.IDs[1])
	if got := contentsOf(pv.Messages); !slices.Equal(got, []string{"question", "answer 1"}) {
		t.Fatalf("after switching: %q", got)
	}
	if v := pv.Messages[1].Versions; v == nil || v.Index != 1 || v.Count != 4 {
		t.Fatalf("after switching, versions %+v", v)
	}
	e.llm.Enqueue(fakellm.Stream("follow-up answer"))
	e.send(id, "follow-up")
	e.wait(id)
	if got := e.sentTurns(); !slices.Equal(got, []string{"question", "answer 1", "follow-up"}) {
		t.Fatalf("the request after switching carried %q", got)
	}
	if got := contentsOf(e.transcript(id)); !slices.Equal(got, []string{"question", "answer 1", "follow-up", "follow-up answer"}) {
		t.Fatalf("transcript read again: %q", got)
	}

	// Switch away and back: back is the branch's newest end.
	e.call("Chats.SwitchVersion", &pv, vs.IDs[2])
	if got := contentsOf(pv.Messages); !slices.Equal(got, []string{"question", "answer 2"}) {
		t.Fatalf("after switching to the third: %q", got)
	}
	e.call("Chats.SwitchVersion", &pv, vs.IDs[1])
	if got := contentsOf(pv.Messages); len(got) != 4 || got[3] != "follow-up answer" {
		t.Fatalf("back on the second's branch: %q", got)
	}

	// Delete the chosen version: its branch goes, its next sibling is chosen.
	e.call("Chats.DeleteVersion", &pv, vs.IDs[1])
	if got := contentsOf(pv.Messages); !slices.Equal(got, []string{"question", "answer 2"}) {
		t.Fatalf("after deleting the chosen version: %q", got)
	}
	if v := pv.Messages[1].Versions; v == nil || v.Count != 3 || v.Index != 1 {
		t.Fatalf("after deleting, versions %+v", v)
	}
	for _, gone := range []ids.MessageID{vs.IDs[1]} {
		if _, err := e.c.DB.MessageByID(context.Background(), e.user, gone); err == nil {
			t.Errorf("message %d is still stored", gone)
		}
	}
	// An unchosen version goes without moving the path.
	e.call("Chats.DeleteVersion", &pv, vs.IDs[0])
	pv = api.PathView{} // decoding leaves an absent field as it was
	e.call("Chats.DeleteVersion", &pv, vs.IDs[3])
	if got := contentsOf(pv.Messages); !slices.Equal(got, []string{"question", "answer 2"}) || pv.Messages[1].Versions != nil {
		t.Fatalf("one version left: %q %+v", got, pv.Messages[1].Versions)
	}
	if kind := e.callErr("Chats.DeleteVersion", vs.IDs[2]); kind != "conflict" {
		t.Errorf("deleting the only version: %q, want conflict", kind)
	}
}

// Editing a turn adds a version beside it, with its own reply; the
// original turn and everything after it stay, and switching back sends
// the original branch.
func TestEditKeepsTheOriginalBranch(t *testing.T) {
	e := setup(t)
	e.llm.Enqueue(fakellm.Stream("a1"))
	turn := e.send(0, "q1")
	id := turn.Chat.ID
	e.wait(id)
	e.llm.Enqueue(fakellm.Stream("a2"))
	q2 := e.send(id, "q2")
	e.wait(id)

	e.llm.Enqueue(fakellm.Stream("a2 edited"))
	var tv api.TurnView
	e.call("Chats.Edit", &tv, q2.User.ID, "q2 edited", nil)
	e.wait(id)
	if v := tv.User.Versions; v == nil || v.Count != 2 || v.Index != 1 || v.IDs[0] != q2.User.ID {
		t.Fatalf("the edited turn's versions: %+v", v)
	}
	if got := e.sentTurns(); !slices.Equal(got, []string{"q1", "a1", "q2 edited"}) {
		t.Fatalf("the edit's request carried %q", got)
	}
	msgs := e.transcript(id)
	if got := contentsOf(msgs); !slices.Equal(got, []string{"q1", "a1", "q2 edited", "a2 edited"}) {
		t.Fatalf("after the edit: %q", got)
	}
	if v := msgs[2].Versions; v == nil || v.Index != 1 || v.Count != 2 {
		t.Fatalf("the page's versions of the edited turn: %+v", v)
	}

	// Back to the original: the old turn and its reply, and the next
	// request follows them.
	var pv api.PathView
	e.call("Chats.SwitchVersion", &pv, q2.User.ID)
	if got := contentsOf(pv.Messages); !slices.Equal(got, []string{"q1", "a1", "q2", "a2"}) {
		t.Fatalf("back on the original branch: %q", got)
	}
	e.llm.Enqueue(fakellm.Stream("a3"))
	e.send(id, "q3")
	e.wait(id)
	if got := e.sentTurns(); !slices.Equal(got, []string{"q1", "a1", "q2", "a2", "q3"}) {
		t.Fatalf("the request on the original branch carried %q", got)
	}

	// The first turn too (no parent): a second first turn.
	e.llm.Enqueue(fakellm.Stream("b1"))
	e.call("Chats.Edit", &tv, turn.User.ID, "q1 again", nil)
	e.wait(id)
	if got := contentsOf(e.transcript(id)); !slices.Equal(got, []string{"q1 again", "b1"}) {
		t.Fatalf("after editing the first turn: %q", got)
	}
	e.call("Chats.SwitchVersion", &pv, turn.User.ID)
	if got := contentsOf(pv.Messages); len(got) != 6 || got[5] != "a3" {
		t.Fatalf("back on the first turn's original branch: %q", got)
	}
}

// Search finds what the chosen path shows: a reply on another version's
// branch is not a hit until it is chosen.
func TestSearchFollowsTheChosenPath(t *testing.T) {
	e := setup(t)
	e.llm.Enqueue(fakellm.Stream("bravo answer"))
	turn := e.send(0, "alpha question")
	id := turn.Chat.ID
	e.wait(id)
	e.llm.Enqueue(fakellm.Stream("charlie answer"))
	var v api.MessageView
	e.call("Chats.Regenerate", &v, id)
	e.wait(id)

	hits := func(q string) int {
		var out []api.SearchHit
		e.call("Chats.Search", &out, q)
		n := 0
		for _, h := range out {
			if h.MessageID != 0 && strings.Contains(h.Snippet, q) {
				n++
			}
		}
		return n
	}
	if hits("bravo") != 0 || hits("charlie") != 1 || hits("alpha") != 1 {
		t.Fatalf("on the newest version: bravo %d, charlie %d, alpha %d", hits("bravo"), hits("charlie"), hits("alpha"))
	}
	var pv api.PathView
	e.call("Chats.SwitchVersion", &pv, v.Versions.IDs[0])
	if hits("bravo") != 1 || hits("charlie") != 0 {
		t.Fatalf("on the first version: bravo %d, charlie %d", hits("bravo"), hits("charlie"))
	}
}

// An edited turn is a new message beside the old: each version has its
// own copy of the turn's files (the request still carries them), and
// deleting a version releases its copy only.
func TestEditedTurnKeepsItsFilesOnBothVersions(t *testing.T) {
	e := setup(t)
	f := e.uploadFile("notes.txt", "the secret word is plover")
	e.llm.Enqueue(fakellm.Stream("noted"))
	turn, err := e.c.Chat.Send(context.Background(), e.user, chat.SendInput{ModelID: e.model, Content: "read this",
		Attachments: []ids.AttachmentID{f}})
	if err != nil {
		t.Fatal(err)
	}
	id := turn.Chat.ID
	e.wait(id)

	e.llm.Enqueue(fakellm.Stream("noted again"))
	edited, err := e.c.Chat.Edit(context.Background(), e.user, turn.User.ID, "read this, please", nil)
	if err != nil {
		t.Fatal(err)
	}
	e.wait(id)
	if b, _ := json.Marshal(e.lastReplyRequest()); !strings.Contains(string(b), "plover") {
		t.Error("the edited turn's request lost its file")
	}
	by, err := e.c.DB.AttachmentsOf(context.Background(), e.user, []ids.MessageID{turn.User.ID, edited.User.ID})
	if err != nil {
		t.Fatal(err)
	}
	old, cp := by[turn.User.ID], by[edited.User.ID]
	if len(old) != 1 || len(cp) != 1 || old[0].StorageName == cp[0].StorageName || cp[0].DisplayName != "notes.txt" ||
		len(edited.Files) != 1 || edited.Files[0].ID != cp[0].ID {
		t.Fatalf("files of the versions: old %+v, new %+v (returned %+v)", old, cp, edited.Files)
	}

	if _, err := e.c.Chat.DeleteVersion(context.Background(), e.user, edited.User.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Files.Read(cp[0].StorageName); err == nil {
		t.Error("the deleted version's file is still stored")
	}
	if b, err := e.c.Files.Read(old[0].StorageName); err != nil || !strings.Contains(string(b), "plover") {
		t.Errorf("the remaining version's file: %q %v", b, err)
	}
	if got := contentsOf(e.transcript(id)); !slices.Equal(got, []string{"read this", "noted"}) {
		t.Errorf("after deleting the edit: %q", got)
	}
}
