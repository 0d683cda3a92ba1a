package chat_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/prompts"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/tools"
)

// The admin page's preview is byte for byte the system message the
// endpoint receives for a real Send with the same model and person: the
// harness (with an override and a fragment turned off) before the
// authored prompt that won (the model's over the instance's).
func TestPreviewIsWhatTheEndpointReceives(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	owner := api.Caller{UserID: int64(e.user), Admin: true}
	call := func(method string, args ...any) json.RawMessage {
		t.Helper()
		b, _ := json.Marshal(args)
		res := e.c.Dispatcher.Call(ctx, owner, method, b)
		if res.Error != nil {
			t.Fatalf("%s: %s", method, res.Error.Message)
		}
		return res.Result
	}
	preview := func() string {
		t.Helper()
		var v api.PreviewView
		json.Unmarshal(call("Prompts.Preview", map[string]any{"modelId": e.model, "userId": e.user}), &v)
		return v.System
	}
	sent := func() string {
		t.Helper()
		turn, err := e.c.Chat.Send(ctx, e.user, chat.SendInput{ModelID: e.model, Content: "Hello"})
		if err != nil {
			t.Fatal(err)
		}
		e.wait(turn.Chat.ID)
		first := e.streamed()["messages"].([]any)[0].(map[string]any)
		if first["role"] != "system" {
			t.Fatalf("no system message: %v", first)
		}
		return first["content"].(string)
	}
	check := func(name string) string {
		t.Helper()
		p, s := preview(), sent()
		if p != s {
			t.Fatalf("%s: preview %q\nsent    %q", name, p, s)
		}
		return s
	}

	s := check("defaults")
	if !strings.HasPrefix(s, "The current date is Saturday 14 March 2026") || !strings.Contains(s, "You are the model ") {
		t.Errorf("defaults: %q", s)
	}
	if err := e.c.DB.SetSetting(ctx, "system_prompt", "Instance prompt."); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.DB.UpdateModel(ctx, store.Actor{User: e.user, Admin: true}, e.model,
		store.ModelSettings{Enabled: true, DisplayName: "Tiny", SystemPrompt: "Model prompt."}); err != nil {
		t.Fatal(err)
	}
	call("Prompts.Set", map[string]any{"fragments": map[string]string{"date": "Today: {{date}}. {{unknown}}", "model": ""}})
	s = check("overridden")
	if want := "Today: Saturday 14 March 2026. {{unknown}}\n\nModel prompt."; s != want {
		t.Errorf("overridden: %q, want %q", s, want)
	}
	call("Prompts.Reset", "model")
	s = check("reset")
	if want := "Today: Saturday 14 March 2026. {{unknown}}\n\nYou are the model Tiny.\n\nModel prompt."; s != want {
		t.Errorf("reset: %q, want %q", s, want)
	}
	// Every fragment off: only the authored prompt, as before the harness.
	all := map[string]string{}
	var v api.PromptsView
	json.Unmarshal(call("Prompts.List"), &v)
	for _, f := range v.Fragments {
		all[f.Key] = ""
	}
	call("Prompts.Set", map[string]any{"fragments": all})
	if s := check("all off"); s != "Model prompt." {
		t.Errorf("all off: %q", s)
	}
	// A person who does not exist has no preview.
	b, _ := json.Marshal([]any{map[string]any{"modelId": e.model, "userId": 99999}})
	if res := e.c.Dispatcher.Call(ctx, owner, "Prompts.Preview", b); res.Error == nil || res.Error.Kind != "not_found" {
		t.Errorf("preview for nobody: %+v", res)
	}
}

// With tools offered, the harness carries the guidance of exactly the
// families the reply is offered, in the preview as in what is sent: the
// set is resolved once, before the harness, from the model's switches and
// the person's permissions.
func TestHarnessFollowsTheToolsOffered(t *testing.T) {
	e := setupWeb(t, &web{})
	e.toolsOn(t, store.Capabilities{Tools: true})
	ctx := admin(e)
	both := func(name string) string {
		t.Helper()
		var v api.PreviewView
		b, _ := json.Marshal([]any{map[string]any{"modelId": e.model, "userId": e.user}})
		res := e.c.Dispatcher.Call(ctx, api.Caller{UserID: int64(e.user), Admin: true}, "Prompts.Preview", b)
		if res.Error != nil {
			t.Fatalf("%s: preview: %s", name, res.Error.Message)
		}
		json.Unmarshal(res.Result, &v)
		turn, err := e.c.Chat.Send(ctx, e.user, chat.SendInput{ModelID: e.model, Content: "Hello"})
		if err != nil {
			t.Fatal(err)
		}
		e.wait(turn.Chat.ID)
		sent := e.streamed()["messages"].([]any)[0].(map[string]any)["content"]
		if v.System != sent {
			t.Fatalf("%s: preview %q\nsent    %q", name, v.System, sent)
		}
		return v.System
	}
	guidance := func(key string) string {
		for _, f := range prompts.Builtins() {
			if f.Key == key {
				return f.Default
			}
		}
		t.Fatalf("no fragment %s", key)
		return ""
	}
	s := both("web search and fetch")
	for _, k := range []string{"tool_results", "web_search", "fetch", "citations"} {
		if !strings.Contains(s, guidance(k)) {
			t.Errorf("with both families offered, %s is missing: %q", k, s)
		}
	}
	e.toolsOn(t, store.Capabilities{Tools: true, ToolsOff: []string{string(tools.FamilyFetch)}})
	s = both("web search only")
	if strings.Contains(s, guidance("fetch")) || !strings.Contains(s, guidance("web_search")) {
		t.Errorf("with fetch switched off on the model: %q", s)
	}
	e.toolsOn(t, store.Capabilities{})
	s = both("no tools")
	if strings.Contains(s, guidance("tool_results")) || strings.Contains(s, guidance("web_search")) {
		t.Errorf("a model without tools got tool guidance: %q", s)
	}
}
