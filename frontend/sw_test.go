package frontend

import (
	"io/fs"
	"path"
	"regexp"
	"strings"
	"testing"
)

// TestServiceWorkerCachesTheWholeModuleGraph: an ES module graph loads all
// or nothing, so one statically imported file missing from the worker's
// shell list makes the app blank offline. Every module main.js reaches by
// static import must be in sw.js's SHELL list.
func TestServiceWorkerCachesTheWholeModuleGraph(t *testing.T) {
	sw, err := fs.ReadFile(FS(), "sw.js")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)const SHELL = \[(.*?)\];`).FindSubmatch(sw)
	if m == nil {
		t.Fatal("no SHELL list in sw.js")
	}
	listed := map[string]bool{}
	for _, q := range regexp.MustCompile(`'([^']+)'`).FindAllSubmatch(m[1], -1) {
		listed[string(q[1])] = true
	}
	imp := regexp.MustCompile(`(?m)^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'|^\s*import\s+'([^']+)'`)
	seen := map[string]bool{}
	var walk func(p string)
	walk = func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		if !listed["/"+p] {
			t.Errorf("sw.js does not cache /%s, which the app imports", p)
		}
		b, err := fs.ReadFile(FS(), p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			return
		}
		for _, m := range imp.FindAllStringSubmatch(string(b), -1) {
			spec := m[1] + m[2]
			if !strings.HasPrefix(spec, ".") {
				continue
			}
			walk(path.Clean(path.Join(path.Dir(p), spec)))
		}
	}
	walk("js/main.js")
	if len(seen) < 10 {
		t.Fatalf("found only %d modules; the import pattern is broken", len(seen))
	}
}
