package fakellm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// StreamBuilder builds a chat completion stream shaped like llama.cpp's:
// a role chunk first, one chunk per piece in the order the methods were
// called, a final chunk with finish_reason, an optional usage chunk, then
// data: [DONE].
type StreamBuilder struct {
	events       []Event
	reasoningKey string
	finish       string
	toolCalls    bool
	usage        *usage
	errored      bool
}

type usage struct {
	CompletionTokens int `json:"completion_tokens"`
	PromptTokens     int `json:"prompt_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

type toolCallDelta struct {
	Index    int    `json:"index"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// NewStream starts an empty stream.
func NewStream() *StreamBuilder {
	return &StreamBuilder{reasoningKey: "reasoning_content"}
}

// Stream is a plain answer streamed as the given content pieces.
func Stream(pieces ...string) Reply {
	return NewStream().Content(pieces...).Reply()
}

// Content adds one content delta per piece.
func (b *StreamBuilder) Content(pieces ...string) *StreamBuilder {
	for _, p := range pieces {
		b.delta(map[string]string{"content": p})
	}
	return b
}

// Reasoning adds one reasoning delta per piece, in the field set by
// ReasoningKey.
func (b *StreamBuilder) Reasoning(pieces ...string) *StreamBuilder {
	for _, p := range pieces {
		b.delta(map[string]string{b.reasoningKey: p})
	}
	return b
}

// ReasoningKey sets the delta field later Reasoning pieces go in:
// "reasoning_content" (llama.cpp, DeepSeek; the default) or "reasoning"
// (vLLM, OpenRouter).
func (b *StreamBuilder) ReasoningKey(key string) *StreamBuilder {
	b.reasoningKey = key
	return b
}

// Think adds the pieces as content wrapped in <think> and </think>, each
// tag its own chunk, as Ollama and servers without a reasoning parser send
// them. Tags split mid-tag can be sent with Content.
func (b *StreamBuilder) Think(pieces ...string) *StreamBuilder {
	b.Content("<think>")
	b.Content(pieces...)
	return b.Content("</think>")
}

// ToolCall adds a tool call keyed by index: a fragment carrying id, name and
// empty arguments, then one fragment per argument piece. Empty id and name
// continue an earlier call, so fragments of parallel calls can interleave.
// The stream then finishes with "tool_calls" unless Finish says otherwise.
func (b *StreamBuilder) ToolCall(index int, id, name string, argPieces ...string) *StreamBuilder {
	b.toolCalls = true
	if id != "" || name != "" {
		tc := toolCallDelta{Index: index, ID: id, Type: "function"}
		tc.Function.Name = name
		b.delta(map[string][]toolCallDelta{"tool_calls": {tc}})
	}
	for _, p := range argPieces {
		tc := toolCallDelta{Index: index}
		tc.Function.Arguments = p
		b.delta(map[string][]toolCallDelta{"tool_calls": {tc}})
	}
	return b
}

// Event adds a raw event at this point of the stream.
func (b *StreamBuilder) Event(e Event) *StreamBuilder {
	b.events = append(b.events, e)
	return b
}

// Error adds data: {"error":{...}} at this point, as servers do when
// generation fails mid-stream; the stream then gets no finish or usage
// chunk, only data: [DONE].
func (b *StreamBuilder) Error(message string) *StreamBuilder {
	b.errored = true
	return b.Event(Event{Data: `{"error":{"code":500,"message":` + jsonString(message) + `,"type":"server_error"}}`})
}

// Finish sets the final chunk's finish_reason, such as "length".
func (b *StreamBuilder) Finish(reason string) *StreamBuilder {
	b.finish = reason
	return b
}

// Usage adds a usage chunk with empty choices after the final chunk. Like
// real servers, it is sent only when the request asked for
// stream_options.include_usage.
func (b *StreamBuilder) Usage(promptTokens, completionTokens int) *StreamBuilder {
	b.usage = &usage{CompletionTokens: completionTokens, PromptTokens: promptTokens, TotalTokens: promptTokens + completionTokens}
	return b
}

// Reply finishes the stream.
func (b *StreamBuilder) Reply() Reply {
	events := make([]Event, 0, len(b.events)+4)
	events = append(events, Event{Data: chunk("null", `{"role":"assistant","content":null}`)})
	events = append(events, b.events...)
	if !b.errored {
		finish := b.finish
		if finish == "" {
			finish = "stop"
			if b.toolCalls {
				finish = "tool_calls"
			}
		}
		events = append(events, Event{Data: chunk(jsonString(finish), "{}")})
		if b.usage != nil {
			events = append(events, Event{
				Data:      usageChunk(*b.usage),
				usageOnly: true,
			})
		}
	}
	events = append(events, Event{Data: "[DONE]"})
	return Reply{Header: http.Header{"Content-Type": {"text/event-stream"}}, Events: events}
}

func (b *StreamBuilder) delta(d any) {
	b.events = append(b.events, Event{Data: chunk("null", jsonString(d))})
}

// envelope mirrors llama.cpp's field order and values, so built streams
// read like the captures next to them.
const envelope = `"created":1796002209,"id":"chatcmpl-fakellm","model":"tiny-qwen35","system_fingerprint":"b0-unknown","object":"chat.completion.chunk"`

func chunk(finishReason, delta string) string {
	return fmt.Sprintf(`{"choices":[{"finish_reason":%s,"index":0,"delta":%s}],%s}`, finishReason, delta, envelope)
}

func usageChunk(u usage) string {
	return `{"choices":[],` + envelope + `,"usage":` + jsonString(u) + `}`
}

// jsonString encodes v without HTML escaping, so "<think>" stays literal as
// real servers send it.
func jsonString(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("fakellm: %v", err))
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
