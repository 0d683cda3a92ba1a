package llm

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/secrets"
)

// Efforts are the reasoning efforts a request may ask for, in increasing
// order. Commands, controls and stored defaults all read this one list so
// they cannot disagree; callers must not modify it.
var Efforts = []string{"low", "medium", "high"}

// CheckEffort refuses a reasoning effort that is not "" (none) or one of
// Efforts, as every place that stores one must.
func CheckEffort(e *string) error {
	if e == nil || *e == "" || slices.Contains(Efforts, *e) {
		return nil
	}
	return apperr.New(apperr.Invalid, "unknown reasoning effort %q (want %s)", *e, strings.Join(Efforts, ", "))
}

// ChatRequest is one chat completion request.
type ChatRequest struct {
	Model    string
	Messages []Message
	// Params are sampling and other parameters (temperature, top_p,
	// max_tokens, …) copied into the body as they are. They never replace
	// model, messages, stream or stream_options.
	Params map[string]any
	// ReasoningEffort is "" (send nothing) or one of Efforts.
	ReasoningEffort string
	// Tools are the function schemas offered, each one JSON object.
	Tools []json.RawMessage
}

// Message is one message of the conversation.
type Message struct {
	Role    string // system, user, assistant or tool
	Content string
	// Parts, when non-nil, is sent instead of Content as an array of
	// parts (text and images). Leave it nil for a text-only message: many
	// endpoints without multimodal support reject arrays outright.
	Parts      []ContentPart
	ToolCallID string // on a tool message: the call it answers
	Name       string
	ToolCalls  []ToolCall // on an assistant message: the calls it made
}

// ContentPart is one part of a multimodal message.
type ContentPart struct {
	// Type is "text" or "image_url".
	Type string
	Text string
	// ImageURL is the image as a data URI (see ImagePart): a local
	// endpoint has no route back to us and a hosted one no credentials.
	ImageURL string
}

// TextPart returns a text part.
func TextPart(text string) ContentPart { return ContentPart{Type: "text", Text: text} }

// ImagePart returns an image part holding data as a base64 data URI.
func ImagePart(mimeType string, data []byte) ContentPart {
	return ContentPart{Type: "image_url", ImageURL: "data:" + mimeType + ";base64," + base64.StdEncoding.EncodeToString(data)}
}

// Delta is what one upstream event added to the reply, with inline <think>
// reasoning already split from the content.
type Delta struct {
	Content   string
	Reasoning string
	// ToolCalls are raw fragments, for showing progress; Result.ToolCalls
	// has them assembled.
	ToolCalls []ToolCallDelta
}

func (d Delta) empty() bool { return d.Content == "" && d.Reasoning == "" && len(d.ToolCalls) == 0 }

// Usage is the token count of one request.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Result is how a reply ended.
type Result struct {
	// FinishReason is the upstream reason: "stop", "length" (cut off by
	// max_tokens or the context), "tool_calls", or "" if none was sent.
	FinishReason string
	// Usage is the endpoint's count, from the usage chunk or, failing
	// that, llama.cpp's timings; nil when it reported none (use Estimate).
	Usage *Usage
	// ToolCalls are the assembled calls the model made.
	ToolCalls []ToolCall
	// Model is the model the endpoint says answered.
	Model string
	// FirstByte is the time from sending the request to the first piece
	// of the answer (content, reasoning or a tool call).
	FirstByte time.Duration
	// StreamOptionsRejected reports that the endpoint refused
	// stream_options and the request was retried without it; remember it
	// on the connection as Endpoint.NoStreamOptions.
	StreamOptionsRejected bool
}

// maxBody bounds a whole (non-streamed) response body.
const maxBody = 8 << 20

// Chat streams a reply. fn is called once per upstream event that added
// something, in order; returning an error from it stops the stream, closes
// the upstream connection (so the endpoint stops generating) and makes Chat
// return that error as is. Cancelling ctx does the same and returns an
// error with ctx.Err() in its chain. Other failures are *apperr.Error
// values, with *EndpointError or ErrTimeout in their chain where they
// apply. The Result is filled as far as the reply got, even on error.
func (c *Client) Chat(ctx context.Context, req ChatRequest, fn func(Delta) error) (res Result, err error) {
	defer func() { err = c.scrub(err) }()
	if err := req.validate(); err != nil {
		return Result{}, err
	}
	withOptions := !c.noStreamOptions.Load()
	body, err := req.body(true, withOptions)
	if err != nil {
		return Result{}, err
	}
	res, err = c.stream(ctx, req.Model, body, withOptions, fn)
	var rejected *streamOptionsRejected
	if errors.As(err, &rejected) {
		c.noStreamOptions.Store(true)
		if body, err = req.body(true, false); err != nil {
			return Result{}, err
		}
		res, err = c.stream(ctx, req.Model, body, false, fn)
		res.StreamOptionsRejected = true
		if errors.As(err, &rejected) {
			err = rejected.err // cannot happen twice: nothing to retry without
		}
	}
	return res, err
}

// streamOptionsRejected marks a 400 about stream_options, which Chat
// answers by retrying without it.
type streamOptionsRejected struct{ err error }

func (e *streamOptionsRejected) Error() string { return e.err.Error() }
func (e *streamOptionsRejected) Unwrap() error { return e.err }

// stopped carries fn's error out of the parser unchanged.
type stopped struct{ err error }

func (e *stopped) Error() string { return e.err.Error() }

// errDone ends parsing at data: [DONE]; some servers keep the connection
// open after it.
var errDone = errors.New("done")

func (c *Client) stream(ctx context.Context, model string, body []byte, withOptions bool, fn func(Delta) error) (Result, error) {
	wd := newWatchdog(ctx, phaseFirst, c.opt.FirstTokenTimeout)
	defer wd.stop()
	st := &streamState{fn: fn, start: time.Now(), wd: wd, stall: c.opt.StallTimeout, redact: c.redact}
	req, err := c.newRequest(wd.ctx, http.MethodPost, "/chat/completions", body, "text/event-stream")
	if err != nil {
		return Result{}, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return Result{}, wd.failure(ctx, err, c.networkError)
	}
	defer resp.Body.Close()
	rd := &activityReader{r: resp.Body, w: wd}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, rerr := io.ReadAll(io.LimitReader(rd, maxErrorBody))
		if rerr != nil && len(raw) == 0 {
			return Result{}, wd.failure(ctx, rerr, c.networkError)
		}
		err := c.statusError(resp, raw, c.shown+"/chat/completions", model)
		if withOptions && (resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusUnprocessableEntity) &&
			bytes.Contains(raw, []byte("stream_options")) {
			return Result{}, &streamOptionsRejected{err: err}
		}
		return Result{}, err
	}

	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		// A server that ignores stream: true answers with the whole
		// completion; relay it as one delta.
		raw, err := io.ReadAll(io.LimitReader(rd, maxBody+1))
		if err != nil {
			return Result{}, wd.failure(ctx, err, brokenStream)
		}
		if len(raw) > maxBody {
			return Result{}, apperr.New(apperr.Unavailable, "The endpoint's answer is larger than %d MiB.", maxBody>>20)
		}
		err = st.whole(raw)
		return st.finish(ctx, err)
	case "text/html":
		return Result{}, apperr.New(apperr.Unavailable, "The endpoint answered with a web page instead of a chat stream. Check the base URL: most servers expect it to end in /v1.")
	}
	err = ParseSSE(rd, st.event)
	return st.finish(ctx, err)
}

// streamState turns upstream events into deltas and the Result.
type streamState struct {
	fn    func(Delta) error
	start time.Time
	wd    *watchdog // nil when decoding without a request (benchmarks)
	stall time.Duration
	// redact hides the endpoint's secrets in upstream text quoted in an
	// error (nil: only credentials after an authorization scheme).
	redact *secrets.Redactor

	think    ThinkSplitter
	tools    ToolCallAccumulator
	res      Result
	timings  *wireTimings
	begun    bool // a delta went out
	events   int  // data events seen
	done     bool // data: [DONE] arrived
	finished bool // a finish_reason arrived
}

// chunk is one streamed chat.completion.chunk (or, in whole, a
// chat.completion, whose choices carry message instead of delta).
type chunk struct {
	Model   string          `json:"model"`
	Choices []chunkChoice   `json:"choices"`
	Usage   *Usage          `json:"usage"`
	Timings *wireTimings    `json:"timings"`
	Error   json.RawMessage `json:"error"`
}

type chunkChoice struct {
	Index        int          `json:"index"`
	Delta        chunkMessage `json:"delta"`
	Message      chunkMessage `json:"message"`
	FinishReason *string      `json:"finish_reason"`
}

type chunkMessage struct {
	Content          flexText       `json:"content"`
	ReasoningContent string         `json:"reasoning_content"`
	Reasoning        string         `json:"reasoning"`
	ToolCalls        []wireToolCall `json:"tool_calls"`
}

// wireTimings is llama.cpp's own count, sent when usage is not asked for.
type wireTimings struct {
	PromptN    int `json:"prompt_n"`
	CacheN     int `json:"cache_n"`
	PredictedN int `json:"predicted_n"`
}

// flexText reads content sent as a string (the standard), null, or an
// array of text parts (some gateways).
type flexText string

func (t *flexText) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '[' {
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(b, &parts); err != nil {
			return err
		}
		var s strings.Builder
		for _, p := range parts {
			if p.Type == "" || p.Type == "text" {
				s.WriteString(p.Text)
			}
		}
		*t = flexText(s.String())
		return nil
	}
	var s *string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s != nil {
		*t = flexText(*s)
	}
	return nil
}

// event handles one SSE event.
func (st *streamState) event(ev Event) error {
	if ev.Data == "" {
		return nil
	}
	st.events++
	if ev.Data == "[DONE]" {
		st.done = true
		return errDone
	}
	var ch chunk
	if err := json.Unmarshal([]byte(ev.Data), &ch); err != nil {
		data := st.redact.Redact(ev.Data)
		if ev.Name == "error" {
			return st.upstreamError(&EndpointError{Status: http.StatusOK, Message: cleanMessage(data)})
		}
		return apperr.Wrap(apperr.Unavailable, err,
			"The endpoint sent an event that is not valid JSON (%s). The answer was abandoned; try again.", snippet(data))
	}
	if len(ch.Error) > 0 && string(ch.Error) != "null" || ev.Name == "error" {
		return st.upstreamError(parseEndpointError(http.StatusOK, []byte(st.redact.Redact(ev.Data))))
	}
	return st.chunk(&ch, false)
}

// chunk applies one decoded chunk; whole says it is a complete
// chat.completion rather than a streamed piece.
func (st *streamState) chunk(ch *chunk, whole bool) error {
	if st.res.Model == "" {
		st.res.Model = ch.Model
	}
	if ch.Usage != nil && (ch.Usage.PromptTokens > 0 || ch.Usage.CompletionTokens > 0) {
		u := *ch.Usage
		if u.TotalTokens == 0 {
			u.TotalTokens = u.PromptTokens + u.CompletionTokens
		}
		st.res.Usage = &u
	}
	if ch.Timings != nil {
		st.timings = ch.Timings
	}
	for i := range ch.Choices {
		choice := &ch.Choices[i]
		if choice.Index != 0 {
			continue // we ask for one choice; extra ones are not ours
		}
		m := &choice.Delta
		if whole {
			m = &choice.Message
		}
		var d Delta
		d.Reasoning = m.ReasoningContent
		if d.Reasoning == "" {
			// Servers that send both carry the same text in each.
			d.Reasoning = m.Reasoning
		}
		if m.Content != "" {
			content, reasoning := st.think.Feed(string(m.Content))
			d.Content = content
			d.Reasoning += reasoning
		}
		for _, w := range m.ToolCalls {
			td := w.delta()
			if whole && td.Index < 0 {
				td.Index = len(d.ToolCalls)
			}
			st.tools.Add(td)
			d.ToolCalls = append(d.ToolCalls, td)
		}
		if choice.FinishReason != nil && *choice.FinishReason != "" {
			st.res.FinishReason = *choice.FinishReason
			st.finished = true
		}
		if err := st.deliver(d); err != nil {
			return err
		}
	}
	return nil
}

// deliver hands a non-empty delta to fn, with invalid UTF-8 replaced:
// what we pass on is stored and rendered, and must be valid text.
func (st *streamState) deliver(d Delta) error {
	if d.empty() {
		return nil
	}
	d.Content = validText(d.Content)
	d.Reasoning = validText(d.Reasoning)
	if !st.begun {
		st.begun = true
		st.res.FirstByte = time.Since(st.start)
	}
	if st.wd != nil {
		st.wd.started(st.stall)
	}
	if err := st.fn(d); err != nil {
		return &stopped{err: err}
	}
	return nil
}

func validText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

func (st *streamState) upstreamError(e *EndpointError) error {
	if e.ContextExceeded() {
		prompt, size := contextCounts(e)
		e.PromptTokens, e.ContextSize = prompt, size
		return apperr.Wrap(apperr.Invalid, e, "The conversation is longer than the model's context. Start a new chat or remove earlier messages.")
	}
	msg := e.Message
	if msg == "" {
		msg = "no reason given"
	}
	return apperr.Wrap(apperr.Unavailable, e, "The endpoint failed in the middle of the answer: %s. Try again; if it keeps failing, look at the server's log.", strings.TrimSuffix(msg, "."))
}

// whole handles a complete chat.completion body.
func (st *streamState) whole(raw []byte) error {
	var ch chunk
	if err := json.Unmarshal(raw, &ch); err != nil {
		return apperr.Wrap(apperr.Unavailable, err, "The endpoint's answer is not valid JSON (%s). Check that the base URL points at an OpenAI-compatible API.", snippet(st.redact.Redact(string(raw))))
	}
	if len(ch.Error) > 0 && string(ch.Error) != "null" {
		return st.upstreamError(parseEndpointError(http.StatusOK, []byte(st.redact.Redact(string(raw)))))
	}
	if len(ch.Choices) == 0 {
		return apperr.New(apperr.Unavailable, "The endpoint's answer has no choices (%s). Check that the base URL points at an OpenAI-compatible API.", snippet(st.redact.Redact(string(raw))))
	}
	st.done = true
	return st.chunk(&ch, true)
}

// finish ends the reply: err is what stopped the parser.
func (st *streamState) finish(ctx context.Context, err error) (Result, error) {
	var stop *stopped
	switch {
	case errors.As(err, &stop):
		return st.res, stop.err
	case err != nil && !errors.Is(err, errDone):
		if errors.Is(err, ErrLineTooLong) {
			return st.res, apperr.Wrap(apperr.Unavailable, err, "The endpoint sent more than %d MiB without a line break, which is not an event stream. Check the base URL.", MaxEventSize>>20)
		}
		var ae *apperr.Error
		if errors.As(err, &ae) {
			return st.res, err
		}
		if st.wd != nil {
			return st.res, st.wd.failure(ctx, err, brokenStream)
		}
		return st.res, brokenStream(err)
	}
	content, reasoning := st.think.Flush()
	if err := st.deliver(Delta{Content: content, Reasoning: reasoning}); err != nil {
		return st.res, err.(*stopped).err
	}
	st.res.ToolCalls = st.tools.Calls()
	if st.res.Usage == nil && st.timings != nil && (st.timings.PromptN > 0 || st.timings.PredictedN > 0) {
		p := st.timings.PromptN + st.timings.CacheN
		st.res.Usage = &Usage{PromptTokens: p, CompletionTokens: st.timings.PredictedN, TotalTokens: p + st.timings.PredictedN}
	}
	if !st.done && !st.finished {
		if st.events == 0 {
			return st.res, apperr.New(apperr.Unavailable, "The endpoint answered without a chat stream. Check that the base URL points at an OpenAI-compatible API.")
		}
		return st.res, brokenStream(io.ErrUnexpectedEOF)
	}
	return st.res, nil
}

// snippet quotes the start of upstream text for a message.
func snippet(s string) string {
	s = cleanMessage(s)
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80]) + "…"
	}
	return fmt.Sprintf("%q", s)
}

// Complete asks for a whole reply without streaming (for automatic titles
// and other short internal requests) and returns its content, with any
// reasoning removed and surrounding whitespace trimmed.
func (c *Client) Complete(ctx context.Context, req ChatRequest) (string, error) {
	content, _, err := c.CompleteResult(ctx, req)
	return content, err
}

// CompleteResult is Complete with the answer's Result (its finish reason:
// a caller that stores the answer tells a cut-off one from a whole one).
// The content is bounded like a whole body (maxBody) also when the server
// streams regardless: an endpoint that never stops is an error, not a
// string that grows until the time limit.
func (c *Client) CompleteResult(ctx context.Context, req ChatRequest) (_ string, _ Result, err error) {
	defer func() { err = c.scrub(err) }()
	if err := req.validate(); err != nil {
		return "", Result{}, err
	}
	body, err := req.body(false, false)
	if err != nil {
		return "", Result{}, err
	}
	wd := newWatchdog(ctx, phaseFirst, c.opt.FirstTokenTimeout)
	defer wd.stop()
	tooLarge := apperr.New(apperr.Unavailable, "The endpoint's answer is larger than %d MiB.", maxBody>>20)
	var content strings.Builder
	st := &streamState{start: time.Now(), wd: wd, stall: c.opt.StallTimeout, redact: c.redact, fn: func(d Delta) error {
		if content.Len()+len(d.Content) > maxBody {
			return tooLarge
		}
		content.WriteString(d.Content)
		return nil
	}}
	hreq, err := c.newRequest(wd.ctx, http.MethodPost, "/chat/completions", body, "application/json")
	if err != nil {
		return "", Result{}, err
	}
	resp, err := c.hc.Do(hreq)
	if err != nil {
		return "", Result{}, wd.failure(ctx, err, c.networkError)
	}
	defer resp.Body.Close()
	rd := &activityReader{r: resp.Body, w: wd}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		raw, _ := io.ReadAll(io.LimitReader(rd, maxErrorBody))
		return "", Result{}, c.statusError(resp, raw, c.shown+"/chat/completions", req.Model)
	}
	var res Result
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct == "text/event-stream" {
		// A server that streams regardless: collect the stream.
		res, err = st.finish(ctx, ParseSSE(rd, st.event))
	} else {
		raw, rerr := io.ReadAll(io.LimitReader(rd, maxBody+1))
		switch {
		case rerr != nil:
			return "", Result{}, wd.failure(ctx, rerr, brokenStream)
		case len(raw) > maxBody:
			return "", Result{}, tooLarge
		}
		res, err = st.finish(ctx, st.whole(raw))
	}
	if err != nil {
		return "", Result{}, err
	}
	return strings.TrimSpace(content.String()), res, nil
}

// validate checks what the endpoint would otherwise reject with a less
// helpful message, or what we could not send at all.
func (r *ChatRequest) validate() error {
	if strings.TrimSpace(r.Model) == "" {
		return apperr.New(apperr.Invalid, "No model is chosen. Pick a model for this chat.")
	}
	if len(r.Messages) == 0 {
		return apperr.New(apperr.Invalid, "The request has no messages.")
	}
	if r.ReasoningEffort != "" && !slices.Contains(Efforts, r.ReasoningEffort) {
		return apperr.New(apperr.Invalid, "Unknown reasoning effort %q (want %s).", r.ReasoningEffort, strings.Join(Efforts, ", "))
	}
	for i, m := range r.Messages {
		if m.Role == "" {
			return apperr.New(apperr.Invalid, "Message %d has no role.", i+1)
		}
		for _, p := range m.Parts {
			switch p.Type {
			case "text":
			case "image_url":
				if p.ImageURL == "" {
					return apperr.New(apperr.Invalid, "An image in message %d has no data.", i+1)
				}
			default:
				return apperr.New(apperr.Invalid, "Message %d has a part of unknown type %q (want text or image_url).", i+1, p.Type)
			}
		}
	}
	for i, t := range r.Tools {
		if !json.Valid(t) {
			return apperr.New(apperr.Invalid, "Tool schema %d is not valid JSON.", i+1)
		}
	}
	return nil
}

type wireMessage struct {
	Role       string         `json:"role"`
	Content    any            `json:"content"`
	Name       string         `json:"name,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
}

type wirePart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url,omitempty"`
}

// reserved reports whether a body field is ours alone, never taken from
// Params.
func reserved(key string) bool {
	switch key {
	case "model", "messages", "stream", "stream_options":
		return true
	}
	return false
}

// body encodes the request. Effort goes out twice because no one field
// works everywhere: OpenAI and vLLM read reasoning_effort, while llama.cpp
// drops it and passes only chat_template_kwargs to the template. Neither
// is sent without an effort, so a strict provider sees the request it
// always did until someone opts in.
func (r *ChatRequest) body(stream, streamOptions bool) ([]byte, error) {
	b := make(map[string]any, len(r.Params)+6)
	for k, v := range r.Params {
		if !reserved(k) {
			b[k] = v
		}
	}
	b["model"] = r.Model
	b["stream"] = stream
	if stream && streamOptions {
		b["stream_options"] = map[string]any{"include_usage": true}
	}
	msgs := make([]wireMessage, len(r.Messages))
	for i, m := range r.Messages {
		w := wireMessage{Role: m.Role, Name: m.Name, ToolCallID: m.ToolCallID}
		switch {
		case m.Parts != nil:
			parts := make([]wirePart, len(m.Parts))
			for j, p := range m.Parts {
				parts[j] = wirePart{Type: p.Type, Text: p.Text}
				if p.Type == "image_url" {
					parts[j].Text = ""
					parts[j].ImageURL = &struct {
						URL string `json:"url"`
					}{p.ImageURL}
				}
			}
			w.Content = parts
		case m.Content == "" && len(m.ToolCalls) > 0:
			w.Content = nil // what OpenAI sends for a call without text
		default:
			w.Content = m.Content
		}
		for _, tc := range m.ToolCalls {
			var wt wireToolCall
			wt.ID, wt.Type = tc.ID, tc.Type
			if wt.Type == "" {
				wt.Type = "function"
			}
			wt.Function.Name = tc.Name
			args := tc.Arguments
			if strings.TrimSpace(args) == "" {
				args = "{}"
			}
			enc, err := json.Marshal(args)
			if err != nil {
				return nil, apperr.Wrap(apperr.Invalid, err, "A tool call in message %d cannot be encoded.", i+1)
			}
			wt.Function.Arguments = enc
			w.ToolCalls = append(w.ToolCalls, wt)
		}
		msgs[i] = w
	}
	b["messages"] = msgs
	if len(r.Tools) > 0 {
		b["tools"] = r.Tools
	}
	if r.ReasoningEffort != "" {
		b["reasoning_effort"] = r.ReasoningEffort
		kwargs := map[string]any{}
		if given, ok := r.Params["chat_template_kwargs"].(map[string]any); ok {
			kwargs = maps.Clone(given)
		}
		kwargs["reasoning_effort"] = r.ReasoningEffort
		b["chat_template_kwargs"] = kwargs
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(b); err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err, "The request parameters cannot be sent as JSON; check the values of the model's parameters.")
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
