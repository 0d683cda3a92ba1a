package library

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// A document's text is searched in chunks: the unit FTS5 ranks and the
// model is given. About a screen of text: long enough to hold a passage's
// context, short enough that eight of them fit a small model's window.
const (
	// chunkMin is the fewest characters a chunk is cut at when the text
	// goes on (a boundary is looked for between chunkMin and chunkMax).
	chunkMin = 1000
	// chunkMax is the most characters (runes) a chunk holds.
	chunkMax = 1500
)

// Chunks splits text into chunks of at most chunkMax characters, cut at
// the last paragraph break between chunkMin and chunkMax characters, else
// the last line break, else the end of a sentence, else a space, else
// anywhere (never inside a rune). Whitespace at the cuts is dropped; no
// chunk is empty. The chunks are substrings of text: they share its
// memory.
func Chunks(text string) []string {
	var out []string
	rest := strings.TrimLeftFunc(text, unicode.IsSpace)
	for rest != "" {
		// lo and hi are the byte offsets of the chunkMin-th and chunkMax-th
		// runes (hi is len(rest) when it is shorter).
		lo, hi, n := -1, len(rest), 0
		for i := range rest {
			if n == chunkMin {
				lo = i
			}
			if n == chunkMax {
				hi = i
				break
			}
			n++
		}
		cut := hi
		if hi < len(rest) {
			cut = boundary(rest, lo, hi)
		}
		if c := strings.TrimRightFunc(rest[:cut], unicode.IsSpace); c != "" {
			out = append(out, c)
		}
		rest = strings.TrimLeftFunc(rest[cut:], unicode.IsSpace)
	}
	return out
}

// boundary returns where to end a chunk of s that must end by byte hi and
// should end after byte lo: the best boundary in s[lo:hi], else hi.
func boundary(s string, lo, hi int) int {
	if lo < 0 {
		lo = 0
	}
	w := s[lo:hi]
	if i := strings.LastIndex(w, "\n\n"); i >= 0 {
		return lo + i
	}
	if i := strings.LastIndexByte(w, '\n'); i >= 0 {
		return lo + i
	}
	// The end of a sentence: its mark, then a space.
	for i := len(w) - 1; i > 0; i-- {
		if w[i] == ' ' || w[i] == '\t' {
			switch w[i-1] {
			case '.', '!', '?', ';', ':':
				return lo + i
			}
		}
	}
	if i := strings.LastIndexFunc(w, unicode.IsSpace); i >= 0 {
		return lo + i
	}
	// No space in the window: cut at hi, which is a rune start.
	for hi > 0 && hi < len(s) && !utf8.RuneStart(s[hi]) {
		hi--
	}
	return hi
}
