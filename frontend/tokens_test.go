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
		// The terminal: its text, and on the selection; every ANSI colour
		// but black (moria's is the dark theme's own "black", for
		// backgrounds; shire's black is the text colour and checked here).
		{"--term-fg", "--term-bg"}, {"--term-fg", "--term-selection"},
		{"--term-red", "--term-bg"}, {"--term-green", "--term-bg"}, {"--term-yellow", "--term-bg"},
		{"--term-blue", "--term-bg"}, {"--term-magenta", "--term-bg"}, {"--term-cyan", "--term-bg"},
		{"--term-white", "--term-bg"}, {"--term-bright-black", "--term-bg"}, {"--term-bright-red", "--term-bg"},
		{"--term-bright-green", "--term-bg"}, {"--term-bright-yellow", "--term-bg"}, {"--term-bright-blue", "--term-bg"},
		{"--term-bright-magenta", "--term-bg"}, {"--term-bright-cyan", "--term-bg"}, {"--term-bright-white", "--term-bg"},
	}
	nonText := []struct{ fg, bg string }{{"--focus-ring", "--bg"}, {"--focus-ring", "--surface"}, {"--term-cursor", "--term-bg"}}
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

// colourProps are the properties whose colours must be tokens.
var colourProps = regexp.MustCompile(`^(color|background(-color)?|border(-(top|right|bottom|left))?(-color)?|outline(-color)?|fill|stroke|(box|text)-shadow|accent-color|caret-color|text-decoration-color)$`)

// sizeProps are the spaces, radii, borders, widths and heights.
var sizeProps = regexp.MustCompile(`^(padding|margin|gap|row-gap|column-gap|inset|top|right|bottom|left|(min-|max-)?(width|height)|font-size|border(-(top|right|bottom|left))?(-width)?|border(-(top|bottom)-(left|right))?-radius|outline(-width|-offset)?)(-(top|right|bottom|left|block|inline)(-start|-end)?)?$`)

var (
	literalColour = regexp.MustCompile(`#[0-9a-fA-F]{3,8}\b|\b(rgba?|hsla?|hwb|lab|lch|oklab|oklch|color-mix)\(`)
	literalLength = regexp.MustCompile(`(^|[^\w.-])(\d*\.?\d+)(px|em|rem|ex|ch|pt|pc|cm|mm|in|q)\b`)
	colourWord    = regexp.MustCompile(`[a-zA-Z][\w-]*`)
	ruleBlock     = regexp.MustCompile(`([^{}]*)\{([^{}]*)\}`)
	cssComment    = regexp.MustCompile(`(?s)/\*.*?\*/`)
)

// notColours are the words a colour property may hold besides tokens.
var notColours = map[string]bool{"transparent": true, "currentcolor": true, "inherit": true, "none": true,
	"solid": true, "dashed": true, "dotted": true, "inset": true, "calc": true, "min": true, "max": true}

// withoutVars drops every var(…), fallbacks included.
func withoutVars(v string) string {
	for {
		i := strings.Index(v, "var(")
		if i < 0 {
			return v
		}
		depth, j := 0, i+3
		for ; j < len(v); j++ {
			if v[j] == '(' {
				depth++
			} else if v[j] == ')' {
				depth--
				if depth == 0 {
					break
				}
			}
		}
		v = v[:i] + v[min(j+1, len(v)):]
	}
}

// TestStylesheetsUseTokens: in every stylesheet but tokens.css, colours,
// spaces, radii, borders and control heights are variables from
// tokens.css; the literals left are 0, percentages, viewport units and
// unitless numbers. .visually-hidden keeps its 1px: it is the standard
// way to hide a label from the eye only.
func TestStylesheetsUseTokens(t *testing.T) {
	files, err := fs.Glob(FS(), "css/*.css")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if f == "css/tokens.css" {
			continue
		}
		b, err := fs.ReadFile(FS(), f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ruleBlock.FindAllStringSubmatch(cssComment.ReplaceAllString(string(b), ""), -1) {
			sel := strings.TrimSpace(m[1])
			if strings.HasPrefix(sel, "@") || strings.HasSuffix(sel, "%") {
				continue // keyframe steps and empty at-rules hold no layout values
			}
			for _, d := range strings.Split(m[2], ";") {
				prop, val, ok := strings.Cut(d, ":")
				if !ok {
					continue
				}
				prop, val = strings.TrimSpace(prop), strings.TrimSpace(val)
				checked++
				if literalColour.MatchString(val) {
					t.Errorf("%s: %s { %s: %s }: a colour that is not a token", f, sel, prop, val)
				}
				if colourProps.MatchString(prop) {
					for _, w := range colourWord.FindAllString(literalColour.ReplaceAllString(withoutVars(val), ""), -1) {
						if !notColours[strings.ToLower(w)] {
							t.Errorf("%s: %s { %s: %s }: %q is not a token", f, sel, prop, val, w)
						}
					}
				}
				if sizeProps.MatchString(prop) && sel != ".visually-hidden" {
					for _, l := range literalLength.FindAllStringSubmatch(withoutVars(val), -1) {
						if n, _ := strconv.ParseFloat(l[2], 64); n != 0 {
							t.Errorf("%s: %s { %s: %s }: %s%s is not a token", f, sel, prop, val, l[2], l[3])
						}
					}
				}
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("checked only %d declarations; has the stylesheets' structure changed?", checked)
	}
}
