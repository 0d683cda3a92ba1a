package render

import (
	"bytes"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
)

// TailOp says what a Frame does to the live tail.
type TailOp string

// The tail operations. The zero value leaves the tail alone.
const (
	TailKeep    TailOp = ""        // the tail is unchanged
	TailReplace TailOp = "replace" // Frame.Tail is the tail's new HTML
	TailAppend  TailOp = "append"  // Frame.Tail is escaped text to append inside the tail's <code>
)

// Frame is one update of a streamed message. A follower keeps two regions, the
// sealed blocks and the live tail after them, and applies a frame in this order:
//
//  1. Reset: replace the sealed region with Full and empty the tail.
//  2. Append each of Seal, in order, to the sealed region.
//  3. Op: TailReplace sets the tail's HTML to Tail; TailAppend appends Tail
//     (escaped text) to the tail's code element (".code-block code"), which is
//     how an open code fence grows without being sent again.
//
// Every piece is sanitised HTML that stands alone (insertAdjacentHTML per piece
// is fine); one Seal piece may hold several blocks.
type Frame struct {
	Reset bool     `json:"reset,omitempty"`
	Full  string   `json:"full,omitempty"`
	Seal  []string `json:"seal,omitempty"`
	Tail  string   `json:"tail,omitempty"`
	Op    TailOp   `json:"op,omitempty"`
}

// Empty reports whether applying the frame changes nothing, so it need not be sent.
func (f Frame) Empty() bool {
	return !f.Reset && len(f.Seal) == 0 && f.Op == TailKeep
}

// Stream renders one reply as it arrives. A top-level block (paragraph, heading,
// list, table, quote, fence, math block) is sealed once the complete lines show
// that the next one has started, and is rendered once; only the unsealed tail is
// rendered again per frame, and an open code fence at the top level only has its
// new text appended (highlighting waits for the closing fence). A tail larger
// than 1 KB is rendered again only once a sixteenth of it is new, so a huge block
// cannot make the stream quadratic.
//
// The producer calls Write per delta and Frame when a frame is due: the first
// at once, then one per ~40 ms (Append is both, for a frame per delta). Build
// one Stream per reply with Renderer.NewStream. Its methods are safe for
// concurrent use, so a late follower's Snapshot may run beside the producer.
type Stream struct {
	r *Renderer

	mu        sync.Mutex
	src       []byte
	framed    int             // len(src) when the last frame was made
	sealedEnd int             // src[:sealedEnd] is sealed
	sealed    strings.Builder // HTML of the sealed blocks, as followers have it
	checked   int             // complete lines up to here were examined for sealing
	defs      []byte          // link reference definitions seen in sealed blocks
	tail      string          // the tail's HTML as followers have it, when fence is nil
	rendered  int             // src[:rendered] is what tail was rendered from
	fence     *openFence      // the tail is a top-level code fence still open
	done      bool
}

// openFence is the state of a top-level code fence that has not closed yet.
type openFence struct {
	char byte   // '`' or '~'
	n    int    // length of the opening run
	head string // sanitised wrapper up to and including <code>
	body strings.Builder
	sent int // src[:sent] is in body
	next int // offset of the first line not yet checked for the closing fence
}

func (f *openFence) html() string {
	return f.head + f.body.String() + codeClose
}

// NewStream starts the stream of one reply.
func (r *Renderer) NewStream() *Stream {
	return &Stream{r: r}
}

// Write adds text to the reply without rendering; the next Frame shows it. It
// lets a producer coalesce many deltas into one frame. Text after Finish is
// ignored.
func (s *Stream) Write(delta string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.done {
		s.src = append(s.src, delta...)
	}
}

// Append is Write followed by Frame.
func (s *Stream) Append(delta string) Frame {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return Frame{}
	}
	s.src = append(s.src, delta...)
	return s.frame()
}

// Frame renders what changed since the previous frame.
func (s *Stream) Frame() Frame {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return Frame{}
	}
	return s.frame()
}

// Snapshot returns everything so far as one frame (Reset with Full, and the
// tail), for a follower that joins late; later frames apply on top of it.
func (s *Stream) Snapshot() Frame {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Frame{Reset: true, Full: s.sealed.String(), Tail: s.tailHTML(), Op: TailReplace}
}

// Finish renders the whole reply once more and returns the last frame. The whole
// render can differ from the sealed blocks (a reference definition at the end
// changes a link above it); then the frame is a Reset with Full. Code
// highlighted when its block was sealed comes from the cache.
func (s *Stream) Finish() Frame {
	return s.finish(s.r.Markdown)
}

// FinishPartial is Finish for a reply that ended before its end (stopped,
// cut off, failed): the whole is rendered by Renderer.Partial, so markup left
// open at the end is closed.
func (s *Stream) FinishPartial() Frame {
	return s.finish(s.r.Partial)
}

func (s *Stream) finish(render func(string) string) Frame {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return Frame{}
	}
	s.done = true
	full := render(string(s.src))
	sealed := s.sealed.String()
	var f Frame
	if rest, ok := strings.CutPrefix(full, sealed); ok {
		if rest != s.tailHTML() {
			f.Op, f.Tail = TailReplace, rest
		}
	} else {
		f.Reset, f.Full = true, full
	}
	s.sealed.Reset()
	s.sealed.WriteString(full)
	s.sealedEnd, s.framed, s.fence, s.tail = len(s.src), len(s.src), nil, ""
	return f
}

func (s *Stream) tailHTML() string {
	if s.fence != nil {
		return s.fence.html()
	}
	return s.tail
}

// frame does the work of Frame with s.mu held.
func (s *Stream) frame() Frame {
	var f Frame
	// A delta may end inside a UTF-8 sequence; wait for the rest rather than
	// send a broken character.
	end := completeRunes(s.src)
	if end == s.framed {
		return f
	}
	s.framed = end
	lines := bytes.LastIndexByte(s.src[:end], '\n') + 1

	// Seal what the complete lines show to be finished. A partial last line is
	// never used for that: "#" is a heading until it becomes "#hashtag".
	replace := false
	for {
		if s.fence != nil {
			closeEnd, ok := s.fenceCloses(lines)
			if !ok {
				break
			}
			s.tail = s.fence.html()
			s.fence = nil
			s.seal(&f, s.r.render(s.r.full, s.withDefs(s.src[s.sealedEnd:closeEnd])))
			s.sealedEnd, s.checked, replace = closeEnd, closeEnd, true
			continue
		}
		if lines > s.checked && s.due(lines, s.checked) {
			s.checked = lines
			if s.sealBlocks(&f, lines) {
				replace = true
			}
		}
		break
	}

	if fc := s.fence; fc != nil {
		text := Escape(string(s.src[fc.sent:end]))
		fc.body.WriteString(text)
		fc.sent = end
		switch {
		case replace:
			f.Op, f.Tail = TailReplace, fc.html()
		case text != "":
			f.Op, f.Tail = TailAppend, text
		}
		return f
	}
	if !replace && !s.due(end, s.rendered) {
		return f
	}
	s.rendered = end
	tail := s.r.render(s.r.live, s.withDefs(s.src[s.sealedEnd:end]))
	if replace || tail != s.tail {
		f.Op, f.Tail = TailReplace, tail
		s.tail = tail
	}
	return f
}

// smallTail is the size below which the unsealed text is parsed and rendered
// again on every frame. One block can be much larger (a long list or table, an
// unclosed <pre> or math block swallowing the rest of the reply), and doing it
// again per frame would make a reply cost quadratic time.
const smallTail = 1 << 10

// due reports whether the unsealed text up to end should be processed again,
// given that it last was up to last: always while it is small, then once a
// sixteenth of it is new. The work on one block stays linear in its size (about
// sixteen times), and a large block's display lags by a sixteenth of it (256
// bytes, ~30 ms at 2000 tok/s, for a 4 KB table).
func (s *Stream) due(end, last int) bool {
	size := end - s.sealedEnd
	return size < smallTail || end-last >= size/16
}

// sealBlocks parses the unsealed complete lines up to lines and seals every
// top-level block but the last, which may still grow. A last block that is a
// closed code fence is sealed too; an open one puts the stream in fence mode. It
// reports whether the tail changed shape (something sealed, or fence mode).
// Sealed blocks are rendered from this parse, so they are not parsed twice.
func (s *Stream) sealBlocks(f *Frame, lines int) bool {
	chunk := s.src[s.sealedEnd:lines]
	source, prefix := chunk, 0
	if len(s.defs) > 0 {
		source = make([]byte, 0, len(s.defs)+1+len(chunk))
		source = append(append(append(source, s.defs...), '\n'), chunk...)
		prefix = len(s.defs) + 1
	}
	doc := s.r.parse(source)

	// Group the top-level nodes by the line they start on; a node without a
	// position stays with the group before it.
	type group struct {
		start int // offset in chunk of the group's first line
		nodes []ast.Node
	}
	var groups []group
	var loose []ast.Node
	for c := doc.FirstChild(); c != nil; c = c.NextSibling() {
		p := nodeStart(c)
		if p >= 0 && p < prefix {
			continue // a definition we put in front
		}
		if p >= 0 {
			ls := bytes.LastIndexByte(chunk[:p-prefix], '\n') + 1
			if len(groups) == 0 || ls > groups[len(groups)-1].start {
				groups = append(groups, group{start: ls, nodes: append(loose, c)})
				loose = nil
				continue
			}
		}
		if len(groups) == 0 {
			loose = append(loose, c)
		} else {
			g := &groups[len(groups)-1]
			g.nodes = append(g.nodes, c)
		}
	}
	if len(groups) == 0 {
		return false
	}

	base := s.sealedEnd
	var sealed []ast.Node
	for i := 0; i+1 < len(groups); i++ {
		g := groups[i]
		if g.nodes[0].Kind() == ast.KindLinkReferenceDefinition {
			s.defs = append(s.defs, chunk[g.start:groups[i+1].start]...)
			if s.defs[len(s.defs)-1] != '\n' {
				s.defs = append(s.defs, '\n')
			}
		}
		sealed = append(sealed, g.nodes...)
	}
	s.sealedEnd = base + groups[len(groups)-1].start

	last := groups[len(groups)-1].nodes[0]
	fenceMode := false
	if last.Kind() == ast.KindFencedCodeBlock {
		lastStart := s.sealedEnd
		if char, n := fenceOpener(s.src[lastStart:lines]); n > 0 {
			nl := bytes.IndexByte(s.src[lastStart:lines], '\n')
			fc := &openFence{char: char, n: n, sent: lastStart + nl + 1, next: lastStart + nl + 1}
			if closeEnd, ok := scanClose(s.src, fc, lines); ok {
				sealed = append(sealed, groups[len(groups)-1].nodes...)
				s.sealedEnd = closeEnd
			} else {
				lang := string(last.(*ast.FencedCodeBlock).Language(source))
				fc.head = s.r.policy.Sanitize(codeHead(lang))
				s.fence = fc
				fenceMode = true
			}
		}
	}
	if len(sealed) > 0 {
		s.seal(f, s.r.renderNodes(s.r.full, source, sealed...))
	}
	return len(sealed) > 0 || fenceMode
}

// seal adds the HTML of newly sealed blocks to the frame.
func (s *Stream) seal(f *Frame, html string) {
	if html == "" {
		return
	}
	s.sealed.WriteString(html)
	f.Seal = append(f.Seal, html)
}

// withDefs puts the reference definitions seen so far before a block, so
// "[text][ref]" after its definition renders as in the whole message.
func (s *Stream) withDefs(block []byte) string {
	if len(s.defs) == 0 {
		return string(block)
	}
	return string(s.defs) + "\n" + string(block)
}

// fenceCloses looks for the closing fence in the complete lines up to lines and
// returns the end of its line.
func (s *Stream) fenceCloses(lines int) (int, bool) {
	return scanClose(s.src, s.fence, lines)
}

func scanClose(src []byte, fc *openFence, lines int) (int, bool) {
	for fc.next < lines {
		e := bytes.IndexByte(src[fc.next:lines], '\n')
		if e < 0 {
			break
		}
		line := src[fc.next : fc.next+e+1]
		fc.next += e + 1
		if isClosingFence(line, fc.char, fc.n) {
			return fc.next, true
		}
	}
	return 0, false
}

// fenceOpener returns the fence character and run length at the start of a line
// (after up to three spaces), or n == 0.
func fenceOpener(line []byte) (char byte, n int) {
	i := 0
	for i < len(line) && i < 3 && line[i] == ' ' {
		i++
	}
	if i >= len(line) || (line[i] != '`' && line[i] != '~') {
		return 0, 0
	}
	char = line[i]
	for j := i; j < len(line) && line[j] == char; j++ {
		n++
	}
	if n < 3 {
		return 0, 0
	}
	return char, n
}

// isClosingFence is CommonMark's rule: up to three spaces, at least as many fence
// characters as opened it, then only spaces.
func isClosingFence(line []byte, char byte, n int) bool {
	i := 0
	for i < len(line) && i < 3 && line[i] == ' ' {
		i++
	}
	j := i
	for j < len(line) && line[j] == char {
		j++
	}
	if j-i < n {
		return false
	}
	return len(bytes.Trim(line[j:], " \t\r\n")) == 0
}

// nodeStart is the source offset where a top-level block starts, or -1.
func nodeStart(n ast.Node) int {
	if p := n.Pos(); p >= 0 {
		return p
	}
	if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
		return n.Lines().At(0).Start
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if c.Type() != ast.TypeBlock {
			break
		}
		if p := nodeStart(c); p >= 0 {
			return p
		}
	}
	return -1
}

// completeRunes returns the length of b without a trailing incomplete UTF-8
// sequence.
func completeRunes(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}
