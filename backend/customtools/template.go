package customtools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode"
)

// A template holds holes written {{name}}: a parameter's name, or
// {{secret}}. An argument may fill a hole; it may never move the target.
// So the scheme, host and port are literal (checked at save and again
// before every call, since a row may predate a check), every value is
// escaped for where it lands, and the filled URL's origin and path root
// are compared with the template's afterwards. A name the parameters do
// not declare becomes nothing (the harness's substitution leaves unknown
// names as written; here a model-chosen text must never appear where the
// administrator wrote none).

// holeRE finds the holes of a template.
var holeRE = regexp.MustCompile(`\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}`)

// SecretHole is the hole the tool's secret fills.
const SecretHole = "secret"

// maskShown is what the secret is shown as in a request a page displays.
const maskShown = "••••••"

// values are a call's arguments by name, and the secret.
type values struct {
	args   map[string]json.RawMessage
	secret string
	// mask fills the secret's holes with maskShown, unescaped (for
	// showing the request, never for sending it).
	mask bool
}

// text is an argument as text: a string as itself, a number or a boolean
// as written, null or absent as nothing, an object or array as compact
// JSON.
func (v values) text(name string) string {
	raw, ok := v.args[name]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	t := strings.TrimSpace(string(raw))
	if t == "null" {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) == nil {
		return b.String()
	}
	return t
}

// fill replaces each hole of tmpl with esc(its text); the secret's with
// esc(secret), or maskShown when masking.
func (v values) fill(tmpl string, esc func(string) string) string {
	return holeRE.ReplaceAllStringFunc(tmpl, func(h string) string {
		name := h[2 : len(h)-2]
		if name == SecretHole {
			if v.mask {
				return maskShown
			}
			return esc(v.secret)
		}
		return esc(v.text(name))
	})
}

// escapeStrict percent-encodes every byte but the unreserved ones
// (A-Z a-z 0-9 - . _ ~): in a path segment or a query value nothing a
// model writes can end the segment or the value (/, ?, #, &, =, %, @, \).
func escapeStrict(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '.', c == '_', c == '~':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// headerSafe strips what could end a header or start another: control
// characters (CR, LF, NUL…), C1 controls and Unicode line separators.
func headerSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == '\u0085' {
			return -1
		}
		return r
	}, s)
}

// target is a URL template split where holes cannot move it.
type target struct {
	origin string // scheme://host[:port], literal
	path   string // from the first '/' up to '?' or '#'
	query  string // after '?', up to '#'
	root   string // the path's literal part before its first hole
}

// parseTarget splits a URL template and checks that its scheme, host and
// port are literal. Called at save and before every call.
func parseTarget(tmpl string) (target, error) {
	tmpl = strings.TrimSpace(tmpl)
	scheme, rest, ok := strings.Cut(tmpl, "://")
	if !ok || (scheme != "http" && scheme != "https") {
		return target{}, fmt.Errorf("the URL must start with http:// or https:// written out (no {{…}} in the scheme)")
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority := rest[:end]
	if strings.Contains(authority, "{{") || strings.Contains(authority, "}}") {
		return target{}, fmt.Errorf("the host and port must be written out: an argument may fill a hole in the path, query or body, never choose the server")
	}
	if authority == "" {
		return target{}, fmt.Errorf("the URL has no host")
	}
	if strings.ContainsAny(authority, "@\\%") {
		return target{}, fmt.Errorf("the host may not hold a user name, a backslash or a percent sign")
	}
	u, err := url.Parse(scheme + "://" + authority + "/")
	if err != nil || u.Hostname() == "" || u.User != nil {
		return target{}, fmt.Errorf("%q is not a host", authority)
	}
	t := target{origin: scheme + "://" + strings.ToLower(authority)}
	rest = rest[end:]
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		rest = rest[:i] // never sent
	}
	t.path, t.query, _ = strings.Cut(rest, "?")
	if t.path == "" {
		t.path = "/"
	}
	if strings.Contains(t.path, "\\") {
		return target{}, fmt.Errorf("the URL's path may not hold a backslash")
	}
	for _, seg := range strings.Split(holeRE.ReplaceAllString(t.path, "x"), "/") {
		if d, err := url.PathUnescape(seg); err == nil && (d == "." || d == "..") {
			return target{}, fmt.Errorf("the URL's path may not hold . or .. segments")
		}
	}
	t.root = t.path
	if loc := holeRE.FindStringIndex(t.path); loc != nil {
		t.root = t.path[:loc[0]]
	}
	return t, nil
}

// url fills the target: path and query holes escaped strictly. The filled
// URL is parsed again and must keep the template's origin and path root,
// and no filled path segment may be . or .. (a server would climb).
func (t target) url(v values) (string, error) {
	path := v.fill(t.path, escapeStrict)
	raw := t.origin + path
	if t.query != "" {
		raw += "?" + v.fill(t.query, escapeStrict)
	}
	if v.mask {
		return raw, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("the filled URL does not parse")
	}
	if origin(u) != originOf(t.origin) {
		return "", fmt.Errorf("the filled URL leaves the tool's server")
	}
	if root, err := url.PathUnescape(t.root); err == nil && !strings.HasPrefix(u.Path, root) {
		return "", fmt.Errorf("the filled URL leaves the tool's path")
	}
	for _, seg := range strings.Split(path, "/") {
		if climbs(seg) {
			return "", fmt.Errorf("an argument made a . or .. segment in the path")
		}
	}
	return raw, nil
}

// climbs reports whether a filled path segment, decoded once or twice (a
// server or a proxy in front of it may decode again), holds a . or ..
// component between slashes or backslashes: a server that decodes %2F
// before resolving dot segments would climb out of the tool's path.
func climbs(seg string) bool {
	d := seg
	for range 2 {
		u, err := url.PathUnescape(d)
		if err != nil {
			return false // not decodable: no server reads it as dots either
		}
		d = u
		for _, part := range strings.FieldsFunc(d, func(r rune) bool { return r == '/' || r == '\\' }) {
			if part == "." || part == ".." {
				return true
			}
		}
		if d == "." || d == ".." {
			return true
		}
	}
	return false
}

// origin is scheme://host:port with the default port written.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return u.Scheme + "://" + strings.ToLower(strings.TrimSuffix(u.Hostname(), ".")) + ":" + port
}

func originOf(s string) string {
	u, err := url.Parse(s + "/")
	if err != nil {
		return s
	}
	return origin(u)
}

// escapeXML escapes a value for XML or HTML text and attribute values.
var escapeXML = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace

// bodyKind is how a body template's holes are escaped.
type bodyKind int

const (
	bodyText bodyKind = iota
	bodyJSON
	bodyForm
	bodyXML
)

// kindOf decides from the Content-Type header (or, without one, the body's
// first character) how the body is written.
func kindOf(contentType, body string) bodyKind {
	ct := strings.ToLower(contentType)
	switch {
	case strings.Contains(ct, "json"):
		return bodyJSON
	case strings.Contains(ct, "x-www-form-urlencoded"):
		return bodyForm
	case strings.Contains(ct, "xml") || strings.Contains(ct, "html"):
		// A value must not close the element it fills or open another.
		return bodyXML
	case ct == "":
		if t := strings.TrimSpace(body); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
			return bodyJSON
		}
	}
	return bodyText
}

// fillJSON fills a JSON body template. A hole inside a string literal
// gets the value's text JSON-escaped ("q": "{{query}}"); a hole standing
// as a value gets the argument's JSON ("n": {{count}}), a string quoted,
// and null when absent. Either way no value can close the string or the
// object it lands in.
func fillJSON(tmpl string, v values) string {
	var b strings.Builder
	inString, escaped := false, false
	for i := 0; i < len(tmpl); {
		if loc := holeRE.FindStringSubmatchIndex(tmpl[i:]); loc != nil && loc[0] == 0 {
			name := tmpl[i+loc[2] : i+loc[3]]
			b.WriteString(jsonValue(v, name, inString))
			i += loc[1]
			continue
		}
		c := tmpl[i]
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

func jsonValue(v values, name string, inString bool) string {
	if name == SecretHole {
		if v.mask {
			if inString {
				return maskShown
			}
			return `"` + maskShown + `"`
		}
		q, _ := json.Marshal(v.secret)
		if inString {
			return string(q[1 : len(q)-1])
		}
		return string(q)
	}
	if inString {
		q, _ := json.Marshal(v.text(name))
		return string(q[1 : len(q)-1])
	}
	raw, ok := v.args[name]
	if !ok || !json.Valid(raw) {
		return "null"
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return "null"
	}
	return b.String()
}

// holes lists the names a template uses.
func holes(tmpl string) []string {
	var out []string
	for _, m := range holeRE.FindAllStringSubmatch(tmpl, -1) {
		out = append(out, m[1])
	}
	return out
}
