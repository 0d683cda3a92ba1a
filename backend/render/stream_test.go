package render

import (
	"fmt"
	"html"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// follower applies frames the way the frontend does.
type follower struct {
	sealed, tail string
}

func (c *follower) apply(t *testing.T, f Frame) {
	t.Helper()
	if f.Reset {
		c.sealed, c.tail = f.Full, ""
	}
	for _, s := range f.Seal {
		c.sealed += s
	}
	switch f.Op {
	case TailReplace:
		c.tail = f.Tail
	case TailAppend:
		i := strings.LastIndex(c.tail, codeClose)
		if i < 0 {
			t.Fatalf("append to a tail without an open code block: %q", c.tail)
		}
		c.tail = c.tail[:i] + f.Tail + c.tail[i:]
	case TailKeep:
	default:
		t.Fatalf("unknown op %q", f.Op)
	}
}

func (c *follower) html() string { return c.sealed + c.tail }

// chunkings returns ways to split src into deltas: every byte alone, fixed
// sizes, and random sizes (some splitting UTF-8 sequences).
func chunkings(src string, rng *rand.Rand, random int) [][]string {
	var out [][]string
	for _, n := range []int{1, 2, 3, 4, 7, 16, 64, len(src) + 1} {
		out = append(out, fixedChunks(src, n))
	}
	for range random {
		var parts []string
		for rest := src; rest != ""; {
			n := min(1+rng.IntN(24), len(rest))
			parts = append(parts, rest[:n])
			rest = rest[n:]
		}
		out = append(out, parts)
	}
	return out
}

func fixedChunks(src string, n int) []string {
	var parts []string
	for len(src) > n {
		parts = append(parts, src[:n])
		src = src[n:]
	}
	if src != "" {
		parts = append(parts, src)
	}
	return parts
}

// runStream feeds parts, a frame after each group of 1..coalesce parts, checks
// the invariants after every frame, and returns the follower and the number of
// resets.
func runStream(t *testing.T, r *Renderer, parts []string, want string, noReset bool, rng *rand.Rand, coalesce int) (follower, int) {
	t.Helper()
	s := r.NewStream()
	var c follower
	resets := 0
	check := func(f Frame) {
		t.Helper()
		if f.Reset {
			resets++
		}
		c.apply(t, f)
		if snap := s.Snapshot(); snap.Full+snap.Tail != c.html() {
			t.Fatalf("snapshot differs from follower:\nsnapshot %q\nfollower %q", snap.Full+snap.Tail, c.html())
		}
		if noReset && !strings.HasPrefix(want, c.sealed) {
			t.Fatalf("sealed blocks are not a prefix of the final render:\nsealed %q\nwant   %q", c.sealed, want)
		}
		if !utf8.ValidString(f.Tail) {
			t.Fatalf("frame tail is not UTF-8: %q", f.Tail)
		}
	}
	pending := 0
	group := 1
	for _, p := range parts {
		s.Write(p)
		pending++
		if pending >= group {
			check(s.Frame())
			pending = 0
			group = 1 + rng.IntN(coalesce)
		}
	}
	check(s.Finish())
	return c, resets
}

func TestStreamEqualsWhole(t *testing.T) {
	r := New()
	rng := rand.New(rand.NewPCG(7, 11))
	for _, doc := range corpus {
		t.Run(doc.name, func(t *testing.T) {
			want := r.Markdown(doc.src)
			for i, parts := range chunkings(doc.src, rng, 20) {
				coalesce := 1
				if i%2 == 1 {
					coalesce = 5
				}
				c, resets := runStream(t, r, parts, want, doc.noReset, rng, coalesce)
				if got := c.html(); got != want {
					t.Fatalf("chunking %d: after Finish\n got %q\nwant %q", i, got, want)
				}
				if doc.noReset && resets > 0 {
					t.Fatalf("chunking %d: %d resets, want none", i, resets)
				}
			}
		})
	}
}

// TestStreamEqualsWholeGenerated runs the property on generated replies and on
// random concatenations of the corpus.
func TestStreamEqualsWholeGenerated(t *testing.T) {
	r := New()
	rng := rand.New(rand.NewPCG(3, 5))
	var docs []string
	docs = append(docs, sampleReply(6000))
	for range 40 {
		var b strings.Builder
		for range 2 + rng.IntN(4) {
			d := corpus[rng.IntN(len(corpus))]
			if !d.noReset {
				continue
			}
			b.WriteString(d.src)
			if rng.IntN(2) == 0 {
				b.WriteString("\n\n")
			}
		}
		docs = append(docs, b.String())
	}
	for i, src := range docs {
		want := r.Markdown(src)
		for j, parts := range chunkings(src, rng, 4) {
			c, _ := runStream(t, r, parts, want, false, rng, 1+j%7)
			if got := c.html(); got != want {
				t.Fatalf("doc %d chunking %d:\nsrc %q\n got %q\nwant %q", i, j, src, got, want)
			}
		}
	}
}

func TestStreamSealsAndAppends(t *testing.T) {
	r := New()
	s := r.NewStream()
	f := s.Append("Hello")
	if f.Op != TailReplace || f.Tail != "<p>Hello</p>\n" || len(f.Seal) != 0 {
		t.Fatalf("first frame = %+v", f)
	}
	if f := s.Frame(); !f.Empty() {
		t.Fatalf("frame without new text = %+v, want empty", f)
	}
	f = s.Append(" world\n\n```go\n")
	if len(f.Seal) != 1 || f.Seal[0] != "<p>Hello world</p>\n" {
		t.Fatalf("paragraph not sealed when the fence started: %+v", f)
	}
	if f.Op != TailReplace || !strings.HasPrefix(f.Tail, `<div class="code-block">`) {
		t.Fatalf("open fence tail = %+v", f)
	}
	f = s.Append("x := 1 < 2\n")
	if f.Op != TailAppend || f.Tail != "x := 1 &lt; 2\n" {
		t.Fatalf("fence text not appended: %+v", f)
	}
	f = s.Append("```\n")
	if len(f.Seal) != 1 || !strings.Contains(f.Seal[0], `<span class="hl-`) || f.Op != TailReplace || f.Tail != "" {
		t.Fatalf("closed fence not sealed highlighted: %+v", f)
	}
	cached := r.cache.len()
	f = s.Finish()
	if f.Reset {
		t.Fatalf("finish reset: %+v", f)
	}
	if r.cache.len() != cached {
		t.Fatalf("final render highlighted again: cache %d → %d", cached, r.cache.len())
	}
	if f := s.Append("more"); !f.Empty() {
		t.Fatalf("append after finish = %+v", f)
	}
}

func TestStreamResetWhenReferenceComesLater(t *testing.T) {
	r := New()
	s := r.NewStream()
	var c follower
	for _, d := range []string{"See [docs].\n\n", "Next.\n\n", "[docs]: https://example.com\n"} {
		c.apply(t, s.Append(d))
	}
	f := s.Finish()
	if !f.Reset {
		t.Fatalf("want a reset, got %+v", f)
	}
	c.apply(t, f)
	if want := r.Markdown("See [docs].\n\nNext.\n\n[docs]: https://example.com\n"); c.html() != want {
		t.Fatalf("got %q want %q", c.html(), want)
	}
}

func TestStreamHoldsBackSplitRunes(t *testing.T) {
	r := New()
	s := r.NewStream()
	b := []byte("```\nλ")
	f := s.Append(string(b[:len(b)-1]))
	if !utf8.ValidString(f.Tail) {
		t.Fatalf("tail with a broken rune: %q", f.Tail)
	}
	f = s.Append(string(b[len(b)-1:]))
	if f.Op != TailAppend || f.Tail != "λ" {
		t.Fatalf("rest of the rune = %+v", f)
	}
}

func TestStreamConcurrentSnapshot(t *testing.T) {
	r := New()
	s := r.NewStream()
	src := sampleReply(4000)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 200 {
			_ = s.Snapshot()
		}
	}()
	for _, p := range fixedChunks(src, 9) {
		s.Append(p)
	}
	s.Finish()
	wg.Wait()
	if got := s.Snapshot(); got.Full != r.Markdown(src) || got.Tail != "" {
		t.Fatal("snapshot after finish is not the whole render")
	}
}

// TestStreamBigBlocks covers blocks larger than bigTail, which are re-rendered
// only when an eighth of them is new.
func TestStreamBigBlocks(t *testing.T) {
	r := New()
	rng := rand.New(rand.NewPCG(9, 9))
	line := "Some words, a **bold** one and `code` here.\n"
	var list, pre, math, fence strings.Builder
	for i := range 400 {
		fmt.Fprintf(&list, "- item %d: %s", i, line)
		pre.WriteString(line)
		fmt.Fprintf(&math, "x_{%d} + \n", i)
		fmt.Fprintf(&fence, "  ```\n  code %d\n  ```\n", i)
	}
	docs := []string{
		"Intro.\n\n" + list.String() + "\nAfter the list.\n",
		"Intro.\n\n<pre>\n" + pre.String(),
		"Intro.\n\n$$\n" + math.String(),
		"- list with fences\n" + fence.String() + "\nend\n",
	}
	for i, src := range docs {
		want := r.Markdown(src)
		for j, parts := range [][]string{fixedChunks(src, 4), fixedChunks(src, 37), fixedChunks(src, 300)} {
			c, resets := runStream(t, r, parts, want, true, rng, 1+j*40)
			if got := c.html(); got != want {
				t.Fatalf("doc %d chunking %d differs", i, j)
			}
			if resets != 0 {
				t.Fatalf("doc %d chunking %d: %d resets", i, j, resets)
			}
		}
	}
}

// TestStreamTailKeepsMathSource: display math still being written shows its
// TeX as it is; read as Markdown, "\," became "," until the closer came.
func TestStreamTailKeepsMathSource(t *testing.T) {
	r := New()
	for _, c := range []struct{ src, want string }{
		{`Here $$\int f \, dx`, `$$\int f \, dx`},
		{`Here \[\int f \, dx`, `\[\int f \, dx`},
		{`Here \(a \, b`, `\(a \, b`},
		{"$$\n\\int f \\, dx\n\\frac{a}{b", "$$\n\\int f \\, dx\n\\frac{a}{b"},
		{"\\[\n\\alpha \\; \\beta\n", "\\[\n\\alpha \\; \\beta"},
	} {
		s := r.NewStream()
		f := s.Append(c.src)
		if f.Op != TailReplace || !strings.Contains(html.UnescapeString(f.Tail), c.want) {
			t.Errorf("%q: tail %q, want it to show %q", c.src, f.Tail, c.want)
		}
		if strings.Contains(f.Tail, "math") {
			t.Errorf("%q: unfinished math typeset: %q", c.src, f.Tail)
		}
	}
	// Once closed it is math, and the whole message is as it was.
	s := r.NewStream()
	s.Append(`Here $$\int f \, dx`)
	f := s.Append(`$$ done`)
	if !strings.Contains(f.Tail, `<span class="math math-display">\int f \, dx</span>`) {
		t.Errorf("closed display math: %q", f.Tail)
	}
	if got := r.Markdown("Costs $$5 and \\, more"); strings.Contains(got, `\,`) {
		t.Errorf("a whole message keeps Markdown's escapes outside math: %q", got)
	}
}
