package mcp

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds on what a server may tell us about its tools.
const (
	maxToolName   = 128      // the server's own name, kept for tools/call
	maxDesc       = 1024     // a description, in bytes
	maxSchema     = 16 << 10 // a schema's JSON, in bytes
	maxTools      = 100      // tools kept from one server
	maxResultText = 40000    // characters of a call's result kept for the model
	maxListBytes  = 4 << 20  // the cached list's JSON
	maxNameLen    = 64       // an offered name: [a-z0-9_-]{1,64}
	emptySchema   = `{"type":"object","properties":{}}`
	maxSlug       = 24
	maxServerName = 80
	maxGuidance   = 4000
	maxResultRaw  = 4 << 20 // bytes of a result's contents looked at
)

// Discovered is one tool a server listed, cleaned: what is cached on the
// server's row (JSON).
type Discovered struct {
	// Name is the server's own name (bounded, never shown unescaped),
	// the one tools/call is sent.
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
}

// cleanText strips control and format characters (bidi overrides,
// zero-width joiners) except newlines and tabs, and bounds the result to
// max bytes on a rune boundary.
func cleanText(s string, max int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	var b strings.Builder
	for _, r := range s {
		if r == '\n' || r == '\t' {
			b.WriteRune(r)
		} else if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			continue
		} else {
			b.WriteRune(r)
		}
		if b.Len() >= max {
			break
		}
	}
	out := b.String()
	for len(out) > max {
		_, n := utf8.DecodeLastRuneInString(out)
		out = out[:len(out)-n]
	}
	return strings.TrimSpace(out)
}

// cleanSchema returns the schema if it is a JSON object within bounds, and
// an empty object schema otherwise (a model offered a string or an array as
// parameters breaks the whole request at some endpoints).
func cleanSchema(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || len(raw) > maxSchema {
		return json.RawMessage(emptySchema)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return json.RawMessage(emptySchema)
	}
	if t, ok := m["type"]; ok && t != "object" {
		return json.RawMessage(emptySchema)
	}
	m["type"] = "object"
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(true) // <, > and & as \u escapes, wherever the schema travels
	if err := enc.Encode(m); err != nil {
		return json.RawMessage(emptySchema)
	}
	return json.RawMessage(bytes.TrimSpace(buf.Bytes()))
}

// lower turns s into [a-z0-9_-]: letters and digits lowered, anything else
// one '_', repeated '_' collapsed, '_' trimmed from both ends.
func lower(s string) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			b.WriteRune(r)
			under = false
		default:
			if !under {
				b.WriteByte('_')
				under = true
			}
		}
	}
	return strings.Trim(b.String(), "_")
}

// offeredName is the name a server's tool is offered under:
// "<slug>_<tool>" lowered and bounded, renamed with a numeric suffix while
// taken (a colliding tool is renamed, never shadowing).
func offeredName(slug, tool string, taken func(string) bool) string {
	base := lower(tool)
	if base == "" {
		base = "tool"
	}
	base = slug + "_" + base
	if len(base) > maxNameLen {
		base = strings.TrimRight(base[:maxNameLen], "_")
	}
	name := base
	for i := 2; taken(name); i++ {
		suffix := "_" + strconv.Itoa(i)
		b := base
		if len(b)+len(suffix) > maxNameLen {
			b = b[:maxNameLen-len(suffix)]
		}
		name = b + suffix
	}
	return name
}

// validSlug reports whether s may be a server's slug: [a-z0-9_]{1,24},
// starting with a letter or digit.
func validSlug(s string) bool {
	if s == "" || len(s) > maxSlug || s[0] == '_' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// slugOf derives a slug from a server's name.
func slugOf(name string) string {
	s := strings.ReplaceAll(lower(name), "-", "_")
	if len(s) > maxSlug {
		s = strings.TrimRight(s[:maxSlug], "_")
	}
	return s
}
