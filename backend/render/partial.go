package render

import (
	"bytes"
	"strings"

	"github.com/yuin/goldmark/ast"
)

// Partial renders a reply that ended before its end (stopped, cut off by
// length, interrupted, failed): as Markdown, with the inline markup its last
// paragraph left open closed, so "**bold te" shows as bold text rather than
// its asterisks. Code fences need nothing (an open fence runs to the end).
// Continuing the reply appends to the source, never to this.
func (r *Renderer) Partial(src string) string {
	return r.Markdown(string(closeInline(r, []byte(src))))
}

// closeInline returns src with closers appended for the emphasis, strong,
// strikethrough and code spans that its last paragraph or heading opened
// and did not close; src itself when there are none.
func closeInline(r *Renderer, src []byte) []byte {
	trimmed := bytes.TrimRight(src, " \t\r\n")
	n := r.parse(trimmed).LastChild()
	for n != nil && (n.Kind() == ast.KindList || n.Kind() == ast.KindListItem || n.Kind() == ast.KindBlockquote) {
		n = n.LastChild()
	}
	if n == nil || (n.Kind() != ast.KindParagraph && n.Kind() != ast.KindHeading && n.Kind() != ast.KindTextBlock) {
		return src
	}
	lines := n.Lines()
	if lines.Len() == 0 {
		return src
	}
	closers := openMarkup(trimmed[lines.At(0).Start:])
	if closers == "" {
		return src
	}
	return append(trimmed[:len(trimmed):len(trimmed)], closers...)
}

// openMarkup scans the text of one paragraph and returns what closes the
// markup left open at its end, innermost first. It follows CommonMark's
// flanking rules closely enough for the common cases; an opener must not be
// inside a word ("2*3" opens nothing), which is stricter than CommonMark.
func openMarkup(text []byte) string {
	type opener struct {
		c byte
		n int
	}
	var stack []opener
	closeAll := func(extra string) string {
		var b strings.Builder
		b.WriteString(extra)
		for i := len(stack) - 1; i >= 0; i-- {
			b.WriteString(strings.Repeat(string(stack[i].c), stack[i].n))
		}
		return b.String()
	}
	at := func(i int) byte {
		if i < 0 || i >= len(text) {
			return ' '
		}
		return text[i]
	}
	for i := 0; i < len(text); {
		c := text[i]
		switch c {
		case '\\':
			i += 2
			continue
		case '`':
			n := run(text, i)
			if end := findRun(text, i+n, '`', n); end >= 0 {
				i = end + n
				continue
			}
			// An open code span: everything after it is code.
			return closeAll(strings.Repeat("`", n))
		case '$':
			if end := bytes.IndexByte(text[i+1:], '$'); end >= 0 {
				i += end + 2 // math: its * and _ are TeX
				continue
			}
		case '*', '_', '~':
			n := run(text, i)
			prev, next := at(i-1), at(i+n)
			left := !isSpace(next) && (!isPunct(next) || isSpace(prev) || isPunct(prev))
			right := !isSpace(prev) && (!isPunct(prev) || isSpace(next) || isPunct(next))
			canClose := right && (c != '_' || !left || isPunct(next))
			canOpen := left && (isSpace(prev) || isPunct(prev))
			if c == '~' && n != 2 {
				canOpen, canClose = false, false
			}
			closed := false
			if canClose {
				for j := len(stack) - 1; j >= 0; j-- {
					if stack[j].c == c {
						stack, closed = stack[:j], true
						break
					}
				}
			}
			if !closed && canOpen {
				stack = append(stack, opener{c, min(n, 3)})
			}
			i += n
			continue
		}
		i++
	}
	return closeAll("")
}

// run is the length of the run of text[i] starting at i.
func run(text []byte, i int) int {
	n := 0
	for i+n < len(text) && text[i+n] == text[i] {
		n++
	}
	return n
}

// findRun returns where a run of exactly n c's starts at or after i, or -1.
func findRun(text []byte, i int, c byte, n int) int {
	for i < len(text) {
		if text[i] != c {
			i++
			continue
		}
		m := run(text, i)
		if m == n {
			return i
		}
		i += m
	}
	return -1
}

func isPunct(c byte) bool {
	return c < 0x80 && !isSpace(c) && !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9')
}
