package frontend

import (
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var stylesheetLink = regexp.MustCompile(`<link rel="stylesheet" href="([^"]+)">`)

// stylesheets lists the stylesheets page links, in order, as absolute
// paths.
func stylesheets(t *testing.T, page string) []string {
	t.Helper()
	b, err := fs.ReadFile(FS(), page)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range stylesheetLink.FindAllStringSubmatch(string(b), -1) {
		out = append(out, "/"+strings.TrimPrefix(m[1], "/"))
	}
	if len(out) == 0 {
		t.Fatalf("%s links no stylesheet", page)
	}
	return out
}

// TestStylesheetsAreLinkedAndCached: the CSS is one file per area, and a
// file that index.html does not link styles nothing, while one missing
// from sw.js's shell leaves the app unstyled offline. Every css/*.css is
// linked by index.html, tokens.css first; every stylesheet a page links
// exists (css/highlight.css is made by the server) and is in sw.js's
// shell list, offline.html's included; none is pulled in by @import,
// which the browser would fetch only after the file importing it.
func TestStylesheetsAreLinkedAndCached(t *testing.T) {
	index := stylesheets(t, "index.html")
	if index[0] != "/css/tokens.css" {
		t.Errorf("index.html links %s first; tokens.css must come first", index[0])
	}
	files, err := fs.Glob(FS(), "css/*.css")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found only %d stylesheets in css/", len(files))
	}
	for _, f := range files {
		if !slices.Contains(index, "/"+f) {
			t.Errorf("index.html does not link %s", f)
		}
		b, err := fs.ReadFile(FS(), f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "@import") {
			t.Errorf("%s uses @import; link the file from index.html instead", f)
		}
	}

	shell := swShell(t)
	for _, page := range []string{"index.html", "404.html", "offline.html"} {
		for _, href := range stylesheets(t, page) {
			if _, err := fs.Stat(FS(), strings.TrimPrefix(href, "/")); err != nil && href != "/css/highlight.css" {
				t.Errorf("%s links %s, which does not exist", page, href)
			}
			if !shell[href] {
				t.Errorf("%s links %s, which sw.js does not cache", page, href)
			}
		}
	}
}
