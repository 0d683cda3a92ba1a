package attach

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"

	"github.com/llembas/lembas/backend/apperr"
)

// processText decodes data as text. ok is false when data is not text (it has
// NULs, or too many control characters once decoded); the caller then refuses
// it by what it seems to be.
func processText(display string, data []byte, lim Limits) (res Result, ok bool, err error) {
	text, charset, cut, ok := decodeText(data, lim.MaxTextBytes)
	if !ok {
		return Result{}, false, nil
	}
	if strings.TrimSpace(text) == "" {
		return Result{}, true, apperr.New(apperr.Invalid, "%s has no text in it.", display)
	}
	res = Result{Kind: KindText, MIME: "text/plain; charset=" + charset, Data: data, Text: text}
	if cut {
		res.Note = truncatedNote(lim.MaxTextBytes)
	}
	return res, true, nil
}

// decodeText detects the encoding of b and returns at most maxText bytes of it
// as UTF-8, the charset label for Content-Type, and whether it was cut. The
// encoding is decided on the whole file; only a prefix long enough to fill
// maxText is decoded. Detection: a BOM (UTF-8, UTF-16 LE or BE), else valid
// UTF-8, else Windows-1252 (a superset of the printable Latin-1). Data with a
// NUL byte, a UTF-32 BOM, or more than 1% control characters is not text.
func decodeText(b []byte, maxText int) (text, charset string, cut, ok bool) {
	var enc encoding.Encoding
	body := b
	switch {
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE, 0, 0}), bytes.HasPrefix(b, []byte{0, 0, 0xFE, 0xFF}):
		return "", "", false, false // UTF-32 is not worth supporting
	case bytes.HasPrefix(b, []byte{0xEF, 0xBB, 0xBF}):
		body, charset = b[3:], "utf-8"
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE}):
		enc, charset = unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM), "utf-16"
	case bytes.HasPrefix(b, []byte{0xFE, 0xFF}):
		enc, charset = unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM), "utf-16"
	case bytes.IndexByte(b, 0) >= 0:
		return "", "", false, false
	case utf8.Valid(b):
		charset = "utf-8"
	default:
		enc, charset = charmap.Windows1252, "windows-1252"
	}

	// Every encoding here yields at least one byte of UTF-8 per two bytes of
	// input, so this prefix fills maxText.
	prefix := body
	if limit := 2*maxText + 4; len(prefix) > limit {
		prefix = prefix[:limit]
		cut = true
		if charset == "utf-8" && enc == nil {
			prefix = []byte(cutUTF8(string(prefix), limit))
		}
	}
	var s string
	if enc == nil {
		s = strings.ToValidUTF8(string(prefix), "\uFFFD")
	} else {
		if enc != charmap.Windows1252 && len(prefix)%2 == 1 && cut {
			prefix = prefix[:len(prefix)-1]
		}
		out, err := enc.NewDecoder().Bytes(prefix)
		if err != nil {
			return "", "", false, false
		}
		s = string(out)
		if cut {
			s = strings.TrimSuffix(s, "\uFFFD") // a surrogate pair split by the prefix
		}
	}
	if !looksLikeText(s) {
		return "", "", false, false
	}
	if len(s) > maxText {
		s, cut = cutUTF8(s, maxText), true
	}
	return s, charset, cut, true
}

// looksLikeText reports whether s has no NUL and at most 1% of control
// characters other than tab, newlines, form feed and escape (which colours
// terminal logs), counting replacement characters from invalid input as
// control characters.
func looksLikeText(s string) bool {
	runes, bad := 0, 0
	for _, r := range s {
		runes++
		switch {
		case r == 0:
			return false
		case r == '\t', r == '\n', r == '\r', r == '\f', r == '\v', r == 0x1b:
		case r < 0x20, r >= 0x7f && r <= 0x9f, r == utf8.RuneError:
			bad++
		}
	}
	return bad*100 <= runes
}

// String for debugging a Result in tests and logs: never the data itself.
func (r Result) String() string {
	return fmt.Sprintf("%s %s (%d bytes, %d bytes of text, %dx%d) %q",
		r.Kind, r.MIME, len(r.Data), len(r.Text), r.Width, r.Height, r.Note)
}
