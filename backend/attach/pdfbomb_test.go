package attach

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
)

// flatePDF builds a one-page PDF whose page content is a FlateDecode stream
// of content, and whose font (when toUnicode is not nil) has a FlateDecode
// ToUnicode CMap.
func flatePDF(t testing.TB, content io.Reader, toUnicode io.Reader) []byte {
	t.Helper()
	deflate := func(r io.Reader) []byte {
		var z bytes.Buffer
		w, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
		if _, err := io.Copy(w, r); err != nil {
			t.Fatal(err)
		}
		w.Close()
		return z.Bytes()
	}
	stream := func(data []byte) string {
		return fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", len(data), data)
	}
	font := "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		stream(deflate(content)),
		font,
	}
	if toUnicode != nil {
		objs[4] = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>"
		objs = append(objs, stream(deflate(toUnicode)))
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// repeat is n bytes of s over and over, without holding them.
func repeat(s string, n int64) io.Reader {
	return io.LimitReader(&repeater{s: s}, n)
}

type repeater struct {
	s   string
	off int
}

func (r *repeater) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.s[r.off:])
		n += c
		r.off = (r.off + c) % len(r.s)
	}
	return n, nil
}

// allocatedBy returns how many bytes fn allocated in all.
func allocatedBy(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A PDF is at most MaxBytes, but a FlateDecode stream in it can inflate a
// thousand times over. Text extraction must not hold what it inflates: a
// string that never ends (or a run of operands with no operator) in a page's
// content stream, or in a font's ToUnicode CMap, used to be collected whole
// by the parser's lexer.
func TestPDFFlateBombStaysBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("inflates hundreds of megabytes")
	}
	const inflated = 64 << 20
	const budget = 48 << 20
	page := "BT /F1 12 Tf 72 720 Td (Hello from the first page.) Tj ET\n"
	cases := []struct {
		name string
		pdf  func() []byte
	}{
		{"endless string in the page", func() []byte {
			return flatePDF(t, io.MultiReader(strings.NewReader("BT /F1 12 Tf ("), repeat("a", inflated)), nil)
		}},
		{"operands without an operator", func() []byte {
			return flatePDF(t, repeat("1 ", inflated), nil)
		}},
		{"endless string in a ToUnicode CMap", func() []byte {
			return flatePDF(t, strings.NewReader(page),
				io.MultiReader(strings.NewReader("begincmap ("), repeat("a", inflated)))
		}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			data := tt.pdf()
			if len(data) > 2<<20 {
				t.Fatalf("the bomb is %d bytes; it should be small", len(data))
			}
			var res Result
			var err error
			n := allocatedBy(func() { res, err = processFile(t, "bomb.pdf", data, Limits{}) })
			t.Logf("%d-byte PDF: %d MB allocated, %v %v", len(data), n>>20, res, err)
			if n > budget {
				t.Errorf("extraction allocated %d MB from a %d KB file; the bound is %d MB", n>>20, len(data)>>10, budget>>20)
			}
		})
	}
}

// An object stream (PDF 1.5) that inflates to far more than any real one is
// refused before the library, which would inflate it whole, sees it.
func TestObjectStreamBombIsRefusedBeforeParsing(t *testing.T) {
	var z bytes.Buffer
	w, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	io.Copy(w, repeat("0 ", maxObjStmBytes+1<<20))
	w.Close()
	data := fmt.Appendf(nil, "%%PDF-1.5\n7 0 obj\n<< /Type /ObjStm /N 1 /First 4 /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream\nendobj\n%%%%EOF\n", z.Len(), z.Bytes())
	if objectStreamsFit(data, maxObjStmBytes) {
		t.Fatal("a bomb object stream fits")
	}
	n := allocatedBy(func() {
		if _, err := processFile(t, "objstm.pdf", data, Limits{}); err == nil {
			t.Error("the PDF was accepted")
		}
	})
	if n > 8<<20 {
		t.Errorf("refusing it allocated %d MB", n>>20)
	}
	// Every real PDF in testdata passes the check.
	for _, name := range []string{"text.pdf", "scanned.pdf", "pdf20.pdf"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			continue
		}
		if !objectStreamsFit(b, maxObjStmBytes) {
			t.Errorf("%s fails the object-stream check", name)
		}
	}
}
