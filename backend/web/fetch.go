package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	readability "codeberg.org/readeck/go-readability/v2"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"

	"github.com/llembas/lembas/backend/tools"
)

// Fetch reads a page through the guard as readable text: HTML through
// readability (the body's plain text when it finds no article), plain
// text as it is; anything else is refused, saying what it is.
func (s *Service) Fetch(ctx context.Context, rawURL string) (tools.Page, error) {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return tools.Page{}, fmt.Errorf("%q is not an http or https address", cleanLine(rawURL, 200))
	}
	c, err := s.config(ctx)
	if err != nil {
		return tools.Page{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, s.opt.Timeout)
	defer cancel()
	page, err := s.fetch(ctx, s.client(c.allow), u)
	if err != nil {
		return tools.Page{}, plain(ctx, err)
	}
	return page, nil
}

func (s *Service) fetch(ctx context.Context, hc *http.Client, u *url.URL) (tools.Page, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return tools.Page{}, err
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1")
	resp, err := hc.Do(req)
	if err != nil {
		return tools.Page{}, err
	}
	defer resp.Body.Close()
	final := resp.Request.URL
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return tools.Page{}, refusal("%s answered %s", final.Redacted(), resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, s.opt.MaxBytes+1))
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return tools.Page{}, err
	}
	truncated := int64(len(body)) > s.opt.MaxBytes
	if truncated {
		body = body[:s.opt.MaxBytes]
	}
	ct := resp.Header.Get("Content-Type")
	if ct == "" {
		ct = http.DetectContentType(body)
	}
	mt, _, _ := mime.ParseMediaType(ct)
	mt = strings.ToLower(mt)
	page := tools.Page{URL: final.String()}
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml":
		page.Title, page.Text = readable(body, ct, final)
	case isText(mt):
		r, err := charset.NewReader(bytes.NewReader(body), ct)
		if err != nil {
			r = bytes.NewReader(body)
		}
		b, _ := io.ReadAll(r)
		page.Text = cleanText(string(b))
	default:
		return tools.Page{}, refusal("%s is %s, which fetch_url cannot read (it reads web pages and plain text)", final.Redacted(), describe(mt))
	}
	page.Title = cleanLine(page.Title, maxTitle)
	if r := []rune(page.Text); len(r) > s.opt.MaxChars {
		page.Text = strings.TrimSpace(string(r[:s.opt.MaxChars]))
		truncated = true
	}
	page.Truncated = truncated
	if page.Text == "" {
		page.Text = "(The page has no readable text.)"
	}
	return page, nil
}

// isText: the types read as they are.
func isText(mt string) bool {
	switch mt {
	case "application/json", "application/xml", "application/rss+xml", "application/atom+xml", "application/x-ndjson":
		return true
	}
	return strings.HasPrefix(mt, "text/")
}

// describe names a content type for the refusal.
func describe(mt string) string {
	switch {
	case mt == "application/pdf":
		return "a PDF"
	case strings.HasPrefix(mt, "image/"):
		return "an image (" + mt + ")"
	case strings.HasPrefix(mt, "audio/"):
		return "audio (" + mt + ")"
	case strings.HasPrefix(mt, "video/"):
		return "a video (" + mt + ")"
	case mt == "application/zip" || mt == "application/gzip" || mt == "application/x-tar" || mt == "application/x-7z-compressed":
		return "an archive (" + mt + ")"
	case mt == "application/octet-stream" || mt == "":
		return "binary data"
	}
	return "of type " + cleanLine(mt, 80)
}

// readable is an HTML page's title and readable text: the article
// readability finds, else the body's text.
func readable(body []byte, contentType string, u *url.URL) (title, text string) {
	r, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		r = bytes.NewReader(body)
	}
	doc, err := html.Parse(r)
	if err != nil {
		return "", ""
	}
	title = docTitle(doc)
	parser := readability.NewParser()
	art, err := parser.ParseDocument(doc, u)
	if err == nil && art.Node != nil {
		var b strings.Builder
		if art.RenderText(&b) == nil {
			text = cleanText(b.String())
		}
		if t := strings.TrimSpace(art.Title()); t != "" {
			title = t
		}
	}
	if text == "" {
		text = cleanText(bodyText(doc))
	}
	return title, text
}

func docTitle(doc *html.Node) string {
	var t string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if t != "" {
			return
		}
		if n.Type == html.ElementNode && n.Data == "title" {
			t = text(n)
			return
		}
		if n.Type == html.ElementNode && n.Data == "body" {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return t
}

// blocks end a line in a page's plain text.
var blocks = map[string]bool{"p": true, "div": true, "br": true, "li": true, "tr": true, "h1": true, "h2": true,
	"h3": true, "h4": true, "h5": true, "h6": true, "pre": true, "blockquote": true, "section": true,
	"article": true, "header": true, "footer": true, "table": true, "ul": true, "ol": true, "dt": true, "dd": true}

// bodyText is the text of a page's body without scripts, styles and
// other things that are not read.
func bodyText(doc *html.Node) string {
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			b.WriteString(n.Data)
			return
		case html.ElementNode:
			switch n.Data {
			case "script", "style", "noscript", "template", "svg", "head", "iframe", "object":
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if n.Type == html.ElementNode && blocks[n.Data] {
			b.WriteByte('\n')
		}
	}
	walk(doc)
	return b.String()
}
