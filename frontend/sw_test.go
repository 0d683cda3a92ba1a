package frontend

import (
	"io/fs"
	"regexp"
	"testing"
)

// TestServiceWorkerCachesTheWholeModuleGraph: an ES module graph loads all
// or nothing, so one statically imported file missing from the worker's
// shell list makes the app blank offline. Every module main.js reaches by
// static import must be in sw.js's SHELL list.
func TestServiceWorkerCachesTheWholeModuleGraph(t *testing.T) {
	listed := swShell(t)
	graph, err := ModuleGraph(FS(), "js/main.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range graph {
		if !listed["/"+p] {
			t.Errorf("sw.js does not cache /%s, which the app imports", p)
		}
	}
	if len(graph) < 10 {
		t.Fatalf("found only %d modules; the import pattern is broken", len(graph))
	}
}

// swShell is the set of paths in sw.js's SHELL list.
func swShell(t *testing.T) map[string]bool {
	t.Helper()
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
	return listed
}
