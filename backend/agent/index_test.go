package agent

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"testing"
	"time"
)

// fakeFS is a directory tree in memory: paths of files ("a/b.go") and of
// directories ending in "/".
type fakeFS map[string][]os.FileInfo

type fakeInfo struct {
	name string
	dir  bool
}

func (f fakeInfo) Name() string { return f.name }
func (f fakeInfo) Size() int64  { return 10 }
func (f fakeInfo) Mode() fs.FileMode {
	if f.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (f fakeInfo) ModTime() time.Time { return time.Time{} }
func (f fakeInfo) IsDir() bool        { return f.dir }
func (f fakeInfo) Sys() any           { return nil }

// newFakeFS builds a tree under /p from paths relative to it.
func newFakeFS(paths ...string) fakeFS {
	m := fakeFS{"/p": nil}
	seen := map[string]bool{}
	for _, p := range paths {
		dir := strings.HasSuffix(p, "/")
		p = strings.TrimSuffix(p, "/")
		full := path.Join("/p", p)
		for cur, isDir := full, dir; cur != "/p"; cur, isDir = path.Dir(cur), true {
			if seen[cur] {
				break
			}
			seen[cur] = true
			m[path.Dir(cur)] = append(m[path.Dir(cur)], fakeInfo{path.Base(cur), isDir})
			if isDir {
				if _, ok := m[cur]; !ok {
					m[cur] = nil
				}
			}
		}
	}
	return m
}

func (f fakeFS) ReadDir(p string) ([]os.FileInfo, error) {
	list, ok := f[p]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return list, nil
}

func many(prefix string, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%sfile%03d.js", prefix, i))
	}
	return out
}

var testIndex = IndexOptions{MaxEntries: 5000, MaxDepth: 8, Timeout: time.Minute}

func TestListingWhole(t *testing.T) {
	tr := walk(context.Background(), newFakeFS("README.md", "src/main.go", "src/util/str.go", "empty/", ".git/HEAD", "node_modules/x/index.js"), "/p", testIndex)
	got := tr.render(10000)
	want := strings.Join([]string{
		".git/ (not listed)",
		"empty/",
		"node_modules/ (not listed)",
		"src/",
		"  util/",
		"    str.go",
		"  main.go",
		"README.md",
	}, "\n")
	if got != want {
		t.Errorf("listing:\n%s\nwant:\n%s", got, want)
	}
}

// The deepest folder goes first, even when a shallower one would save
// more: collapsing src/ would lose every name worth having.
func TestListingCollapsesDeepestAndLargestFirst(t *testing.T) {
	paths := []string{"README.md", "go.mod", "src/app.go", "src/web/handler.go", "src/web/static/app.css", "docs/guide.md"}
	paths = append(paths, many("src/web/static/vendor/", 412)...)
	paths = append(paths, many("src/web/static/fonts/", 30)...)
	tr := walk(context.Background(), newFakeFS(paths...), "/p", testIndex)
	full := tr.render(1 << 20)
	got := tr.render(400)
	if len(got) > 400 {
		t.Errorf("listing of %d bytes over a budget of 400:\n%s", len(got), got)
	}
	for _, want := range []string{"README.md", "src/", "  app.go", "  web/", "    handler.go", "vendor/ (412 files)"} {
		if !strings.Contains(got, want) {
			t.Errorf("the listing lost %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "src/ (") || strings.Contains(got, "file000.js") {
		t.Errorf("collapsed the wrong folders:\n%s", got)
	}
	if len(full) < 5000 || !strings.Contains(full, "file411.js") {
		t.Fatalf("the full listing is not the whole tree (%d bytes)", len(full))
	}
}

// Collapsing a parent subsumes a child already collapsed: counting both
// savings would stop the loop early, believing it had made room it had
// not. For every budget the listing must fit whenever its top level can.
func TestListingFitsEveryBudget(t *testing.T) {
	var paths []string
	for _, top := range []string{"a", "b", "c"} {
		paths = append(paths, top+"/x.txt")
		for _, mid := range []string{"m1", "m2"} {
			paths = append(paths, many(top+"/"+mid+"/deep/", 20)...)
			paths = append(paths, many(top+"/"+mid+"/", 5)...)
		}
	}
	paths = append(paths, "top.txt")
	tr := walk(context.Background(), newFakeFS(paths...), "/p", testIndex)
	floor := len(tr.render(0)) // everything collapsed and cut
	for budget := 60; budget <= 4000; budget += 7 {
		got := tr.render(budget)
		if len(got) > budget && len(got) > floor {
			t.Fatalf("budget %d: %d bytes:\n%s", budget, len(got), got)
		}
	}
	// Every top-level folder collapsed: their counts are whole subtrees.
	got := tr.render(60)
	if !strings.Contains(got, "a/ (51 files)") || !strings.Contains(got, "top.txt") {
		t.Errorf("everything collapsed:\n%s", got)
	}
}

func TestListingCaps(t *testing.T) {
	paths := many("big/", 100)
	paths = append(paths, "a/b/c/d/e/f.txt")
	tr := walk(context.Background(), newFakeFS(paths...), "/p", IndexOptions{MaxEntries: 50, MaxDepth: 3, Timeout: time.Minute})
	got := tr.render(100000)
	if !tr.partial || !strings.Contains(got, "stopped early") {
		t.Errorf("a walk past its entry cap is not marked partial:\n%s", got)
	}
	tr = walk(context.Background(), newFakeFS("a/b/c/d/e/f.txt"), "/p", IndexOptions{MaxEntries: 50, MaxDepth: 3})
	if got := tr.render(100000); !strings.Contains(got, "    c/ (not listed)") {
		t.Errorf("a folder past the depth cap:\n%s", got)
	}
	// Collapsed with an unread folder inside: the count says "at least".
	if got := tr.render(14); !strings.Contains(got, "a/ (0+ files)") {
		t.Errorf("collapsed over an unread folder:\n%s", got)
	}
	// The top level alone over the budget: cut and counted.
	tr = walk(context.Background(), newFakeFS(many("", 300)...), "/p", testIndex)
	got = tr.render(500)
	if len(got) > 500 || !strings.Contains(got, "more entries not shown") {
		t.Errorf("a flat directory over its budget (%d bytes):\n%s", len(got), got)
	}
}

// Every agent chat's directory makes a listing: the cache keeps at most
// maxCached, and none too old to use.
func TestIndexCacheIsBounded(t *testing.T) {
	c := newIndexCache(IndexOptions{})
	tr := &tree{root: &node{name: "/p", dir: true}}
	for i := range maxCached + 50 {
		k := indexKey{1, "u@h:22", fmt.Sprintf("/dir%d", i)}
		if !c.start(k) {
			t.Fatal("start")
		}
		c.done(k, tr)
	}
	if n := len(c.entries); n > maxCached {
		t.Errorf("%d listings kept, want at most %d", n, maxCached)
	}
	if _, ok := c.entries[indexKey{1, "u@h:22", fmt.Sprintf("/dir%d", maxCached+49)}]; !ok {
		t.Error("the newest listing was dropped")
	}
	for _, e := range c.entries {
		e.at = e.at.Add(-2 * c.opt.Keep)
	}
	k := indexKey{1, "u@h:22", "/fresh"}
	c.start(k)
	c.done(k, tr)
	if n := len(c.entries); n != 1 {
		t.Errorf("%d listings kept after they all grew old, want the fresh one", n)
	}
}
