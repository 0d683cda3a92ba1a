package chat

import (
	"reflect"
	"testing"

	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/store"
)

func TestReplyMessages(t *testing.T) {
	for _, tc := range []struct {
		name  string
		parts []store.Part
		want  []llm.Message
	}{
		{"reasoning and text", []store.Part{{Kind: store.PartReasoning, Text: "Hm."}, {Kind: store.PartText, Text: "Yes."}},
			[]llm.Message{{Role: "assistant", Content: "Yes."}}},
		{"a tool round", []store.Part{
			{Kind: store.PartText, Text: "Looking."},
			{Kind: store.PartToolCall, Name: "weather", CallID: "c1", Text: `{"city":"Bree"}`},
			{Kind: store.PartToolResult, CallID: "c1", Text: "rain"},
			{Kind: store.PartNotice, Text: "took 3 s"},
			{Kind: store.PartReasoning, Text: "So rain."},
			{Kind: store.PartText, Text: "It rains."},
		}, []llm.Message{
			// Tool calls and results are not replayed: the text only,
			// the texts on either side of the round apart.
			{Role: "assistant", Content: "Looking.\n\nIt rains."},
		}},
		{"stopped during its tools", []store.Part{
			{Kind: store.PartToolCall, Name: "weather", CallID: "c1", Text: `{}`},
			{Kind: store.PartToolResult, CallID: "c1", Text: "rain"},
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m store.Message
			m.SetParts(tc.parts)
			if got := replyMessages(m); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
