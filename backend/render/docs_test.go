package render

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// corpus holds documents for the streaming property: every construct whose end
// is decided by what follows it. noReset says the final render must equal the
// sealed blocks plus the tail (no Reset); documents with reference definitions
// after their use, or raw HTML spanning blocks, may legitimately need one.
var corpus = []struct {
	name    string
	src     string
	noReset bool
}{
	{"empty", "", true},
	{"one line", "Hello", true},
	{"paragraphs", "First paragraph\nstill first.\n\nSecond *para*graph with **bold**.\n\n\nThird.\n", true},
	{"atx headings", "# One\nText under one.\n## Two ##\n###### Six\n#hashtag is text\n\n# \n", true},
	{"setext", "Title\n=====\n\nSub\ntitle\n---\n\nnot a heading\n- \n", true},
	{"thematic", "a\n\n***\n\n- - -\nb\n___\n", true},
	{"tight list", "- a\n- b\n- c\n\nafter\n", true},
	{"loose list", "- a\n\n- b\n\n  continued b\n\n- c\n\nafter\n", true},
	{"nested list", "1. one\n   - sub a\n   - sub b\n\n     sub b more\n2. two\n3) other list\n\nend\n", true},
	{"task list", "- [ ] todo\n- [x] done\n- [X] also\n\ntext\n", true},
	{"list then code", "- item\n\n```\ncode\n```\n- new list\n", true},
	{"lazy quote", "> quoted\nlazy line\n> more\n\nout\n\n> again\n\n> another\n", true},
	{"nested quote", "> a\n> > b\n> > c\n>\n> d\n\ne\n", true},
	{"table", "| a | b |\n|---|:-:|\n| 1 | 2 |\n| 3 | 4 |\n\nafter table\n\nx | y\n--|--\nz | w\nnext para\n", true},
	{"table interrupt", "Intro line\n| h1 | h2 |\n| -- | -- |\n| c1 | c2 |\n# Head\n", true},
	{"fence", "```go\npackage main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n```\nafter\n", true},
	{"fence tilde long", "~~~~python\ndef f():\n    return 1\n~~~\nstill code\n~~~~~\n\ntext\n", true},
	{"fence unclosed", "para\n\n```js\nconst x = 1;\nconsole.log(x)\n", true},
	{"fence closes at eof", "```\nx\n```", true},
	{"fence info backtick", "```a`b\nnot a fence\n```\n", true},
	{"fence indented", "  ```\n  indented\n    more\n  ```\n", true},
	{"fence in list", "- item\n  ```sh\n  ls -la\n  ```\n- next\n", true},
	{"fence in quote", "> ```\n> code\n> ```\n\nok\n", true},
	{"two fences", "```\na\n```\n```\nb\n```\n", true},
	{"fence closed by longer", "````\n```\ninner\n```\n````\nout\n", true},
	{"indented code", "para\n\n    code 1\n\n    code 2\nafter\n", true},
	{"math block", "Before\n$$\n\\frac{a}{b} = c\n$$\nAfter $x^2$ and $5 and $10.\n\n\\[\n\\int_0^1 x\\,dx\n\\]\n\n$$ e^{i\\pi} + 1 = 0 $$\n", true},
	{"math unclosed", "Text\n\n$$\n\\sum_i i\n", true},
	{"math inline", "Prices $5 and $10; math $a_b*c*d_e$ and \\(x < y\\) and $$x$$ inline.\n", true},
	{"html block", "<div>\n*not emphasised*\n</div>\n\n<details><summary>More</summary>\n\ntext *em*\n\n</details>\n\nend\n", true},
	{"html comment", "<!-- note\n\nstill comment -->\nafter\n", true},
	{"hard breaks", "line one  \nline two\\\nline three\n", true},
	{"autolinks", "See <https://example.com> and www.example.org and mail a@b.co.\n\n[link](https://x.y \"title\") ![img](https://i.png)\n", true},
	{"ref before use", "[ref]: https://example.com\n\nUse [ref] here.\n\nAnd [again][ref].\n", true},
	{"ref after use", "Use [ref] here.\n\n[ref]: https://example.com\n", false},
	{"emphasis across lines", "*start\nend* and **bold\nbold**\n\n_x_\n", true},
	{"crlf", "a\r\n\r\n- b\r\n- c\r\n\r\n```\r\ncode\r\n```\r\n", true},
	{"unicode", "Ünïcödé ✓ — 日本語のテキスト\n\n- 🎉 emoji\n- ☃ snow\n\n```\nλ → μ\n```\n", true},
	{"heading after list", "- a\n- b\n# H\n", true},
	{"ordered start", "3. three\n4. four\n\n10. ten\n", true},
	{"blank lines only", "\n\n\n", true},
	{"spaces", "   \n  text  \n   ", true},
	{"html open tag spanning", "<div>\n\n# inside\n\n</div>\n", true},
	{"script spanning", "<script>\nalert(1)\n\n# not here\n\n</script>\n\nafter\n", false},
}

// sampleReply generates a deterministic reply of about size bytes that mixes
// what models write: prose with inline markup and math, lists, tables, code in
// several languages, display math and quotes.
func sampleReply(size int) string {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields(`the renderer seals finished blocks and renders the live tail again for every frame
so that a follower sees text as it arrives while the whole message is rendered only once at the end
streaming markdown is mostly paragraphs lists and code with some tables and math in between`)
	sentence := func() string {
		n := 6 + rng.IntN(14)
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(' ')
			}
			w := words[rng.IntN(len(words))]
			switch rng.IntN(30) {
			case 0:
				w = "**" + w + "**"
			case 1:
				w = "*" + w + "*"
			case 2:
				w = "`" + w + "()`"
			case 3:
				w = "$x_" + fmt.Sprint(i) + "^2$"
			case 4:
				w = "[" + w + "](https://example.com/" + w + ")"
			}
			b.WriteString(w)
		}
		return strings.ToUpper(b.String()[:1]) + b.String()[1:] + "."
	}
	paragraph := func() string {
		var b strings.Builder
		for i := range 2 + rng.IntN(4) {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(sentence())
		}
		return b.String() + "\n\n"
	}
	code := []string{
		"```go\nfunc (s *Stream) Append(delta string) Frame {\n\ts.mu.Lock()\n\tdefer s.mu.Unlock()\n\tif s.done {\n\t\treturn Frame{}\n\t}\n\ts.src = append(s.src, delta...)\n\treturn s.frame() // render what changed\n}\n```\n\n",
		"```python\nimport math\n\ndef area(r: float) -> float:\n    \"\"\"Area of a circle.\"\"\"\n    return math.pi * r ** 2\n\nfor r in range(1, 4):\n    print(f\"{r}: {area(r):.2f}\")\n```\n\n",
		"```javascript\nexport function apply(frame, el) {\n  if (frame.reset) el.sealed.innerHTML = frame.full;\n  for (const s of frame.seal ?? []) el.sealed.insertAdjacentHTML('beforeend', s);\n  const n = 42, msg = `frames: ${n}`;\n  return msg;\n}\n```\n\n",
		"```bash\n#!/usr/bin/env bash\nset -euo pipefail\nfor f in *.md; do\n  echo \"rendering $f\" && wc -c \"$f\"\ndone\n```\n\n",
		"```json\n{\"model\": \"llama\", \"stream\": true, \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"temperature\": 0.7}\n```\n\n",
		"```rust\nfn main() {\n    let v: Vec<u32> = (1..=10).filter(|x| x % 2 == 0).collect();\n    println!(\"{:?}\", v);\n}\n```\n\n",
		"```sql\nSELECT id, title FROM chats WHERE user_id = ? AND updated_at > ? ORDER BY updated_at DESC LIMIT 50;\n```\n\n",
	}
	var b strings.Builder
	b.WriteString("# Rendering a streamed reply\n\n")
	for b.Len() < size {
		switch rng.IntN(10) {
		case 0, 1, 2, 3:
			b.WriteString(paragraph())
		case 4:
			for i := range 3 + rng.IntN(5) {
				if rng.IntN(4) == 0 {
					fmt.Fprintf(&b, "%d. %s\n", i+1, sentence())
				} else {
					fmt.Fprintf(&b, "- %s\n", sentence())
				}
			}
			b.WriteString("\n")
		case 5:
			b.WriteString("| Step | Cost | Notes |\n|:-----|-----:|-------|\n")
			for i := range 3 + rng.IntN(6) {
				fmt.Fprintf(&b, "| %d | %d ms | %s |\n", i+1, rng.IntN(100), words[rng.IntN(len(words))])
			}
			b.WriteString("\n")
		case 6, 7:
			b.WriteString(code[rng.IntN(len(code))])
		case 8:
			b.WriteString("$$\n\\sum_{i=1}^{n} i = \\frac{n(n+1)}{2}\n$$\n\n")
		case 9:
			fmt.Fprintf(&b, "## Section %d\n\n> %s\n> %s\n\n", rng.IntN(100), sentence(), sentence())
		}
	}
	return b.String()
}
