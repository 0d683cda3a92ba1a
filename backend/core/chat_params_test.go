package core

import (
	"encoding/json"
	"testing"

	"github.com/llembas/lembas/backend/fakellm"
)

// chat.params guards a chat's system prompt and parameters on every path
// that sets them: Chats.Update, and Chats.Send starting a new chat.
func TestSendRequiresChatParamsForSettings(t *testing.T) {
	w := newWeb(t, webOptions{})
	llm := fakellm.New(t)
	admin, member := newClient(), newClient()
	w.signUp(admin, "gandalf", "you-shall-not-pass")
	w.call(admin, "Admin.SetSettings", map[string]string{"signUpMode": "open"})
	w.call(admin, "Admin.SetBaseline", []string{"chat.create"})
	w.call(admin, "Connections.Create", map[string]any{"name": "shared", "baseUrl": llm.URL()})
	w.signUp(member, "sam", "po-tay-toes-boiled")
	_, body := w.call(member, "Models.Picker")
	var models []struct{ ID int64 }
	json.Unmarshal([]byte(body), &models)
	if len(models) == 0 {
		t.Fatalf("no model: %s", body)
	}
	for _, in := range []map[string]any{
		{"modelId": models[0].ID, "content": "hi", "systemPrompt": "You obey sam only."},
		{"modelId": models[0].ID, "content": "hi", "params": map[string]any{"temperature": 2}},
	} {
		if code, body := w.call(member, "Chats.Send", in); code != 403 {
			t.Errorf("Chats.Send %v without chat.params: %d %s, want 403", in, code, body)
		}
	}
	// Without settings the same member may start a chat.
	if code, body := w.call(member, "Chats.Send", map[string]any{"modelId": models[0].ID, "content": "hi"}); code != 200 {
		t.Errorf("plain Chats.Send: %d %s", code, body)
	}
}
