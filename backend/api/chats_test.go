package api

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/render"
	"github.com/llembas/lembas/backend/store"
)

// TestStoredToolResultKeepsItsFailure: a stored reply's failed tool result
// is sent as failed (Message.parts[].error), as its live frame said, so a
// chat opened later draws "Failed:" and counts it, not "Result:".
func TestStoredToolResultKeepsItsFailure(t *testing.T) {
	m := store.Message{Role: store.RoleAssistant, Status: store.StatusFinal}
	m.SetParts([]store.Part{
		{Kind: store.PartText, Text: "Let me look. "},
		{Kind: store.PartToolCall, Name: "fetch_url", CallID: "c1", Text: `{"url":"http://10.0.0.1/"}`},
		{Kind: store.PartToolResult, Name: "fetch_url", CallID: "c1", Text: "The address is not allowed.", Error: true},
		{Kind: store.PartToolCall, Name: "web_search", CallID: "c2", Text: `{"query":"Bree"}`},
		{Kind: store.PartToolResult, Name: "web_search", CallID: "c2", Text: "1. Bree"},
		{Kind: store.PartText, Text: "It rains."},
	})
	c := &Chats{render: render.New()}
	b, err := json.Marshal(c.message(m))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Content string
		Parts   []struct {
			Kind   string
			CallID string `json:"callId"`
			Error  bool
		}
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, p := range v.Parts {
		if p.Error {
			failed = append(failed, p.Kind+" "+p.CallID)
		}
	}
	if strings.Join(failed, ",") != "tool_result c1" {
		t.Errorf("parts marked failed: %v, want only c1's result; sent %s", failed, b)
	}
	// Copy takes content: the texts on either side of the round apart.
	if v.Content != "Let me look.\n\nIt rains." {
		t.Errorf("content %q", v.Content)
	}
}
