package chat_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// member is the owner acting as a household member who may chat and keep
// a library (and nothing else: exactly the library's tools are offered).
func member(e *env) context.Context {
	return auth.WithCaller(context.Background(), auth.Caller{User: e.user, Perms: auth.NewSet(false, auth.ChatCreate, auth.LibraryUse)})
}

// libraryBase creates a base of user's holding one Markdown document.
func (e *env) libraryBase(user ids.UserID, name, file, text string) store.KnowledgeBase {
	e.t.Helper()
	ctx := context.Background()
	b, err := e.c.Library.CreateBase(ctx, user, name, "")
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.c.Library.Ingest(ctx, user, b.ID, file, strings.NewReader(text)); err != nil {
		e.t.Fatal(err)
	}
	return b
}

// In one reply the model searches the knowledge bases, writes a note and
// reads a skill (three rounds of scripted calls, then its answer). The
// note exists afterwards; every request of the reply carries the same
// system message — the harness with the chat's knowledge scope, the notes
// guidance, the memories (one reading "{{skills}}", kept literally) and the
// skills index — and the same tools array, both exactly as in
// testdata/library.golden with the tool turns of the last request; and the
// chat, scoped to one base from its first message, never gets the other
// base's text. go test -run TestReplyUsesTheLibrary -update rewrites the
// golden file.
func TestReplyUsesTheLibrary(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	e.toolsOn(t, store.Capabilities{Tools: true})
	e.libraryOn(t)
	contracts := e.libraryBase(e.user, "Contracts", "lease.md",
		"# Lease of Bag End\n\nThe lease of Bag End runs until the spring of 1419. The rent is paid in mushrooms.")
	e.libraryBase(e.user, "Recipes", "stew.md",
		"# Rabbit stew\n\nThe lease of the stew pot is SECRET-RECIPE-TEXT: coneys, herbs and taters.")
	if _, err := e.c.Library.AddMemory(ctx, e.user, "Likes {{skills}} written plainly.", "person"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Library.CreateSkill(ctx, e.user, "packing", "Packing for a journey", "Rope, a cloak, and second breakfast."); err != nil {
		t.Fatal(err)
	}
	e.llm.Enqueue(
		fakellm.NewStream().ToolCall(0, "k1", "knowledge_search", `{"query":"lease"}`).Finish("tool_calls").Reply(),
		fakellm.NewStream().ToolCall(0, "n1", "notes_write", `{"title":"Bag End lease","body":"Runs until the spring of 1419."}`).Finish("tool_calls").Reply(),
		fakellm.NewStream().ToolCall(0, "s1", "skill_read", `{"name":"Packing"}`).Finish("tool_calls").Reply(),
		fakellm.Stream("The lease runs until spring; I noted it, and packed rope."))
	before := len(e.llm.Requests())
	turn, err := e.c.Chat.Send(member(e), e.user, chat.SendInput{ModelID: e.model, Content: "When does the lease end? Note it, then pack.",
		Knowledge: &chat.KnowledgeInput{Scoped: true, Bases: []ids.BaseID{contracts.ID}}})
	if err != nil {
		t.Fatal(err)
	}
	e.wait(turn.Chat.ID)
	if m := e.last(turn.Chat.ID); m.Status != store.StatusFinal || !strings.HasSuffix(m.Content, "packed rope.") {
		t.Fatalf("reply %s %q", m.Status, m.Content)
	}
	notes, err := e.c.Library.Notes(ctx, e.user, "", 10)
	if err != nil || len(notes) != 1 {
		t.Fatalf("notes %+v %v", notes, err)
	}
	if n, err := e.c.Library.Note(ctx, e.user, notes[0].ID); err != nil || n.Title != "Bag End lease" || n.Body != "Runs until the spring of 1419." {
		t.Fatalf("the note written %+v %v", n, err)
	}
	if sc, _, err := e.c.Library.ChatScope(ctx, e.user, turn.Chat.ID); err != nil || !sc.Scoped || !slices.Equal(sc.Bases, []ids.BaseID{contracts.ID}) {
		t.Errorf("the chat's stored scope %+v %v", sc, err)
	}

	var reqs []map[string]any
	for _, r := range e.llm.Requests()[before:] {
		if r.JSON["stream"] == true {
			reqs = append(reqs, r.JSON)
			if bytes.Contains(r.Body, []byte("SECRET-RECIPE-TEXT")) || bytes.Contains(r.Body, []byte("Recipes")) {
				t.Errorf("the other base reached a request: %s", r.Body)
			}
		}
	}
	if len(reqs) != 4 {
		t.Fatalf("%d reply requests, want 4", len(reqs))
	}
	system := func(r map[string]any) string {
		m := r["messages"].([]any)[0].(map[string]any)
		if m["role"] != "system" {
			t.Fatalf("no system message first: %v", m)
		}
		return m["content"].(string)
	}
	indent := func(v any) string {
		b, _ := json.MarshalIndent(v, "", "  ")
		return string(b)
	}
	last := reqs[len(reqs)-1]
	for i, r := range reqs[:len(reqs)-1] {
		if system(r) != system(last) || indent(r["tools"]) != indent(last["tools"]) {
			t.Errorf("request %d differs from the last in its system message or tools:\n%s\n%s", i+1, system(r), indent(r["tools"]))
		}
	}
	var got strings.Builder
	got.WriteString("== system\n" + system(last) + "\n== tools\n" + indent(last["tools"]) + "\n")
	for _, m := range last["messages"].([]any)[1:] {
		got.WriteString("== " + m.(map[string]any)["role"].(string) + "\n" + indent(m) + "\n")
	}
	golden := filepath.Join("testdata", "library.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Errorf("the last request differs from %s:\n%s", golden, got.String())
	}
}

// libraryOn leaves the web families off and the library's on (toolsOn
// turns them off for the web tools' tests).
func (e *env) libraryOn(t *testing.T) {
	t.Helper()
	if _, err := e.c.Tools.SetSettings(context.Background(), toolsFamilies(false, true)); err != nil {
		t.Fatal(err)
	}
}

// A new chat can be scoped only to bases its person can see: another's
// base is refused before anything is stored (no chat appears).
func TestNewChatScopeIsChecked(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	other, err := e.c.DB.CreateUser(ctx, store.NewUser{Username: "sam", DisplayName: "Sam"})
	if err != nil {
		t.Fatal(err)
	}
	theirs := e.libraryBase(ids.UserID(other.ID), "Sam's", "pots.md", "Pots and pans.")
	_, err = e.c.Chat.Send(member(e), e.user, chat.SendInput{ModelID: e.model, Content: "Hi",
		Knowledge: &chat.KnowledgeInput{Scoped: true, Bases: []ids.BaseID{theirs.ID}}})
	if apperr.KindOf(err) != apperr.Invalid {
		t.Fatalf("scoped to another's base: %v, want invalid", err)
	}
	if chats, _ := e.c.DB.ListChats(ctx, e.user, store.ChatFilter{}); len(chats) != 0 {
		t.Errorf("a refused send stored %d chats", len(chats))
	}
	// An existing chat's scope is not Send's: refused, even with a base of
	// one's own, and nothing is stored.
	mine := e.libraryBase(e.user, "Mine", "mine.md", "My text.")
	e.llm.Enqueue(fakellm.Stream("Hello."))
	turn, err := e.c.Chat.Send(member(e), e.user, chat.SendInput{ModelID: e.model, Content: "Hi"})
	if err != nil {
		t.Fatal(err)
	}
	e.wait(turn.Chat.ID)
	_, err = e.c.Chat.Send(member(e), e.user, chat.SendInput{ChatID: turn.Chat.ID, Content: "Again",
		Knowledge: &chat.KnowledgeInput{Scoped: true, Bases: []ids.BaseID{mine.ID}}})
	if apperr.KindOf(err) != apperr.Invalid || e.rows(turn.Chat.ID) != 2 {
		t.Errorf("knowledge sent with an existing chat: %v, %d messages", err, e.rows(turn.Chat.ID))
	}
}

// An administrator previewing a member's request sees where the member's
// memories and skills go, never what they are; the member previewing
// their own sees exactly what is sent.
func TestPreviewHidesAnothersLibrary(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	e.toolsOn(t, store.Capabilities{Tools: true})
	e.libraryOn(t)
	m, err := e.c.DB.CreateUser(ctx, store.NewUser{Username: "sam", DisplayName: "Sam"})
	if err != nil {
		t.Fatal(err)
	}
	sam := ids.UserID(m.ID)
	if _, err := e.c.Library.AddMemory(ctx, sam, "Sam keeps PRIVATE-MEMORY under the floor.", "person"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Library.CreateSkill(ctx, sam, "PRIVATE-SKILL", "Sam's own way", "Secret steps."); err != nil {
		t.Fatal(err)
	}
	e.libraryBase(sam, "PRIVATE-BASE", "pots.md", "Pots.")
	preview := func(as ids.UserID, admin bool) string {
		t.Helper()
		b, _ := json.Marshal([]any{map[string]any{"modelId": e.model, "userId": sam}})
		res := e.c.Dispatcher.Call(ctx, api.Caller{UserID: int64(as), Admin: admin}, "Prompts.Preview", b)
		if res.Error != nil {
			t.Fatalf("preview as %d: %s", as, res.Error.Message)
		}
		var v api.PreviewView
		json.Unmarshal(res.Result, &v)
		return v.System
	}
	byAdmin := preview(e.user, true)
	for _, secret := range []string{"PRIVATE-MEMORY", "PRIVATE-SKILL", "PRIVATE-BASE"} {
		if strings.Contains(byAdmin, secret) {
			t.Errorf("the administrator's preview shows %s:\n%s", secret, byAdmin)
		}
	}
	for _, standIn := range []string{"this person's memories", "this person's skills", "knowledge bases this person's chat may search"} {
		if !strings.Contains(byAdmin, standIn) {
			t.Errorf("the administrator's preview lacks the stand-in %q:\n%s", standIn, byAdmin)
		}
	}
	// Sam, were Sam an administrator, would see Sam's own.
	own := preview(sam, true)
	for _, mine := range []string{"PRIVATE-MEMORY", "PRIVATE-SKILL", "PRIVATE-BASE"} {
		if !strings.Contains(own, mine) {
			t.Errorf("the person's own preview lacks %s:\n%s", mine, own)
		}
	}
}
