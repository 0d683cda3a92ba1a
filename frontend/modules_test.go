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
	for _, p := range []string{"vendor/htm-preact/standalone.module.js", "js/core/transport.js", "js/chat/chat.js", "js/terminal/panel.js"} {
		if !slices.Contains(graph, p) {
			t.Errorf("%s missing from the graph", p)
		}
	}
	// The terminal (xterm.js, 345 kB) loads only when an agent chat's
	// terminal panel opens.
	for _, p := range []string{"js/dev/selftest.js", "js/dev/benchdrive.js", "vendor/katex/katex.mjs", "js/core/events-worker.js",
		"js/terminal/term.js", "js/terminal/styles.js", "vendor/xterm/xterm.mjs", "vendor/xterm/addon-fit.mjs"} {
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

// TestNoImportCycles: every module, the lazily loaded ones too, must be
// reachable without coming back to itself. A cycle works in a browser only
// as long as neither side uses the other's exports while it is first
// evaluated, and it ties two areas together so that neither can move or
// load alone (account.js and login.js did).
func TestNoImportCycles(t *testing.T) {
	files, err := fs.Glob(FS(), "js/*.js")
	if err != nil {
		t.Fatal(err)
	}
	areas, err := fs.Glob(FS(), "js/*/*.js")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, areas...)
	if len(files) < 10 {
		t.Fatalf("found only %d modules", len(files))
	}
	if cycle := findCycle(FS(), files); cycle != nil {
		t.Errorf("import cycle: %s", strings.Join(cycle, " → "))
	}
}

func TestFindCycle(t *testing.T) {
	fsys := fstest.MapFS{
		"js/a.js": {Data: []byte(`import { b } from './b.js';`)},
		"js/b.js": {Data: []byte(`import { c } from './c.js';`)},
		"js/c.js": {Data: []byte(`import { a } from './a.js';`)},
		"js/d.js": {Data: []byte(`import { b } from './b.js';`)},
		"js/e.js": {Data: []byte(`import { f } from './f.js';`)},
		"js/f.js": {Data: []byte(`export const f = 1;`)},
	}
	got := findCycle(fsys, []string{"js/d.js"})
	want := []string{"js/b.js", "js/c.js", "js/a.js", "js/b.js"}
	if !slices.Equal(got, want) {
		t.Errorf("cycle: got %q, want %q", got, want)
	}
	if got := findCycle(fsys, []string{"js/e.js", "js/f.js"}); got != nil {
		t.Errorf("no cycle expected, got %q", got)
	}
}

// findCycle returns one import cycle among the modules reachable from
// roots (first module repeated at the end), or nil.
func findCycle(fsys fs.FS, roots []string) []string {
	const (
		unseen = iota
		open
		done
	)
	state := map[string]int{}
	var stack []string
	var visit func(p string) []string
	visit = func(p string) []string {
		switch state[p] {
		case open:
			i := slices.Index(stack, p)
			return append(slices.Clone(stack[i:]), p)
		case done:
			return nil
		}
		state[p] = open
		stack = append(stack, p)
		deps, err := imports(fsys, p)
		if err != nil {
			return []string{p, err.Error()}
		}
		for _, d := range deps {
			if c := visit(d); c != nil {
				return c
			}
		}
		stack = stack[:len(stack)-1]
		state[p] = done
		return nil
	}
	for _, r := range roots {
		if c := visit(r); c != nil {
			return c
		}
	}
	return nil
}

// TestImportsAreRelative: the page loads its modules under the frontend's
// version (/v/<version>/js/…, see httpapi), and a relative import stays
// under it; a root path (/js/…) would load a second copy of the module,
// with state of its own, revalidated on every load.
func TestImportsAreRelative(t *testing.T) {
	files, _ := fs.Glob(FS(), "js/*.js")
	areas, _ := fs.Glob(FS(), "js/*/*.js")
	rooted := regexp.MustCompile(`(?m)(?:^[ \t]*(?:import|export)[ \t\n][^;()=]*?\bfrom[ \t]*|^[ \t]*import[ \t]*|import\()['"]/`)
	for _, f := range append(files, areas...) {
		b, err := fs.ReadFile(FS(), f)
		if err != nil {
			t.Fatal(err)
		}
		if m := rooted.Find(b); m != nil {
			t.Errorf("%s: %s…: import by a relative path", f, m)
		}
	}
}
