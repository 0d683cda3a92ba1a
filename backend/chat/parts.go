package chat

import (
	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/store"
)

// replyMessages turns a stored reply's parts into the request messages that
// replay it: its text as assistant content, a tool call on the assistant
// message it follows, a tool result as a tool message. Reasoning is never
// replayed, nor are pauses and notices (they are LLeMbas', not the
// model's). A reply of text alone is one assistant message, as before.
func replyMessages(m store.Message) []llm.Message {
	var out []llm.Message
	var cur *llm.Message
	assistant := func() *llm.Message {
		if cur == nil {
			out = append(out, llm.Message{Role: string(store.RoleAssistant)})
			cur = &out[len(out)-1]
		}
		return cur
	}
	for _, p := range m.Parts() {
		switch p.Kind {
		case store.PartText:
			if p.Text != "" {
				a := assistant()
				a.Content += p.Text
			}
		case store.PartToolCall:
			a := assistant()
			a.ToolCalls = append(a.ToolCalls, llm.ToolCall{ID: p.CallID, Type: "function", Name: p.Name, Arguments: p.Text})
		case store.PartToolResult:
			out = append(out, llm.Message{Role: string(store.RoleTool), ToolCallID: p.CallID, Content: p.Text})
			cur = nil
		}
	}
	return out
}
