package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/llembas/lembas/backend/fakellm"
)

// cutReader returns its data in two reads, split at cut.
type cutReader struct {
	data []byte
	cut  int
	done int
}

func (r *cutReader) Read(p []byte) (int, error) {
	if r.done >= len(r.data) {
		return 0, io.EOF
	}
	end := len(r.data)
	if r.done < r.cut {
		end = r.cut
	}
	n := copy(p, r.data[r.done:end])
	r.done += n
	return n, nil
}

// sample keeps the first and last n events of a reply: the fuzzer
// minimises every new input byte by byte, which takes minutes on a whole
// capture and seconds on a sample with the same shape.
func sample(rep fakellm.Reply, n int) fakellm.Reply {
	if len(rep.Events) > 2*n {
		rep.Events = append(rep.Events[:n:n], rep.Events[len(rep.Events)-n:]...)
	}
	return rep
}

func FuzzParseSSE(f *testing.F) {
	for _, name := range streamFixtures {
		f.Add(wire(sample(fakellm.Fixture(name), 3)), uint16(100))
	}
	f.Add(wire(fakellm.Malformed()), uint16(7))
	f.Add(wire(fakellm.Stream("a", "b").KeepAlive().EventName("x")), uint16(3))
	f.Add([]byte("data: a\r\ndata: b\r\n\r\nevent: e\nid: 1\ndata: c"), uint16(9))
	f.Add([]byte(": c\n\ndata\n\ndata:x\r\n"), uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		want, wantErr := parseAll(bytes.NewReader(data))
		got, err := parseAll(&cutReader{data: data, cut: int(cut) % (len(data) + 1)})
		if !reflect.DeepEqual(got, want) || (err == nil) != (wantErr == nil) {
			t.Fatalf("cut at %d: got %q, %v; whole: %q, %v", cut, got, err, want, wantErr)
		}
		got, err = parseAll(iotest.OneByteReader(bytes.NewReader(data)))
		if !reflect.DeepEqual(got, want) || (err == nil) != (wantErr == nil) {
			t.Fatalf("one byte: got %q, %v; whole: %q, %v", got, err, want, wantErr)
		}
		for _, e := range want {
			if strings.Contains(e.Name, "\n") || strings.Contains(e.ID, "\n") {
				t.Fatalf("a field kept a line break: %q", e)
			}
		}
	})
}

func FuzzThinkSplitter(f *testing.F) {
	think := readFixture(f, "stream-think-tags").content
	f.Add(think, uint64(0x1234567))
	f.Add(think[:60]+think[strings.Index(think, "</think>")-20:][:60], uint64(99))
	f.Add("<think>a</think>b", uint64(1))
	f.Add("  <thi", uint64(2))
	f.Add("<think>x </thin", uint64(3))
	f.Add("Hello <think>x</think>", uint64(4))
	f.Fuzz(func(t *testing.T, text string, seed uint64) {
		wantC, wantR := split(text)
		var pieces []string
		for s, i := seed, 0; i < len(text); s = s*6364136223846793005 + 1442695040888963407 {
			n := 1 + int(s>>59) // 1 to 32 bytes
			pieces = append(pieces, text[i:min(i+n, len(text))])
			i += n
		}
		c, r := split(pieces...)
		if c != wantC || r != wantR {
			t.Fatalf("chunks %q: got (%q, %q), whole (%q, %q)", pieces, c, r, wantC, wantR)
		}
		if len(c)+len(r) > len(text) {
			t.Fatalf("output longer than input: (%q, %q) from %q", c, r, text)
		}
	})
}

// toolFragments reads the tool-call fragments of a stream.
func toolFragments(data []byte) []ToolCallDelta {
	var out []ToolCallDelta
	_ = ParseSSE(bytes.NewReader(data), func(e Event) error {
		var ch chunk
		if json.Unmarshal([]byte(e.Data), &ch) != nil {
			return nil
		}
		for _, c := range ch.Choices {
			for _, w := range c.Delta.ToolCalls {
				out = append(out, w.delta())
			}
		}
		return nil
	})
	return out
}

func FuzzToolCallAccumulator(f *testing.F) {
	var calls fakellm.Reply
	for _, e := range fakellm.Fixture("stream-tool-call").Events {
		if strings.Contains(e.Data, "tool_calls") {
			calls.Events = append(calls.Events, e)
		}
	}
	f.Add(wire(sample(calls, 3)))
	f.Add(wire(fakellm.NewStream().ToolCall(1, "b", "x", `{"a"`, `:1}`).ToolCall(0, "a", "y", `{}`).ToolCall(1, "", "", " ").Reply()))
	f.Add([]byte(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"id":"a","function":{"name":"n","arguments":{"k":1}}},{"function":{"arguments":"x"}}]}}]}` + "\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		frags := toolFragments(data)
		var whole, halves ToolCallAccumulator
		for _, d := range frags {
			whole.Add(d)
			// The same fragment in two, the second carrying only the rest
			// of the arguments, as a server cutting elsewhere would send.
			mid := len(d.Arguments) / 2
			first := d
			first.Arguments = d.Arguments[:mid]
			halves.Add(first)
			halves.Add(ToolCallDelta{Index: d.Index, Arguments: d.Arguments[mid:]})
		}
		got, want := halves.Calls(), whole.Calls()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("split fragments: %+v\nwhole: %+v", got, want)
		}
		for _, c := range want {
			if c.ID == "" || c.Type == "" || c.Arguments == "" {
				t.Fatalf("incomplete call %+v", c)
			}
		}
		if whole.Len() > len(frags) {
			t.Fatalf("%d calls from %d fragments", whole.Len(), len(frags))
		}
	})
}

// BenchmarkStreamRelay measures what relaying one upstream chunk costs:
// SSE framing, JSON decoding, the think splitter and the callback.
func BenchmarkStreamRelay(b *testing.B) {
	body := wire(fakellm.Fixture("stream-reasoning-usage"))
	chunks := bytes.Count(body, []byte("\n\n"))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		st := &streamState{fn: func(Delta) error { return nil }}
		err := ParseSSE(bytes.NewReader(body), st.event)
		if _, err := st.finish(bg(), err); err != nil && !errors.Is(err, errDone) {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chunks), "ns/chunk")
}
