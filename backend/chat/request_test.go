package chat

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/prompts"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/store/storetest"
	"github.com/llembas/lembas/backend/tools"
)

// Each contributor alone; TestRequestsAreUnchanged checks them together.

func newDraft() *draft {
	return &draft{req: llm.ChatRequest{Params: map[string]any{}}}
}

func roles(msgs []llm.Message) string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Role+":"+m.Content)
	}
	return strings.Join(out, " | ")
}

func TestSystemTurnTakesTheChatsThenTheModelsThenTheInstancesPrompt(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		chat, model, instance string
		want                  string
	}{
		{"none", "", "", "", ""},
		{"instance", "", "", "inst", "system:inst"},
		{"model over instance", "", "mod", "inst", "system:mod"},
		{"chat over both", "chat", "mod", "inst", "system:chat"},
		{"blank chat prompt falls through", "  \n", "mod", "inst", "system:mod"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDraft()
			d.chat.SystemPrompt, d.model.SystemPrompt = tc.chat, tc.model
			systemTurn(d, tc.instance)
			systemMessage(context.Background(), d)
			if got := roles(d.req.Messages); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if strings.TrimSpace(tc.want) != "" && d.system != strings.TrimPrefix(tc.want, "system:") {
				t.Errorf("d.system %q", d.system)
			}
		})
	}
}

func TestTurnsLeaveOutReasoningAndEmptyOrStreamingReplies(t *testing.T) {
	d := newDraft()
	d.path = []store.Message{
		{ID: 1, Role: store.RoleUser, Content: "q1"},
		{ID: 2, Role: store.RoleAssistant, Content: "a1", Reasoning: "hidden", Status: store.StatusFinal},
		{ID: 3, Role: store.RoleUser, Content: "q2"},
		{ID: 4, Role: store.RoleAssistant, Content: "", Status: store.StatusError},
		{ID: 5, Role: "system", Content: "not a turn"},
		{ID: 6, Role: store.RoleUser, Content: "q3"},
		{ID: 7, Role: store.RoleAssistant, Content: "half", Status: store.StatusStreaming},
	}
	d.req.Messages = []llm.Message{{Role: "system", Content: "s"}}
	turns(context.Background(), d)
	if got, want := roles(d.req.Messages), "system:s | user:q1 | assistant:a1 | user:q2 | user:q3"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if want := map[ids.MessageID]int{1: 1, 2: 2, 3: 3, 6: 4}; !reflect.DeepEqual(d.turnAt, want) {
		t.Errorf("turnAt %v, want %v", d.turnAt, want)
	}
}

func TestAttachmentsGoIntoTheirTurns(t *testing.T) {
	doc := turnFile{Attachment: store.Attachment{Kind: "text", DisplayName: "a.txt", Text: "inside"}}
	img := turnFile{Attachment: store.Attachment{Kind: "image", DisplayName: "m[1].png", MIME: "image/png"}, Data: []byte{1, 2, 3}}
	build := func(vision bool) *draft {
		d := newDraft()
		d.model.Capabilities.Vision = vision
		d.path = []store.Message{{ID: 1, Role: store.RoleUser, Content: "look"}, {ID: 2, Role: store.RoleAssistant, Content: "ok"},
			{ID: 3, Role: store.RoleUser, Content: "plain"}}
		d.files = map[ids.MessageID][]turnFile{1: {doc, img}}
		turns(context.Background(), d)
		attachments(context.Background(), d)
		return d
	}
	d := build(false)
	m := d.req.Messages[0]
	if m.Parts != nil || !strings.HasPrefix(m.Content, "<document name=\"a.txt\">") || !strings.HasSuffix(m.Content, "\n\nlook") ||
		!strings.Contains(m.Content, "[An image, m(1).png, is attached here, but this model cannot see images.]") {
		t.Errorf("without vision: %+v", m)
	}
	if d.req.Messages[2].Content != "plain" {
		t.Errorf("a turn without files changed: %+v", d.req.Messages[2])
	}
	d = build(true)
	m = d.req.Messages[0]
	if m.Content != "" || len(m.Parts) != 2 || m.Parts[0].Type != "text" || m.Parts[1].Type != "image_url" ||
		strings.Contains(m.Parts[0].Text, "cannot see") {
		t.Errorf("with vision: %+v", m)
	}
}

// TestReferencedFileSaysWhereItCameFrom: a file chosen with @ reaches the
// model in a tag naming its path and source.
func TestReferencedFileSaysWhereItCameFrom(t *testing.T) {
	f := turnFile{Attachment: store.Attachment{Kind: "text", DisplayName: "main.go", Text: "package main",
		SourcePath: "/srv/app/main.go", SourceLabel: "sam@box:/srv/app"}}
	d := newDraft()
	d.path = []store.Message{{ID: 1, Role: store.RoleUser, Content: "fix @main.go"}}
	d.files = map[ids.MessageID][]turnFile{1: {f}}
	turns(context.Background(), d)
	attachments(context.Background(), d)
	want := `<document name="main.go" path="/srv/app/main.go" source="sam@box:/srv/app">`
	if m := d.req.Messages[0]; !strings.HasPrefix(m.Content, want) || !strings.HasSuffix(m.Content, "fix @main.go") {
		t.Errorf("got %q, want it to start %q", m.Content, want)
	}
}

func TestContinueNudgeEndsOnlyAContinue(t *testing.T) {
	d := newDraft()
	continueNudge(context.Background(), d)
	if len(d.req.Messages) != 0 {
		t.Fatalf("a reply that continues nothing got %v", d.req.Messages)
	}
	d.cont = &store.Message{ID: 9}
	continueNudge(context.Background(), d)
	if len(d.req.Messages) != 1 || d.req.Messages[0].Role != "user" || !strings.HasPrefix(d.req.Messages[0].Content, "Continue exactly") {
		t.Errorf("got %v", d.req.Messages)
	}
}

func TestParametersTakeTheChatsOverTheModels(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	n := func(v int64) *int64 { return &v }
	s := func(v string) *string { return &v }
	d := newDraft()
	d.model.Params = store.Params{Temperature: f(0.5), MaxTokens: n(64), ReasoningEffort: s("low")}
	d.chat.Params = store.Params{Temperature: f(0.9), ReasoningEffort: s("high")}
	parameters(context.Background(), d)
	b, _ := json.Marshal(d.req.Params)
	if string(b) != `{"max_tokens":64,"temperature":0.9}` || d.req.ReasoningEffort != "high" {
		t.Errorf("params %s, effort %q", b, d.req.ReasoningEffort)
	}
	d = newDraft()
	d.model.Params = store.Params{ReasoningEffort: s("")}
	parameters(context.Background(), d)
	if len(d.req.Params) != 0 || d.req.ReasoningEffort != "" {
		t.Errorf("an empty effort sent: %v %q", d.req.Params, d.req.ReasoningEffort)
	}
}

// storeDraft is a real database with a user, a model and a chat of three
// messages (the middle one a reply), and a draft for that chat's next reply.
func storeDraft(t *testing.T) (*Service, *draft) {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t)
	user, mid := storetest.OwnerWithModel(t, db)
	chat, _, err := db.CreateChat(ctx, user, store.NewChat{ModelID: &mid, Title: "t"},
		store.Message{Role: store.RoleUser, Content: "first", Status: store.StatusFinal})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []store.Message{{Role: store.RoleAssistant, Content: "reply", Status: store.StatusFinal},
		{Role: store.RoleUser, Content: "second", Status: store.StatusFinal}} {
		if _, err := db.AddMessage(ctx, user, chat.ID, m); err != nil {
			t.Fatal(err)
		}
	}
	model, err := db.ModelByID(ctx, user, mid)
	if err != nil {
		t.Fatal(err)
	}
	s := &Service{db: db}
	d := newDraft()
	d.user, d.chat, d.model = user, chat, model
	return s, d
}

func TestAuthoredPromptReadsTheInstancesPrompt(t *testing.T) {
	s, d := storeDraft(t)
	if err := s.db.SetSetting(context.Background(), "system_prompt", "from the instance"); err != nil {
		t.Fatal(err)
	}
	if err := s.authoredPrompt(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	systemMessage(context.Background(), d)
	if got := roles(d.req.Messages); got != "system:from the instance" {
		t.Errorf("got %q", got)
	}
}

func TestFittingHistoryKeepsTheNewestTurnsThatFit(t *testing.T) {
	s, d := storeDraft(t)
	if err := s.fittingHistory(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if len(d.path) != 3 || d.omitted != 0 || d.path[0].Content != "first" || d.path[2].Content != "second" {
		t.Fatalf("whole history: %d messages, %d omitted", len(d.path), d.omitted)
	}
	// Room for the newest turn only: the reply goes with the turn it
	// answered, and both are counted as left out.
	s, d = storeDraft(t)
	// 23 tokens: a quarter (5) for the reply, 8 for the system markers,
	// 10 for one short turn (2 for its text, 8 for its markers).
	d.model.ContextLength = 23
	if err := s.fittingHistory(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if len(d.path) != 1 || d.path[0].Content != "second" || d.omitted != 2 {
		t.Errorf("cut history: %v, %d omitted", d.path, d.omitted)
	}
}

func TestTurnAttachmentsLoadsTheFilesOfTheTurnsAndOfTheNewOne(t *testing.T) {
	s, d := storeDraft(t)
	ctx := context.Background()
	a, err := s.db.AddAttachment(ctx, d.user, store.Attachment{Kind: "text", MIME: "text/plain", DisplayName: "old.txt", StorageName: "x1", Text: "old"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.fittingHistory(ctx, d); err != nil {
		t.Fatal(err)
	}
	first := d.path[0].ID
	if err := s.db.SetMessageAttachments(ctx, d.user, first, []ids.AttachmentID{a.ID}); err != nil {
		t.Fatal(err)
	}
	d.pending = &newTurn{content: "new", files: []store.Attachment{{Kind: "text", DisplayName: "new.txt", Text: "new"}}}
	if err := s.turnAttachments(ctx, d); err != nil {
		t.Fatal(err)
	}
	if len(d.files) != 2 || len(d.files[first]) != 1 || d.files[first][0].DisplayName != "old.txt" ||
		len(d.files[pendingID]) != 1 || d.files[pendingID][0].DisplayName != "new.txt" {
		t.Errorf("files %+v", d.files)
	}
}

func TestHarnessGoesBeforeTheAuthoredPromptInOneMessage(t *testing.T) {
	s, d := storeDraft(t)
	clock := func() time.Time { return time.Date(2026, time.March, 14, 15, 9, 0, 0, time.UTC) }
	s.prompts = prompts.New(s.db, clock)
	d.model.DisplayName = "Tiny"
	d.chat.SystemPrompt = "Chat prompt."
	d.tools = tools.NewToolSet(tools.Tool{Name: "web_search", Family: tools.FamilyWebSearch})
	for _, c := range []contributor{s.authoredPrompt, s.harness, systemMessage} {
		if err := c(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	if len(d.req.Messages) != 1 || d.req.Messages[0].Role != "system" {
		t.Fatalf("messages %v", roles(d.req.Messages))
	}
	got := d.req.Messages[0].Content
	want := "The current date is Saturday 14 March 2026 and the time is 15:09 (UTC+00:00).\n\nYou are the model Tiny."
	if !strings.HasPrefix(got, want+"\n\n") || !strings.HasSuffix(got, "\n\nChat prompt.") {
		t.Errorf("system message %q", got)
	}
	// The families offered decide the tool guidance: web search's, not
	// fetch's.
	for _, f := range prompts.Builtins() {
		if in := strings.Contains(got, f.Default); (f.Key == "web_search" || f.Key == "citations" || f.Key == "tool_results") != in && f.Key != "date" && f.Key != "model" {
			t.Errorf("fragment %s in the message: %v", f.Key, in)
		}
	}
	if d.system != got {
		t.Errorf("d.system (the budget's) %q differs from what is sent", d.system)
	}
}
