package llm

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func parseAll(r io.Reader) ([]Event, error) {
	var evs []Event
	err := ParseSSE(r, func(e Event) error {
		evs = append(evs, e)
		return nil
	})
	return evs, err
}

func TestParseSSE(t *testing.T) {
	long := strings.Repeat("y", 200<<10) // longer than the read buffer
	tests := []struct {
		name string
		in   string
		want []Event
	}{
		{"one event", "data: {\"a\":1}\n\n", []Event{{Data: `{"a":1}`}}},
		{"no space after colon", "data:x\n\n", []Event{{Data: "x"}}},
		{"only one space stripped", "data:  x\n\n", []Event{{Data: " x"}}},
		{"multi-line data", "data: a\ndata: b\ndata:\n\n", []Event{{Data: "a\nb\n"}}},
		{"comments", ": keep-alive\n\n: OPENROUTER PROCESSING\ndata: x\n\n", []Event{{Data: "x"}}},
		{"event and id", "event: message\nid: 7\ndata: x\n\ndata: y\n\n", []Event{{Name: "message", ID: "7", Data: "x"}, {ID: "7", Data: "y"}}},
		{"event without data is not dispatched", "event: ping\n\ndata: x\n\n", []Event{{Data: "x"}}},
		{"crlf", "data: a\r\ndata: b\r\n\r\ndata: [DONE]\r\n\r\n", []Event{{Data: "a\nb"}, {Data: "[DONE]"}}},
		{"last event without blank line", "data: a\n\ndata: b\n", []Event{{Data: "a"}, {Data: "b"}}},
		{"last line without newline", "data: a\n\ndata: b", []Event{{Data: "a"}, {Data: "b"}}},
		{"unknown fields and retry ignored", "retry: 10\nfoo: bar\ndata: x\n\n", []Event{{Data: "x"}}},
		{"field without colon", "data\n\n", []Event{{Data: ""}}},
		{"long line", "data: " + long + "\n\n", []Event{{Data: long}}},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, mode := range []string{"whole", "one byte", "half"} {
				var r io.Reader = strings.NewReader(tt.in)
				switch mode {
				case "one byte":
					r = iotest.OneByteReader(r)
				case "half":
					r = iotest.HalfReader(r)
				}
				got, err := parseAll(r)
				if err != nil {
					t.Fatalf("%s: %v", mode, err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("%s: got %q, want %q", mode, got, tt.want)
				}
			}
		})
	}
}

// endless is a stream that never sends a newline.
type endless struct{ read int }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.read += len(p)
	return len(p), nil
}

func TestParseSSEBounded(t *testing.T) {
	t.Run("endless line", func(t *testing.T) {
		src := &endless{}
		_, err := parseAll(io.MultiReader(strings.NewReader("data: "), src))
		if !errors.Is(err, ErrLineTooLong) {
			t.Fatalf("err = %v, want ErrLineTooLong", err)
		}
		if src.read > MaxEventSize+(1<<20) {
			t.Errorf("read %d bytes before giving up", src.read)
		}
	})
	t.Run("endless data lines", func(t *testing.T) {
		line := "data: " + strings.Repeat("z", 1000) + "\n"
		_, err := parseAll(strings.NewReader(strings.Repeat(line, MaxEventSize/1000+10)))
		if !errors.Is(err, ErrLineTooLong) {
			t.Fatalf("err = %v, want ErrLineTooLong", err)
		}
	})
}

func TestParseSSEStops(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	err := ParseSSE(strings.NewReader("data: 1\n\ndata: 2\n\ndata: 3\n\n"), func(Event) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	})
	if err != stop || n != 2 {
		t.Errorf("err = %v after %d events, want fn's error after 2", err, n)
	}

	broken := iotest.TimeoutReader(strings.NewReader("data: 1\n\ndata: 2"))
	got, err := parseAll(broken)
	if !errors.Is(err, iotest.ErrTimeout) || len(got) != 1 {
		t.Errorf("got %q, %v; want the first event and the read error", got, err)
	}
}
