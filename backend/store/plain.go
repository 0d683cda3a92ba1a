package store

import (
	"regexp"
	"strings"
)

// Search snippets are cut from the stored Markdown, so without this a hit
// shows ```go, **, $$\int and the like. plainSnippet turns a snippet's
// Markdown and LaTeX into the plain text a reader sees, before it is escaped
// and marked (markHTML): it only removes or replaces syntax, so the match
// sentinels in it survive, and whatever it leaves is escaped as before.
// Snippets are fragments (a fence may open without closing), so nothing
// here needs the pairs to match. Raw HTML is left as the text it is.

var (
	// A code fence with its info string: ```go, ~~~ python.
	reFence = regexp.MustCompile("(?m)(```+|~~~+)[ \t]*[A-Za-z0-9_+#.-]*")
	// Line-start syntax: headings, quotes, bullets, table rules.
	reHeading = regexp.MustCompile(`(?m)^[ \t]*#{1,6}[ \t]+`)
	reQuote   = regexp.MustCompile(`(?m)^[ \t]*(>[ \t]?)+`)
	reBullet  = regexp.MustCompile(`(?m)^[ \t]*[-*+][ \t]+(\[[ xX]\][ \t]+)?`)
	reRule    = regexp.MustCompile(`(?m)^[ \t]*\|[ \t|:-]*-[ \t|:-]*$|^[ \t]*([-*_][ \t]*){3,}$`)
	// Links and images keep their text: [text](url), ![alt](url).
	reLink = regexp.MustCompile(`!?\[([^\]\n]*)\]\([^)\n]*\)`)
	// Emphasis runs and code spans: **, __, ~~, `.
	reRuns = regexp.MustCompile("\\*{2,}|~~|`+")
	// Math delimiters: $$, \[ \] \( \).
	reMathDelims = regexp.MustCompile(`\$\$|\\[\[\]()]`)
	// \frac{a}{b}, and a command with one argument: \sqrt{2}, \text{if}.
	reFrac   = regexp.MustCompile(`\\[dt]?frac\{([^{}]*)\}\{([^{}]*)\}`)
	reArg    = regexp.MustCompile(`\\([A-Za-z]+)\{([^{}]*)\}`)
	reScript = regexp.MustCompile(`([\^_])\{([^{}]*)\}`)
	// A LaTeX command, \name, or a spacing command, \, \; \! \:.
	// A search match may sit between the backslash and the name.
	reCommand = regexp.MustCompile(`\\(\x{E000}?)([A-Za-z]+|[,;:! ])(\x{E001}?)`)
	// A Markdown escape of punctuation: \* \_ \# …
	reEscape = regexp.MustCompile(`\\([!-/:-@\[-` + "`" + `{-~])`)
	reSpace  = regexp.MustCompile(`\s+`)
)

// latexSymbols are the commands worth a character of their own; other
// commands (\frac, \mathrm, \left) are dropped, leaving their arguments.
var latexSymbols = map[string]string{
	"int": "∫", "iint": "∬", "oint": "∮", "sum": "∑", "prod": "∏", "sqrt": "√", "infty": "∞",
	"partial": "∂", "nabla": "∇", "cdot": "·", "times": "×", "div": "÷", "pm": "±", "mp": "∓",
	"le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "approx": "≈", "equiv": "≡",
	"sim": "∼", "propto": "∝", "to": "→", "rightarrow": "→", "leftarrow": "←", "Rightarrow": "⇒",
	"implies": "⇒", "iff": "⇔", "mapsto": "↦", "in": "∈", "notin": "∉", "subset": "⊂",
	"subseteq": "⊆", "cup": "∪", "cap": "∩", "emptyset": "∅", "forall": "∀", "exists": "∃",
	"neg": "¬", "land": "∧", "lor": "∨", "ldots": "…", "cdots": "⋯", "dots": "…", "circ": "∘",
	"degree": "°", "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε",
	"varepsilon": "ε", "zeta": "ζ", "eta": "η", "theta": "θ", "iota": "ι", "kappa": "κ",
	"lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π", "rho": "ρ", "sigma": "σ",
	"tau": "τ", "upsilon": "υ", "phi": "φ", "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω",
	"Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ",
	"Phi": "Φ", "Psi": "Ψ", "Omega": "Ω", "quad": " ", "qquad": " ",
}

// escaped marks a character that was escaped in the Markdown.
const escaped = '\uE002'

func plainSnippet(s string) string {
	s = reFence.ReplaceAllString(s, " ")
	s = reRule.ReplaceAllString(s, " ")
	s = reHeading.ReplaceAllString(s, "")
	s = reQuote.ReplaceAllString(s, "")
	s = reBullet.ReplaceAllString(s, "")
	s = reLink.ReplaceAllString(s, "$1")
	s = reMathDelims.ReplaceAllString(s, " ")
	s = reFrac.ReplaceAllString(s, "$1/$2")
	s = reScript.ReplaceAllString(s, "$1$2")
	s = reArg.ReplaceAllStringFunc(s, func(c string) string {
		m := reArg.FindStringSubmatch(c)
		return latexSymbols[m[1]] + m[2]
	})
	s = reCommand.ReplaceAllStringFunc(s, func(c string) string {
		m := reCommand.FindStringSubmatch(c)
		open, name, close := m[1], m[2], m[3]
		if sym, ok := latexSymbols[name]; ok {
			return open + sym + close
		}
		if len(name) == 1 { // spacing
			return " "
		}
		return open + close
	})
	s = strings.ReplaceAll(s, `\\`, " ")
	// An escaped character is kept as itself: a marker in front keeps it
	// from being taken for emphasis, and goes at the end.
	s = reEscape.ReplaceAllString(s, string(escaped)+"$1")
	s = reRuns.ReplaceAllString(s, "")
	s = dropInlineMarks(s)
	s = strings.NewReplacer("|", " ", string(escaped), "").Replace(s)
	return strings.TrimSpace(reSpace.ReplaceAllString(s, " "))
}

// dropInlineMarks removes what is left of emphasis and inline math: a
// single * or _ next to a word on one side and not the other (*word*,
// _word_, but not 2 * 3 or snake_case), and a $ not followed by a digit
// ($x$, but not $5).
func dropInlineMarks(s string) string {
	rs := []rune(s)
	// at is the rune next to i in direction d, looking through the match
	// sentinels, which are not text; 0 past either end.
	at := func(i, d int) rune {
		for i += d; i >= 0 && i < len(rs); i += d {
			if rs[i] != markOpen && rs[i] != markClose {
				return rs[i]
			}
		}
		return 0
	}
	word := func(r rune) bool { return r != 0 && r != ' ' && r != '\t' && r != '\n' }
	letter := func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r > 0x7f && r != escaped
	}
	var b strings.Builder
	for i, r := range rs {
		if i > 0 && rs[i-1] == escaped {
			b.WriteRune(r)
			continue
		}
		switch r {
		case '*', '_':
			if word(at(i, -1)) != word(at(i, 1)) || r == '_' && letter(at(i, -1)) != letter(at(i, 1)) {
				continue
			}
		case '$':
			if i+1 >= len(rs) || rs[i+1] < '0' || rs[i+1] > '9' {
				continue
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}
