package attach

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDisplayName(t *testing.T) {
	long := strings.Repeat("a", 300) + ".txt"
	longUnicode := strings.Repeat("世", 100) + ".pdf" // 300 bytes of stem
	tests := []struct {
		in, want string
	}{
		{"report.pdf", "report.pdf"},
		{"  spaced out.txt  ", "spaced out.txt"},
		{"../../etc/passwd", "passwd"},
		{"..", "file"},
		{"../", "file"},
		{".", "file"},
		{"...", "file"},
		{"/", "file"},
		{"", "file"},
		{`C:\Users\frodo\ring.txt`, "ring.txt"},
		{`..\..\windows\system32\config`, "config"},
		{"dir/sub\\mixed/name.md", "name.md"},
		{"evil.html\x00.png", "evil.html.png"},
		{"tab\there.txt", "tab here.txt"},
		{"line\nbreak.txt", "line break.txt"},
		{"bell\a\x7f\u0085.txt", "bell .txt"},
		{"invoice\u202Efdp.exe", "invoicefdp.exe"}, // right-to-left override
		{"\ufeffbom.txt", "bom.txt"},
		{"bad\xff\xfeutf8.txt", "badutf8.txt"},
		{"Grüße aus Bruchtal.pdf", "Grüße aus Bruchtal.pdf"},
		{"日本語のファイル.txt", "日本語のファイル.txt"},
		{"emoji 🧝.png", "emoji 🧝.png"},
		{"cafe\u0301.txt", "café.txt"}, // NFD from macOS becomes NFC
		{".bashrc", ".bashrc"},
		{long, strings.Repeat("a", 251) + ".txt"},
		{longUnicode, strings.Repeat("世", 83) + ".pdf"},
		{strings.Repeat("b", 300), strings.Repeat("b", 255)},
	}
	for _, tt := range tests {
		got := DisplayName(tt.in)
		if got != tt.want {
			t.Errorf("DisplayName(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if len(got) > MaxNameBytes || !utf8.ValidString(got) || strings.ContainsAny(got, "/\\\x00") {
			t.Errorf("DisplayName(%q) = %q is not a safe name", tt.in, got)
		}
	}
}

func TestDisplayNameDoesNotStrandAccents(t *testing.T) {
	// 254 bytes of "a", then "e" + combining acute: a cut at 255 bytes would
	// keep the "e" and drop its accent.
	in := strings.Repeat("a", 253) + "xe\u0301\u0301y"
	got := DisplayName(in)
	if strings.HasSuffix(got, "e") || !utf8.ValidString(got) || len(got) > MaxNameBytes {
		t.Errorf("DisplayName cut to %q", got[len(got)-5:])
	}
}

func TestStorageName(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		n := StorageName()
		if !ValidStorageName(n) {
			t.Fatalf("StorageName() = %q is not valid", n)
		}
		if seen[n] {
			t.Fatalf("StorageName() repeated %q", n)
		}
		seen[n] = true
	}
	for _, bad := range []string{
		"", "../0123456789abcdef0123456789abc", "0123456789ABCDEF0123456789ABCDEF",
		"0123456789abcdef0123456789abcde", "0123456789abcdef0123456789abcdef0",
		"0123456789abcdef/123456789abcdef", "0123456789abcdef0123456789abcde\x00",
	} {
		if ValidStorageName(bad) {
			t.Errorf("ValidStorageName(%q) = true", bad)
		}
	}
}
