package chat_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/tools"
)

// web is a Web for the chat tests: fixed hits, a readiness switch, and a
// hold that keeps a search running until released (or stopped).
type web struct {
	notReady atomic.Bool
	hold     chan struct{}
	searches atomic.Int64
}

func (w *web) Search(ctx context.Context, q string, n int) ([]tools.SearchHit, error) {
	w.searches.Add(1)
	if w.hold != nil {
		select {
		case <-w.hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return []tools.SearchHit{{Title: "Bree", URL: "https://example.org/bree", Snippet: "Rain."}}, nil
}
func (w *web) Fetch(ctx context.Context, u string) (tools.Page, error) {
	return tools.Page{URL: u, Title: "Page", Text: "Text."}, nil
}
func (w *web) SearchReady(context.Context) bool { return !w.notReady.Load() }

// toolsOn flags the model for tools and turns both web families on and
// the library's off (on by default; library_test.go is about them), so
// these tests see the web tools alone.
func (e *env) toolsOn(t *testing.T, caps store.Capabilities) {
	t.Helper()
	ctx := context.Background()
	m, err := e.c.DB.ModelByID(ctx, e.user, e.model)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.DB.UpdateModel(ctx, store.Actor{User: e.user, Admin: true}, e.model, store.ModelSettings{
		DisplayName: m.DisplayName, Enabled: true, Capabilities: caps}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Tools.SetSettings(ctx, toolsFamilies(true, false)); err != nil {
		t.Fatal(err)
	}
}

// toolsFamilies switches the web families and the library's.
func toolsFamilies(web, library bool) tools.SettingsPatch {
	return tools.SettingsPatch{Families: map[tools.Family]bool{
		tools.FamilyWebSearch: web, tools.FamilyFetch: web,
		tools.FamilyKnowledge: library, tools.FamilyNotes: library, tools.FamilyMemory: library, tools.FamilySkills: library}}
}

// offered is the names in the newest reply request's tools array (nil:
// the request had none).
func (e *env) offered() []string {
	raw, ok := e.lastReplyRequest()["tools"]
	if !ok {
		return nil
	}
	names := []string{}
	for _, t := range raw.([]any) {
		names = append(names, t.(map[string]any)["function"].(map[string]any)["name"].(string))
	}
	return names
}

// Every switch gates the tools a reply is offered, checked at the wire: a
// model without tool support, and every reply whose switches leave nothing,
// sends no tools array at all.
func TestToolGating(t *testing.T) {
	all := []string{"web_search", "fetch_url"}
	for _, tc := range []struct {
		name     string
		caps     store.Capabilities
		perms    *auth.Set // nil: an administrator
		off      []tools.Family
		toolsOff bool
		notReady bool
		want     []string
	}{
		{name: "model without tools", caps: store.Capabilities{}, want: nil},
		{name: "everything on", caps: store.Capabilities{Tools: true}, want: all},
		{name: "no search permission", caps: store.Capabilities{Tools: true}, perms: ptr(auth.NewSet(false, auth.ChatCreate, auth.ToolsFetch)), want: []string{"fetch_url"}},
		{name: "no tool permission", caps: store.Capabilities{Tools: true}, perms: ptr(auth.NewSet(false, auth.ChatCreate)), want: nil},
		{name: "model switched search off", caps: store.Capabilities{Tools: true, ToolsOff: []string{"web_search"}}, want: []string{"fetch_url"}},
		{name: "instance has fetch off", caps: store.Capabilities{Tools: true}, off: []tools.Family{tools.FamilyFetch}, want: []string{"web_search"}},
		{name: "chat has tools off", caps: store.Capabilities{Tools: true}, toolsOff: true, want: nil},
		{name: "search not configured", caps: store.Capabilities{Tools: true}, notReady: true, want: []string{"fetch_url"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &web{}
			w.notReady.Store(tc.notReady)
			e := setupWeb(t, w)
			e.toolsOn(t, tc.caps)
			for _, f := range tc.off {
				e.c.Tools.SetSettings(context.Background(), tools.SettingsPatch{Families: map[tools.Family]bool{f: false}})
			}
			ctx := context.Background()
			if tc.perms != nil {
				ctx = auth.WithCaller(ctx, auth.Caller{User: e.user, Perms: *tc.perms})
			} else {
				ctx = auth.WithCaller(ctx, auth.Caller{User: e.user, Perms: auth.NewSet(true)})
			}
			e.llm.Enqueue(fakellm.Stream("Hi."))
			turn, err := e.c.Chat.Send(ctx, e.user, chat.SendInput{ModelID: e.model, Content: "hello", ToolsOff: tc.toolsOff})
			if err != nil {
				t.Fatal(err)
			}
			e.wait(turn.Chat.ID)
			if got := e.offered(); !slices.Equal(got, tc.want) {
				t.Errorf("offered %v, want %v", got, tc.want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func admin(e *env) context.Context {
	return auth.WithCaller(context.Background(), auth.Caller{User: e.user, Perms: auth.NewSet(true)})
}

// A reply's tool calls and results are stored and shown, but later turns
// replay its text only.
func TestToolResultsAreNotReplayed(t *testing.T) {
	e := setupWeb(t, &web{})
	e.toolsOn(t, store.Capabilities{Tools: true})
	e.llm.Enqueue(fakellm.NewStream().Content("Looking. ").ToolCall(0, "c1", "web_search", `{"query":"Bree"}`).Finish("tool_calls").Reply(),
		fakellm.Stream("It rains in Bree."))
	turn, err := e.c.Chat.Send(admin(e), e.user, chat.SendInput{ModelID: e.model, Content: "Weather?"})
	if err != nil {
		t.Fatal(err)
	}
	e.wait(turn.Chat.ID)
	if m := e.last(turn.Chat.ID); len(m.Parts()) != 4 || m.Content != "Looking. It rains in Bree." {
		t.Fatalf("first reply %q with parts %+v", m.Content, m.Parts())
	}
	e.llm.Enqueue(fakellm.Stream("Take a cloak."))
	if _, err := e.c.Chat.Send(admin(e), e.user, chat.SendInput{ChatID: turn.Chat.ID, Content: "And tomorrow?"}); err != nil {
		t.Fatal(err)
	}
	e.wait(turn.Chat.ID)
	msgs := e.lastReplyRequest()["messages"].([]any)
	if msgs[0].(map[string]any)["role"] == "system" {
		msgs = msgs[1:] // the harness
	}
	var roles []string
	for _, m := range msgs {
		mm := m.(map[string]any)
		roles = append(roles, mm["role"].(string))
		if _, ok := mm["tool_calls"]; ok {
			t.Errorf("a tool call was replayed: %v", mm)
		}
	}
	if !slices.Equal(roles, []string{"user", "assistant", "user"}) || msgs[1].(map[string]any)["content"] != "Looking.\n\nIt rains in Bree." {
		t.Errorf("second request's messages %v", msgs)
	}
}

// Continue of a reply stopped while its tool ran continues its text: the
// request carries the text (no call without its result, which endpoints
// refuse), and the continued reply keeps the call in its parts.
func TestContinueAfterAStoppedToolRound(t *testing.T) {
	w := &web{hold: make(chan struct{})}
	e := setupWeb(t, w)
	e.toolsOn(t, store.Capabilities{Tools: true})
	e.llm.Enqueue(fakellm.NewStream().Content("Let me check.").ToolCall(0, "c1", "web_search", `{"query":"Bree"}`).Finish("tool_calls").Reply())
	turn, err := e.c.Chat.Send(admin(e), e.user, chat.SendInput{ModelID: e.model, Content: "Weather?"})
	if err != nil {
		t.Fatal(err)
	}
	poll(t, "the search runs", func() bool { return w.searches.Load() == 1 })
	if err := e.c.Chat.Stop(context.Background(), e.user, turn.Chat.ID); err != nil {
		t.Fatal(err)
	}
	e.wait(turn.Chat.ID)
	if m := e.last(turn.Chat.ID); m.Status != store.StatusStopped || len(m.Parts()) != 2 {
		t.Fatalf("stopped reply %s with parts %+v", m.Status, m.Parts())
	}
	close(w.hold)
	e.llm.Enqueue(fakellm.Stream(" It rains."))
	if _, err := e.c.Chat.Continue(admin(e), e.user, turn.Chat.ID); err != nil {
		t.Fatal(err)
	}
	e.wait(turn.Chat.ID)
	m := e.last(turn.Chat.ID)
	if m.Status != store.StatusFinal || m.Content != "Let me check. It rains." || m.Parts()[1].Kind != store.PartToolCall {
		t.Errorf("continued reply %s %q %+v", m.Status, m.Content, m.Parts())
	}
	for _, msg := range e.lastReplyRequest()["messages"].([]any) {
		mm := msg.(map[string]any)
		if mm["role"] == "tool" || mm["tool_calls"] != nil {
			t.Errorf("continue request replays a tool turn: %v", mm)
		}
	}
}

func poll(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
