package fakellm

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Reply describes one response: a status, headers, and either a whole Body
// or a stream of Events, plus delays and failures set by its methods. The
// methods return modified copies, so a Reply can be reused and composed:
//
//	Fixture("stream-tool-call").KeepAlive().Every(5 * time.Millisecond).ResetAfter(10)
type Reply struct {
	// Status is the HTTP status; zero means 200.
	Status int
	// Header is sent as is. A missing Content-Type defaults to
	// text/event-stream for Events and application/json for Body.
	Header http.Header
	// Body is the whole response body, used when Events is nil.
	Body string
	// Events are written and flushed one at a time, so clients see them
	// arrive separately.
	Events []Event

	every, firstByte time.Duration
	cut              cut
	cutAt            int
	keepAlive        bool
	eventName        string

	// fn, when set, picks the reply per request; the fields above that its
	// methods set still apply on top of what it returns.
	fn          func(Request) Reply
	fromDefault bool
}

// Event is one server-sent event on the wire: an optional comment line, an
// optional "event:" line, "data:" lines and a blank line.
type Event struct {
	// Comment is written as ": Comment", the way gateways send keep-alives.
	Comment string
	// Name is written as "event: Name".
	Name string
	// Data is written as "data: Data", one line per line of Data.
	Data string
	// Delay is waited before the event, on top of the reply's Every.
	Delay time.Duration
	// After, when not nil, holds the event back until it is closed: a
	// test decides when the rest of the reply is written.
	After <-chan struct{}

	usageOnly bool // sent only if the request asked for stream_options.include_usage
}

type cut int

const (
	cutNone cut = iota
	cutReset
	cutStall
)

func (e Event) wire() string {
	var b strings.Builder
	if e.Comment != "" {
		for line := range strings.SplitSeq(e.Comment, "\n") {
			b.WriteString(": " + line + "\n")
		}
	}
	if e.Name != "" {
		b.WriteString("event: " + e.Name + "\n")
	}
	if e.Data != "" {
		for line := range strings.SplitSeq(e.Data, "\n") {
			b.WriteString("data: " + line + "\n")
		}
	}
	b.WriteString("\n")
	return b.String()
}

// Every waits d before each event.
func (r Reply) Every(d time.Duration) Reply {
	r.every = d
	return r
}

// FirstByteAfter waits d before sending anything, headers included.
func (r Reply) FirstByteAfter(d time.Duration) Reply {
	r.firstByte = d
	return r
}

// ResetAfter sends the headers and n events (n bytes of a Body reply), then
// closes the TCP connection without finishing the body, as a crashed server
// or a dead proxy does; clients see an unexpected EOF.
func (r Reply) ResetAfter(n int) Reply {
	r.cut, r.cutAt = cutReset, n
	return r
}

// StallAfter sends the headers and n events (n bytes of a Body reply), then
// sends nothing more until the client goes away or the server closes.
func (r Reply) StallAfter(n int) Reply {
	r.cut, r.cutAt = cutStall, n
	return r
}

// KeepAlive sends a ": keep-alive" comment before every event, as proxies
// and gateways do.
func (r Reply) KeepAlive() Reply {
	r.keepAlive = true
	return r
}

// EventName adds an "event: name" line to every data event that has none,
// as some gateways do.
func (r Reply) EventName(name string) Reply {
	r.eventName = name
	return r
}

// WithHeader sets a response header.
func (r Reply) WithHeader(key, value string) Reply {
	r.Header = r.Header.Clone()
	if r.Header == nil {
		r.Header = http.Header{}
	}
	r.Header.Set(key, value)
	return r
}

// Func picks the reply per request, for tests whose requests arrive in no
// fixed order or whose answer depends on what was asked.
func Func(f func(Request) Reply) Reply {
	return Reply{fn: f}
}

// over returns inner with the delays, failures and headers set on r laid
// on top.
func (r Reply) over(inner Reply) Reply {
	if r.every != 0 {
		inner.every = r.every
	}
	if r.firstByte != 0 {
		inner.firstByte = r.firstByte
	}
	if r.cut != cutNone {
		inner.cut, inner.cutAt = r.cut, r.cutAt
	}
	inner.keepAlive = inner.keepAlive || r.keepAlive
	if r.eventName != "" {
		inner.eventName = r.eventName
	}
	if len(r.Header) > 0 {
		h := inner.Header.Clone()
		if h == nil {
			h = http.Header{}
		}
		for k, v := range r.Header {
			h[k] = v
		}
		inner.Header = h
	}
	return inner
}

func resolve(rep Reply, req Request, def Reply) Reply {
	for range 16 {
		switch {
		case rep.fn != nil:
			rep = rep.over(rep.fn(req))
		case rep.fromDefault:
			rep = rep.over(def)
			// A default that itself defers to the default would loop.
			def = Fixture("stream-no-reasoning")
		default:
			return rep
		}
	}
	return Status(http.StatusInternalServerError,
		`{"error":{"message":"fakellm: Func replies nested too deep","type":"server_error"}}`)
}

// Status is an HTTP error with a JSON body. An empty body is replaced by
// what OpenAI sends for that code: 401 invalid_api_key, 404
// model_not_found naming the requested model, 429 rate_limit_exceeded, 500
// server_error, and a generic error otherwise. A 429 carries Retry-After: 1.
func Status(code int, body string) Reply {
	r := Reply{Status: code, Header: http.Header{"Content-Type": {"application/json"}}, Body: body}
	if code == http.StatusTooManyRequests {
		r.Header.Set("Retry-After", "1")
	}
	if body != "" {
		return r
	}
	switch code {
	case http.StatusUnauthorized:
		r.Body = `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`
	case http.StatusNotFound:
		return Func(func(req Request) Reply {
			model, _ := req.JSON["model"].(string)
			r := r
			r.Body = `{"error":{"message":` + jsonString(fmt.Sprintf(
				"The model `%s` does not exist or you do not have access to it.", model)) +
				`,"type":"invalid_request_error","param":null,"code":"model_not_found"}}`
			return r
		})
	case http.StatusTooManyRequests:
		r.Body = `{"error":{"message":"Rate limit reached for requests. Please try again in 1s.","type":"requests","param":null,"code":"rate_limit_exceeded"}}`
	case http.StatusInternalServerError:
		r.Body = `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`
	default:
		kind := "invalid_request_error"
		if code >= 500 {
			kind = "server_error"
		}
		r.Body = `{"error":{"message":` + jsonString(http.StatusText(code)) +
			`,"type":"` + kind + `","param":null,"code":null}}`
	}
	return r
}

// RejectStreamOptions answers 400 "Unrecognized request argument supplied:
// stream_options", as older OpenAI-compatible servers do, when the request
// has stream_options, and otherwise behaves like the server's default reply,
// so a client's retry without stream_options can be tested.
func RejectStreamOptions() Reply {
	reject := Status(http.StatusBadRequest,
		`{"error":{"message":"Unrecognized request argument supplied: stream_options","type":"invalid_request_error","param":null,"code":null}}`)
	return Func(func(req Request) Reply {
		if _, ok := req.JSON["stream_options"]; ok {
			return reject
		}
		return Reply{fromDefault: true}
	})
}

// Malformed is a stream with one data line that is not JSON (cut off
// mid-object), between valid content chunks.
func Malformed() Reply {
	return NewStream().
		Content("Hel").
		Event(Event{Data: `{"choices":[{"finish_reason":null,"index":0,"delta":{"content":"lo`}).
		Content(" world").
		Reply()
}

// InStreamError is an HTTP 200 stream that breaks off after some content
// with data: {"error":{...}} and then [DONE], as vLLM and some gateways do
// when generation fails after the headers went out.
func InStreamError(message string) Reply {
	return NewStream().Content("Partial", " answer").Error(message).Reply()
}
