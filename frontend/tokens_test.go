package frontend

import (
	"fmt"
	"io/fs"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// themeTokens parses the colour variables of each theme block in
// css/tokens.css (only #rrggbb values; that is all the file uses for
// colours that text sits on or is drawn in).
func themeTokens(t *testing.T) map[string]map[string]string {
	b, err := fs.ReadFile(FS(), "css/tokens.css")
	if err != nil {
		t.Fatal(err)
	}
	css := string(b)
	themes := map[string]map[string]string{}
	block := regexp.MustCompile(`(?s)\[data-theme="(\w+)"\]\s*\{(.*?)\n\}`)
	decl := regexp.MustCompile(`(--[a-z0-9-]+):\s*(#[0-9a-fA-F]{6})\s*;`)
	for _, m := range block.FindAllStringSubmatch(css, -1) {
		vars := map[string]string{}
		for _, d := range decl.FindAllStringSubmatch(m[2], -1) {
			vars[d[1]] = strings.ToLower(d[2])
		}
		themes[m[1]] = vars
	}
	return themes
}

func luminance(hex string) float64 {
	ch := func(i int) float64 {
		v, _ := strconv.ParseUint(hex[i:i+2], 16, 8)
		c := float64(v) / 255
		if c <= 0.03928 {
			return c / 12.92
		}
		return math.Pow((c+0.055)/1.055, 2.4)
	}
	return 0.2126*ch(1) + 0.7152*ch(3) + 0.0722*ch(5)
}

func contrast(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// TestContrastPassesAA checks the text/background pairs the stylesheet
// uses against WCAG AA (4.5:1 for text, 3:1 for focus rings and other
// non-text indicators), in both themes.
func TestContrastPassesAA(t *testing.T) {
	themes := themeTokens(t)
	for _, name := range []string{"moria", "shire"} {
		if len(themes[name]) < 20 {
			t.Fatalf("theme %s: found %d colour tokens; has the file's structure changed?", name, len(themes[name]))
		}
	}
	text := []struct{ fg, bg string }{
		{"--text", "--bg"}, {"--text", "--bg-raised"}, {"--text", "--surface"}, {"--text", "--surface-2"}, {"--text", "--surface-hover"},
		{"--text-muted", "--bg"}, {"--text-muted", "--bg-raised"}, {"--text-muted", "--surface"},
		{"--text-faint", "--bg"}, {"--text-faint", "--surface"},
		{"--accent-text", "--bg"}, {"--accent-text", "--surface"},
		{"--on-accent", "--accent"}, {"--on-accent", "--accent-hover"},
		{"--on-danger", "--danger-solid"},
		{"--danger", "--bg"}, {"--danger", "--danger-bg"},
		{"--success", "--success-bg"}, {"--warning", "--warning-bg"},
		{"--code-fg", "--code-bg"}, {"--mark-fg", "--mark-bg"},
		{"--text", "--bubble-user"},
		{"--hl-keyword", "--code-bg"}, {"--hl-string", "--code-bg"}, {"--hl-comment", "--code-bg"},
		{"--hl-number", "--code-bg"}, {"--hl-function", "--code-bg"}, {"--hl-type", "--code-bg"},
		{"--hl-builtin", "--code-bg"}, {"--hl-operator", "--code-bg"}, {"--hl-punctuation", "--code-bg"},
	}
	nonText := []struct{ fg, bg string }{{"--focus-ring", "--bg"}, {"--focus-ring", "--surface"}}
	for _, name := range []string{"moria", "shire"} {
		vars := themes[name]
		check := func(fg, bg string, min float64) {
			a, b := vars[fg], vars[bg]
			if a == "" || b == "" {
				t.Errorf("%s: %s or %s is not a #rrggbb token", name, fg, bg)
				return
			}
			if r := contrast(a, b); r < min {
				t.Errorf("%s: %s %s on %s %s is %.2f:1, below %.1f:1", name, fg, a, bg, b, r, min)
			}
		}
		for _, p := range text {
			check(p.fg, p.bg, 4.5)
		}
		for _, p := range nonText {
			check(p.fg, p.bg, 3)
		}
	}
}

func ExampleFS() {
	_, err := fs.Stat(FS(), "index.html")
	fmt.Println(err == nil)
	// Output: true
}
