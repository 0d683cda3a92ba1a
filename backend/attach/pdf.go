package attach

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"

	"github.com/llembas/lembas/backend/apperr"
)

// NoTextNote is the note on a PDF that has no text layer. There is no OCR; the
// note is stored and shown rather than the file silently contributing nothing.
const NoTextNote = "No text found in this PDF; it may be scanned images."

// Bounds on the page tree, which a hostile file can make deep or cyclic.
const (
	maxPageTreeDepth = 64
	maxPageNodes     = 100_000
	// opsPerCheck is how many content-stream operators run between two
	// checks of the deadline.
	opsPerCheck = 1024
	// maxStreamBytes bounds the inflated size of one page's content or one
	// font's ToUnicode CMap handed to the parser. Its lexer collects a
	// string, and its interpreter an operand stack, with no bound, so a
	// FlateDecode stream of a few hundred kilobytes that inflates to
	// gigabytes would be held whole. A page of text is tens of kilobytes.
	maxStreamBytes = 4 << 20
	// maxObjStmBytes bounds the inflated size of one object stream (PDF
	// 1.5 packs objects into compressed streams, which the library
	// inflates whole before it reads one of their objects). Real ones hold
	// a few hundred objects: kilobytes.
	maxObjStmBytes = 16 << 20
)

// objectStreamsFit reports whether every object stream in the raw file
// inflates to at most max bytes. It finds them by their /ObjStm type in the
// uncompressed file structure (object streams cannot nest), inflates each
// into nothing, and keeps nothing. A stream it cannot inflate fits: the
// parser reports that fault itself.
func objectStreamsFit(data []byte, max int64) bool {
	rest := data
	for {
		i := bytes.Index(rest, []byte("/ObjStm"))
		if i < 0 {
			return true
		}
		rest = rest[i+len("/ObjStm"):]
		j := bytes.Index(rest, []byte("stream"))
		if j < 0 {
			return true
		}
		body := rest[j+len("stream"):]
		body = bytes.TrimPrefix(body, []byte("\r"))
		body = bytes.TrimPrefix(body, []byte("\n"))
		if k := bytes.Index(body, []byte("endstream")); k >= 0 {
			body = body[:k]
		}
		zr, err := zlib.NewReader(bytes.NewReader(body))
		if err == nil {
			n, _ := io.Copy(io.Discard, io.LimitReader(zr, max+1))
			zr.Close()
			if n > max {
				return false
			}
		}
		rest = rest[j+len("stream"):]
	}
}

// streamFits reports whether v, a stream or an array of streams, inflates
// to at most max bytes. It reads the streams to find out, keeping nothing.
// A stream that cannot be read fits: the parser reports that fault itself.
func streamFits(v pdf.Value, max int64) bool {
	var total int64
	fits := func(s pdf.Value) bool {
		if s.Kind() != pdf.Stream {
			return true
		}
		rc := s.Reader()
		defer rc.Close()
		n, _ := io.Copy(io.Discard, io.LimitReader(rc, max-total+1))
		total += n
		return total <= max
	}
	if v.Kind() == pdf.Array {
		for i := 0; i < v.Len(); i++ {
			if !fits(v.Index(i)) {
				return false
			}
		}
		return true
	}
	return fits(v)
}

// noText is the encoding of a font whose CMap is too large to read: its
// text is left out rather than shown as raw codes.
type noText struct{}

func (noText) Decode(string) string { return "" }

// processPDF extracts the text of a PDF under lim.PDFTimeout.
func processPDF(ctx context.Context, display string, data []byte, lim Limits) (Result, error) {
	text, cut, err := extractPDFText(ctx, data, lim)
	if err != nil {
		if errors.Is(err, errPDFTimeout) {
			return Result{}, apperr.Wrap(apperr.Invalid, err,
				"Reading the text of %s took longer than %s; it may be very large or damaged.", display, lim.PDFTimeout)
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return Result{}, fmt.Errorf("process pdf %q: %w", display, ctxErr)
		}
		var enc encryptedError
		if errors.As(err, &enc) {
			return Result{}, apperr.Wrap(apperr.Invalid, err, "%s is password-protected; remove the password and attach it again.", display)
		}
		return Result{}, apperr.Wrap(apperr.Invalid, err, "%s is not a valid PDF; it may be damaged.", display)
	}
	res := Result{Kind: KindPDF, MIME: "application/pdf", Data: data, Text: text}
	switch {
	case strings.TrimSpace(text) == "":
		res.Text, res.Note = "", NoTextNote
	case cut:
		res.Note = truncatedNote(lim.MaxTextBytes)
	}
	return res, nil
}

var errPDFTimeout = errors.New("pdf text extraction timed out")

type encryptedError struct{ error }

// extractPDFText runs the extraction in a goroutine with a deadline. A
// goroutine cannot be killed, so the work is bounded from inside as well:
// every read of the file and every batch of content-stream operators checks
// the deadline and stops the goroutine with a panic, which is recovered.
func extractPDFText(ctx context.Context, data []byte, lim Limits) (string, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, lim.PDFTimeout)
	defer cancel()

	type outcome struct {
		text string
		cut  bool
		err  error
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() {
			if p := recover(); p != nil {
				o = outcome{err: fmt.Errorf("pdf parser: %v", p)}
			}
			done <- o
		}()
		o.text, o.cut, o.err = readPDF(ctx, data, lim.MaxTextBytes)
	}()

	var o outcome
	select {
	case o = <-done:
	case <-ctx.Done():
	}
	// A read stopped by the deadline may report it as a parse error (the
	// parser recovers panics into errors), so the context decides.
	switch err := ctx.Err(); {
	case errors.Is(err, context.DeadlineExceeded):
		return "", false, errPDFTimeout
	case err != nil:
		return "", false, err
	}
	return o.text, o.cut, o.err
}

// stopped is the panic that ends a PDF read whose deadline passed. It is a
// runtime.Error so that the parser's own recover-and-continue spots (which
// re-panic runtime errors) cannot swallow it.
type stopped struct{}

func (stopped) Error() string { return "pdf read stopped" }
func (stopped) RuntimeError() {}

var _ runtime.Error = stopped{}

// guardedReader is the PDF file as the parser sees it: every read first checks
// the deadline.
type guardedReader struct {
	ctx  context.Context
	data []byte
}

func (g guardedReader) ReadAt(p []byte, off int64) (int, error) {
	if g.ctx.Err() != nil {
		panic(stopped{})
	}
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	if off >= int64(len(g.data)) {
		return 0, io.EOF
	}
	n := copy(p, g.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// readPDF opens the PDF and collects the text of every page, stopping at
// maxText bytes.
func readPDF(ctx context.Context, data []byte, maxText int) (string, bool, error) {
	if !objectStreamsFit(data, maxObjStmBytes) {
		return "", false, errors.New("an object stream inflates beyond its bound")
	}
	src := data
	// The parser accepts only "%PDF-1.x" headers; PDF 2.0 has the same syntax.
	if len(src) > 8 && string(src[:8]) == "%PDF-2.0" {
		src = append([]byte("%PDF-1.7"), src[8:]...)
	}
	r, err := pdf.NewReader(guardedReader{ctx, src}, int64(len(src)))
	if err != nil {
		if errors.Is(err, pdf.ErrInvalidPassword) {
			return "", false, encryptedError{err}
		}
		return "", false, fmt.Errorf("open pdf: %w", err)
	}

	t := &textSink{max: maxText}
	nodes := 0
	var pageErr error
	// The page tree is walked here rather than with Reader.Page, which has
	// no bound on depth or cycles.
	var walk func(node pdf.Value, depth int)
	walk = func(node pdf.Value, depth int) {
		if nodes++; t.full || depth > maxPageTreeDepth || nodes > maxPageNodes {
			return
		}
		switch node.Key("Type").Name() {
		case "Page":
			if err := pageText(ctx, pdf.Page{V: node}, t); err != nil && pageErr == nil {
				pageErr = err
			}
			t.write("\n\n")
		case "Pages":
			kids := node.Key("Kids")
			for i := 0; i < kids.Len() && !t.full && nodes <= maxPageNodes; i++ {
				walk(kids.Index(i), depth+1)
			}
		}
	}
	walk(r.Trailer().Key("Root").Key("Pages"), 0)
	text := tidyText(t.b.String())
	if text == "" && pageErr != nil {
		return "", false, pageErr
	}
	return text, t.cut, nil
}

// textFull is the panic that ends a page once the text limit is reached.
type textFull struct{}

func (textFull) Error() string { return "text limit reached" }
func (textFull) RuntimeError() {}

// pageText appends the text shown on one page. It follows the text-showing
// operators and turns line moves into newlines and wide gaps into spaces. A
// page whose content cannot be parsed keeps what was read before the fault
// and returns the fault; a passed deadline still ends the whole read.
func pageText(ctx context.Context, p pdf.Page, t *textSink) (err error) {
	defer func() {
		switch x := recover().(type) {
		case nil, textFull:
		case stopped:
			panic(x)
		default:
			err = fmt.Errorf("page content: %v", x)
		}
	}()
	contents := p.V.Key("Contents")
	if contents.IsNull() {
		return nil
	}
	if !streamFits(contents, maxStreamBytes) {
		return fmt.Errorf("page content inflates to more than %s", formatBytes(maxStreamBytes))
	}
	fonts := map[string]pdf.TextEncoding{}
	var enc pdf.TextEncoding
	show := func(raw string) {
		if enc == nil {
			t.write(raw)
			return
		}
		t.write(enc.Decode(raw))
	}
	ops := 0
	pdf.Interpret(contents, func(stk *pdf.Stack, op string) {
		if ops++; ops%opsPerCheck == 0 && ctx.Err() != nil {
			panic(stopped{})
		}
		if t.full {
			panic(textFull{})
		}
		args := make([]pdf.Value, stk.Len())
		for i := len(args) - 1; i >= 0; i-- {
			args[i] = stk.Pop()
		}
		switch op {
		case "BT", "ET":
			t.newline()
		case "T*":
			t.newline()
		case "Td", "TD":
			if len(args) == 2 && args[1].Float64() != 0 {
				t.newline()
			} else {
				t.space()
			}
		case "Tf":
			if len(args) != 2 {
				return
			}
			name := args[0].Name()
			e, ok := fonts[name]
			if !ok {
				f := p.Font(name)
				if streamFits(f.V.Key("ToUnicode"), maxStreamBytes) {
					e = f.Encoder()
				} else {
					e = noText{}
				}
				fonts[name] = e
			}
			enc = e
		case "'", "\"":
			t.newline()
			if len(args) > 0 {
				show(args[len(args)-1].RawString())
			}
		case "Tj":
			if len(args) == 1 {
				show(args[0].RawString())
			}
		case "TJ":
			if len(args) != 1 {
				return
			}
			a := args[0]
			for i := 0; i < a.Len(); i++ {
				x := a.Index(i)
				switch x.Kind() {
				case pdf.String:
					show(x.RawString())
				case pdf.Integer, pdf.Real:
					// A gap wider than about a quarter of an em is a space
					// between words (units are thousandths of an em).
					if x.Float64() < -250 {
						t.space()
					}
				}
			}
		}
	})
	return nil
}

// textSink collects text up to max bytes, cutting on a rune boundary.
type textSink struct {
	b    strings.Builder
	max  int
	full bool
	cut  bool
}

func (t *textSink) write(s string) {
	if t.full || s == "" {
		return
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	if room := t.max - t.b.Len(); len(s) > room {
		s = cutUTF8(s, room)
		t.full, t.cut = true, true
	}
	t.b.WriteString(s)
}

func (t *textSink) last() byte {
	s := t.b.String()
	if s == "" {
		return '\n'
	}
	return s[len(s)-1]
}

func (t *textSink) newline() {
	if t.last() != '\n' {
		t.write("\n")
	}
}

func (t *textSink) space() {
	if c := t.last(); c != ' ' && c != '\n' {
		t.write(" ")
	}
}

// tidyText trims trailing spaces from lines and collapses runs of blank lines.
func tidyText(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	blank := 0
	for _, l := range lines {
		l = strings.TrimRight(l, " \t\r\x00")
		if l == "" {
			if blank++; blank > 1 {
				continue
			}
		} else {
			blank = 0
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// cutUTF8 returns the longest prefix of s that is at most n bytes and does not
// split a rune.
func cutUTF8(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func truncatedNote(max int) string {
	return fmt.Sprintf("Only the first %s of text was kept.", formatBytes(int64(max)))
}
