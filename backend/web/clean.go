package web

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/llembas/lembas/backend/tools"
)

// Bounds on a hit's fields.
const (
	maxTitle   = 200
	maxSnippet = 600
	maxURL     = 2048
)

// cleanHits bounds and cleans what a provider returned: hits without an
// http or https URL are dropped, duplicates too, and at most n are kept.
func cleanHits(in []tools.SearchHit, n int) []tools.SearchHit {
	out := []tools.SearchHit{}
	seen := map[string]bool{}
	for _, h := range in {
		u := cleanURL(h.URL)
		if u == "" || seen[u] {
			continue
		}
		seen[u] = true
		out = append(out, tools.SearchHit{Title: cleanLine(h.Title, maxTitle), URL: u, Snippet: cleanLine(h.Snippet, maxSnippet)})
		if len(out) == n {
			break
		}
	}
	return out
}

// cleanURL returns u if it is an absolute http or https URL with a host,
// no user info and a sane length, else "".
func cleanURL(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" || len(raw) > maxURL || strings.ContainsFunc(raw, unicode.IsControl) {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return ""
	}
	return u.String()
}

// cleanLine makes untrusted text one line: invalid UTF-8 and control and
// format characters (bidirectional overrides among them) go, whitespace is
// collapsed, and it is cut at n runes with an ellipsis.
func cleanLine(s string, n int) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t' || r == '\r':
			return ' '
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	return cut(s, n)
}

// cleanText is cleanLine for a page's text: lines are kept (at most one
// blank line in a row), each line's spaces collapsed.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return r
		case r == '\t' || r == '\r' || r == '\u00a0':
			return ' '
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, s)
	var b strings.Builder
	blank := true
	for _, line := range strings.Split(s, "\n") {
		line = strings.Join(strings.Fields(line), " ")
		if line == "" {
			if !blank {
				b.WriteByte('\n')
			}
			blank = true
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
		blank = false
	}
	return strings.TrimSpace(b.String())
}

func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
