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
