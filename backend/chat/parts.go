package chat

import (
	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/store"
)

// replyMessages turns a stored reply's parts into the request messages that
// replay it: its text, as one assistant message. Tool calls and their
// results are not replayed, like reasoning: the answer already holds what
// the model made of them, and stale results (with the schemas) in every
// later request waste the window and send small models into search loops;
// they stay in the transcript. Pauses and notices are LLeMbas', not the
// model's. A reply with no text (stopped during its tools) replays as
// nothing.
func replyMessages(m store.Message) []llm.Message {
	text := store.ReplyText(m.Parts())
	if text == "" {
		return nil
	}
	return []llm.Message{{Role: string(store.RoleAssistant), Content: text}}
}
