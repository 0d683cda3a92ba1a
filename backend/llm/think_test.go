package llm

import (
	"fmt"
	"strings"
	"testing"
)

// split feeds pieces to a fresh splitter and returns everything it emitted.
func split(pieces ...string) (content, reasoning string) {
	var s ThinkSplitter
	var c, r strings.Builder
	for _, p := range pieces {
		pc, pr := s.Feed(p)
		c.WriteString(pc)
		r.WriteString(pr)
	}
	pc, pr := s.Flush()
	return c.String() + pc, r.String() + pr
}

func bytesOf(s string) []string {
	out := make([]string, len(s))
	for i := range s {
		out[i] = s[i : i+1]
	}
	return out
}

func TestThinkSplitter(t *testing.T) {
	tests := []struct {
		name               string
		in                 string
		content, reasoning string
	}{
		{"no tags", "Hello there", "Hello there", ""},
		{"think then answer", "<think>Hmm.</think>Hi", "Hi", "Hmm."},
		{"whitespace after tags dropped", "<think>\n\nHmm.\n</think>\n\nHi", "Hi", "Hmm.\n"},
		{"leading whitespace before think", "  \n<think>x</think>y", "y", "x"},
		{"leading whitespace without think kept", "  \nHello", "  \nHello", ""},
		{"think later is content", "Hello <think>x</think>", "Hello <think>x</think>", ""},
		{"second think after answer is content", "<think>a</think>b<think>c</think>", "b<think>c</think>", "a"},
		{"unclosed think", "<think>still thinking", "", "still thinking"},
		{"unclosed with partial close", "<think>still </thi", "", "still </thi"},
		{"only a partial open tag", "<thi", "<thi", ""},
		{"not a tag", "<thinking>x", "<thinking>x", ""},
		{"lookalike close inside", "<think>a </thinker> b</think>c", "c", "a </thinker> b"},
		{"empty think", "<think></think>Answer", "Answer", ""},
		{"only whitespace", " \n ", " \n ", ""},
		{"close tag alone stays", "</think>Answer", "</think>Answer", ""},
		{"empty", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, r := split(tt.in)
			if c != tt.content || r != tt.reasoning {
				t.Errorf("whole: got (%q, %q), want (%q, %q)", c, r, tt.content, tt.reasoning)
			}
			c, r = split(bytesOf(tt.in)...)
			if c != tt.content || r != tt.reasoning {
				t.Errorf("bytewise: got (%q, %q), want (%q, %q)", c, r, tt.content, tt.reasoning)
			}
		})
	}
}

func TestThinkSplitterNeverEmitsPartialTags(t *testing.T) {
	var s ThinkSplitter
	for _, p := range []string{"<", "th", "ink", ">", "reason", "</", "thi", "nk", ">", "answer"} {
		c, r := s.Feed(p)
		if strings.Contains(c, "<") || strings.Contains(r, "<") {
			t.Fatalf("Feed(%q) emitted part of a tag: (%q, %q)", p, c, r)
		}
	}
}

// TestThinkFixtureChunking is the property on the captured stream: however
// its content is cut, the result is the same as feeding it whole.
func TestThinkFixtureChunking(t *testing.T) {
	text := readFixture(t, "stream-think-tags").content
	wantC, wantR := split(text)
	if !strings.HasPrefix(wantR, "on due murm") || !strings.HasSuffix(wantR, " includ") || !strings.HasPrefix(wantC, "protect consecutive") {
		t.Fatalf("whole: reasoning %.30q… content %.30q…", wantR, wantC)
	}
	if c, r := split(bytesOf(text)...); c != wantC || r != wantR {
		t.Errorf("1-byte chunks differ:\n got (%q, %q)", c, r)
	}
	for i := 0; i <= len(text); i++ {
		if c, r := split(text[:i], text[i:]); c != wantC || r != wantR {
			t.Fatalf("cut at byte %d differs: (%q, %q)", i, c, r)
		}
	}
	for size := 2; size < 12; size++ {
		var pieces []string
		for i := 0; i < len(text); i += size {
			pieces = append(pieces, text[i:min(i+size, len(text))])
		}
		if c, r := split(pieces...); c != wantC || r != wantR {
			t.Errorf("%d-byte chunks differ", size)
		}
	}
}

func ExampleThinkSplitter() {
	var s ThinkSplitter
	for _, piece := range []string{"<thi", "nk>The user greets", ".</th", "ink>\n\nHello, Frodo!"} {
		content, reasoning := s.Feed(piece)
		fmt.Printf("content=%q reasoning=%q\n", content, reasoning)
	}
	content, reasoning := s.Flush()
	fmt.Printf("flush: content=%q reasoning=%q\n", content, reasoning)
	// Output:
	// content="" reasoning=""
	// content="" reasoning="The user greets"
	// content="" reasoning="."
	// content="Hello, Frodo!" reasoning=""
	// flush: content="" reasoning=""
}
