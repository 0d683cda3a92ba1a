package agent

import (
	"context"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/sshx"
	"github.com/llembas/lembas/backend/store"
)

// The project listing: a walk of the project directory over SFTP, kept
// in memory per profile and directory, rendered into the harness within a
// budget. A reply reads only the cache (Reply must never wait on a
// machine); a walk runs in the background when the cache has nothing or
// is old.

// IndexOptions bound a walk and its cache; zero values are the defaults.
type IndexOptions struct {
	// MaxEntries stops a walk after this many entries (default 5000).
	MaxEntries int
	// MaxDepth: directories deeper than this are not read (default 8).
	MaxDepth int
	// Timeout bounds one walk (default 20 s).
	Timeout time.Duration
	// Fresh is how long a listing is used without walking again (default
	// 2 minutes); Keep is how long an old one is still used while a new
	// walk runs (default 1 hour).
	Fresh time.Duration
	Keep  time.Duration
}

// heavy are directories whose contents are never worth a listing's room
// (and whose walk would eat its caps): they are listed collapsed, unread.
var heavy = map[string]bool{
	".git": true, ".hg": true, ".svn": true, "node_modules": true, "__pycache__": true,
	".venv": true, "venv": true, ".tox": true, ".mypy_cache": true, ".pytest_cache": true,
	".ruff_cache": true, ".cache": true, ".next": true, ".gradle": true, ".terraform": true,
	"target": true, ".idea": true, ".vscode": true,
}

// node is one entry of a listed tree.
type node struct {
	name     string
	dir      bool
	children []*node // directories first, then by name
	// unread: a directory whose contents were not read (a heavy one, one
	// past the depth cap, or one the walk did not reach or could not read).
	unread bool
	parent *node
	depth  int
}

// tree is a walked project directory.
type tree struct {
	root *node
	// partial: the walk stopped at a cap before reading everything.
	partial bool
}

// lister is what a walk reads a directory with (*sftp.Client; a map in
// tests).
type lister interface {
	ReadDir(p string) ([]os.FileInfo, error)
}

// bounded reads a directory of a walk: at most max entries, whatever the
// server sends (a walk stops at max entries in all).
type bounded struct {
	ctx context.Context
	fs  *sshx.SFTP
	max int
}

func (b bounded) ReadDir(p string) ([]os.FileInfo, error) {
	infos, _, err := b.fs.ReadDirMax(b.ctx, p, b.max)
	return infos, err
}

// walk reads dir breadth-first within opt's caps.
func walk(ctx context.Context, fs lister, dir string, opt IndexOptions) *tree {
	t := &tree{root: &node{name: dir, dir: true}}
	queue := []*node{t.root}
	paths := map[*node]string{t.root: dir}
	entries := 0
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if ctx.Err() != nil || entries >= opt.MaxEntries {
			n.unread, t.partial = true, true
			for _, q := range queue {
				q.unread = true
			}
			break
		}
		infos, err := fs.ReadDir(paths[n])
		if err != nil {
			n.unread = true
			continue
		}
		for _, fi := range infos {
			if entries >= opt.MaxEntries {
				t.partial = true
				break
			}
			entries++
			c := &node{name: fi.Name(), dir: fi.IsDir(), parent: n, depth: n.depth + 1}
			n.children = append(n.children, c)
			if !c.dir {
				continue
			}
			if heavy[c.name] || c.depth >= opt.MaxDepth {
				c.unread = true
				continue
			}
			paths[c] = path.Join(paths[n], c.name)
			queue = append(queue, c)
		}
		sortChildren(n)
	}
	return t
}

func sortChildren(n *node) {
	slices.SortFunc(n.children, func(a, b *node) int {
		if a.dir != b.dir {
			if a.dir {
				return -1
			}
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
}

// files counts the files under n (and whether some were not read).
func (n *node) files() (count int, unread bool) {
	for _, c := range n.children {
		if c.dir {
			k, u := c.files()
			count += k
			unread = unread || u
		} else {
			count++
		}
	}
	return count, unread || n.unread
}

// line is n's line in the listing, collapsed or not (without indent).
func (n *node) line(collapsed bool) string {
	name := shownName(n.name)
	if !n.dir {
		return name
	}
	if n.unread && len(n.children) == 0 {
		return name + "/ (not listed)"
	}
	if !collapsed {
		return name + "/"
	}
	k, unread := n.files()
	more := ""
	if unread {
		more = "+"
	}
	if k == 1 && !unread {
		return name + "/ (1 file)"
	}
	return fmt.Sprintf("%s/ (%d%s files)", name, k, more)
}

// indent is the indentation of a child at depth d.
func indent(d int) string { return strings.Repeat("  ", d-1) }

// render is the listing within budget bytes: one line per entry, indented
// by depth. What does not fit is collapsed to "dir/ (N files)", the
// deepest directories first and, at one depth, the largest first: by
// saving alone it would take src/ before src/web/static/vendor/, because
// src/ contains it, and lose every name worth having. If the top level
// alone does not fit, its tail is cut and counted.
func (t *tree) render(budget int) string {
	root := t.root
	collapsed := map[*node]bool{}
	// size[n] is the bytes of n's line and, unless collapsed, its
	// subtree's lines, as now rendered. Collapsing a directory changes
	// its size and its ancestors' by the same amount: the saving is
	// always measured on what is rendered now, so collapsing a parent
	// after its child counts the child's saving once, not twice.
	size := map[*node]int{}
	var measure func(n *node) int
	measure = func(n *node) int {
		s := 0
		if n != root {
			s = len(indent(n.depth)) + len(n.line(false)) + 1
		}
		for _, c := range n.children {
			s += measure(c)
		}
		size[n] = s
		return s
	}
	total := measure(root)
	var levels [][]*node
	var collect func(n *node)
	collect = func(n *node) {
		for _, c := range n.children {
			if c.dir && len(c.children) > 0 {
				for len(levels) <= c.depth {
					levels = append(levels, nil)
				}
				levels[c.depth] = append(levels[c.depth], c)
				collect(c)
			}
		}
	}
	collect(root)
	for d := len(levels) - 1; d >= 1 && total > budget; d-- {
		level := slices.Clone(levels[d])
		slices.SortStableFunc(level, func(a, b *node) int { return size[b] - size[a] })
		for _, n := range level {
			if total <= budget {
				break
			}
			after := len(indent(n.depth)) + len(n.line(true)) + 1
			saving := size[n] - after
			if saving <= 0 {
				continue
			}
			collapsed[n] = true
			for a := n; a != nil; a = a.parent {
				size[a] -= saving
			}
			total -= saving
		}
	}
	var b strings.Builder
	var write func(n *node) bool
	cut := 0
	write = func(n *node) bool {
		for i, c := range n.children {
			l := indent(c.depth) + c.line(collapsed[c]) + "\n"
			reserve := 40 // room for the line that counts what was cut
			if i == len(n.children)-1 {
				reserve = 0
			}
			if c.depth == 1 && total > budget && b.Len()+size[c] > budget-reserve {
				cut = len(n.children) - i
				return false
			}
			b.WriteString(l)
			if c.dir && !collapsed[c] {
				write(c)
			}
		}
		return true
	}
	write(root)
	if cut > 0 {
		fmt.Fprintf(&b, "… and %d more entries not shown\n", cut)
	}
	if t.partial {
		b.WriteString("(the listing stopped early: the directory holds more than it shows)\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// indexKey names a cached listing: a profile's directory on its current
// host (a moved profile's old listing is not its new host's).
type indexKey struct {
	profile ids.ProfileID
	addr    string
	dir     string
}

func keyOf(p store.SSHProfile, dir string) indexKey {
	return indexKey{p.ID, fmt.Sprintf("%s@%s:%d", p.Username, p.Host, p.Port), dir}
}

type indexEntry struct {
	tree    *tree
	at      time.Time
	walking bool
}

// indexCache holds walked listings.
type indexCache struct {
	opt     IndexOptions
	mu      sync.Mutex
	entries map[indexKey]*indexEntry
}

func newIndexCache(opt IndexOptions) *indexCache {
	if opt.MaxEntries <= 0 {
		opt.MaxEntries = 5000
	}
	if opt.MaxDepth <= 0 {
		opt.MaxDepth = 8
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 20 * time.Second
	}
	if opt.Fresh <= 0 {
		opt.Fresh = 2 * time.Minute
	}
	if opt.Keep <= 0 {
		opt.Keep = time.Hour
	}
	return &indexCache{opt: opt, entries: map[indexKey]*indexEntry{}}
}

// get returns the cached listing of p's dir, unless it is too old to use.
func (c *indexCache) get(p store.SSHProfile, dir string) (*tree, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[keyOf(p, dir)]
	if !ok || e.tree == nil || time.Since(e.at) > c.opt.Keep {
		return nil, false
	}
	return e.tree, true
}

// stale reports whether p's dir wants a walk: none cached, or an old one,
// and none running.
func (c *indexCache) stale(p store.SSHProfile, dir string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[keyOf(p, dir)]
	return !ok || !e.walking && (e.tree == nil || time.Since(e.at) > c.opt.Fresh)
}

// start marks a walk of k as running; false when one already is.
func (c *indexCache) start(k indexKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok {
		e = &indexEntry{}
		c.entries[k] = e
	}
	if e.walking {
		return false
	}
	e.walking = true
	return true
}

// maxCached bounds the listings kept: each is up to MaxEntries nodes,
// and every agent chat's directory makes one.
const maxCached = 256

// done stores a walk's result (nil: the walk failed; the old one stays),
// and drops listings too old to use and, past maxCached, the oldest.
func (c *indexCache) done(k indexKey, t *tree) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok {
		return // forgotten meanwhile: the profile changed
	}
	e.walking = false
	if t != nil {
		e.tree, e.at = t, time.Now()
	}
	if e.tree == nil {
		delete(c.entries, k)
	}
	for len(c.entries) > maxCached || c.oldest(c.opt.Keep) {
		var old indexKey
		var at time.Time
		found := false
		for k, e := range c.entries {
			if !e.walking && (!found || e.at.Before(at)) {
				old, at, found = k, e.at, true
			}
		}
		if !found {
			break
		}
		delete(c.entries, old)
	}
}

// oldest reports whether a listing not being walked is older than keep.
func (c *indexCache) oldest(keep time.Duration) bool {
	for _, e := range c.entries {
		if !e.walking && time.Since(e.at) > keep {
			return true
		}
	}
	return false
}

// touch marks p's dir as changed (a file written, a command run): the
// next reply walks it again.
func (c *indexCache) touch(p store.SSHProfile, dir string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[keyOf(p, dir)]; ok {
		e.at = e.at.Add(-c.opt.Fresh)
	}
}

// forget drops every listing of profile id.
func (c *indexCache) forget(id ids.ProfileID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.entries {
		if k.profile == id {
			delete(c.entries, k)
		}
	}
}

// warm walks p's dir in the background, once at a time per directory.
func (s *Service) warm(p store.SSHProfile, dir string) {
	k := keyOf(p, dir)
	if !s.index.start(k) {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		var t *tree
		defer func() { s.index.done(k, t) }()
		ctx, cancel := context.WithTimeout(s.bg, s.index.opt.Timeout)
		defer cancel()
		cl, err := s.connect(ctx, p)
		if err != nil {
			s.log.Info("agent: project listing skipped", "profile", p.ID, "err", err)
			return
		}
		defer cl.Close()
		// A walk past its time closes the connection, which ends a read
		// that hangs (and an SFTP start the host never answers).
		stop := context.AfterFunc(ctx, func() { cl.Close() })
		defer stop()
		fs, err := cl.SFTP()
		if err != nil {
			s.log.Info("agent: project listing skipped: no SFTP", "profile", p.ID, "err", err)
			return
		}
		defer fs.Close()
		t = walk(ctx, bounded{ctx, fs, s.index.opt.MaxEntries}, dir, s.index.opt)
		if len(t.root.children) == 0 && t.root.unread {
			t = nil // the directory itself could not be read
		}
	}()
}
