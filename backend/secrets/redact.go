package secrets

import (
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Hidden is what Redact puts in place of a secret.
const Hidden = "[hidden]"

// redactMinRunes is the shortest value Redact looks for: shorter ones
// ("1", "yes") would mangle ordinary words and status codes, and are no
// secret anyway.
const redactMinRunes = 4

// authToken is a word after an HTTP authorization scheme: an endpoint
// echoing a request shows someone's credential this way. Whether it is one
// is up to credential, since "Invalid token provided" is ordinary text.
var authToken = regexp.MustCompile(`(?i)\b(bearer|basic|token)(\s+|%20|\+)([A-Za-z0-9._~+/=:-]{4,})`)

// credential reports whether word, found after a scheme and without the
// punctuation that ends a sentence, looks like a credential rather than a
// word of prose ("Invalid token provided"): at least 16 characters, or at
// least 8 with a digit, two punctuation marks or twice a capital after a
// small letter. Base64 of "user:password" (Basic) shows one of these in
// practice: a digit, padding or mixed case.
func credential(word string) bool {
	if len(word) >= 16 {
		return true
	}
	if len(word) < 8 {
		return false
	}
	punct, humps := 0, 0
	for i, c := range word {
		switch {
		case c >= '0' && c <= '9':
			return true
		case strings.ContainsRune("._~+/=:-", c):
			punct++
		case c >= 'A' && c <= 'Z' && i > 0 && word[i-1] >= 'a' && word[i-1] <= 'z':
			humps++
		}
	}
	return punct >= 2 || humps >= 2
}

// Redactor removes known secrets from text that came from elsewhere (an
// endpoint's error page, which may echo the request) before that text is
// shown, logged or stored. The zero value and nil hide only credentials
// after an authorization scheme.
type Redactor struct {
	values []string // longest first, so a key is hidden before its prefix
}

// NewRedactor returns a Redactor for the given secret values (an API key,
// extra header values, an Authorization header). Each is also looked for as
// JSON and URL escaping would write it, and a "Scheme token" value also by
// its token alone.
func NewRedactor(values ...string) *Redactor {
	r := &Redactor{}
	add := func(v string) {
		v = strings.TrimSpace(v)
		if utf8.RuneCountInString(v) < redactMinRunes || slices.Contains(r.values, v) {
			return
		}
		r.values = append(r.values, v)
	}
	for _, v := range values {
		v = strings.TrimSpace(v)
		forms := []string{v, url.QueryEscape(v), url.PathEscape(v)}
		if b, err := json.Marshal(v); err == nil {
			j := strings.Trim(string(b), `"`)
			// Other encoders escape the slash too.
			forms = append(forms, j, strings.ReplaceAll(j, "/", `\/`))
		}
		if _, tok, ok := strings.Cut(v, " "); ok {
			forms = append(forms, tok)
		}
		for _, f := range forms {
			add(f)
		}
	}
	slices.SortFunc(r.values, func(a, b string) int { return len(b) - len(a) })
	return r
}

// Redact returns s with every known secret and every credential after an
// authorization scheme replaced by Hidden. Run it on the whole text before
// cutting it short: a cut secret is no longer found, and its start leaks.
func (r *Redactor) Redact(s string) string {
	if r != nil {
		for _, v := range r.values {
			s = strings.ReplaceAll(s, v, Hidden)
		}
	}
	return authToken.ReplaceAllStringFunc(s, func(m string) string {
		sub := authToken.FindStringSubmatch(m)
		word := strings.TrimRight(sub[3], ".:")
		if !credential(word) {
			return m
		}
		return sub[1] + " " + Hidden + sub[3][len(word):]
	})
}
