package frontend

import (
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func TestModuleGraph(t *testing.T) {
	fsys := fstest.MapFS{
		"js/main.js": {Data: []byte(`// main.js — import nothing from './comment.js' here
import { h, render } from '../vendor/lib.js';
import {
  a,
  b as c,
} from "./multi.js";
import './side.js';
export * from './again.js';
export { x } from './reexport.js';
const later = () => import('./lazy.js');
const s = Array.from(xs);
`)},
		"vendor/lib.js":   {Data: []byte(`export const h = 1, render = 2;`)},
		"js/multi.js":     {Data: []byte(`import { h } from '/vendor/lib.js';` + "\nexport const a = 1, b = 2;")},
		"js/side.js":      {Data: []byte(`import './deep/leaf.js';`)},
		"js/deep/leaf.js": {Data: []byte(`import { a } from '../multi.js';`)},
		"js/again.js":     {Data: []byte(`export const y = 1;`)},
		"js/reexport.js":  {Data: []byte(`export const x = 1;`)},
		"js/lazy.js":      {Data: []byte(`export const z = 1;`)},
	}
	got, err := ModuleGraph(fsys, "js/main.js")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"js/main.js", "vendor/lib.js", "js/multi.js", "js/side.js", "js/again.js", "js/reexport.js", "js/deep/leaf.js"}
	if !slices.Equal(got, want) {
		t.Errorf("graph:\n got %q\nwant %q", got, want)
	}

	for name, src := range map[string]string{
		"missing file": `import { q } from './nowhere.js';`,
		"bare":         `import { q } from 'preact';`,
		"outside":      `import { q } from '../../up.js';`,
	} {
		bad := fstest.MapFS{"js/main.js": {Data: []byte(src)}}
		if _, err := ModuleGraph(bad, "js/main.js"); err == nil || !strings.Contains(err.Error(), "js/main.js") {
			t.Errorf("%s: err = %v, want an error naming the importing file", name, err)
		}
	}
}

// The real app's graph: enough modules that the pattern evidently works,
// the vendored Preact among them, and none of the lazily loaded ones.
func TestAppModuleGraph(t *testing.T) {
	graph, err := ModuleGraph(FS(), "js/main.js")
	if err != nil {
		t.Fatal(err)
	}
	if len(graph) < 30 {
		t.Errorf("only %d modules: %q", len(graph), graph)
	}
	for _, p := range []string{"vendor/htm-preact/standalone.module.js", "js/core/transport.js", "js/chat/chat.js"} {
		if !slices.Contains(graph, p) {
			t.Errorf("%s missing from the graph", p)
		}
	}
	for _, p := range []string{"js/dev/selftest.js", "js/dev/benchdrive.js", "vendor/katex/katex.mjs", "js/core/events-worker.js"} {
		if slices.Contains(graph, p) {
			t.Errorf("%s is loaded lazily, not by static import", p)
		}
	}
	// Every line that starts an import statement was understood: an
	// import the pattern missed would be neither preloaded nor cached by
	// the service worker.
	starts := regexp.MustCompile(`(?m)^[ \t]*import[ \t\n{*'"]`)
	for _, p := range graph {
		b, err := fs.ReadFile(FS(), p)
		if err != nil {
			t.Fatal(err)
		}
		if n, m := len(starts.FindAll(b, -1)), len(staticImport.FindAll(b, -1)); n > m {
			t.Errorf("%s: %d lines start an import, the graph understood %d", p, n, m)
		}
	}
}
