package render

import (
	"bytes"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Node kinds are registered with goldmark once per process (NewNodeKind appends
// to goldmark's own table), so they are package-level; they never change.
var (
	kindMathInline = ast.NewNodeKind("MathInline")
	kindMathBlock  = ast.NewNodeKind("MathBlock")
)

// mathInline is $…$, \(…\), or an inline $$…$$ / \[…\] inside a paragraph.
// In a live tail, pending is an opener whose closer has not arrived: tex is
// then the source from the opener on, shown as text.
type mathInline struct {
	ast.BaseInline
	display bool
	pending bool
	tex     []byte
}

func (n *mathInline) Kind() ast.NodeKind { return kindMathInline }
func (n *mathInline) IsRaw() bool        { return true }
func (n *mathInline) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, map[string]string{"tex": string(n.tex)}, nil)
}

// mathBlock is a $$ or \[ display block; its lines are the TeX.
type mathBlock struct {
	ast.BaseBlock
	closer string
	closed bool
}

func (n *mathBlock) Kind() ast.NodeKind { return kindMathBlock }
func (n *mathBlock) IsRaw() bool        { return true }
func (n *mathBlock) Dump(source []byte, level int) {
	ast.DumpHelper(n, source, level, nil, nil)
}

// mathExtension adds math that Markdown leaves untouched: no emphasis, escapes or
// links are processed inside it, and the TeX comes out escaped in a
// span/div with class "math" for the frontend to typeset with KaTeX.
//
// live is for the tail of a stream: math still being written (an opener
// without its closer, "$$", "\[" or "\(") is shown as its source, untouched.
// Read as Markdown it would lose its backslashes ("\," is an escaped comma)
// until the closer arrived.
type mathExtension struct{ live bool }

func (e mathExtension) Extend(m goldmark.Markdown) {
	m.Parser().AddOptions(
		parser.WithBlockParsers(util.Prioritized(mathBlockParser{}, 150)),
		// Before the code span, link and emphasis parsers (100–300): a $ or \(
		// claims its text first.
		parser.WithInlineParsers(util.Prioritized(mathInlineParser{live: e.live}, 50)),
	)
	m.Renderer().AddOptions(renderer.WithNodeRenderers(util.Prioritized(mathRenderer{live: e.live}, 100)))
}

type mathInlineParser struct{ live bool }

func (mathInlineParser) Trigger() []byte { return []byte{'$', '\\'} }

func (p mathInlineParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	line, _ := block.PeekLine()
	if len(line) < 2 {
		return nil
	}
	var (
		open    int
		display bool
		closes  func(line []byte, i int) int // length of a closer at i, or 0
	)
	switch {
	case line[0] == '\\' && (line[1] == '(' || line[1] == '['):
		open, display = 2, line[1] == '['
		want := byte(')')
		if display {
			want = ']'
		}
		closes = func(l []byte, i int) int {
			if l[i] == '\\' && i+1 < len(l) && l[i+1] == want {
				return 2
			}
			return 0
		}
	case line[0] == '$' && line[1] == '$':
		open, display = 2, true
		closes = func(l []byte, i int) int {
			if l[i] == '$' && i+1 < len(l) && l[i+1] == '$' {
				return 2
			}
			return 0
		}
	case line[0] == '$':
		// Prices: "$5 and $10" is not math. The opening $ must not be followed
		// by a space, the closing $ must not follow a space nor be followed by a
		// digit.
		if isSpace(line[1]) {
			return nil
		}
		open = 1
		closes = func(l []byte, i int) int {
			if l[i] != '$' || i == 0 || isSpace(l[i-1]) {
				return 0
			}
			if i+1 < len(l) && l[i+1] >= '0' && l[i+1] <= '9' {
				return 0
			}
			return 1
		}
	default:
		return nil
	}

	savedLine, savedPos := block.Position()
	opener := append([]byte(nil), line[:open]...)
	block.Advance(open)
	var tex []byte
	for {
		l, _ := block.PeekLine()
		if l == nil {
			if p.live && (display || opener[0] == '\\') {
				// Still being written: the rest of the block is its source.
				return &mathInline{pending: true, tex: append(opener, tex...)}
			}
			block.SetPosition(savedLine, savedPos)
			return nil
		}
		for i := 0; i < len(l); i++ {
			if n := closes(l, i); n > 0 {
				tex = append(tex, l[:i]...)
				if len(bytes.TrimSpace(tex)) == 0 {
					block.SetPosition(savedLine, savedPos)
					return nil
				}
				block.Advance(i + n)
				return &mathInline{display: display, tex: tex}
			}
			if l[i] == '\\' {
				i++ // \$ and \\ are TeX, never a closer
			}
		}
		tex = append(tex, l...)
		block.AdvanceLine()
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

type mathBlockParser struct{}

func (mathBlockParser) Trigger() []byte { return []byte{'$', '\\'} }

// Open accepts "$$" or "\[" alone on a line (the TeX follows on the next lines),
// or a whole display on one line ("$$ x $$"). "$$100 prize" at the start of a
// paragraph is not math: it would swallow the rest of the reply.
func (mathBlockParser) Open(parent ast.Node, reader text.Reader, pc parser.Context) (ast.Node, parser.State) {
	line, segment := reader.PeekLine()
	pos := pc.BlockOffset()
	if pos < 0 || pos+2 > len(line) {
		return nil, parser.NoChildren
	}
	rest := line[pos:]
	var opener, closer string
	switch {
	case bytes.HasPrefix(rest, []byte("$$")):
		opener, closer = "$$", "$$"
		if len(rest) > 2 && rest[2] == '$' {
			return nil, parser.NoChildren
		}
	case bytes.HasPrefix(rest, []byte(`\[`)):
		opener, closer = `\[`, `\]`
	default:
		return nil, parser.NoChildren
	}
	after := rest[len(opener):]
	node := &mathBlock{closer: closer}
	if len(util.TrimRightSpace(util.TrimLeftSpace(after))) == 0 {
		reader.AdvanceToEOL()
		return node, parser.NoChildren
	}
	inner := util.TrimRightSpace(after)
	if !bytes.HasSuffix(inner, []byte(closer)) || len(inner) == len(closer) {
		return nil, parser.NoChildren
	}
	inner = inner[:len(inner)-len(closer)]
	if bytes.Contains(inner, []byte(closer)) || len(bytes.TrimSpace(inner)) == 0 {
		return nil, parser.NoChildren
	}
	start := segment.Start + pos + len(opener)
	node.Lines().Append(text.NewSegment(start, start+len(inner)))
	node.closed = true
	reader.AdvanceToEOL()
	return node, parser.NoChildren
}

func (mathBlockParser) Continue(node ast.Node, reader text.Reader, pc parser.Context) parser.State {
	n := node.(*mathBlock)
	if n.closed {
		return parser.Close
	}
	line, segment := reader.PeekLine()
	if line == nil {
		return parser.Close
	}
	trimmed := util.TrimRightSpace(line)
	if bytes.HasSuffix(trimmed, []byte(n.closer)) {
		body := trimmed[:len(trimmed)-len(n.closer)]
		if len(bytes.TrimSpace(body)) > 0 {
			n.Lines().Append(text.NewSegment(segment.Start, segment.Start+len(body)))
		}
		n.closed = true
		reader.AdvanceToEOL()
		return parser.Close
	}
	n.Lines().Append(segment)
	reader.AdvanceToEOL()
	return parser.Continue | parser.NoChildren
}

func (mathBlockParser) Close(node ast.Node, reader text.Reader, pc parser.Context) {}
func (mathBlockParser) CanInterruptParagraph() bool                                { return true }
func (mathBlockParser) CanAcceptIndentedLine() bool                                { return false }

type mathRenderer struct{ live bool }

func (r mathRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(kindMathInline, renderMathInline)
	reg.Register(kindMathBlock, r.renderMathBlock)
}

func renderMathInline(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	n := node.(*mathInline)
	if n.pending {
		_, _ = w.WriteString(Escape(string(n.tex)))
		return ast.WalkSkipChildren, nil
	}
	if n.display {
		_, _ = w.WriteString(`<span class="math math-display">`)
	} else {
		_, _ = w.WriteString(`<span class="math math-inline">`)
	}
	_, _ = w.WriteString(Escape(string(bytes.TrimSpace(n.tex))))
	_, _ = w.WriteString(`</span>`)
	return ast.WalkSkipChildren, nil
}

func (r mathRenderer) renderMathBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	var tex []byte
	lines := node.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		tex = append(tex, seg.Value(source)...)
	}
	if n := node.(*mathBlock); r.live && !n.closed {
		// Still being written: its source as text, opener first, not half
		// a formula for KaTeX to fail on every frame.
		opener := "$$"
		if n.closer == `\]` {
			opener = `\[`
		}
		_, _ = w.WriteString("<p>" + Escape(opener+"\n"+string(tex)) + "</p>\n")
		return ast.WalkSkipChildren, nil
	}
	_, _ = w.WriteString(`<div class="math math-display">`)
	_, _ = w.WriteString(Escape(string(bytes.TrimSpace(tex))))
	_, _ = w.WriteString("</div>\n")
	return ast.WalkSkipChildren, nil
}
