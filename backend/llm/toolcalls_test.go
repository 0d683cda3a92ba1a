package llm

import (
	"reflect"
	"testing"
)

func TestToolCallAccumulator(t *testing.T) {
	tests := []struct {
		name string
		in   []ToolCallDelta
		want []ToolCall
	}{
		{
			name: "fragments of one call",
			in: []ToolCallDelta{
				{Index: 0, ID: "call_x", Type: "function", Name: "web_search", Arguments: ""},
				{Index: 0, Arguments: `{"query":`},
				{Index: 0, Arguments: `"bree"}`},
			},
			want: []ToolCall{{ID: "call_x", Type: "function", Name: "web_search", Arguments: `{"query":"bree"}`}},
		},
		{
			name: "same tool twice, interleaved and out of order",
			in: []ToolCallDelta{
				{Index: 1, ID: "b", Name: "web_search", Arguments: `{"q":`},
				{Index: 0, ID: "a", Name: "web_search", Arguments: `{"q":`},
				{Index: 0, Arguments: `"x"}`},
				{Index: 1, Arguments: `"y"}`},
			},
			want: []ToolCall{
				{ID: "a", Type: "function", Name: "web_search", Arguments: `{"q":"x"}`},
				{ID: "b", Type: "function", Name: "web_search", Arguments: `{"q":"y"}`},
			},
		},
		{
			name: "missing id and empty arguments",
			in:   []ToolCallDelta{{Index: 0, Name: "now"}, {Index: 3, Name: "later", Arguments: " "}},
			want: []ToolCall{
				{ID: "call_0", Type: "function", Name: "now", Arguments: "{}"},
				{ID: "call_1", Type: "function", Name: "later", Arguments: "{}"},
			},
		},
		{
			name: "no index, whole calls",
			in: []ToolCallDelta{
				{Index: -1, ID: "a", Name: "one", Arguments: `{}`},
				{Index: -1, ID: "b", Name: "two", Arguments: `{"x":1}`},
			},
			want: []ToolCall{
				{ID: "a", Type: "function", Name: "one", Arguments: `{}`},
				{ID: "b", Type: "function", Name: "two", Arguments: `{"x":1}`},
			},
		},
		{
			name: "no index, continued fragments",
			in: []ToolCallDelta{
				{Index: -1, ID: "a", Name: "one", Arguments: `{"x"`},
				{Index: -1, Arguments: `:1}`},
				{Index: -1, Name: "two"},
				{Index: -1, Arguments: `{}`},
			},
			want: []ToolCall{
				{ID: "a", Type: "function", Name: "one", Arguments: `{"x":1}`},
				{ID: "call_1", Type: "function", Name: "two", Arguments: `{}`},
			},
		},
		{
			name: "index reused with a new id",
			in: []ToolCallDelta{
				{Index: 0, ID: "a", Name: "one", Arguments: `{"n":1}`},
				{Index: 0, ID: "b", Name: "one", Arguments: `{"n":`},
				{Index: 0, Arguments: `2}`},
			},
			want: []ToolCall{
				{ID: "a", Type: "function", Name: "one", Arguments: `{"n":1}`},
				{ID: "b", Type: "function", Name: "one", Arguments: `{"n":2}`},
			},
		},
		{
			name: "id repeated in every fragment",
			in: []ToolCallDelta{
				{Index: 0, ID: "a", Name: "one", Arguments: `{"n"`},
				{Index: 0, ID: "a", Name: "one", Arguments: `:1}`},
			},
			want: []ToolCall{{ID: "a", Type: "function", Name: "one", Arguments: `{"n":1}`}},
		},
		{name: "nothing", in: nil, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a ToolCallAccumulator
			for _, d := range tt.in {
				a.Add(d)
			}
			if got := a.Calls(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestArgumentsText(t *testing.T) {
	tests := []struct{ raw, want string }{
		{`"{\"a\":1}"`, `{"a":1}`},
		{`{"a":1}`, `{"a":1}`},
		{`null`, ``},
		{``, ``},
	}
	for _, tt := range tests {
		if got := argumentsText([]byte(tt.raw)); got != tt.want {
			t.Errorf("argumentsText(%s) = %q, want %q", tt.raw, got, tt.want)
		}
	}
}
