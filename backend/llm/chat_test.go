package llm

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/fakellm"
)

func TestChatFixtures(t *testing.T) {
	for _, name := range streamFixtures {
		t.Run(name, func(t *testing.T) {
			fake := fakellm.New(t)
			fake.Enqueue(fakellm.Fixture(name))
			c := newClient(t, fake.URL(), Options{})
			var got reply
			res, err := c.Chat(bg(), ask(), got.fn)
			if err != nil {
				t.Fatal(err)
			}
			want := readFixture(t, name)
			wantContent, wantReasoning := want.content, want.reasoning
			if name == "stream-think-tags" {
				var s ThinkSplitter
				wantContent, wantReasoning = s.Feed(want.content)
				c2, r2 := s.Flush()
				wantContent, wantReasoning = wantContent+c2, wantReasoning+r2
				if !strings.HasPrefix(wantReasoning, "on due murm") || !strings.HasPrefix(wantContent, "protect consecutive") {
					t.Fatalf("splitter: reasoning %.20q content %.20q", wantReasoning, wantContent)
				}
			}
			if got.content.String() != wantContent {
				t.Errorf("content = %q, want %q", got.content.String(), wantContent)
			}
			if got.reasoning.String() != wantReasoning {
				t.Errorf("reasoning = %q, want %q", got.reasoning.String(), wantReasoning)
			}
			if strings.Contains(got.content.String()+got.reasoning.String(), "think>") {
				t.Error("a think tag leaked into the output")
			}
			if res.FinishReason != want.finish {
				t.Errorf("finish = %q, want %q", res.FinishReason, want.finish)
			}
			if res.Model != "tiny-qwen35" {
				t.Errorf("model = %q", res.Model)
			}
			if res.Usage == nil || res.Usage.PromptTokens == 0 || res.Usage.CompletionTokens == 0 ||
				res.Usage.TotalTokens != res.Usage.PromptTokens+res.Usage.CompletionTokens {
				t.Errorf("usage = %+v, want counts from the usage chunk or the timings", res.Usage)
			}
			if res.FirstByte <= 0 {
				t.Errorf("FirstByte = %v", res.FirstByte)
			}
			if len(got.deltas) < 5 {
				t.Errorf("%d deltas: the stream was not relayed per event", len(got.deltas))
			}
			if want.toolName != "" {
				wantCalls := []ToolCall{{ID: want.toolID, Type: "function", Name: want.toolName, Arguments: want.toolArgs}}
				if !reflect.DeepEqual(res.ToolCalls, wantCalls) {
					t.Errorf("tool calls = %+v, want %+v", res.ToolCalls, wantCalls)
				}
				if !strings.HasPrefix(want.toolArgs, `{"query":"`) || !strings.HasSuffix(want.toolArgs, `"}`) {
					t.Errorf("fixture arguments %q are not the whole object", want.toolArgs)
				}
			} else if res.ToolCalls != nil {
				t.Errorf("tool calls = %+v, want none", res.ToolCalls)
			}
		})
	}
}

func TestChatUsage(t *testing.T) {
	fake := fakellm.New(t)
	fake.Enqueue(fakellm.Fixture("stream-reasoning-usage"), fakellm.Fixture("stream-no-reasoning"))
	c := newClient(t, fake.URL(), Options{})
	res, err := c.Chat(bg(), ask(), func(Delta) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if want := (Usage{PromptTokens: 18, CompletionTokens: 175, TotalTokens: 193}); *res.Usage != want {
		t.Errorf("usage chunk: %+v, want %+v", *res.Usage, want)
	}
	res, err = c.Chat(bg(), ask(), func(Delta) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if want := (Usage{PromptTokens: 29, CompletionTokens: 70, TotalTokens: 99}); *res.Usage != want {
		t.Errorf("from timings: %+v, want %+v", *res.Usage, want)
	}
}

func TestChatVariants(t *testing.T) {
	tests := []struct {
		name                  string
		reply                 fakellm.Reply
		content, reasoning    string
		usage                 *Usage
		wantDeltasAtLeastOnce bool
	}{
		{
			name:      "reasoning key",
			reply:     fakellm.NewStream().ReasoningKey("reasoning").Reasoning("The user", " greets.").Content("Hello", ", Frodo!").Usage(3, 4).Reply(),
			content:   "Hello, Frodo!",
			reasoning: "The user greets.",
			usage:     &Usage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7},
		},
		{
			name:      "think tags split mid-tag",
			reply:     fakellm.NewStream().Content(" \n<th", "ink", ">\nHmm, ", "a hobbit.</th", "ink>", "\n\n", "Hello <think> is a tag.").Reply(),
			content:   "Hello <think> is a tag.",
			reasoning: "Hmm, a hobbit.",
		},
		{
			name:      "think builder",
			reply:     fakellm.NewStream().Think("Pondering", " deeply").Content("Answer").Reply(),
			content:   "Answer",
			reasoning: "Pondering deeply",
		},
		{
			name:    "think tag later in the answer",
			reply:   fakellm.Stream("Use ", "<think>", " tags."),
			content: "Use <think> tags.",
		},
		{
			name:    "keep-alive comments and event names",
			reply:   fakellm.Stream("Hello", " there").KeepAlive().EventName("completion"),
			content: "Hello there",
		},
		{
			name: "invalid UTF-8 is replaced",
			reply: fakellm.NewStream().
				Event(fakellm.Event{Data: "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"bad \xff\xfe bytes\"}}]}"}).
				Content("ok").Reply(),
			content: "bad \uFFFD\uFFFD bytesok",
		},
		{
			name: "content as parts",
			reply: fakellm.NewStream().
				Event(fakellm.Event{Data: `{"choices":[{"index":0,"delta":{"content":[{"type":"text","text":"in parts"}]}}]}`}).Reply(),
			content: "in parts",
		},
		{
			name: "whole answer to a stream request",
			reply: fakellm.Status(http.StatusOK,
				`{"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"<think>hm</think>All at once."}}],"usage":{"prompt_tokens":5,"completion_tokens":3}}`),
			content:   "All at once.",
			reasoning: "hm",
			usage:     &Usage{PromptTokens: 5, CompletionTokens: 3, TotalTokens: 8},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := fakellm.New(t)
			fake.Enqueue(tt.reply)
			c := newClient(t, fake.URL(), Options{})
			var got reply
			res, err := c.Chat(bg(), ask(), got.fn)
			if err != nil {
				t.Fatal(err)
			}
			if got.content.String() != tt.content {
				t.Errorf("content = %q, want %q", got.content.String(), tt.content)
			}
			if got.reasoning.String() != tt.reasoning {
				t.Errorf("reasoning = %q, want %q", got.reasoning.String(), tt.reasoning)
			}
			for _, d := range got.deltas {
				if !utf8.ValidString(d.Content) || !utf8.ValidString(d.Reasoning) {
					t.Errorf("invalid UTF-8 passed on: %q", d.Content)
				}
			}
			if tt.usage != nil && (res.Usage == nil || *res.Usage != *tt.usage) {
				t.Errorf("usage = %+v, want %+v", res.Usage, tt.usage)
			}
		})
	}
}

func TestChatToolCallsInterleaved(t *testing.T) {
	fake := fakellm.New(t)
	fake.Enqueue(fakellm.NewStream().
		ToolCall(1, "", "lookup", `{"q":`). // index 1 first, no id
		ToolCall(0, "call_a", "web_search", `{"query":`).
		ToolCall(1, "", "", `"x"}`).
		ToolCall(0, "", "", `"bree"}`).
		Reply())
	c := newClient(t, fake.URL(), Options{})
	res, err := c.Chat(bg(), ask(), func(Delta) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolCall{
		{ID: "call_a", Type: "function", Name: "web_search", Arguments: `{"query":"bree"}`},
		{ID: "call_1", Type: "function", Name: "lookup", Arguments: `{"q":"x"}`},
	}
	if !reflect.DeepEqual(res.ToolCalls, want) {
		t.Errorf("got %+v\nwant %+v", res.ToolCalls, want)
	}
	if res.FinishReason != "tool_calls" {
		t.Errorf("finish = %q", res.FinishReason)
	}
}

func TestChatFailures(t *testing.T) {
	openAIContext := fakellm.Status(http.StatusBadRequest, `{"error":{"message":"This model's maximum context length is 16385 tokens. However, your messages resulted in 20011 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`)
	tests := []struct {
		name      string
		reply     fakellm.Reply
		apiKey    string
		kind      apperr.Kind
		words     []string
		status    int // of the EndpointError, 0 for none
		content   string
		timeout   bool
		retryWait time.Duration
	}{
		{name: "401 with key", reply: fakellm.Status(401, ""), apiKey: "sk-test", kind: apperr.Unavailable, words: []string{"rejected the API key (401)", "connection settings"}, status: 401},
		{name: "401 without key", reply: fakellm.Status(401, ""), kind: apperr.Unavailable, words: []string{"wants an API key (401)"}, status: 401},
		{name: "403", reply: fakellm.Status(403, ""), kind: apperr.Unavailable, words: []string{"refused access (403)"}, status: 403},
		{name: "404 model", reply: fakellm.Status(404, ""), kind: apperr.Unavailable, words: []string{`no model named "tiny-qwen35" (404)`, "model list"}, status: 404},
		{name: "429", reply: fakellm.Status(429, ""), kind: apperr.Unavailable, words: []string{"limiting requests (429)", "try again in 1 second"}, status: 429, retryWait: time.Second},
		{name: "500", reply: fakellm.Status(500, ""), kind: apperr.Unavailable, words: []string{"failed while answering (500)", "Sorry about that", "server's log"}, status: 500},
		{name: "500 llama.cpp bad json", reply: fakellm.Fixture("error-bad-json"), kind: apperr.Unavailable, words: []string{"(500)", "parse error"}, status: 500},
		{name: "500 llama.cpp template", reply: fakellm.Fixture("error-bad-role"), kind: apperr.Unavailable, words: []string{"(500)", "No user query found"}, status: 500},
		{name: "503", reply: fakellm.Status(503, ""), kind: apperr.Unavailable, words: []string{"unavailable (503)"}, status: 503},
		{name: "context llama.cpp", reply: fakellm.Fixture("error-context-exceeded"), kind: apperr.Invalid, words: []string{"longer than the model's context (20011 of 16384 tokens)", "new chat"}, status: 400},
		{name: "context OpenAI", reply: openAIContext, kind: apperr.Invalid, words: []string{"(20011 of 16385 tokens)"}, status: 400},
		{name: "other 400", reply: fakellm.Status(400, `{"error":{"message":"temperature must be positive","type":"invalid_request_error"}}`), kind: apperr.Invalid, words: []string{"refused the request (400)", "temperature must be positive"}, status: 400},
		{name: "redirect", reply: fakellm.Status(301, "").WithHeader("Location", "https://llm.example/v1/chat/completions"), kind: apperr.Unavailable, words: []string{"redirects to https://llm.example", "base URL"}, status: 301},
		{name: "in-stream error", reply: fakellm.InStreamError("the model crashed"), kind: apperr.Unavailable, words: []string{"failed in the middle of the answer", "the model crashed"}, status: 200, content: "Partial answer"},
		{name: "malformed JSON", reply: fakellm.Malformed(), kind: apperr.Unavailable, words: []string{"not valid JSON", `{\"choices`}, content: "Hel"},
		{name: "reset mid-stream", reply: fakellm.Fixture("stream-no-reasoning").ResetAfter(3), kind: apperr.Unavailable, words: []string{"broke off"}, content: "on outputs"},
		{name: "html page", reply: fakellm.Reply{Status: 200, Header: http.Header{"Content-Type": {"text/html"}}, Body: "<html><body>Welcome</body></html>"}, kind: apperr.Unavailable, words: []string{"web page", "/v1"}},
		{name: "endless line", reply: fakellm.NewStream().Content("start").Event(fakellm.Event{Data: strings.Repeat("x", MaxEventSize+10)}).Reply(), kind: apperr.Unavailable, words: []string{"without a line break"}, content: "start"},
		{name: "not a stream", reply: fakellm.Reply{Status: 200, Header: http.Header{"Content-Type": {"text/plain"}}, Body: "hello"}, kind: apperr.Unavailable, words: []string{"without a chat stream"}},
		{name: "error event", reply: fakellm.NewStream().Content("a").Event(fakellm.Event{Name: "error", Data: "upstream overloaded"}).Reply(), kind: apperr.Unavailable, words: []string{"upstream overloaded"}, status: 200, content: "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := fakellm.New(t)
			fake.Enqueue(tt.reply)
			c, err := NewClient(Endpoint{BaseURL: fake.URL(), APIKey: tt.apiKey}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got reply
			_, err = c.Chat(bg(), ask(), got.fn)
			checkErr(t, err, tt.kind, tt.words...)
			if got.content.String() != tt.content {
				t.Errorf("delivered %q before the error, want %q", got.content.String(), tt.content)
			}
			if tt.status != 0 {
				e := endpointErr(t, err)
				if e.Status != tt.status {
					t.Errorf("EndpointError.Status = %d, want %d", e.Status, tt.status)
				}
				if e.RetryAfter != tt.retryWait {
					t.Errorf("RetryAfter = %v, want %v", e.RetryAfter, tt.retryWait)
				}
			}
			if errors.Is(err, ErrTimeout) || errors.Is(err, context.Canceled) {
				t.Errorf("%v should be neither a timeout nor a cancellation", err)
			}
		})
	}
}

func TestChatContextExceededFields(t *testing.T) {
	fake := fakellm.New(t)
	fake.Enqueue(fakellm.Fixture("error-context-exceeded"))
	_, err := newClient(t, fake.URL(), Options{}).Chat(bg(), ask(), func(Delta) error { return nil })
	e := endpointErr(t, err)
	if !e.ContextExceeded() || e.Type != "exceed_context_size_error" || e.PromptTokens != 20011 || e.ContextSize != 16384 {
		t.Errorf("got %+v", e)
	}
}

func TestChatRouteNotFound(t *testing.T) {
	fake := fakellm.New(t)
	c := newClient(t, root(fake)+"/api", Options{})
	_, err := c.Chat(bg(), ask(), func(Delta) error { return nil })
	checkErr(t, err, apperr.Unavailable, "Nothing answers at", "/api/chat/completions (404)", "end in /v1")
	if e := endpointErr(t, err); e.ModelNotFound() {
		t.Errorf("route 404 taken for a missing model: %+v", e)
	}
}

func TestStreamOptionsRetry(t *testing.T) {
	fake := fakellm.New(t)
	fake.SetDefault(fakellm.RejectStreamOptions())
	c := newClient(t, fake.URL(), Options{})
	var got reply
	res, err := c.Chat(bg(), ask(), got.fn)
	if err != nil {
		t.Fatal(err)
	}
	if !res.StreamOptionsRejected {
		t.Error("StreamOptionsRejected = false after a retry")
	}
	if got.content.Len() == 0 {
		t.Error("no content after the retry")
	}
	reqs := chatRequests(fake)
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2 (one retry)", len(reqs))
	}
	if _, ok := reqs[0].JSON["stream_options"]; !ok {
		t.Error("first request had no stream_options")
	}
	if _, ok := reqs[1].JSON["stream_options"]; ok {
		t.Error("retry still had stream_options")
	}

	// The client remembers: the next request goes without at once.
	res, err = c.Chat(bg(), ask(), func(Delta) error { return nil })
	if err != nil || res.StreamOptionsRejected {
		t.Fatalf("second chat: %+v, %v", res, err)
	}
	if n := len(chatRequests(fake)); n != 3 {
		t.Errorf("%d requests after the second chat, want 3", n)
	}
}

func TestStreamOptions(t *testing.T) {
	tests := []struct {
		name        string
		noOptions   bool
		reply       fakellm.Reply
		wantOptions bool
		wantReqs    int
		wantErr     bool
	}{
		{name: "sent by default", reply: fakellm.Fixture("stream-reasoning-usage"), wantOptions: true, wantReqs: 1},
		{name: "endpoint flag", noOptions: true, reply: fakellm.Fixture("stream-reasoning-usage"), wantReqs: 1},
		{name: "other 400 is not retried", reply: fakellm.Status(400, `{"error":{"message":"bad temperature"}}`), wantOptions: true, wantReqs: 1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := fakellm.New(t)
			fake.Enqueue(tt.reply)
			c, err := NewClient(Endpoint{BaseURL: fake.URL(), NoStreamOptions: tt.noOptions}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Chat(bg(), ask(), func(Delta) error { return nil })
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			reqs := chatRequests(fake)
			if len(reqs) != tt.wantReqs {
				t.Fatalf("%d requests, want %d", len(reqs), tt.wantReqs)
			}
			opts, ok := reqs[0].JSON["stream_options"].(map[string]any)
			if ok != tt.wantOptions || ok && opts["include_usage"] != true {
				t.Errorf("stream_options = %v, want present=%v", reqs[0].JSON["stream_options"], tt.wantOptions)
			}
			if reqs[0].JSON["stream"] != true {
				t.Errorf("stream = %v", reqs[0].JSON["stream"])
			}
		})
	}
}

func TestReasoningEffort(t *testing.T) {
	for _, effort := range append([]string{""}, Efforts...) {
		t.Run("effort="+effort, func(t *testing.T) {
			fake := fakellm.New(t)
			c := newClient(t, fake.URL(), Options{})
			req := ask()
			req.ReasoningEffort = effort
			if _, err := c.Chat(bg(), req, func(Delta) error { return nil }); err != nil {
				t.Fatal(err)
			}
			body := chatRequests(fake)[0].JSON
			re, hasRE := body["reasoning_effort"]
			kw, hasKW := body["chat_template_kwargs"]
			if effort == "" {
				if hasRE || hasKW {
					t.Errorf("no effort, but the body has reasoning_effort=%v chat_template_kwargs=%v", re, kw)
				}
				return
			}
			if re != effort {
				t.Errorf("reasoning_effort = %v, want %q", re, effort)
			}
			if m, _ := kw.(map[string]any); m["reasoning_effort"] != effort {
				t.Errorf("chat_template_kwargs = %v, want reasoning_effort %q", kw, effort)
			}
		})
	}

	t.Run("merged with given kwargs", func(t *testing.T) {
		fake := fakellm.New(t)
		req := ask()
		req.ReasoningEffort = "low"
		req.Params = map[string]any{"chat_template_kwargs": map[string]any{"enable_thinking": true}}
		if _, err := newClient(t, fake.URL(), Options{}).Chat(bg(), req, func(Delta) error { return nil }); err != nil {
			t.Fatal(err)
		}
		kw := chatRequests(fake)[0].JSON["chat_template_kwargs"]
		if want := map[string]any{"enable_thinking": true, "reasoning_effort": "low"}; !reflect.DeepEqual(kw, want) {
			t.Errorf("chat_template_kwargs = %v, want %v", kw, want)
		}
		if _, changed := req.Params["chat_template_kwargs"].(map[string]any)["reasoning_effort"]; changed {
			t.Error("the caller's Params were modified")
		}
	})

	t.Run("unknown effort", func(t *testing.T) {
		fake := fakellm.New(t)
		req := ask()
		req.ReasoningEffort = "max"
		_, err := newClient(t, fake.URL(), Options{}).Chat(bg(), req, func(Delta) error { return nil })
		checkErr(t, err, apperr.Invalid, `"max"`, "low, medium, high")
		if n := len(fake.Requests()); n != 0 {
			t.Errorf("%d requests sent for an invalid effort", n)
		}
	})
}

func TestRequestBody(t *testing.T) {
	fake := fakellm.New(t)
	c := newClient(t, fake.URL(), Options{})
	req := ChatRequest{
		Model: "tiny-qwen35",
		Messages: []Message{
			{Role: "system", Content: "Be brief."},
			{Role: "user", Content: "Plain text"},
			{Role: "user", Parts: []ContentPart{TextPart("What is this?"), ImagePart("image/png", []byte{0x89, 'P', 'N', 'G'})}},
		},
		Params: map[string]any{"temperature": 0.5, "max_tokens": 12, "model": "evil", "stream": false, "messages": "gone", "stream_options": nil},
		Tools:  []json.RawMessage{json.RawMessage(`{"type":"function","function":{"name":"web_search","parameters":{"type":"object"}}}`)},
	}
	if _, err := c.Chat(bg(), req, func(Delta) error { return nil }); err != nil {
		t.Fatal(err)
	}
	body := chatRequests(fake)[0].JSON
	if body["model"] != "tiny-qwen35" || body["stream"] != true || body["temperature"] != 0.5 || body["max_tokens"] != 12.0 {
		t.Errorf("params: %v", body)
	}
	if _, ok := body["stream_options"].(map[string]any); !ok {
		t.Errorf("Params replaced stream_options: %v", body["stream_options"])
	}
	msgs := body["messages"].([]any)
	if len(msgs) != 3 {
		t.Fatalf("messages: %v", msgs)
	}
	if s, ok := msgs[1].(map[string]any)["content"].(string); !ok || s != "Plain text" {
		t.Errorf("text-only message content = %#v, want a plain string", msgs[1].(map[string]any)["content"])
	}
	parts, ok := msgs[2].(map[string]any)["content"].([]any)
	if !ok || len(parts) != 2 {
		t.Fatalf("message with parts: content = %#v, want an array of 2", msgs[2].(map[string]any)["content"])
	}
	if want := map[string]any{"type": "text", "text": "What is this?"}; !reflect.DeepEqual(parts[0], want) {
		t.Errorf("text part = %v", parts[0])
	}
	img := parts[1].(map[string]any)
	if img["type"] != "image_url" || img["image_url"].(map[string]any)["url"] != "data:image/png;base64,iVBORw==" {
		t.Errorf("image part = %v", img)
	}
	if tools, _ := body["tools"].([]any); len(tools) != 1 {
		t.Errorf("tools = %v", body["tools"])
	}
}

// TestToolResultRequest rebuilds the captured request that continues after
// a tool call and checks that the messages go out in the same shape.
func TestToolResultRequest(t *testing.T) {
	var captured struct {
		Messages []any `json:"messages"`
	}
	if err := json.Unmarshal(fakellm.FixtureRequest("stream-after-tool-result"), &captured); err != nil {
		t.Fatal(err)
	}
	fake := fakellm.New(t)
	fake.Enqueue(fakellm.Fixture("stream-after-tool-result"))
	req := ChatRequest{Model: "tiny-qwen35", Messages: []Message{
		{Role: "user", Content: "Search the web for the weather in Bree."},
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "call_1", Type: "function", Name: "web_search", Arguments: `{"query":"weather Bree"}`}}},
		{Role: "tool", ToolCallID: "call_1", Content: "Bree: rain, 9 C, wind from the west."},
	}}
	if _, err := newClient(t, fake.URL(), Options{}).Chat(bg(), req, func(Delta) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got := chatRequests(fake)[0].JSON["messages"]; !reflect.DeepEqual(got, captured.Messages) {
		t.Errorf("messages:\n got %v\nwant %v", got, captured.Messages)
	}
}

func TestChatValidation(t *testing.T) {
	tests := []struct {
		name string
		req  ChatRequest
		word string
	}{
		{"no model", ChatRequest{Messages: ask().Messages}, "model"},
		{"no messages", ChatRequest{Model: "m"}, "no messages"},
		{"no role", ChatRequest{Model: "m", Messages: []Message{{Content: "x"}}}, "no role"},
		{"bad part", ChatRequest{Model: "m", Messages: []Message{{Role: "user", Parts: []ContentPart{{Type: "audio"}}}}}, "unknown type"},
		{"bad tool", ChatRequest{Model: "m", Messages: ask().Messages, Tools: []json.RawMessage{json.RawMessage(`{`)}}, "not valid JSON"},
		{"bad param", ChatRequest{Model: "m", Messages: ask().Messages, Params: map[string]any{"f": func() {}}}, "cannot be sent as JSON"},
	}
	fake := fakellm.New(t)
	c := newClient(t, fake.URL(), Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Chat(bg(), tt.req, func(Delta) error { return nil })
			checkErr(t, err, apperr.Invalid, tt.word)
		})
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("%d requests sent for invalid input", n)
	}
}

func TestStopClosesUpstream(t *testing.T) {
	fake := fakellm.New(t)
	// Without the stop, this stream would hang after its third event.
	fake.Enqueue(fakellm.Fixture("stream-no-reasoning").StallAfter(3))
	watch := watchConns(t, strings.TrimPrefix(root(fake), "http://"))
	c := newClient(t, "http://"+watch.addr+"/v1", Options{})
	errStop := errors.New("stop pressed")
	var got reply
	within(t, 5*time.Second, "Chat after fn stopped it", func() {
		_, err := c.Chat(bg(), ask(), func(d Delta) error {
			_ = got.fn(d)
			return errStop
		})
		if err != errStop {
			t.Errorf("err = %v, want fn's error as is", err)
		}
	})
	if len(got.deltas) != 1 {
		t.Errorf("%d deltas after the stop, want 1", len(got.deltas))
	}
	select {
	case <-watch.closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the client kept the upstream connection open after the stop")
	}
}

func TestTimeouts(t *testing.T) {
	tests := []struct {
		name    string
		reply   fakellm.Reply
		opt     Options
		words   []string
		content string
	}{
		{
			name:  "first token",
			reply: fakellm.Fixture("stream-no-reasoning").FirstByteAfter(30 * time.Second),
			opt:   Options{FirstTokenTimeout: 150 * time.Millisecond},
			words: []string{"did not start answering within 150 ms"},
		},
		{
			name:    "stall",
			reply:   fakellm.Fixture("stream-no-reasoning").StallAfter(3),
			opt:     Options{StallTimeout: 150 * time.Millisecond},
			words:   []string{"stopped sending for 150 ms"},
			content: "on outputs",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := fakellm.New(t)
			fake.Enqueue(tt.reply)
			c := newClient(t, fake.URL(), tt.opt)
			var got reply
			start := time.Now()
			_, err := c.Chat(bg(), ask(), got.fn)
			// The endpoint would answer after 30 s: ending well before
			// shows the timeout fired (seconds of margin for a busy machine).
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("took %v", d)
			}
			checkErr(t, err, apperr.Unavailable, tt.words...)
			if !errors.Is(err, ErrTimeout) {
				t.Errorf("ErrTimeout not in %v", err)
			}
			if errors.Is(err, context.Canceled) {
				t.Errorf("a timeout looks like a cancellation: %v", err)
			}
			if got.content.String() != tt.content {
				t.Errorf("content = %q, want %q", got.content.String(), tt.content)
			}
		})
	}

	t.Run("slow but steady is not a stall", func(t *testing.T) {
		fake := fakellm.New(t)
		fake.Enqueue(fakellm.Stream("a", "b", "c", "d").KeepAlive().Every(60 * time.Millisecond))
		c := newClient(t, fake.URL(), Options{FirstTokenTimeout: 150 * time.Millisecond, StallTimeout: 150 * time.Millisecond})
		var got reply
		if _, err := c.Chat(bg(), ask(), got.fn); err != nil {
			t.Fatal(err)
		}
		if got.content.String() != "abcd" {
			t.Errorf("content = %q", got.content.String())
		}
	})
}

func TestCancel(t *testing.T) {
	fake := fakellm.New(t)
	fake.Enqueue(fakellm.Fixture("stream-no-reasoning").StallAfter(3))
	c := newClient(t, fake.URL(), Options{})
	ctx, cancel := context.WithCancel(bg())
	defer cancel()
	var got reply
	var err error
	within(t, 5*time.Second, "Chat after cancel", func() {
		_, err = c.Chat(ctx, ask(), func(d Delta) error {
			_ = got.fn(d)
			if len(got.deltas) == 2 {
				time.AfterFunc(20*time.Millisecond, cancel)
			}
			return nil
		})
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled in the chain", err)
	}
	if errors.Is(err, ErrTimeout) {
		t.Errorf("a cancellation looks like a timeout: %v", err)
	}
	if got.content.String() != "on outputs" {
		t.Errorf("content = %q", got.content.String())
	}

	t.Run("before the answer starts", func(t *testing.T) {
		fake := fakellm.New(t)
		fake.Enqueue(fakellm.Fixture("stream-no-reasoning").FirstByteAfter(10 * time.Second))
		ctx, cancel := context.WithTimeout(bg(), 100*time.Millisecond)
		defer cancel()
		var err error
		within(t, 3*time.Second, "Chat after the deadline", func() {
			_, err = newClient(t, fake.URL(), Options{}).Chat(ctx, ask(), func(Delta) error { return nil })
		})
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrTimeout) {
			t.Errorf("err = %v, want the caller's deadline", err)
		}
	})
}

func TestComplete(t *testing.T) {
	tests := []struct {
		name  string
		reply fakellm.Reply
		want  string
	}{
		{"llama.cpp capture", fakellm.Fixture("nonstream"), "milit func leur"},
		{"think tags stripped", fakellm.Status(200, `{"choices":[{"index":0,"message":{"content":"<think>Let me see.</think>\n\n  Journey to Bree \n"}}]}`), "Journey to Bree"},
		{"server streams anyway", fakellm.NewStream().Reasoning("hmm").Content("Second", " breakfast").Reply(), "Second breakfast"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := fakellm.New(t)
			fake.Enqueue(tt.reply)
			got, err := newClient(t, fake.URL(), Options{}).Complete(bg(), ask())
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			body := chatRequests(fake)[0].JSON
			if body["stream"] != false {
				t.Errorf("stream = %v, want false", body["stream"])
			}
			if _, ok := body["stream_options"]; ok {
				t.Error("stream_options sent without streaming")
			}
		})
	}

	t.Run("errors", func(t *testing.T) {
		fake := fakellm.New(t)
		fake.Enqueue(fakellm.Status(401, ""), fakellm.Status(200, `{"error":{"message":"out of memory"}}`))
		c := newClient(t, fake.URL(), Options{})
		_, err := c.Complete(bg(), ask())
		checkErr(t, err, apperr.Unavailable, "(401)")
		_, err = c.Complete(bg(), ask())
		checkErr(t, err, apperr.Unavailable, "out of memory")
	})
}

// An endpoint that streams although asked not to is bounded like a whole
// body: a stream that never stops is an error once its content passes
// maxBody, not a string that grows until the time limit (a summary or a
// title is what Complete returns).
func TestCompleteBoundsAStreamedAnswer(t *testing.T) {
	piece := strings.Repeat("x", 256<<10)
	pieces := make([]string, maxBody/len(piece)+2)
	for i := range pieces {
		pieces[i] = piece
	}
	fake := fakellm.New(t)
	fake.Enqueue(fakellm.NewStream().Content(pieces...).Reply())
	got, err := newClient(t, fake.URL(), Options{}).Complete(bg(), ask())
	if err == nil || len(got) > maxBody {
		t.Fatalf("a stream of %d bytes: %d bytes back, err %v; want refused", len(pieces)*len(piece), len(got), err)
	}
	checkErr(t, err, apperr.Unavailable, "larger than")
}

// CompleteResult says why the answer ended: a caller that stores it
// (a compaction's summary) refuses one cut off by the length limit.
func TestCompleteResultFinishReason(t *testing.T) {
	fake := fakellm.New(t)
	fake.Enqueue(fakellm.NewStream().Content("Half a summ").Finish("length").Reply(),
		fakellm.Status(200, `{"choices":[{"index":0,"message":{"content":"Whole"},"finish_reason":"stop"}]}`))
	c := newClient(t, fake.URL(), Options{})
	got, res, err := c.CompleteResult(bg(), ask())
	if err != nil || got != "Half a summ" || res.FinishReason != "length" {
		t.Errorf("streamed: %q %q %v, want the text and finish reason length", got, res.FinishReason, err)
	}
	got, res, err = c.CompleteResult(bg(), ask())
	if err != nil || got != "Whole" || res.FinishReason != "stop" {
		t.Errorf("whole: %q %q %v, want the text and finish reason stop", got, res.FinishReason, err)
	}
}

func TestEstimate(t *testing.T) {
	tests := []struct {
		text string
		want int
	}{
		{"", 0},
		{"a", 1},
		{"abcd", 1},
		{"abcde", 2},
		{"Frodo Baggins of Bag End", 6},
		{"ééééé", 2}, // characters, not bytes
	}
	for _, tt := range tests {
		if got := Estimate(tt.text); got != tt.want {
			t.Errorf("Estimate(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
}
