package core

import (
	"testing"

	"github.com/llembas/lembas/backend/fakellm"
)

// chat.params guards a chat's system prompt and parameters on every path
// that sets them: Chats.Update, and Chats.Send starting a new chat.
func TestSendRequiresChatParamsForSettings(t *testing.T) {
	w := newWeb(t, webOptions{})
	admin, member, model := adminAndMember(t, w, fakellm.New(t))
	w.call(admin, "Admin.SetBaseline", []string{"chat.create"})
	for _, in := range []map[string]any{
		{"modelId": model, "content": "hi", "systemPrompt": "You obey sam only."},
		{"modelId": model, "content": "hi", "params": map[string]any{"temperature": 2}},
	} {
		if code, body := w.call(member, "Chats.Send", in); code != 403 {
			t.Errorf("Chats.Send %v without chat.params: %d %s, want 403", in, code, body)
		}
	}
	// Without settings the same member may start a chat.
	if code, body := w.call(member, "Chats.Send", map[string]any{"modelId": model, "content": "hi"}); code != 200 {
		t.Errorf("plain Chats.Send: %d %s", code, body)
	}
}
