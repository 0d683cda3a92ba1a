package auth

import (
	"strings"
	"unicode/utf8"

	"github.com/llembas/lembas/backend/apperr"
)

// The password policy follows NIST SP 800-63B: a minimum length and
// nothing else about composition. The byte limit keeps one login from
// feeding megabytes into the hash.
const (
	MinPasswordChars = 10
	MaxPasswordBytes = 1024
	MaxUsernameLen   = 32
)

// CheckPassword says why password cannot be used by username, as an
// apperr.Invalid whose message can be shown as it is; nil means it can.
func CheckPassword(username, password string) error {
	switch {
	case len(password) > MaxPasswordBytes:
		return apperr.New(apperr.Invalid, "The password is too long: at most %d bytes.", MaxPasswordBytes)
	case !utf8.ValidString(password):
		return apperr.New(apperr.Invalid, "The password contains bytes that are not text.")
	case utf8.RuneCountInString(password) < MinPasswordChars:
		return apperr.New(apperr.Invalid, "Use at least %d characters for the password.", MinPasswordChars)
	case strings.EqualFold(strings.TrimSpace(password), strings.TrimSpace(username)):
		return apperr.New(apperr.Invalid, "The password must not be the username.")
	}
	return nil
}

// CheckUsername says why name cannot be a username, as an apperr.Invalid;
// nil means it can. Usernames are ASCII letters, digits, '.', '_' and '-',
// starting with a letter or digit: SQLite's NOCASE (which keeps them unique
// regardless of case) folds only ASCII, so "Éowyn" and "éowyn" would be two
// accounts. Display names carry everything else.
func CheckUsername(name string) error {
	if name == "" {
		return apperr.New(apperr.Invalid, "Choose a username.")
	}
	if len(name) > MaxUsernameLen {
		return apperr.New(apperr.Invalid, "The username is too long: at most %d characters.", MaxUsernameLen)
	}
	for i, r := range name {
		alnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if i == 0 && !alnum {
			return apperr.New(apperr.Invalid, "The username must start with a letter or a digit.")
		}
		if !alnum && r != '.' && r != '_' && r != '-' {
			return apperr.New(apperr.Invalid, "A username can hold only letters a–z, digits and . _ - (no spaces or accents); the display name can be anything.")
		}
	}
	return nil
}
