package attach

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// MaxNameBytes is the longest display name, in bytes of UTF-8 (the common
// file-system limit, and what fits a Content-Disposition header comfortably).
const MaxNameBytes = 255

// DisplayName returns a name that is safe to show and to send back in
// Content-Disposition, made from a user-supplied one: the last path element
// only (for "/" and "\" alike, so "../" and "C:\…" go), whitespace such as
// tabs and line breaks turned into spaces, no NUL, other control or
// bidirectional-override characters (which can make "exe.txt" look like
// "txt.exe"), invalid UTF-8 dropped, NFC-normalised, trimmed, at most
// MaxNameBytes long without splitting a character (keeping a short extension),
// and "file" when nothing is left. Unicode letters are kept.
//
// The result is for display only. It must never become a path: store files
// under [StorageName].
func DisplayName(name string) string {
	name = strings.ToValidUTF8(name, "")
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsSpace(r): // tabs, line breaks, NBSP and the like
			return ' '
		case unicode.IsControl(r), unicode.Is(unicode.Bidi_Control, r), r == '\uFEFF':
			return -1
		}
		return r
	}, name)
	name = norm.NFC.String(name)
	name = strings.TrimSpace(name)
	if strings.Trim(name, ".") == "" {
		return "file"
	}
	if len(name) > MaxNameBytes {
		name = shorten(name, MaxNameBytes)
	}
	return name
}

// shorten cuts name to at most n bytes on a character boundary, keeping its
// extension when that is short.
func shorten(name string, n int) string {
	ext := ""
	if i := strings.LastIndexByte(name, '.'); i > 0 && len(name)-i <= 16 {
		ext = name[i:]
	}
	stem := cutUTF8(strings.TrimSuffix(name, ext), n-len(ext))
	// cutUTF8 may cut between a base character and its combining marks,
	// leaving the base without its accent; drop the base too.
	if next, _ := utf8.DecodeRuneInString(name[len(stem):]); unicode.Is(unicode.Mn, next) {
		stem = strings.TrimRightFunc(stem, func(r rune) bool { return unicode.Is(unicode.Mn, r) })
		if _, size := utf8.DecodeLastRuneInString(stem); size > 0 {
			stem = stem[:len(stem)-size]
		}
	}
	return strings.TrimSpace(stem) + ext
}

// StorageName returns a new random name to store a file under: 32 lowercase
// hexadecimal characters (128 bits from crypto/rand), never derived from
// anything the user sent.
func StorageName() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// ValidStorageName reports whether s has the form StorageName returns. A route
// that takes a storage name from a request or a database row checks it before
// joining it to a directory.
func ValidStorageName(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
