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

// authToken is a credential after an HTTP authorization scheme, whoever's
// it is: an endpoint echoing a request shows it this way.
var authToken = regexp.MustCompile(`(?i)\b(bearer|basic|token)(\s+|%20|\+)[A-Za-z0-9._~+/=:-]{4,}`)

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
	return authToken.ReplaceAllString(s, "${1} "+Hidden)
}
