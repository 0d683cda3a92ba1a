package secrets

import (
	"testing"
	"unicode/utf8"
)

func TestMask(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", ""},
		{"a", "••••••••"},
		{"sk-12345678", "••••••••"},  // 11 runes
		{"sk-123456789", "sk-…6789"}, // 12 runes
		{"sk-proj-abcdefghijklmnopqrstuvwxyz", "sk-…wxyz"},
		{"ключ-секрет-длинный", "клю…нный"},
		{"日本語のとても長い秘密の鍵です", "日本語…の鍵です"},
	}
	for _, c := range cases {
		got := Mask(c.in)
		if got != c.want {
			t.Errorf("Mask(%q) = %q, want %q", c.in, got, c.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Mask(%q) = %q is not valid UTF-8", c.in, got)
		}
		revealed := 0
		for _, r := range got {
			if r != '•' && r != '…' {
				revealed++
			}
		}
		if revealed > 7 {
			t.Errorf("Mask(%q) reveals %d characters", c.in, revealed)
		}
	}
}
