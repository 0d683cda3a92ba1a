package llm

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// ToolCall is one whole function call the model asked for.
type ToolCall struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Name string `json:"name"`
	// Arguments is the JSON text of the arguments, as the model wrote it
	// (it may not be valid JSON; the tool runner decides).
	Arguments string `json:"arguments"`
}

// ToolCallDelta is one streamed fragment of a tool call. Index says which
// call it continues; -1 means the server sent no index.
type ToolCallDelta struct {
	Index     int
	ID        string
	Type      string
	Name      string
	Arguments string
}

// ToolCallAccumulator rejoins streamed tool-call fragments into whole
// calls. Fragments are keyed on their index, not on the name, since a model
// may call the same tool twice in one turn: the id and name come in the
// first fragment of a call and argument pieces after it, and fragments of
// parallel calls may interleave or arrive with indexes out of order.
// Servers that send no index, or reuse one index for calls with different
// ids, are handled too. The zero value is ready to use.
type ToolCallAccumulator struct {
	calls   []*pendingCall
	byIndex map[int]*pendingCall
	last    *pendingCall
}

type pendingCall struct {
	index, seq int
	call       ToolCall
}

// Add takes the next fragment.
func (a *ToolCallAccumulator) Add(d ToolCallDelta) {
	if a.byIndex == nil {
		a.byIndex = map[int]*pendingCall{}
	}
	var p *pendingCall
	if d.Index < 0 {
		// Without an index, a fragment continues the last call unless it
		// carries another id, or a name when the last call has one.
		if l := a.last; l != nil &&
			(d.ID == "" || l.call.ID == "" || d.ID == l.call.ID) &&
			(d.Name == "" || l.call.Name == "" || d.ID != "" && d.ID == l.call.ID) {
			p = l
		} else {
			p = a.start(a.nextIndex())
		}
	} else {
		p = a.byIndex[d.Index]
		if p == nil || d.ID != "" && p.call.ID != "" && d.ID != p.call.ID {
			p = a.start(d.Index)
		}
	}
	a.last = p
	c := &p.call
	if c.ID == "" {
		c.ID = d.ID
	}
	if c.Type == "" {
		c.Type = d.Type
	}
	switch {
	case c.Name == "":
		c.Name = d.Name
	case d.Name != "" && d.Name != c.Name:
		c.Name += d.Name // a name streamed in pieces
	}
	c.Arguments += d.Arguments
}

func (a *ToolCallAccumulator) start(index int) *pendingCall {
	p := &pendingCall{index: index, seq: len(a.calls)}
	a.calls = append(a.calls, p)
	a.byIndex[index] = p
	return p
}

func (a *ToolCallAccumulator) nextIndex() int {
	next := 0
	for _, p := range a.calls {
		next = max(next, p.index+1)
	}
	return next
}

// Len reports how many calls have been started.
func (a *ToolCallAccumulator) Len() int { return len(a.calls) }

// Calls returns the calls so far, ordered by index. A call without an id
// gets "call_N" (the next request must refer to it), a missing type is
// "function", and empty arguments become "{}", which chat templates parse.
func (a *ToolCallAccumulator) Calls() []ToolCall {
	if len(a.calls) == 0 {
		return nil
	}
	sorted := slices.Clone(a.calls)
	slices.SortStableFunc(sorted, func(x, y *pendingCall) int {
		return cmp.Or(cmp.Compare(x.index, y.index), cmp.Compare(x.seq, y.seq))
	})
	out := make([]ToolCall, len(sorted))
	for i, p := range sorted {
		c := p.call
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_%d", i)
		}
		if c.Type == "" {
			c.Type = "function"
		}
		if strings.TrimSpace(c.Arguments) == "" {
			c.Arguments = "{}"
		}
		out[i] = c
	}
	return out
}

// wireToolCall is a tool call or fragment as the OpenAI API spells it.
type wireToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string          `json:"name,omitempty"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
	} `json:"function"`
}

func (w wireToolCall) delta() ToolCallDelta {
	d := ToolCallDelta{Index: -1, ID: w.ID, Type: w.Type, Name: w.Function.Name, Arguments: argumentsText(w.Function.Arguments)}
	if w.Index != nil && *w.Index >= 0 {
		d.Index = *w.Index
	}
	return d
}

// argumentsText reads arguments sent as a JSON string (the standard) or,
// as some gateways do, as a JSON object.
func argumentsText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
