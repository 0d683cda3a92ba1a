package files

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/store/storetest"
)

func newService(t testing.TB, lim Limits) (*Service, *store.DB, ids.UserID) {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	db := storetest.Open(t)
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
