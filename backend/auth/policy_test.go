package auth

import (
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/apperr"
)

func TestPasswordPolicy(t *testing.T) {
	for _, tc := range []struct {
		user, pw string
		ok       bool
		msg      string
	}{
		{"sam", "123456789", false, "at least 10 characters"},
		{"sam", "1234567890", true, ""},
		{"sam", "ééééééééé", false, "at least 10"}, // 18 bytes but 9 characters
		{"sam", "éééééééééé", true, ""},
		{"gandalf-grey", "Gandalf-Grey", false, "not be the username"},
		{"sam", strings.Repeat("x", 1024), true, ""},
		{"sam", strings.Repeat("x", 1025), false, "at most 1024 bytes"},
		{"sam", "bad\xffbytes-here", false, "not text"},
	} {
		err := CheckPassword(tc.user, tc.pw)
		if tc.ok != (err == nil) {
			t.Errorf("CheckPassword(%q, %.20q) = %v, want ok=%v", tc.user, tc.pw, err, tc.ok)
			continue
		}
		if err != nil {
			if k, msg := apperr.Public(err); k != apperr.Invalid || !strings.Contains(msg, tc.msg) {
				t.Errorf("CheckPassword(%.20q): %s %q, want invalid mentioning %q", tc.pw, k, msg, tc.msg)
			}
		}
	}
}

func TestUsernamePolicy(t *testing.T) {
	for name, ok := range map[string]bool{
		"sam": true, "Sam.Gamgee": true, "s_g-1": true, "9fingers": true,
		"": false, ".sam": false, "-sam": false, "sam gamgee": false, "éowyn": false,
		"sam@shire": false, strings.Repeat("a", 32): true, strings.Repeat("a", 33): false,
	} {
		err := CheckUsername(name)
		if ok != (err == nil) {
			t.Errorf("CheckUsername(%q) = %v, want ok=%v", name, err, ok)
		}
		if err != nil && apperr.KindOf(err) != apperr.Invalid {
			t.Errorf("CheckUsername(%q) kind = %s", name, apperr.KindOf(err))
		}
	}
}
