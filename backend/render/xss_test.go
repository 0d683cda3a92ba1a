package render

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// markdownVectors are attacks that only exist because the input is Markdown
// (link destinations, references, autolinks, fence info, math), plus the DOM
// clobbering and loading vectors that matter to us in particular.
var markdownVectors = []string{
	"[x](javascript:alert(1))",
	"[x](JaVaScRiPt:alert(1))",
	"[x](&#106;avascript:alert(1))",
	"[x](&#x6A;avascript:alert(1))",
	"[x](&#0000106;avascript:alert(1))",
	"[x](javascript&colon;alert(1))",
	"[x](<javascript:alert(1)>)",
	"[x](<java\tscript:alert(1)>)",
	"[x](<java\nscript:alert(1)>)",
	"[x](\x01javascript:alert(1))",
	"[x](%6A%61vascript:alert(1))",
	"[x](java%0ascript:alert(1))",
	"[x](vbscript:msgbox(1))",
	"[x](VBScript:msgbox(1))",
	"[x](data:text/html,<script>alert(1)</script>)",
	"[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
	"[x](file:///etc/passwd)",
	"[x](//evil.example/x)",
	"[x](/api/App.Quit)",
	"[x](https://ok.example \"t\\\" onmouseover=\\\"alert(1)\")",
	"[x](https://ok.example/\"onmouseover=\"alert(1))",
	"<javascript:alert(1)>",
	"<JAVASCRIPT:alert(1)>",
	"<vbscript:alert(1)>",
	"<data:text/html,<script>alert(1)</script>>",
	"javascript:alert(1) and www.javascript:alert(1)",
	"[x][r]\n\n[r]: javascript:alert(1)",
	"[x][r]\n\n[r]: &#106;avascript:alert(1)",
	"[r]\n\n[r]: <javascript:alert(1)> \"t\"",
	"![x](https://evil.example/p.png)",
	"![x](//evil.example/p.png)",
	"![x](HTTPS://evil.example/p.png)",
	"![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)",
	"![x](data:image/svg+xml,<svg onload=alert(1)>)",
	"![x](javascript:alert(1))",
	"![x\" onerror=\"alert(1)](https://evil.example/x.png)",
	"![x][img]\n\n[img]: https://evil.example/p.png",
	"<img src=x onerror=alert(1)>",
	"<img src=\"https://evil.example/x.png\" alt=\"a\">",
	"<IMG SRC=JaVaScRiPt:alert(1)>",
	"<img srcset=\"https://evil.example/x.png 1x\">",
	"<image src=\"https://evil.example/x.png\">",
	"<picture><source srcset=\"https://evil.example/x.png\"><img></picture>",
	"<video poster=https://evil.example/x.png></video>",
	"<input type=image src=https://evil.example/x.png>",
	"<table background=\"https://evil.example/x.png\"><tr><td>x</td></tr></table>",
	"<svg onload=alert(1)>",
	"<svg><script>alert(1)</script></svg>",
	"<svg><a xlink:href=\"javascript:alert(1)\"><text>x</text></a></svg>",
	"<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
	"<a id=\"go\">x</a>",
	"<a name=\"location\">x</a>",
	"<form id=\"go\"><input name=\"location\"></form>",
	"<img name=\"getElementById\" src=\"data:image/png;base64,iVBORw0KGgo=\">",
	"<div id=\"wails\">x</div>",
	"# location",
	"# go",
	"## __proto__",
	"Title\n=====",
	"<h1 id=\"location\">x</h1>",
	"<form action=\"javascript:alert(1)\"><button>x</button></form>",
	"<button type=submit formaction=javascript:alert(1)>x</button>",
	"<meta http-equiv=\"refresh\" content=\"0;url=javascript:alert(1)\">",
	"<base href=\"javascript:/\">",
	"<base href=\"https://evil.example/\">",
	"<style>body{display:none}</style>",
	"<link rel=stylesheet href=https://evil.example/x.css>",
	"<iframe src=javascript:alert(1)></iframe>",
	"<iframe srcdoc=\"<script>alert(1)</script>\"></iframe>",
	"<object data=javascript:alert(1)></object>",
	"<embed src=javascript:alert(1)>",
	"<a href=\"x\" title='a\" onmouseover=\"alert(1)'>x</a>",
	"<a href='\"><script>alert(1)</script>'>x</a>",
	"<a href=\"&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058&#0000097&#0000108&#0000101&#0000114&#0000116&#0000040&#0000039&#0000088&#0000083&#0000083&#0000039&#0000041\">x</a>",
	"<a href=\"jav&#x09;ascript:alert(1)\">x</a>",
	"<a href=\"jav&#x0A;ascript:alert(1)\">x</a>",
	"<a href=\"&#x01;javascript:alert(1)\">x</a>",
	"<a href=\" javascript:alert(1)\">x</a>",
	"<a href=\"https://ok.example\" target=\"_self\" rel=\"opener\">x</a>",
	"<div style=\"background:url(javascript:alert(1))\">x</div>",
	"<span class=\"hl-k math x-evil\">x</span>",
	"<details open ontoggle=alert(1)><summary>x</summary></details>",
	"<think><img src=x onerror=alert(1)></think>",
	"<textarea><img src=x onerror=alert(1)></textarea>",
	"<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\">",
	"<!--<img src=x onerror=alert(1)>-->",
	"<xmp><img src=x onerror=alert(1)></xmp>",
	"<plaintext><img src=x onerror=alert(1)>",
	"<title><img src=x onerror=alert(1)></title>",
	"$</span><script>alert(1)</script>$",
	"$$\n</div><script>alert(1)</script>\n$$",
	"\\(</span><img src=x onerror=alert(1)>\\)",
	"\\[</div><iframe src=javascript:alert(1)>\\]",
	"$x$<script>alert(1)</script>",
	"```\"><script>alert(1)</script>\ncode\n```",
	"```js onload=alert(1)\nx\n```",
	"``` <img src=x onerror=alert(1)>\nx\n```",
	"~~~</span></div><script>alert(1)</script>\nx\n~~~",
	"```\n</code></pre><script>alert(1)</script>\n```",
	"`<script>alert(1)</script>`",
	"- [ ] <img src=x onerror=alert(1)>\n- [x] [x](javascript:alert(1))",
	"| a | <script>alert(1)</script> |\n|---|---|\n| <img src=x onerror=alert(1)> | [x](javascript:alert(1)) |",
	"> <a href=javascript:alert(1)>x</a>\n> ![x](https://evil.example/p.png)",
}

// contexts wrap a payload the ways Markdown treats text differently.
var contexts = []struct {
	name string
	wrap func(string) string
}{
	{"raw", func(p string) string { return p }},
	{"paragraph", func(p string) string { return "Hello " + p + " world." }},
	{"link text and destination", func(p string) string { return "[" + p + "](" + p + ")" }},
	{"link destination", func(p string) string { return "[x](" + p + ")" }},
	{"image", func(p string) string { return "![" + p + "](" + p + ")" }},
	{"code fence", func(p string) string { return "```\n" + p + "\n```" }},
	{"fence info", func(p string) string { return "```" + p + "\ncode\n```" }},
	{"autolink", func(p string) string { return "<" + p + ">" }},
	{"html block", func(p string) string { return "<div>\n" + p + "\n</div>" }},
	{"reference", func(p string) string { return "[x]\n\n[x]: " + p }},
	{"math", func(p string) string { return "$" + p + "$ and $$\n" + p + "\n$$" }},
	{"list and quote", func(p string) string { return "- " + p + "\n\n> " + p }},
}

func loadPayloads(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("../../testdata/xss/payloadbox-xss-payload-list.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if line := sc.Text(); strings.TrimSpace(line) != "" {
			out = append(out, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) < 6000 {
		t.Fatalf("only %d payloads", len(out))
	}
	return out
}

// Everything the sanitiser may let through; the checks below are stricter than
// "not dangerous" on purpose: anything new must be added here deliberately.
var (
	allowedElements = map[string]bool{
		"p": true, "br": true, "hr": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
		"blockquote": true, "ul": true, "ol": true, "li": true, "dl": true, "dt": true, "dd": true,
		"pre": true, "code": true, "kbd": true, "samp": true, "var": true, "em": true, "strong": true,
		"b": true, "i": true, "u": true, "s": true, "del": true, "ins": true, "sub": true, "sup": true,
		"mark": true, "small": true, "table": true, "caption": true, "thead": true, "tbody": true,
		"tfoot": true, "tr": true, "th": true, "td": true, "details": true, "summary": true,
		"span": true, "div": true, "abbr": true, "wbr": true, "a": true, "img": true, "button": true,
	}
	forbiddenElements = []string{"script", "style", "iframe", "object", "embed", "form", "meta", "base", "link", "input", "svg", "math", "frame", "textarea", "select"}
	allowedAttrs      = map[string]bool{
		"href": true, "src": true, "alt": true, "title": true, "class": true, "id": true, "rel": true,
		"target": true, "start": true, "align": true, "type": true, "data-copy": true, "open": true,
	}
)

// urlScheme normalises a URL the way a browser does before it looks at the
// scheme (entities are already decoded by the parser): strip leading and
// trailing C0 controls and spaces, drop tabs and newlines, lowercase.
func urlScheme(v string) (scheme string, rest string) {
	v = strings.TrimFunc(v, func(r rune) bool { return r <= 0x20 })
	v = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, v)
	v = strings.ToLower(v)
	if i := strings.IndexAny(v, ":/?#"); i >= 0 && v[i] == ':' {
		return v[:i], v[i+1:]
	}
	return "", v
}

// unsafeHTML returns what is wrong with a piece of rendered HTML, or "".
func unsafeHTML(out string) string {
	ctx := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	nodes, err := html.ParseFragment(strings.NewReader(out), ctx)
	if err != nil {
		return "unparseable: " + err.Error()
	}
	var problem string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if problem != "" {
			return
		}
		if n.Type == html.ElementNode {
			for _, f := range forbiddenElements {
				if n.Data == f {
					problem = "element " + f
					return
				}
			}
			if n.Namespace != "" || !allowedElements[n.Data] {
				problem = fmt.Sprintf("element %s:%s not allowed", n.Namespace, n.Data)
				return
			}
			attrs := map[string]string{}
			for _, a := range n.Attr {
				k := strings.ToLower(a.Key)
				attrs[k] = a.Val
				switch {
				case strings.HasPrefix(k, "on"):
					problem = "event handler " + k
				case k == "style":
					problem = "style attribute"
				case k == "name":
					problem = "name attribute"
				case k == "id" && !strings.HasPrefix(a.Val, "h-"):
					problem = "id " + a.Val
				case a.Namespace != "" || !allowedAttrs[k]:
					problem = "attribute " + a.Namespace + ":" + k
				case k == "href":
					switch scheme, rest := urlScheme(a.Val); scheme {
					case "http", "https", "mailto":
					case "":
						if !strings.HasPrefix(rest, "#") {
							problem = "relative href " + a.Val
						}
					default:
						problem = "href scheme " + scheme
					}
				case k == "src":
					scheme, rest := urlScheme(a.Val)
					if scheme != "data" || !(strings.HasPrefix(rest, "image/png;") || strings.HasPrefix(rest, "image/jpeg;") ||
						strings.HasPrefix(rest, "image/gif;") || strings.HasPrefix(rest, "image/webp;")) {
						problem = "src " + a.Val
					}
				}
				if problem != "" {
					return
				}
			}
			if n.Data == "a" {
				if scheme, _ := urlScheme(attrs["href"]); scheme == "http" || scheme == "https" {
					rel := " " + attrs["rel"] + " "
					if attrs["target"] != "_blank" || !strings.Contains(rel, " noopener ") ||
						!strings.Contains(rel, " noreferrer ") || !strings.Contains(rel, " nofollow ") {
						problem = fmt.Sprintf("external link without rel/target: %v", attrs)
						return
					}
				}
			}
			if n.Data == "img" && attrs["src"] == "" {
				problem = "img without inline src"
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	for _, n := range nodes {
		walk(n)
	}
	return problem
}

func TestXSSMarkdown(t *testing.T) {
	r := New()
	payloads := append(loadPayloads(t), markdownVectors...)
	step := 1
	if testing.Short() {
		step = 7
	}
	failures := 0
	for i := 0; i < len(payloads); i += step {
		for _, c := range contexts {
			src := c.wrap(payloads[i])
			out := r.Markdown(src)
			if p := unsafeHTML(out); p != "" {
				failures++
				if failures <= 20 {
					t.Errorf("%s: %s\ninput  %q\noutput %q", c.name, p, src, out)
				}
			}
		}
	}
	if failures > 0 {
		t.Fatalf("%d unsafe outputs", failures)
	}
}

// TestXSSStream sends the same inputs through Stream, many per reply, split at
// random, and checks every piece of every frame as well as the end result: a
// partial tag in a live tail is an input of its own.
func TestXSSStream(t *testing.T) {
	r := New()
	payloads := append(loadPayloads(t), markdownVectors...)
	rng := rand.New(rand.NewPCG(42, 43))
	// Every payload goes through the stream, in three of the contexts (rotating,
	// so each context sees a third of the list); our own vectors in all of them.
	// TestXSSMarkdown covers every payload in every context.
	var inputs []string
	generic := len(payloads) - len(markdownVectors)
	for i, p := range payloads {
		if testing.Short() && i%7 != 0 && i < generic {
			continue
		}
		for j, c := range contexts {
			if i >= generic || (j-i)%4 == 0 {
				inputs = append(inputs, c.wrap(p))
			}
		}
	}
	failures := 0
	fail := func(what, problem, src, out string) {
		failures++
		if failures <= 20 {
			t.Errorf("%s: %s\ninput  %q\noutput %q", what, problem, src, out)
		}
	}
	const perReply = 12
	for start := 0; start < len(inputs); start += perReply {
		src := strings.Join(inputs[start:min(start+perReply, len(inputs))], "\n\n")
		s := r.NewStream()
		var c follower
		check := func(f Frame) {
			for _, piece := range append(f.Seal, f.Full) {
				if p := unsafeHTML(piece); p != "" {
					fail("sealed piece", p, src, piece)
				}
			}
			switch f.Op {
			case TailReplace:
				if p := unsafeHTML(f.Tail); p != "" {
					fail("tail", p, src, f.Tail)
				}
			case TailAppend:
				if strings.ContainsAny(f.Tail, "<>\"'") {
					fail("appended text", "unescaped", src, f.Tail)
				}
			}
			c.apply(t, f)
		}
		for rest := src; rest != ""; {
			n := min(1+rng.IntN(160), len(rest))
			check(s.Append(rest[:n]))
			rest = rest[n:]
		}
		check(s.Finish())
		if p := unsafeHTML(c.html()); p != "" {
			fail("final", p, src, c.html())
		}
		if c.html() != r.Markdown(src) {
			fail("final", "differs from Markdown", src, c.html())
		}
	}
	if failures > 0 {
		t.Fatalf("%d unsafe outputs", failures)
	}
}

func TestSpecificVectors(t *testing.T) {
	r := New()
	tests := []struct {
		src      string
		contains []string
		absent   []string
	}{
		{"# location", []string{`<h1 id="h-location">`}, nil},
		{"<a id=\"go\">x</a>", nil, []string{"id=", "<a"}},
		{"![x](https://evil.example/p.png)", []string{`<a href="https://evil.example/p.png" rel="nofollow noreferrer noopener" target="_blank">image: x (not loaded)</a>`}, []string{"<img"}},
		{"<img src=\"https://evil.example/x.png\" alt=\"a\">", []string{`>image: a (not loaded)</a>`}, []string{"<img"}},
		{"![x](data:image/png;base64,iVBORw0KGgo=)", []string{`<img src="data:image/png;base64,iVBORw0KGgo=" alt="x">`}, nil},
		{"![x](data:image/svg+xml;base64,PHN2Zz4=)", []string{"image: x (not loaded)"}, []string{"<img", "href"}},
		{"$</span><script>alert(1)</script>$", []string{`<span class="math math-inline">&lt;/span&gt;&lt;script&gt;alert(1)&lt;/script&gt;</span>`}, nil},
		{"```\"><script>x\ny\n```", []string{`<span class="code-lang">&#34;&gt;&lt;script&gt;x</span>`}, []string{"<script"}},
		{"[x](javascript:alert(1))", []string{"<p>x</p>"}, []string{"<a"}},
		{"[x](#intro)", []string{`<a href="#h-intro" rel="nofollow noreferrer">x</a>`}, nil},
		{"- [x] done\n- [ ] todo", []string{`<ul class="task-list">`, `<li class="task-list-item"><span class="task-box">☑</span> done</li>`}, []string{"<input"}},
		{"<span class=\"hl-k x-evil\">x</span>", nil, []string{"class"}},
		{"a <sub>2</sub> <details><summary>s</summary>d</details>", []string{"<sub>2</sub>", "<details><summary>s</summary>d</details>"}, nil},
	}
	for _, tt := range tests {
		got := r.Markdown(tt.src)
		for _, want := range tt.contains {
			if !strings.Contains(got, want) {
				t.Errorf("Markdown(%q) = %q, want it to contain %q", tt.src, got, want)
			}
		}
		for _, bad := range tt.absent {
			if strings.Contains(got, bad) {
				t.Errorf("Markdown(%q) = %q, must not contain %q", tt.src, got, bad)
			}
		}
	}
}

// TestCheckerCatches proves the checker above fails on what it must catch, so a
// green XSS run means something.
func TestCheckerCatches(t *testing.T) {
	for _, bad := range []string{
		"<script>alert(1)</script>",
		"<p onclick=x>a</p>",
		"<a href=\"javascript:alert(1)\">x</a>",
		"<a href=\"jav&#x09;ascript:alert(1)\">x</a>",
		"<a href=\" &#x01;javascript:alert(1)\">x</a>",
		"<a href=\"/relative\">x</a>",
		"<a href=\"https://x.example\">no rel</a>",
		"<img src=\"https://x.example/p.png\">",
		"<img src=\"data:image/svg+xml;base64,PHN2Zz4=\">",
		"<div id=\"go\">x</div>",
		"<span name=\"location\">x</span>",
		"<p style=\"color:red\">x</p>",
		"<svg><a>x</a></svg>",
		"<meta http-equiv=refresh content=0>",
		"<base href=https://x.example/>",
		"<form><button>x</button></form>",
		"<math><mi>x</mi></math>",
	} {
		if unsafeHTML(bad) == "" {
			t.Errorf("checker accepts %q", bad)
		}
	}
	for _, good := range []string{
		`<p><a href="https://x.example" rel="nofollow noreferrer noopener" target="_blank">x</a> <a href="mailto:a@b.example" rel="nofollow noreferrer">m</a> <a href="#h-x" rel="nofollow noreferrer">h</a></p>`,
		`<h2 id="h-intro">Intro</h2><img src="data:image/png;base64,iVBORw0KGgo=" alt="x">`,
	} {
		if p := unsafeHTML(good); p != "" {
			t.Errorf("checker rejects %q: %s", good, p)
		}
	}
}
