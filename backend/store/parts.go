package store

import (
	"encoding/json"
	"strings"
)

// PartKind is what one part of a reply is.
type PartKind string

// The kinds of parts a reply is made of, in the order they happened.
const (
	PartText       PartKind = "text"        // Markdown from the model
	PartReasoning  PartKind = "reasoning"   // the model's reasoning, plain text
	PartToolCall   PartKind = "tool_call"   // a call the model asked for: Name, CallID, Text = arguments
	PartToolResult PartKind = "tool_result" // what a call returned: CallID, Text = output
	PartPause      PartKind = "pause"       // the reply waits for the reader: Text says for what
	PartNotice     PartKind = "notice"      // a line from LLeMbas itself, plain text
)

// Part is one step of a reply. Text is Markdown for a text part and plain
// text for every other kind (never HTML).
type Part struct {
	Kind   PartKind `json:"kind"`
	Text   string   `json:"text,omitempty"`
	Name   string   `json:"name,omitempty"`
	CallID string   `json:"callId,omitempty"`
	// Error marks a tool result that is a failure (the tool failed, was
	// not offered, or panicked): the model reads it as text all the same.
	Error bool `json:"error,omitempty"`
}

// storedPart is a part as the parts column holds it. Text and reasoning
// parts keep only their length (N bytes): their text is in the content and
// reasoning columns, concatenated in order, which search, requests and
// Continue read as before.
type storedPart struct {
	Kind   PartKind `json:"kind"`
	N      int      `json:"n,omitempty"`
	Text   string   `json:"text,omitempty"`
	Name   string   `json:"name,omitempty"`
	CallID string   `json:"callId,omitempty"`
	Error  bool     `json:"error,omitempty"`
}

// JoinParts splits parts into the three columns a message row stores:
// content (the text parts in order), reasoning (the reasoning parts in
// order) and the layout. The layout is empty when the parts are what an
// old row reads as (DefaultParts), so a reply of reasoning and text is
// stored exactly as before.
func JoinParts(parts []Part) (content, reasoning, layout string) {
	var c, r strings.Builder
	for _, p := range parts {
		switch p.Kind {
		case PartText:
			c.WriteString(p.Text)
		case PartReasoning:
			r.WriteString(p.Text)
		}
	}
	content, reasoning = c.String(), r.String()
	if isDefault(parts, content, reasoning) {
		return content, reasoning, ""
	}
	out := make([]storedPart, len(parts))
	for i, p := range parts {
		out[i] = storedPart{Kind: p.Kind, Text: p.Text, Name: p.Name, CallID: p.CallID, Error: p.Error}
		if p.Kind == PartText || p.Kind == PartReasoning {
			out[i].Text, out[i].N = "", len(p.Text)
		}
	}
	b, _ := json.Marshal(out)
	return content, reasoning, string(b)
}

// isDefault reports whether parts read back from content and reasoning
// alone (no layout) as the same list.
func isDefault(parts []Part, content, reasoning string) bool {
	d := DefaultParts(content, reasoning)
	if len(d) != len(parts) {
		return false
	}
	for i := range d {
		if d[i] != parts[i] {
			return false
		}
	}
	return true
}

// DefaultParts is how a row without a layout reads (every row written
// before replies had parts): its reasoning, if any, then its text. A reply
// with neither is one empty text part.
func DefaultParts(content, reasoning string) []Part {
	var out []Part
	if reasoning != "" {
		out = append(out, Part{Kind: PartReasoning, Text: reasoning})
	}
	if content != "" || reasoning == "" {
		out = append(out, Part{Kind: PartText, Text: content})
	}
	return out
}

// SplitParts is JoinParts reversed. A layout that does not fit the
// columns (unreadable, or lengths that do not add up) reads as the default,
// so nothing stored is ever lost from view; reads that leave reasoning out
// (requests) get empty reasoning parts.
func SplitParts(content, reasoning, layout string) []Part {
	if layout == "" {
		return DefaultParts(content, reasoning)
	}
	var stored []storedPart
	if err := json.Unmarshal([]byte(layout), &stored); err != nil {
		return DefaultParts(content, reasoning)
	}
	out := make([]Part, len(stored))
	c, r := content, reasoning
	take := func(s *string, n int) string {
		n = min(max(n, 0), len(*s))
		v := (*s)[:n]
		*s = (*s)[n:]
		return v
	}
	for i, p := range stored {
		out[i] = Part{Kind: p.Kind, Text: p.Text, Name: p.Name, CallID: p.CallID, Error: p.Error}
		switch p.Kind {
		case PartText:
			if p.N > len(c) {
				return DefaultParts(content, reasoning)
			}
			out[i].Text = take(&c, p.N)
		case PartReasoning:
			out[i].Text = take(&r, p.N)
		}
	}
	if c != "" {
		return DefaultParts(content, reasoning)
	}
	return out
}

// ReplyText is a reply's text parts as one Markdown text for reading
// (Copy, the replayed turn): text parts that a tool round, a pause or a
// notice stands between are separate paragraphs, not glued together
// ("Looking.It rains."). The stored content stays the plain concatenation
// the layout's lengths count.
func ReplyText(parts []Part) string {
	var b strings.Builder
	apart := false
	for _, p := range parts {
		switch p.Kind {
		case PartText:
			if p.Text == "" {
				continue
			}
			if apart && b.Len() > 0 {
				s := strings.TrimRight(b.String(), " \t")
				b.Reset()
				b.WriteString(s)
				switch {
				case strings.HasSuffix(s, "\n\n"):
				case strings.HasSuffix(s, "\n"):
					b.WriteString("\n")
				default:
					b.WriteString("\n\n")
				}
			}
			b.WriteString(p.Text)
			apart = false
		case PartReasoning:
		default:
			apart = true
		}
	}
	return b.String()
}

// Parts returns the message's parts in order (DefaultParts for a row
// without a layout).
func (m Message) Parts() []Part {
	return SplitParts(m.Content, m.Reasoning, m.layout)
}

// Layout is the stored layout of the message's parts: empty when they are
// the default (DefaultParts).
func (m Message) Layout() string { return m.layout }

// SetParts makes parts the message's content, reasoning and layout, for
// AddMessage.
func (m *Message) SetParts(parts []Part) {
	m.Content, m.Reasoning, m.layout = JoinParts(parts)
}
