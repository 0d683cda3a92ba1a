package attach

import (
	"encoding/base64"
	"regexp"
	"strings"
	"unicode"
)

// ImageDataURI returns a stored image as a data URI ("data:image/jpeg;base64,…"),
// the form vision models take in an image_url content part: a local endpoint
// has no route back to LLeMbas and a hosted one has no credentials, so images
// are sent, never linked. mime is Result.MIME.
func ImageDataURI(mime string, data []byte) string {
	var b strings.Builder
	b.Grow(len("data:;base64,") + len(mime) + base64.StdEncoding.EncodedLen(len(data)))
	b.WriteString("data:")
	b.WriteString(mime)
	b.WriteString(";base64,")
	enc := base64.NewEncoder(base64.StdEncoding, &b)
	_, _ = enc.Write(data) // a strings.Builder does not fail
	_ = enc.Close()
	return b.String()
}

// DocumentContext returns the text of an attached document as a block for the
// model's context, naming the file so that the model can tell several apart
// and refer to them:
//
//	<document name="report.pdf">
//	…text…
//	</document>
//
// name is shown in an attribute, so quotes, angle brackets and line breaks are
// dropped from it. A closing tag inside the text is defused ("</document" gains
// a backslash) so a file cannot end its block early and pose as instructions
// outside it. note (Result.Note) is put before the text in parentheses, so
// that a scanned PDF says so instead of contributing nothing.
func DocumentContext(name, text, note string) string {
	return SourcedDocumentContext(name, "", "", text, note)
}

// SourcedDocumentContext is DocumentContext for a file chosen with @,
// whose tag also says where it came from (path="…" source="…", each only
// when set): a model handed main.py cannot tell which of four it is
// looking at, nor name it back, without them. They are attribute values
// of a tag we write, so quotes, angle brackets and line breaks are
// stripped, not escaped.
func SourcedDocumentContext(name, path, source, text, note string) string {
	var b strings.Builder
	b.Grow(len(name) + len(path) + len(source) + len(text) + len(note) + 64)
	b.WriteString(`<document name="`)
	b.WriteString(attr(DisplayName(name)))
	if path = attr(path); path != "" {
		b.WriteString(`" path="`)
		b.WriteString(path)
	}
	if source = attr(source); source != "" {
		b.WriteString(`" source="`)
		b.WriteString(source)
	}
	b.WriteString("\">\n")
	if note != "" {
		b.WriteString("(")
		b.WriteString(note)
		b.WriteString(")\n")
	}
	if text != "" {
		b.WriteString(closingTag.ReplaceAllString(text, `<\/$1`))
		if !strings.HasSuffix(text, "\n") {
			b.WriteString("\n")
		}
	}
	b.WriteString("</document>")
	return b.String()
}

// attr is s as an attribute value of a tag we write, on one line: quotes,
// angle brackets and CR/LF dropped (as before, so a path reads the same),
// every other space or line break (a vertical tab, NEL, U+2028) a space,
// controls and direction overrides dropped as DisplayName drops them.
func attr(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '"', r == '<', r == '>', r == '\n', r == '\r':
			return -1
		case unicode.IsSpace(r):
			return ' '
		case unicode.IsControl(r), unicode.Is(unicode.Bidi_Control, r), r == '\uFEFF':
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
}

var closingTag = regexp.MustCompile(`(?i)</(document)`)
