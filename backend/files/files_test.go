package files

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

func newService(t *testing.T, lim Limits) (*Service, *store.DB, ids.UserID) {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(dir, "lembas.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Sync(ctx, store.Current, dir); err != nil {
		t.Fatal(err)
	}
	u, err := db.EnsureOwner(ctx, "sam", "Sam")
	if err != nil {
		t.Fatal(err)
	}
	return New(db, dir, slog.New(slog.DiscardHandler), lim), db, ids.UserID(u.ID)
}

// The pending-upload limit is checked before the (slow) processing, but the
// row is inserted after it: uploads sent at the same moment must not all
// pass the check and together hold more than the limit.
func TestConcurrentUploadsKeepThePendingLimit(t *testing.T) {
	const limit, tries = 2, 8
	svc, db, user := newService(t, Limits{MaxPending: limit})
	var wg sync.WaitGroup
	errs := make([]error, tries)
	start := make(chan struct{})
	for i := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = svc.Upload(context.Background(), user, fmt.Sprintf("note%d.txt", i),
				strings.NewReader(strings.Repeat("a few words of a note\n", 20000)))
		}()
	}
	close(start)
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case apperr.KindOf(err) != apperr.Conflict:
			t.Errorf("upload: %v, want a conflict", err)
		}
	}
	n, err := db.CountUnbound(context.Background(), user)
	if err != nil {
		t.Fatal(err)
	}
	if ok > limit || n > limit {
		t.Errorf("%d uploads accepted, %d pending; the limit is %d", ok, n, limit)
	}
	entries, _ := os.ReadDir(svc.Dir())
	if len(entries) != n {
		t.Errorf("%d files on disk for %d pending uploads (a refused upload left its file)", len(entries), n)
	}
}

// gatedReader is a text upload whose first read waits for a release, so
// the test can see how many uploads are being processed at once.
type gatedReader struct {
	started chan<- *gatedReader
	release chan struct{}
	active  *atomic.Int32
	peak    *atomic.Int32
	begun   bool
	done    bool
}

func (g *gatedReader) Read(p []byte) (int, error) {
	if g.done {
		return 0, io.EOF
	}
	if !g.begun {
		g.begun = true
		n := g.active.Add(1)
		for {
			if old := g.peak.Load(); n <= old || g.peak.CompareAndSwap(old, n) {
				break
			}
		}
		g.started <- g
		<-g.release
		g.active.Add(-1)
	}
	g.done = true
	return copy(p, "plain words for a text file\n"), nil
}

func TestUploadsAreProcessedAFewAtATime(t *testing.T) {
	s, _, user := newService(t, Limits{MaxPending: 40})
	const n = 6
	started := make(chan *gatedReader, n)
	var active, peak atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		g := &gatedReader{started: started, release: make(chan struct{}), active: &active, peak: &peak}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Upload(context.Background(), user, fmt.Sprintf("note%d.txt", i), g); err != nil {
				t.Errorf("upload %d: %v", i, err)
			}
		}()
	}
	// Hold the first uploads in their reads and give the others a moment
	// to start too: with the bound, none can. (A slow machine can only
	// make a missing bound pass, never a present one fail.)
	var held []*gatedReader
	for len(held) < MaxProcessing {
		held = append(held, <-started)
	}
	select {
	case g := <-started:
		held = append(held, g)
	case <-time.After(300 * time.Millisecond):
	}
	for _, g := range held {
		close(g.release)
	}
	for range n - len(held) {
		g := <-started
		close(g.release)
	}
	wg.Wait()
	if p := peak.Load(); p > MaxProcessing {
		t.Errorf("%d uploads were processed at once, want at most %d", p, MaxProcessing)
	}
}
