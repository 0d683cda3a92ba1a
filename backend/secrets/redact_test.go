package secrets

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	r := NewRedactor("sk-live-0123456789abcdef", "org-secret/with+chars", "Basic dXNlcjpwYXNz", "1", "")
	for _, tc := range []struct{ in, want string }{
		{`{"headers":{"authorization":"Bearer sk-live-0123456789abcdef","x-org":"org-secret/with+chars"}}`,
			`{"headers":{"authorization":"Bearer [hidden]","x-org":"[hidden]"}}`},
		{`escaped: org-secret\/with+chars, query: org-secret%2Fwith%2Bchars`, `escaped: [hidden], query: [hidden]`},
		{`auth was dXNlcjpwYXNz`, `auth was [hidden]`},
		{`someone else's: Authorization: bearer abc.def-ghi`, `someone else's: Authorization: bearer [hidden]`},
		{`status 401: the key sk-live-0123456789abcdef is wrong`, `status 401: the key [hidden] is wrong`},
		{`nothing secret in 1 2 3`, `nothing secret in 1 2 3`},
	} {
		if got := r.Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
	if got := (*Redactor)(nil).Redact("Bearer sk-anything-at-all"); strings.Contains(got, "sk-anything") {
		t.Errorf("nil Redactor left the bearer token: %q", got)
	}
}

// TestRedactKeepsOrdinaryWords: after Bearer, Basic or token only a word
// shaped like a credential is hidden; an endpoint's prose stays readable.
func TestRedactKeepsOrdinaryWords(t *testing.T) {
	var r *Redactor // no known secrets: only the shape decides
	for _, tc := range []struct{ in, want string }{
		// Ordinary words stay.
		{`Invalid token provided`, `Invalid token provided`},
		{`Invalid token provided.`, `Invalid token provided.`},
		{`Basic authentication failed`, `Basic authentication failed`},
		{`Bearer token expected`, `Bearer token expected`},
		{`the token limit was reached: token budget exceeded`, `the token limit was reached: token budget exceeded`},
		{`Token re-issued`, `Token re-issued`},
		{`basic example`, `basic example`},
		// Credentials go.
		{`Authorization: Bearer sk-proj-abcdefghijklmnop`, `Authorization: Bearer [hidden]`},
		{`Bearer abcdefghijklmnopqrst`, `Bearer [hidden]`},
		{`token ghp1234abcd`, `token [hidden]`},
		{`bearer abc.def-ghi.`, `bearer [hidden].`},
		{`Basic dXNlcjpwYXNz`, `Basic [hidden]`},
		{`Basic YWxhZGRpbjpvcGVuc2VzYW1l`, `Basic [hidden]`},
		{`Basic%20YTpi`, `Basic%20YTpi`}, // "a:b": too short to matter
		{`Basic%20Ym9iOmh1bnRlcg==`, `Basic [hidden]`},
		{`token+aBcDeFgHiJ`, `token [hidden]`},
	} {
		if got := r.Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
	// The connection's own secrets are hidden whatever they look like.
	if got := NewRedactor("Bearer plainword").Redact("sent Bearer plainword"); got != "sent [hidden]" {
		t.Errorf("known secret: %q", got)
	}
}
