package chat_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/customtools"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/tools"
	webtools "github.com/llembas/lembas/backend/web"
)

// customWeather sets up a custom tool "weather" against a loopback server
// (its range allowed as an administrator would, under Settings → Web) with
// custom tools on for the instance, and returns the server's call count.
func customWeather(t *testing.T, e *env) *atomic.Int64 {
	t.Helper()
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		enc.Encode(map[string]any{"city": r.URL.Query().Get("city"), "sky": "rain", "temp_c": 11})
	}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	allow := []string{"127.0.0.1/32"}
	if _, err := e.c.Web.Set(ctx, webtools.SettingsInput{Allow: &allow}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.CustomTools.Save(ctx, customtools.Input{Name: "weather", Description: "The weather in a city now.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
		Method:     "GET", URL: srv.URL + "/now?city={{city}}", Guidance: "Use weather for questions about the weather.",
		Enabled: true}); err != nil {
		t.Fatal(err)
	}
	e.toolsOn(t, store.Capabilities{Tools: true})
	if _, err := e.c.Tools.SetSettings(ctx, tools.SettingsPatch{Families: map[tools.Family]bool{tools.GateCustom: true}}); err != nil {
		t.Fatal(err)
	}
	return &calls
}

// A reply calls a custom tool and answers from its result: the tool's
// answer goes back to the model as the tool turn, and its guidance is in
// the system message.
func TestReplyUsesACustomTool(t *testing.T) {
	e := setup(t)
	calls := customWeather(t, e)
	e.llm.Enqueue(fakellm.NewStream().ToolCall(0, "c1", "weather", `{"city":"Bree & Staddle"}`).Finish("tool_calls").Reply(),
		fakellm.Stream("It rains in Bree, 11 °C."))
	turn, err := e.c.Chat.Send(admin(e), e.user, chat.SendInput{ModelID: e.model, Content: "Weather in Bree?"})
	if err != nil {
		t.Fatal(err)
	}
	e.wait(turn.Chat.ID)
	if m := e.last(turn.Chat.ID); m.Content != "It rains in Bree, 11 °C." || m.Status != store.StatusFinal {
		t.Fatalf("reply %q (%s)", m.Content, m.Status)
	}
	if calls.Load() != 1 {
		t.Errorf("the tool's server got %d calls", calls.Load())
	}
	req := e.lastReplyRequest()
	var toolTurn map[string]any
	for _, m := range req["messages"].([]any) {
		if mm := m.(map[string]any); mm["role"] == "tool" {
			toolTurn = mm
		}
	}
	if toolTurn == nil || toolTurn["tool_call_id"] != "c1" || !strings.Contains(toolTurn["content"].(string), `"city": "Bree & Staddle"`) ||
		!strings.Contains(toolTurn["content"].(string), `"sky": "rain"`) {
		t.Errorf("tool turn %v", toolTurn)
	}
	system := req["messages"].([]any)[0].(map[string]any)
	if system["role"] != "system" || !strings.Contains(system["content"].(string), "Use weather for questions about the weather.") {
		t.Errorf("the tool's guidance is not in the system message: %v", system)
	}
}

// Custom tools are offered only to holders of tools.custom.
func TestCustomToolNeedsItsPermission(t *testing.T) {
	e := setup(t)
	customWeather(t, e)
	for _, tc := range []struct {
		name  string
		perms auth.Set
		want  bool
	}{
		{"with tools.custom", auth.NewSet(false, auth.ChatCreate, auth.ToolsCustom), true},
		{"without it", auth.NewSet(false, auth.ChatCreate, auth.ToolsWebSearch, auth.ToolsFetch), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.llm.Enqueue(fakellm.Stream("Hi."))
			ctx := auth.WithCaller(context.Background(), auth.Caller{User: e.user, Perms: tc.perms})
			turn, err := e.c.Chat.Send(ctx, e.user, chat.SendInput{ModelID: e.model, Content: "hello"})
			if err != nil {
				t.Fatal(err)
			}
			e.wait(turn.Chat.ID)
			if got := slices.Contains(e.offered(), "weather"); got != tc.want {
				t.Errorf("weather offered %v, want %v (offered %v)", got, tc.want, e.offered())
			}
		})
	}
}
