package frontend

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// TestTemplateConditionsAreBoolean finds every `${a && b}` in the app's
// templates whose left side may be a number. Preact renders a number
// child, so `${selectedId && html`…`}` with no user selected rendered a
// stray "0" (two of them read "00" under Users → Create user); false, null
// and ” render nothing. A condition passes when it is boolean by its
// form — a comparison, a negation, a predicate call — or by its name
// (isX, hasX, canX, showX, …, or one of booleanNames); anything else must
// be written as one (`!!x`, `x > 0`, `x !== null`).
func TestTemplateConditionsAreBoolean(t *testing.T) {
	files, err := fs.Glob(FS(), "js/*.js")
	areas, err2 := fs.Glob(FS(), "js/*/*.js")
	files = append(files, areas...)
	if err != nil || err2 != nil || len(files) < 10 {
		t.Fatalf("js files: %v %v", files, err)
	}
	checked := 0
	for _, f := range files {
		b, err := fs.ReadFile(FS(), f)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		for _, e := range interpolations(src) {
			parts := splitTop(e.expr, "&&")
			// A ternary or || decides on its own terms; an arrow
			// function's && is not rendered.
			if len(parts) < 2 || hasTop(e.expr, "?", "||", "??", "=>") {
				continue
			}
			checked++
			for _, p := range parts[:len(parts)-1] {
				if !booleanForm(p) {
					t.Errorf("%s:%d: `${%s}`: %q may be a number, which renders; write it as a boolean (!!, a comparison)",
						f, e.line, oneLine(e.expr), strings.TrimSpace(p))
				}
			}
		}
	}
	if checked < 100 {
		t.Errorf("checked only %d conditions; has the scanner stopped finding templates?", checked)
	}
}

// booleanNames are conditions whose values are booleans (or objects,
// arrays and strings, which render nothing when falsy), though their names
// do not say so.
var booleanNames = map[string]bool{
	"open": true, "ready": true, "busy": true, "creating": true, "editing": true, "dirty": true, "saved": true,
	"self": true, "quick": true, "insecure": true, "missing": true, "admin": true, "stored": true, "failed": true,
	"everyone": true, "resetting": true, "available": true, "on": true, "needsPassword": true, "tts": true, "has": true,
	// objects, arrays or null
	"error": true, "data": true, "list": true, "selected": true, "state": true, "result": true, "perms": true,
	"u": true, "mine": true, "found": true, "editingConn": true, "action": true, "notice": true, "apiKey": true,
}

var (
	boolPrefix  = regexp.MustCompile(`^(is|has|can|show|should|needs|allow|was|did)[A-Z]`)
	predicate   = regexp.MustCompile(`(^|\.)(some|every|includes|has|test|startsWith|endsWith|contains|matches|isArray|is[A-Z]\w*|has[A-Z]\w*|can[A-Z]\w*)\(`)
	memberChain = regexp.MustCompile(`^[A-Za-z_$][\w$]*(\??\.[A-Za-z_$][\w$]*|\[[^\[\]]*\])*$`)
	lastName    = regexp.MustCompile(`([A-Za-z_$][\w$]*)$`)
)

func booleanForm(p string) bool {
	p = strings.TrimSpace(p)
	for strings.HasPrefix(p, "(") && strings.HasSuffix(p, ")") && closes(p) {
		p = strings.TrimSpace(p[1 : len(p)-1])
	}
	switch {
	case strings.HasPrefix(p, "!"), p == "true", p == "false":
		return true
	case hasTop(p, "===", "!==", "==", "!=", "<", ">", "<=", ">=", " instanceof ", " in "):
		return true
	case hasTop(p, "||"):
		// (a || b): boolean when both are.
		for _, q := range splitTop(p, "||") {
			if !booleanForm(q) {
				return false
			}
		}
		return true
	case predicate.MatchString(p) && strings.HasSuffix(p, ")"):
		return true
	case memberChain.MatchString(p):
		if strings.HasSuffix(p, "]") {
			return false // busy[c.id], notes[c.id]: say what they hold
		}
		n := lastName.FindString(p)
		return boolPrefix.MatchString(n) || booleanNames[n]
	}
	return false
}

// closes reports whether p's first "(" is closed by its last character.
func closes(p string) bool {
	depth := 0
	for i, r := range p {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 && i != len(p)-1 {
				return false
			}
		}
	}
	return true
}

type interpolation struct {
	expr string
	line int
}

// interpolations returns the expressions of every `${…}` in src's template
// literals, nested ones included. It is a small lexer: strings, comments,
// regular expressions and templates, enough for this codebase.
func interpolations(src string) []interpolation {
	var out []interpolation
	var scanExpr func(i int) int           // from just after "${" to just after its "}"
	var scanTemplate func(i int) int       // from just after "`" to just after the closing "`"
	var skipCode func(i int, end byte) int // code until an unmatched "}" (end = '}') or EOF
	skipString := func(i int, q byte) int {
		for i < len(src) && src[i] != q {
			if src[i] == '\\' {
				i++
			}
			i++
		}
		return i + 1
	}
	regexAllowed := func(i int) bool {
		j := i - 1
		for j >= 0 && (src[j] == ' ' || src[j] == '\t' || src[j] == '\n') {
			j--
		}
		return j < 0 || strings.ContainsRune("(,=:[!&|?{};+", rune(src[j]))
	}
	skipRegex := func(i int) int {
		class := false
		for i < len(src) {
			switch c := src[i]; {
			case c == '\\':
				i++
			case c == '[':
				class = true
			case c == ']':
				class = false
			case c == '/' && !class:
				return i + 1
			case c == '\n':
				return i
			}
			i++
		}
		return i
	}
	skipCode = func(i int, end byte) int {
		depth := 0
		for i < len(src) {
			c := src[i]
			switch {
			case c == '\'' || c == '"':
				i = skipString(i+1, c)
				continue
			case c == '`':
				i = scanTemplate(i + 1)
				continue
			case c == '/' && i+1 < len(src) && src[i+1] == '/':
				for i < len(src) && src[i] != '\n' {
					i++
				}
				continue
			case c == '/' && i+1 < len(src) && src[i+1] == '*':
				k := strings.Index(src[i+2:], "*/")
				if k < 0 {
					return len(src)
				}
				i += k + 4
				continue
			case c == '/' && regexAllowed(i):
				i = skipRegex(i + 1)
				continue
			case c == '{':
				depth++
			case c == '}':
				if depth == 0 && end == '}' {
					return i
				}
				depth--
			}
			i++
		}
		return i
	}
	scanExpr = func(i int) int {
		j := skipCode(i, '}')
		out = append(out, interpolation{expr: src[i:j], line: 1 + strings.Count(src[:i], "\n")})
		return j + 1
	}
	scanTemplate = func(i int) int {
		for i < len(src) {
			switch {
			case src[i] == '\\':
				i += 2
			case src[i] == '`':
				return i + 1
			case src[i] == '$' && i+1 < len(src) && src[i+1] == '{':
				i = scanExpr(i + 2)
			default:
				i++
			}
		}
		return i
	}
	skipCode(0, 0)
	return out
}

// splitTop splits s at op where op is outside brackets, strings and
// templates.
func splitTop(s, op string) []string {
	var parts []string
	last := 0
	walkTop(s, func(i int) bool {
		if strings.HasPrefix(s[i:], op) && !partOfLonger(s, i, op) {
			parts = append(parts, s[last:i])
			last = i + len(op)
		}
		return false
	})
	return append(parts, s[last:])
}

// hasTop reports whether any of ops occurs in s outside brackets, strings
// and templates.
func hasTop(s string, ops ...string) bool {
	found := false
	walkTop(s, func(i int) bool {
		for _, op := range ops {
			if strings.HasPrefix(s[i:], op) && !partOfLonger(s, i, op) {
				found = true
				return true
			}
		}
		return false
	})
	return found
}

// partOfLonger tells "<" from "<=" and "=>", "=" from "==", "?" from "?."
// and "??", "&" from "&&".
func partOfLonger(s string, i int, op string) bool {
	before := byte(0)
	if i > 0 {
		before = s[i-1]
	}
	after := byte(0)
	if i+len(op) < len(s) {
		after = s[i+len(op)]
	}
	switch op {
	case "<", ">":
		return after == '=' || before == '=' || after == op[0] || before == op[0]
	case "==", "!=":
		return after == '='
	case "?":
		return after == '.' || after == '?' || before == '?'
	case "||", "&&", "??":
		return before == op[0] || after == op[0]
	}
	return false
}

// walkTop calls f at each index of s that is at depth 0 and in code; f
// returns true to stop.
func walkTop(s string, f func(i int) bool) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '"', '`':
			for i++; i < len(s) && s[i] != c; i++ {
				if s[i] == '\\' {
					i++
				}
			}
			continue
		case '(', '[', '{':
			depth++
			continue
		case ')', ']', '}':
			depth--
			continue
		}
		if depth == 0 && f(i) {
			return
		}
	}
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}
