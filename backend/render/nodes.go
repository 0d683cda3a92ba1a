package render

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/yuin/goldmark/ast"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Code blocks are wrapped the same way everywhere, including the open fence of a
// stream, so the frontend finds one structure: the copy button is wired by the
// frontend (no inline handler), the <pre> is ours and never nested.
const (
	codeBlockOpen = `<div class="code-block"><div class="code-head"><span class="code-lang">`
	codeHeadClose = `</span><button type="button" class="code-copy" data-copy="">Copy</button></div><pre class="chroma"><code>`
	codeClose     = "</code></pre></div>\n"
)

// maxLangLabel bounds the language shown in a code block's head.
const maxLangLabel = 32

// codeHead returns the wrapper up to and including <code> for a language.
func codeHead(lang string) string {
	label := lang
	if label == "" {
		label = "text"
	}
	if utf8.RuneCountInString(label) > maxLangLabel {
		label = string([]rune(label)[:maxLangLabel])
	}
	return codeBlockOpen + Escape(label) + codeHeadClose
}

// nodeRenderer replaces goldmark's renderers for the nodes whose HTML we decide:
// code blocks (our wrapper, chroma with classes), links and images (scheme
// allowlist, remote images never loaded) and task-list boxes (text, not inputs).
type nodeRenderer struct {
	// highlight returns the inside of <code> for a block; nil leaves code plain,
	// which is what live tails use.
	highlight func(lang, code string) string
	// raw sanitises one fragment of the model's raw HTML (Renderer.sanitiseRaw).
	raw func([]byte) string
}

func (r *nodeRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindFencedCodeBlock, r.renderFencedCode)
	reg.Register(ast.KindCodeBlock, r.renderIndentedCode)
	reg.Register(ast.KindLink, r.renderLink)
	reg.Register(ast.KindAutoLink, r.renderAutoLink)
	reg.Register(ast.KindImage, r.renderImage)
	reg.Register(extast.KindTaskCheckBox, r.renderTaskCheckBox)
	reg.Register(ast.KindHTMLBlock, r.renderHTMLBlock)
	reg.Register(ast.KindRawHTML, r.renderRawHTML)
}

// renderHTMLBlock writes a block of the model's raw HTML, lines and closing
// line together, through the strict policy.
func (r *nodeRenderer) renderHTMLBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	n := node.(*ast.HTMLBlock)
	var b []byte
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b = append(b, seg.Value(source)...)
	}
	if n.HasClosure() {
		b = append(b, n.ClosureLine.Value(source)...)
	}
	_, _ = w.WriteString(r.raw(b))
	return ast.WalkSkipChildren, nil
}

// renderRawHTML writes one inline tag of the model's through the strict policy.
func (r *nodeRenderer) renderRawHTML(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	n := node.(*ast.RawHTML)
	var b []byte
	for i := 0; i < n.Segments.Len(); i++ {
		seg := n.Segments.At(i)
		b = append(b, seg.Value(source)...)
	}
	_, _ = w.WriteString(r.raw(b))
	return ast.WalkSkipChildren, nil
}

func codeText(source []byte, n ast.Node) string {
	var b strings.Builder
	lines := n.Lines()
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b.Write(seg.Value(source))
	}
	return b.String()
}

func (r *nodeRenderer) writeCode(w util.BufWriter, lang, code string) {
	_, _ = w.WriteString(codeHead(lang))
	if r.highlight != nil {
		_, _ = w.WriteString(r.highlight(lang, code))
	} else {
		_, _ = w.WriteString(Escape(code))
	}
	_, _ = w.WriteString(codeClose)
}

func (r *nodeRenderer) renderFencedCode(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	n := node.(*ast.FencedCodeBlock)
	r.writeCode(w, string(n.Language(source)), codeText(source, n))
	return ast.WalkSkipChildren, nil
}

func (r *nodeRenderer) renderIndentedCode(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	r.writeCode(w, "", codeText(source, node))
	return ast.WalkSkipChildren, nil
}

// safeHref returns the href for a link destination, or false when the link must
// not be live. Only http, https and mailto leave the message; "#x" stays inside
// it and points at the heading whose id is "h-x". This repeats the sanitiser's
// rule so a link it would strip is never written as one.
func safeHref(dest []byte) (string, bool) {
	d := strings.TrimSpace(string(dest))
	for i := 0; i < len(d); i++ {
		if d[i] < 0x20 || d[i] == 0x7f {
			return "", false
		}
	}
	if strings.HasPrefix(d, "#") {
		if len(d) == 1 {
			return "", false
		}
		return "#h-" + d[1:], true
	}
	lower := strings.ToLower(d[:min(len(d), 8)])
	if strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") || strings.HasPrefix(lower, "mailto:") {
		return d, true
	}
	return "", false
}

func writeHref(w util.BufWriter, href string) {
	_, _ = w.Write(util.EscapeHTML(util.URLEscape([]byte(href), true)))
}

func (r *nodeRenderer) renderLink(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Link)
	href, ok := safeHref(n.Destination)
	if !ok {
		// The text stays; only the link goes.
		return ast.WalkContinue, nil
	}
	if !entering {
		_, _ = w.WriteString("</a>")
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString(`<a href="`)
	writeHref(w, href)
	_ = w.WriteByte('"')
	if n.Title != nil {
		_, _ = w.WriteString(` title="`)
		_, _ = w.WriteString(Escape(string(n.Title)))
		_ = w.WriteByte('"')
	}
	_ = w.WriteByte('>')
	return ast.WalkContinue, nil
}

func (r *nodeRenderer) renderAutoLink(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.AutoLink)
	url := n.URL(source)
	if n.AutoLinkType == ast.AutoLinkEmail && !bytes.HasPrefix(bytes.ToLower(url), []byte("mailto:")) {
		url = append([]byte("mailto:"), url...)
	}
	label := Escape(string(n.Label(source)))
	href, ok := safeHref(url)
	if !ok || strings.HasPrefix(href, "#") {
		_, _ = w.WriteString(label)
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString(`<a href="`)
	writeHref(w, href)
	_, _ = w.WriteString(`">`)
	_, _ = w.WriteString(label)
	_, _ = w.WriteString(`</a>`)
	return ast.WalkContinue, nil
}

// rasterDataURI reports whether an image source is an inline raster image: those
// carry their bytes and load nothing. SVG is excluded (it can carry script).
func rasterDataURI(src string) bool {
	s := strings.ToLower(strings.TrimSpace(src))
	for _, t := range []string{"png", "jpeg", "gif", "webp"} {
		if strings.HasPrefix(s, "data:image/"+t+";base64,") {
			return isBase64(s[len("data:image/;base64,")+len(t):])
		}
	}
	return false
}

func isBase64(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=') {
			return false
		}
	}
	return true
}

// imageHTML is what an image becomes: inline raster data stays an <img>; a remote
// image is never loaded (it could report that the message was read, and what it
// said) and becomes a link to it; anything else is its text.
func imageHTML(src, alt, title string) string {
	if rasterDataURI(src) {
		s := `<img src="` + Escape(strings.TrimSpace(src)) + `" alt="` + Escape(alt) + `"`
		if title != "" {
			s += ` title="` + Escape(title) + `"`
		}
		return s + ">"
	}
	label := "image: " + alt + " (not loaded)"
	if alt == "" {
		label = "image (not loaded)"
	}
	href, ok := safeHref([]byte(src))
	if !ok || !strings.HasPrefix(strings.ToLower(href), "http") {
		return Escape(label)
	}
	var b bytes.Buffer
	b.WriteString(`<a href="`)
	b.Write(util.EscapeHTML(util.URLEscape([]byte(href), true)))
	b.WriteString(`">`)
	b.WriteString(Escape(label))
	b.WriteString(`</a>`)
	return b.String()
}

func (r *nodeRenderer) renderImage(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	n := node.(*ast.Image)
	var alt bytes.Buffer
	plainText(&alt, source, n)
	_, _ = w.WriteString(imageHTML(string(n.Destination), alt.String(), string(n.Title)))
	return ast.WalkSkipChildren, nil
}

// plainText collects the text of a node's descendants, as alt text.
func plainText(b *bytes.Buffer, source []byte, n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch t := c.(type) {
		case *ast.Text:
			b.Write(t.Segment.Value(source))
			if t.SoftLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(t.Value)
		case *mathInline:
			b.Write(t.tex)
		default:
			plainText(b, source, c)
		}
	}
}

// renderTaskCheckBox writes ☑/☐ as text: an <input>, even disabled, is a form
// control the sanitiser would have to let through for every message.
func (r *nodeRenderer) renderTaskCheckBox(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	if node.(*extast.TaskCheckBox).IsChecked {
		_, _ = w.WriteString(`<span class="task-box">☑</span> `)
	} else {
		_, _ = w.WriteString(`<span class="task-box">☐</span> `)
	}
	return ast.WalkContinue, nil
}

// taskListClasses marks lists and items that hold task boxes, so the frontend can
// drop their bullets.
type taskListClasses struct{}

func (taskListClasses) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering || n.Kind() != extast.KindTaskCheckBox {
			return ast.WalkContinue, nil
		}
		item := n.Parent()
		if item != nil {
			item = item.Parent()
		}
		if item == nil || item.Kind() != ast.KindListItem {
			return ast.WalkContinue, nil
		}
		item.SetAttributeString("class", []byte("task-list-item"))
		if list := item.Parent(); list != nil && list.Kind() == ast.KindList {
			list.SetAttributeString("class", []byte("task-list"))
		}
		return ast.WalkContinue, nil
	})
}

// headingIDs gives headings the id "h-" + a GitHub-style slug. The prefix keeps
// model output from naming an element after a global the frontend reads
// (window.go, window.location…): no identifier contains "-". Ids are not made
// unique, so a heading renders the same alone as within its message.
type headingIDs struct{}

func (headingIDs) Generate(value []byte, kind ast.NodeKind) []byte {
	out := []byte("h-")
	for _, r := range strings.ToLower(string(value)) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			out = utf8.AppendRune(out, r)
		case r == ' ' || r == '\t':
			out = append(out, '-')
		}
		if len(out) > 80 {
			break
		}
	}
	if len(out) == 2 {
		out = append(out, "section"...)
	}
	return out
}

func (headingIDs) Put(value []byte) {}
