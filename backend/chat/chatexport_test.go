package chat_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// export writes the chat in format as the owner.
func (e *env) export(id ids.ChatID, format string) string {
	e.t.Helper()
	x, err := e.c.Chat.Export(context.Background(), e.user, id, format)
	if err != nil {
		e.t.Fatalf("export %s: %v", format, err)
	}
	var buf bytes.Buffer
	if err := x.Write(context.Background(), &buf); err != nil {
		e.t.Fatalf("write export %s: %v", format, err)
	}
	return buf.String()
}

// exported is the JSON export parsed.
func (e *env) exported(id ids.ChatID) chat.ExportedChat {
	e.t.Helper()
	var out chat.ExportedChat
	raw := e.export(id, chat.ExportJSON)
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		e.t.Fatalf("the JSON export does not parse: %v\n%s", err, raw)
	}
	return out
}

func exportedContents(x chat.ExportedChat) []string {
	out := make([]string, len(x.Messages))
	for i, m := range x.Messages {
		out[i] = m.Content
	}
	return out
}

// An export is the chosen path only: after three regenerations and an
// edit, neither format holds an off-path version, switching versions
// changes what is exported, and a compaction's summary never stands in for
// the turns it covers.
func TestExportFollowsTheChosenPath(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	img := e.uploadImage("diagram.png")
	e.llm.Enqueue(fakellm.Stream("answer zero"))
	turn, err := e.c.Chat.Send(ctx, e.user, chat.SendInput{ModelID: e.model, Content: "the question", Attachments: []ids.AttachmentID{img}})
	if err != nil {
		t.Fatal(err)
	}
	id := turn.Chat.ID
	e.wait(id)
	for _, a := range []string{"answer one", "answer two"} {
		e.llm.Enqueue(fakellm.Stream(a))
		var v api.MessageView
		e.call("Chats.Regenerate", &v, id)
		e.wait(id)
	}
	e.llm.Enqueue(fakellm.NewStream().Reasoning("deep private thoughts").Content("answer three").Reply())
	var third api.MessageView
	e.call("Chats.Regenerate", &third, id)
	e.wait(id)
	e.llm.Enqueue(fakellm.Stream("reply to the original"))
	q2 := e.send(id, "original follow-up")
	e.wait(id)
	e.llm.Enqueue(fakellm.Stream("reply to the rewrite"))
	var tv api.TurnView
	e.call("Chats.Edit", &tv, q2.User.ID, "rewritten follow-up", nil)
	e.wait(id)

	want := []string{"the question", "answer three", "rewritten follow-up", "reply to the rewrite"}
	x := e.exported(id)
	if x.Format != "lembas.chat" || x.Version != chat.ExportVersion || x.Chat.ID != id || x.Chat.Model == "" {
		t.Errorf("the JSON export's head: %+v", x)
	}
	if got := exportedContents(x); !slices.Equal(got, want) {
		t.Fatalf("JSON export: %q, want %q", got, want)
	}
	for i, m := range x.Messages {
		if i > 0 && (m.ParentID == nil || *m.ParentID != x.Messages[i-1].ID) {
			t.Errorf("message %d's parent is %v, not the one before it (%d)", i, m.ParentID, x.Messages[i-1].ID)
		}
	}
	if a := x.Messages[0].Attachments; len(a) != 1 || a[0].Name != "diagram.png" || a[0].Kind != "image" {
		t.Errorf("the question's files: %+v", a)
	}
	if x.Messages[1].Reasoning != "deep private thoughts" || x.Messages[1].Model == "" || x.Messages[1].Role != store.RoleAssistant {
		t.Errorf("the chosen reply: %+v", x.Messages[1])
	}

	md := e.export(id, chat.ExportMarkdown)
	for _, s := range []string{"## User\n\nthe question", "## Assistant (", "answer three", "rewritten follow-up",
		"reply to the rewrite", "Attached: `diagram.png`", "- Model: "} {
		if !strings.Contains(md, s) {
			t.Errorf("the Markdown export lacks %q:\n%s", s, md)
		}
	}
	for _, s := range []string{"answer zero", "answer one", "answer two", "original follow-up", "reply to the original", "deep private thoughts"} {
		if strings.Contains(md, s) {
			t.Errorf("the Markdown export holds %q, which is off the chosen path or reasoning:\n%s", s, md)
		}
	}

	// Another version chosen: the export follows it.
	var pv api.PathView
	e.call("Chats.SwitchVersion", &pv, q2.User.ID)
	if got := exportedContents(e.exported(id)); !slices.Equal(got, []string{"the question", "answer three", "original follow-up", "reply to the original"}) {
		t.Fatalf("after switching to the original follow-up: %q", got)
	}
	e.call("Chats.SwitchVersion", &pv, third.Versions.IDs[1])
	if got := exportedContents(e.exported(id)); !slices.Equal(got, []string{"the question", "answer one"}) {
		t.Fatalf("after switching to the second reply: %q", got)
	}
	md = e.export(id, chat.ExportMarkdown)
	if !strings.Contains(md, "answer one") || strings.Contains(md, "answer three") || strings.Contains(md, "follow-up") {
		t.Fatalf("the Markdown export after switching:\n%s", md)
	}

	// A compaction's summary is for requests: the export has the turns.
	if err := e.c.DB.SetCompaction(ctx, e.user, id, &store.Compaction{Summary: "A SUMMARY OF IT ALL", Through: x.Messages[0].ID, At: testClock().UnixMilli() + 1}); err != nil {
		t.Fatal(err)
	}
	md = e.export(id, chat.ExportMarkdown)
	if strings.Contains(md, "A SUMMARY OF IT ALL") || !strings.Contains(md, "the question") {
		t.Fatalf("the export of a compacted chat:\n%s", md)
	}

	// Another person's chat is not there; an unknown format is refused.
	sam, err := e.c.DB.CreateUser(ctx, store.NewUser{Username: "sam", DisplayName: "Sam"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Chat.Export(ctx, ids.UserID(sam.ID), id, chat.ExportMarkdown); apperr.KindOf(err) != apperr.NotFound {
		t.Errorf("another person's export: %v", err)
	}
	if _, err := e.c.Chat.Export(ctx, e.user, id, "pdf"); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("an unknown format: %v", err)
	}
}

// A reply's tool calls are one line each in Markdown, and the JSON has
// every part.
func TestExportSummarisesToolCalls(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	e.llm.Enqueue(fakellm.Stream("first"))
	id := e.send(0, "look it up").Chat.ID
	e.wait(id)
	m := store.Message{Role: store.RoleAssistant, Status: store.StatusStopped, ModelLabel: "Fake"}
	m.SetParts([]store.Part{
		{Kind: store.PartReasoning, Text: "thinking hard"},
		{Kind: store.PartText, Text: "Searching."},
		{Kind: store.PartToolCall, Name: "web_search", CallID: "c1", Text: "{\"query\": \"tea `time`\"}"},
		{Kind: store.PartToolResult, CallID: "c1", Text: "found"},
		{Kind: store.PartToolCall, Name: "web_fetch", CallID: "c2", Text: "{}"},
		{Kind: store.PartToolResult, CallID: "c2", Text: "refused: [click](javascript:x)", Error: true},
		{Kind: store.PartText, Text: "It is at five."},
	})
	if _, err := e.c.DB.AddMessage(ctx, e.user, id, m); err != nil {
		t.Fatal(err)
	}
	md := e.export(id, chat.ExportMarkdown)
	for _, s := range []string{
		"Searching.\n\n> Tool call: `web_search` `` {\"query\": \"tea `time`\"} ``\n\n> Tool result: 5 characters\n\n> Tool call: `web_fetch`\n\n",
		`> Tool failed: refused: \[click\]\(javascript:x\)`,
		"It is at five.", "*Stopped before the end.*",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("the Markdown export lacks %q:\n%s", s, md)
		}
	}
	if strings.Contains(md, "thinking hard") {
		t.Errorf("the Markdown export holds the reasoning:\n%s", md)
	}
	// A title stays one plain heading: no raw HTML, link or second line.
	title := "Tea <img src=x onerror=alert(1)> [at](javascript:x)\n# five"
	if _, err := e.c.DB.UpdateChat(ctx, e.user, id, store.ChatPatch{Title: &title}); err != nil {
		t.Fatal(err)
	}
	md = e.export(id, chat.ExportMarkdown)
	if first, _, _ := strings.Cut(md, "\n"); first != `# Tea \<img src=x onerror=alert(1)\> \[at\](javascript:x) # five` {
		t.Errorf("the title's heading: %q", first)
	}
	if strings.Contains(md, "thinking hard") {
		t.Errorf("the Markdown export holds the reasoning:\n%s", md)
	}
	x := e.exported(id)
	last := x.Messages[len(x.Messages)-1]
	if len(last.Parts) != 7 || last.Parts[2].Name != "web_search" || last.Content != "Searching.\n\nIt is at five." || last.Reasoning != "thinking hard" {
		t.Errorf("the JSON export's reply: %+v", last)
	}
}

// An export's file name is the title without path characters, control
// characters or a leading dot.
func TestExportName(t *testing.T) {
	for title, want := range map[string]string{
		"Tea at five":                "Tea at five.md",
		"../../etc/passwd":           "etc-passwd.md",
		"a/b\\c: d?":                 "a-b-c- d-.md",
		"Evil\r\nContent-Type: x\"y": "Evil Content-Type- x-y.md",
		"":                           "chat.md",
		"...":                        "chat.md",
		"\u202eexe.txt":              "exe.txt.md",
		strings.Repeat("é", 100):     strings.Repeat("é", 40) + ".md",
	} {
		if got := chat.ExportName(title, chat.ExportMarkdown); got != want {
			t.Errorf("ExportName(%q) = %q, want %q", title, got, want)
		}
	}
	if got := chat.ExportName("x", chat.ExportJSON); got != "x.json" {
		t.Errorf("JSON name %q", got)
	}
}

// A reply stopped inside a code block has the block closed in Markdown,
// so the turns after it do not read as code.
func TestExportClosesAnOpenCodeBlock(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	e.llm.Enqueue(fakellm.Stream("Here:\n\n```go\nfunc main() {\n  ~~~\n``\n"))
	id := e.send(0, "some code").Chat.ID
	e.wait(id)
	if _, err := e.c.DB.AddMessage(ctx, e.user, id, store.Message{Role: store.RoleUser, Status: store.StatusFinal, Content: "after it"}); err != nil {
		t.Fatal(err)
	}
	md := e.export(id, chat.ExportMarkdown)
	if !strings.Contains(md, "  ~~~\n``\n```\n\n---\n\n## User\n\nafter it") {
		t.Errorf("the open block was not closed:\n%s", md)
	}
	e.llm.Enqueue(fakellm.Stream("closed:\n\n~~~~\nx\n~~~~~\n"))
	id = e.send(0, "more code").Chat.ID
	e.wait(id)
	if md := e.export(id, chat.ExportMarkdown); !strings.Contains(md, "x\n~~~~~\n") || strings.Count(md, "~~~~") != 2 {
		t.Errorf("a closed block was closed again:\n%s", md)
	}
}
