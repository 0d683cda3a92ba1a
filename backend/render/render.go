// Package render turns untrusted model output (Markdown) into HTML that is safe
// to insert into the page, whole or as a stream of frames.
//
// The pipeline is goldmark (GFM, math, our code/link/image renderers) → remote
// images turned into links → bluemonday. Sanitising is always the last step and
// runs on our own HTML too, so a bug in a renderer cannot open a hole.
//
// The HTML uses these classes, and no others survive the sanitiser:
//
//   - code blocks: div.code-block > div.code-head > (span.code-lang,
//     button.code-copy[data-copy]) + pre.chroma > code, tokens in span.hl-*
//     (see ChromaCSS)
//   - math: span.math.math-inline, span.math.math-display (display math inside a
//     paragraph) and div.math.math-display; the text is the TeX without its
//     delimiters, for KaTeX (trust off)
//   - task lists: ul.task-list > li.task-list-item > span.task-box (☐ or ☑)
//
// Headings carry id="h-…" and "#x" links point at "#h-x"; no other id or name
// attribute passes, so model output cannot shadow a global the frontend reads.
//
// Raw HTML in the Markdown (the model's own tags) is sanitised on its own,
// fragment by fragment, before it joins our HTML, by a stricter policy: no
// class, no id, no button, no data-copy. So no class above ever sits on an
// element the model wrote, and a reply cannot rebuild a code block whose Copy
// button the frontend would wire (issue 10, item 21).
package render

import (
	"bytes"
	"html"
	"io"
	"regexp"
	"strings"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	ghtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
	xhtml "golang.org/x/net/html"
)

// Cache bounds: a long chat's code blocks fit, a flood of distinct blocks does not
// grow memory.
const (
	cacheItems = 512
	cacheBytes = 8 << 20
)

// Renderer renders Markdown to sanitised HTML. Build one with New and share it:
// it is safe for concurrent use.
type Renderer struct {
	full    goldmark.Markdown // highlights code blocks
	preview goldmark.Markdown // code as plain text, for the live tail of a stream
	live    goldmark.Markdown // preview, and an unclosed math opener keeps its source
	policy  *bluemonday.Policy
	raw     *bluemonday.Policy // the model's own HTML fragments
	cache   *highlighter
}

// New builds a Renderer: the Markdown pipelines, the sanitiser policy and the
// cache of highlighted code blocks.
func New() *Renderer {
	r := &Renderer{
		policy: newPolicy(false),
		raw:    newPolicy(true),
		cache:  newHighlighter(cacheItems, cacheBytes),
	}
	r.full = newMarkdown(&nodeRenderer{highlight: r.cache.highlight, raw: r.sanitiseRaw}, mathExtension{})
	r.preview = newMarkdown(&nodeRenderer{raw: r.sanitiseRaw}, mathExtension{})
	r.live = newMarkdown(&nodeRenderer{raw: r.sanitiseRaw}, mathExtension{live: true})
	return r
}

// sanitiseRaw is what a fragment of the model's raw HTML becomes: remote
// images made links, then the strict policy. Each fragment comes out as whole
// tags and escaped text, so joined with our HTML it cannot reach into our
// tags (an unclosed quote taking our attributes as its own).
func (r *Renderer) sanitiseRaw(raw []byte) string {
	if hasImgTag(raw) {
		raw = rewriteImages(raw)
	}
	return r.raw.Sanitize(string(raw))
}

func newMarkdown(nodes *nodeRenderer, math mathExtension) goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(
			extension.NewLinkify(extension.WithLinkifyAllowedProtocols([]string{"http:", "https:", "mailto:"})),
			extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)),
			extension.Strikethrough,
			extension.TaskList,
			math,
		),
		goldmark.WithParserOptions(
			parser.WithAutoHeadingID(),
			parser.WithASTTransformers(util.Prioritized(taskListClasses{}, 100)),
		),
		goldmark.WithRendererOptions(
			// Raw HTML is passed to the sanitiser rather than dropped, so <br>,
			// <sub>, <details> and friends from a model still work; our node
			// renderer sanitises each fragment with the strict policy.
			ghtml.WithUnsafe(),
			renderer.WithNodeRenderers(util.Prioritized(nodes, 100)),
		),
	)
}

// Markdown renders a whole message.
func (r *Renderer) Markdown(src string) string {
	return r.render(r.full, src)
}

// render is the one path from Markdown to HTML: convert, un-load images, sanitise.
func (r *Renderer) render(md goldmark.Markdown, src string) string {
	source := []byte(src)
	return r.renderNodes(md, source, parse(md, source))
}

// parse returns the AST of source. The full and preview pipelines parse alike
// (they differ only in how code blocks are rendered); the live one differs in
// unclosed math.
func (r *Renderer) parse(source []byte) ast.Node {
	return parse(r.preview, source)
}

func parse(md goldmark.Markdown, source []byte) ast.Node {
	pc := parser.NewContext(parser.WithIDs(headingIDs{}))
	return md.Parser().Parse(text.NewReader(source), parser.WithContext(pc))
}

// renderNodes renders nodes of one AST in order and sanitises the result. A
// stream renders the blocks it seals from the AST it parsed to find them.
func (r *Renderer) renderNodes(md goldmark.Markdown, source []byte, nodes ...ast.Node) string {
	var buf bytes.Buffer
	buf.Grow(len(source) + len(source)/2)
	for _, n := range nodes {
		if err := md.Renderer().Render(&buf, source, n); err != nil {
			// goldmark's renderers only fail when the writer does; a
			// bytes.Buffer does not. Show the text rather than nothing.
			return "<p>" + Escape(string(source)) + "</p>\n"
		}
	}
	// Images are done: Markdown ones by renderImage, raw ones by sanitiseRaw.
	return string(r.policy.SanitizeBytes(buf.Bytes()))
}

// Escape escapes text for HTML. It works byte by byte, so escaping the chunks of
// a stream separately gives the same result as escaping the whole.
func Escape(s string) string {
	return html.EscapeString(s)
}

// hasImgTag reports whether HTML may contain an <img> tag (case-insensitive).
func hasImgTag(b []byte) bool {
	for {
		i := bytes.IndexByte(b, '<')
		if i < 0 || i+4 > len(b) {
			return false
		}
		if (b[i+1]|0x20) == 'i' && (b[i+2]|0x20) == 'm' && (b[i+3]|0x20) == 'g' {
			return true
		}
		b = b[i+1:]
	}
}

// rewriteImages applies imageHTML to <img> tags that came in as raw HTML (the
// Markdown ones are already done). It runs before the sanitiser, which then sees
// the links it made; every other token is passed on byte for byte.
func rewriteImages(in []byte) []byte {
	var out bytes.Buffer
	out.Grow(len(in))
	z := xhtml.NewTokenizer(bytes.NewReader(in))
	for {
		tt := z.Next()
		if tt == xhtml.ErrorToken {
			if z.Err() != io.EOF {
				// Cannot happen with a bytes.Reader; fail closed.
				return []byte(Escape(string(in)))
			}
			return out.Bytes()
		}
		if tt != xhtml.StartTagToken && tt != xhtml.SelfClosingTagToken {
			out.Write(z.Raw())
			continue
		}
		name, hasAttr := z.TagName()
		if string(name) != "img" {
			out.Write(z.Raw())
			continue
		}
		var src, alt, title string
		for hasAttr {
			var k, v []byte
			k, v, hasAttr = z.TagAttr()
			switch string(k) {
			case "src":
				src = string(v)
			case "alt":
				alt = string(v)
			case "title":
				title = string(v)
			}
		}
		out.WriteString(imageHTML(src, alt, title))
	}
}

// newPolicy is the sanitiser: an allowlist of elements, attributes and exactly
// the classes our renderers emit. No style, no event handlers, no form controls,
// no ids but heading ids, links only to http, https, mailto and #anchors.
//
// forModel is the policy for the model's raw HTML: the same without any class,
// id, button or data-copy, which only our renderers may write.
func newPolicy(forModel bool) *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	p.AllowElements(
		"p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote",
		"ul", "ol", "li", "dl", "dt", "dd", "pre", "code", "kbd", "samp", "var",
		"em", "strong", "b", "i", "u", "s", "del", "ins", "sub", "sup", "mark", "small",
		"table", "caption", "thead", "tbody", "tfoot", "tr", "th", "td",
		"details", "summary", "span", "div", "abbr", "wbr",
	)
	p.AllowAttrs("href").Matching(regexp.MustCompile(`(?i)^(?:https?://|mailto:|#)`)).OnElements("a")
	p.AllowAttrs("title").OnElements("a", "img", "abbr")
	p.AllowAttrs("src").Matching(regexp.MustCompile(`^data:image/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/]+=*$`)).OnElements("img")
	p.AllowAttrs("alt").OnElements("img")
	p.AllowAttrs("start").Matching(bluemonday.Integer).OnElements("ol")
	p.AllowAttrs("align").Matching(regexp.MustCompile(`^(?:left|center|right)$`)).OnElements("th", "td")
	p.AllowAttrs("open").Matching(regexp.MustCompile(`^$`)).OnElements("details")
	p.AllowURLSchemes("http", "https", "mailto")
	p.AllowDataURIImages()
	p.AllowRelativeURLs(true) // only "#…" gets past the href pattern
	p.RequireParseableURLs(true)
	p.RequireNoFollowOnLinks(true)
	p.RequireNoReferrerOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true) // and rel=noopener with it
	if forModel {
		return p
	}

	p.AllowAttrs("id").Matching(regexp.MustCompile(`^h-[\p{L}\p{N}_-]+$`)).OnElements("h1", "h2", "h3", "h4", "h5", "h6")
	p.AllowAttrs("type").Matching(regexp.MustCompile(`^button$`)).OnElements("button")
	p.AllowAttrs("data-copy").Matching(regexp.MustCompile(`^$`)).OnElements("button")

	var hl []string
	for _, tc := range tokenClasses() {
		hl = append(hl, "hl-"+tc.class)
	}
	classes := func(names ...string) *regexp.Regexp {
		one := "(?:" + strings.Join(names, "|") + ")"
		return regexp.MustCompile("^" + one + "(?: " + one + ")*$")
	}
	p.AllowAttrs("class").Matching(classes("code-block", "code-head", "math", "math-display")).OnElements("div")
	p.AllowAttrs("class").Matching(classes(append(hl, "code-lang", "math", "math-inline", "math-display", "task-box")...)).OnElements("span")
	p.AllowAttrs("class").Matching(classes("chroma")).OnElements("pre")
	p.AllowAttrs("class").Matching(classes("code-copy")).OnElements("button")
	p.AllowAttrs("class").Matching(classes("task-list")).OnElements("ul", "ol")
	p.AllowAttrs("class").Matching(classes("task-list-item")).OnElements("li")
	return p
}
