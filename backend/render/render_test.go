package render

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alecthomas/chroma/v2"
)

func TestMath(t *testing.T) {
	r := New()
	inline := func(tex string) string { return `<span class="math math-inline">` + tex + `</span>` }
	tests := []struct{ src, want string }{
		{"$x^2$", "<p>" + inline("x^2") + "</p>\n"},
		{"Prices: $5 and $10.", "<p>Prices: $5 and $10.</p>\n"},
		{"$5-$10", "<p>$5-$10</p>\n"},
		{"$x $", "<p>$x $</p>\n"},
		{"$ x$", "<p>$ x$</p>\n"},
		{"$x$5", "<p>$x$5</p>\n"},
		{`\$x\$`, "<p>$x$</p>\n"},
		{"$a*b*c$ and $a_b_c$", "<p>" + inline("a*b*c") + " and " + inline("a_b_c") + "</p>\n"},
		{`$\{x\} \\ y$`, "<p>" + inline(`\{x\} \\ y`) + "</p>\n"},
		{`$a \$ b$`, "<p>" + inline(`a \$ b`) + "</p>\n"},
		{`\(x < y\)`, "<p>" + inline("x &lt; y") + "</p>\n"},
		{"`$x$`", "<p><code>$x$</code></p>\n"},
		{"$[x](https://a.b)$", "<p>" + inline("[x](https://a.b)") + "</p>\n"},
		{"a $$b$$ c", `<p>a <span class="math math-display">b</span> c</p>` + "\n"},
		{"$$\n\\frac{a}{b}\n$$", `<div class="math math-display">\frac{a}{b}</div>` + "\n"},
		{"$$ e^{i\\pi} $$", `<div class="math math-display">e^{i\pi}</div>` + "\n"},
		{"\\[\nx\n\\]\nafter", `<div class="math math-display">x</div>` + "\n<p>after</p>\n"},
		{"Text\n$$\nx\n$$", "<p>Text</p>\n" + `<div class="math math-display">x</div>` + "\n"},
		{"$$$ money", "<p>$$$ money</p>\n"},
		{"$$100 prize\n\ntext", "<p>$$100 prize</p>\n<p>text</p>\n"},
		{"- $$\n  x\n  $$\n- b", "<ul>\n<li>\n" + `<div class="math math-display">x</div>` + "\n</li>\n<li>b</li>\n</ul>\n"},
	}
	for _, tt := range tests {
		if got := r.Markdown(tt.src); got != tt.want {
			t.Errorf("Markdown(%q)\n got %q\nwant %q", tt.src, got, tt.want)
		}
	}
}

// TestCodeBlockWrapper is the regression test for a nested <pre>: the fence
// renderer is replaced, and chroma's own wrapper never appears.
func TestCodeBlockWrapper(t *testing.T) {
	r := New()
	got := r.Markdown("```go\nfunc f() {}\n```\n")
	want := `<div class="code-block"><div class="code-head"><span class="code-lang">go</span>` +
		`<button type="button" class="code-copy" data-copy="">Copy</button></div><pre class="chroma"><code>`
	if !strings.HasPrefix(got, want) || !strings.HasSuffix(got, codeClose) {
		t.Fatalf("got %q", got)
	}
	if strings.Count(got, "<pre") != 1 || strings.Count(got, "<code") != 1 {
		t.Fatalf("nested wrapper: %q", got)
	}
	if !strings.Contains(got, `<span class="hl-k">func </span><span class="hl-nf">f</span>`) {
		t.Fatalf("not highlighted with classes: %q", got)
	}
	if strings.Contains(got, "style=") {
		t.Fatalf("inline style: %q", got)
	}
	for _, src := range []string{"```nosuchlang\na < b\n```", "```\na < b\n```", "    a < b\n"} {
		got := r.Markdown(src)
		if !strings.Contains(got, "<code>a &lt; b\n</code>") {
			t.Errorf("Markdown(%q) = %q, want plain escaped code", src, got)
		}
	}
}

func TestEscapeChunkSafe(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	alphabet := []string{"<", ">", "&", "'", "\"", "a", " ", "\n", "λ", "&amp;", "&#", "é"}
	for range 500 {
		var b strings.Builder
		for range rng.IntN(60) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		s := b.String()
		var chunked strings.Builder
		for rest := s; rest != ""; {
			n := min(1+rng.IntN(5), len(rest))
			chunked.WriteString(Escape(rest[:n]))
			rest = rest[n:]
		}
		if chunked.String() != Escape(s) {
			t.Fatalf("Escape not chunk-safe for %q", s)
		}
	}
	if got := Escape(`<a href="x">'&'</a>`); got != "&lt;a href=&#34;x&#34;&gt;&#39;&amp;&#39;&lt;/a&gt;" {
		t.Fatalf("Escape = %q", got)
	}
}

func TestChromaCSS(t *testing.T) {
	css := ChromaCSS()
	for _, tc := range tokenClasses() {
		if !strings.Contains(css, ".hl-"+tc.class+",") && !strings.Contains(css, ".hl-"+tc.class+"{") {
			t.Errorf("class hl-%s missing from the stylesheet", tc.class)
		}
	}
	for _, v := range ColourVariables() {
		if !strings.Contains(css, "var(--hl-"+v+")") {
			t.Errorf("variable --hl-%s unused", v)
		}
	}
	if regexp.MustCompile(`#[0-9a-fA-F]{3}|rgb\(`).MatchString(css) {
		t.Errorf("literal colour in %s", css)
	}
	known := map[string]bool{"": true}
	for _, tc := range tokenClasses() {
		known[tc.class] = true
	}
	for tt := range chroma.StandardTypes {
		if c := classFor(tt); !known[c] {
			t.Errorf("classFor(%v) = %q, which the stylesheet and sanitiser do not know", tt, c)
		}
	}
}

func TestHighlightCacheBounded(t *testing.T) {
	h := newHighlighter(3, 1<<20)
	for i := range 10 {
		h.highlight("go", fmt.Sprintf("var x = %d\n", i))
	}
	if n := h.len(); n != 3 {
		t.Fatalf("cache holds %d blocks, want 3", n)
	}
	h.highlight("nosuchlang", "x\n")
	h.highlight("go", "var x = 9\n") // most recent: a hit
	if n := h.len(); n != 3 {
		t.Fatalf("cache holds %d blocks after unknown language and a hit, want 3", n)
	}
	small := newHighlighter(100, 4096)
	for i := range 50 {
		small.highlight("go", fmt.Sprintf("// %d\nfunc f() { return %d }\n", i, i))
	}
	if small.bytes > 4096 {
		t.Fatalf("cache holds %d bytes, bound 4096", small.bytes)
	}
}

// TestHighlightOutOfTimeIsNotRemembered: a block that ran out of the time
// budget (a busy machine) is shown plain that once and highlighted the next
// time, not remembered plain.
func TestHighlightOutOfTimeIsNotRemembered(t *testing.T) {
	h := newHighlighter(10, 1<<20)
	var code strings.Builder
	for i := range 40 {
		fmt.Fprintf(&code, "x%d := f(%d)\n", i, i)
	}
	h.budget = 0 // every block runs out
	if got := h.highlight("go", code.String()); strings.Contains(got, "hl-") {
		t.Fatalf("out of time, yet highlighted: %.80s", got)
	}
	if h.len() != 0 {
		t.Fatalf("a block that ran out of time was remembered (%d cached)", h.len())
	}
	h.budget = time.Hour
	if got := h.highlight("go", code.String()); !strings.Contains(got, "hl-") {
		t.Fatalf("not highlighted with time to spare: %.80s", got)
	}
	if h.len() != 1 {
		t.Fatalf("%d cached, want 1", h.len())
	}
}

// TestMain lifts the highlighting time budget for every test here: the
// tests compare renders (stream against whole, shared against own
// renderer), and on a loaded machine a block could run out of time in one
// render and not in the other (TestRendererConcurrent failed so under a
// load average of 28). Running out is tested on its own.
func TestMain(m *testing.M) {
	highlightBudget = time.Hour
	os.Exit(m.Run())
}

// TestRendererConcurrent: renders on four goroutines sharing one renderer
// (and its highlight cache) equal renders on a renderer of their own.
func TestRendererConcurrent(t *testing.T) {
	r := New()
	var docs []string
	for _, d := range corpus {
		docs = append(docs, d.src)
	}
	docs = append(docs, sampleReply(8000))
	want := make([]string, len(docs))
	for i, d := range docs {
		want[i] = New().Markdown(d)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4*len(docs))
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range docs {
				j := (i + g*7) % len(docs)
				if got := r.Markdown(docs[j]); got != want[j] {
					errs <- fmt.Sprintf("doc %d differs under concurrency", j)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestGoldmarkVersion guards the dependency: before 1.8.4 goldmark turned
// javascript: autolinks and entity-encoded schemes into live links. Our own link
// renderers and the sanitiser stop those too; this keeps the floor explicit. A
// test binary carries no dependency versions, so it reads go.mod.
func TestGoldmarkVersion(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*github\.com/yuin/goldmark v(\d+)\.(\d+)\.(\d+)`).FindStringSubmatch(string(mod))
	if m == nil {
		t.Fatal("goldmark not required in go.mod")
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	patch, _ := strconv.Atoi(m[3])
	if major == 1 && (minor < 8 || minor == 8 && patch < 4) {
		t.Fatalf("goldmark v%d.%d.%d, need ≥ v1.8.4", major, minor, patch)
	}
}

func TestPartialClosesOpenMarkup(t *testing.T) {
	r := New()
	for _, c := range []struct{ src, want string }{
		{"Here is **bold te", "<p>Here is <strong>bold te</strong></p>\n"},
		{"Some *emphasis and **strong", "<p>Some <em>emphasis and <strong>strong</strong></em></p>\n"},
		{"Run `go te", "<p>Run <code>go te</code></p>\n"},
		{"Now **bold `co", "<p>Now <strong>bold <code>co</code></strong></p>\n"},
		{"Gone ~~old", "<p>Gone <del>old</del></p>\n"},
		{"- one\n- two **x", "<ul>\n<li>one</li>\n<li>two <strong>x</strong></li>\n</ul>\n"},
		{"## Title *it", "<h2 id=\"h-title-it\">Title <em>it</em></h2>\n"},
		{"**done** and closed\n", "<p><strong>done</strong> and closed</p>\n"},
		{"2 * 3 and 2*3 and snake_case", "<p>2 * 3 and 2*3 and snake_case</p>\n"},
		{"Costs $x*y$ here *and", "<p>Costs <span class=\"math math-inline\">x*y</span> here <em>and</em></p>\n"},
		{"```go\nfunc **x", "```go\nfunc **x"}, // an open fence is left alone
		{"ends with **", "<p>ends with **</p>\n"},
	} {
		got := r.Partial(c.src)
		if strings.HasPrefix(c.want, "```") {
			if got != r.Markdown(c.src) {
				t.Errorf("Partial(%q) = %q, want the code as it is", c.src, got)
			}
			continue
		}
		if got != c.want {
			t.Errorf("Partial(%q)\n got %q\nwant %q", c.src, got, c.want)
		}
	}
	// A finished reply is rendered as written.
	if got := r.Markdown("Here is **bold te"); got != "<p>Here is **bold te</p>\n" {
		t.Errorf("Markdown of an unclosed strong: %q", got)
	}
}
