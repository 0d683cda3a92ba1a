package auth

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

func TestHashIsPHCAndVerifies(t *testing.T) {
	h, err := HashPassword("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$`)
	if !re.MatchString(h) {
		t.Errorf("hash %q is not a PHC argon2id string with OWASP's parameters", h)
	}
	if ok, err := VerifyPassword(h, "correct horse battery"); !ok || err != nil {
		t.Errorf("right password: %v, %v", ok, err)
	}
	for _, wrong := range []string{"", "correct horse batter", "correct horse battery ", "Correct horse battery"} {
		if ok, err := VerifyPassword(h, wrong); ok || err != nil {
			t.Errorf("wrong password %q: %v, %v", wrong, ok, err)
		}
	}
	h2, _ := HashPassword("correct horse battery")
	if h2 == h {
		t.Error("two hashes of one password are equal: the salt is not random")
	}
	if NeedsRehash(h) {
		t.Error("NeedsRehash of a fresh hash = true")
	}
}

func TestNeedsRehashWhenParametersChange(t *testing.T) {
	old, _ := cheap.Hash("some password")
	if !NeedsRehash(old) {
		t.Error("hash with weaker parameters: NeedsRehash = false")
	}
	if cheap.NeedsRehash(old) {
		t.Error("cheap.NeedsRehash of a cheap hash = true")
	}
	if ok, err := VerifyPassword(old, "some password"); !ok || err != nil {
		t.Errorf("older parameters still verify: %v, %v", ok, err)
	}
	if !NeedsRehash("") || !NeedsRehash("$2b$10$abcdefghijklmnopqrstuv") {
		t.Error("an unreadable hash must need a rehash")
	}
}

func TestMalformedHashesAreErrorsNotMatches(t *testing.T) {
	good, _ := cheap.Hash("pw")
	parts := strings.Split(good, "$")
	salt, key := parts[4], parts[5]
	for _, h := range []string{
		"",
		"plain text",
		"$argon2i$v=19$m=64,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=16$m=64,t=1,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=64,t=1$" + salt + "$" + key,
		"$argon2id$v=19$m=64,t=1,p=1,x=2$" + salt + "$" + key,
		"$argon2id$v=19$m=4194304,t=1,p=1$" + salt + "$" + key, // 4 GiB
		"$argon2id$v=19$m=64,t=1000,p=1$" + salt + "$" + key,
		"$argon2id$v=19$m=64,t=1,p=0$" + salt + "$" + key,
		"$argon2id$v=19$m=64,t=1,p=1$!!!$" + key,
		"$argon2id$v=19$m=64,t=1,p=1$" + salt + "$",
		"$argon2id$v=19$m=64,t=1,p=1$" + salt + "$" + key + "$",
	} {
		ok, err := VerifyPassword(h, "pw")
		if ok || !errors.Is(err, ErrMalformedHash) {
			t.Errorf("VerifyPassword(%q) = %v, %v; want ErrMalformedHash", h, ok, err)
		}
	}
}

func ExampleCheckPassword() {
	for _, pw := range []string{"short", "samwise-gamgee", "a long enough password"} {
		fmt.Println(CheckPassword("samwise-gamgee", pw))
	}
	// Output:
	// Use at least 10 characters for the password.
	// The password must not be the username.
	// <nil>
}
