package files

import (
	"context"
	"sync"

	"github.com/llembas/lembas/backend/ids"
)

// budget shares a number of bytes (the memory uploads may take while they
// are decoded) fairly between users. A waiting upload is admitted when its
// cost fits what is free; among those waiting, the user with the fewest
// uploads being processed goes first, then the oldest. So a member sending
// six large images holds no one else back by more than one image: another
// member's upload is next whenever something finishes. And no user holds
// more than perUser bytes at once (unless one upload alone costs more), so
// part of the budget is always left for the others: a member's image never
// waits behind another member's work alone.
type budget struct {
	mu      sync.Mutex
	total   int64
	perUser int64
	free    int64
	running map[ids.UserID]int
	held    map[ids.UserID]int64
	waiting []*waiter // in arrival order
}

type waiter struct {
	user    ids.UserID
	cost    int64
	ready   chan struct{} // closed when admitted
	granted bool
}

// newBudget returns a budget of total bytes of which one user holds at
// most perUser at once.
func newBudget(total, perUser int64) *budget {
	return &budget{total: total, perUser: perUser, free: total,
		running: map[ids.UserID]int{}, held: map[ids.UserID]int64{}}
}

// acquire waits until cost bytes are admitted for user, or ctx ends. A
// cost above the total is taken as the total (it then runs alone). The
// returned function gives the bytes back.
func (b *budget) acquire(ctx context.Context, user ids.UserID, cost int64) (func(), error) {
	cost = min(max(cost, 0), b.total)
	w := &waiter{user: user, cost: cost, ready: make(chan struct{})}
	b.mu.Lock()
	b.waiting = append(b.waiting, w)
	b.admit()
	b.mu.Unlock()
	release := func() {
		b.mu.Lock()
		b.free += w.cost
		b.held[w.user] -= w.cost
		if b.running[w.user]--; b.running[w.user] <= 0 {
			delete(b.running, w.user)
			delete(b.held, w.user)
		}
		b.admit()
		b.mu.Unlock()
	}
	select {
	case <-w.ready:
		return release, nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	if w.granted { // admitted as ctx ended
		b.mu.Unlock()
		release()
		return nil, ctx.Err()
	}
	for i, x := range b.waiting {
		if x == w {
			b.waiting = append(b.waiting[:i], b.waiting[i+1:]...)
			break
		}
	}
	b.admit() // the ones it held back may fit now
	b.mu.Unlock()
	return nil, ctx.Err()
}

// admit lets in waiters in fair order while the next one fits. A waiter
// whose user holds their share already is passed over: only that user's
// own release lets it in. b.mu held.
func (b *budget) admit() {
	for {
		next := -1
		for i, w := range b.waiting {
			if b.running[w.user] > 0 && b.held[w.user]+w.cost > b.perUser {
				continue
			}
			if next < 0 || b.running[w.user] < b.running[b.waiting[next].user] {
				next = i
			}
		}
		if next < 0 {
			return
		}
		w := b.waiting[next]
		if w.cost > b.free {
			return
		}
		b.waiting = append(b.waiting[:next], b.waiting[next+1:]...)
		b.free -= w.cost
		b.held[w.user] += w.cost
		b.running[w.user]++
		w.granted = true
		close(w.ready)
	}
}

// state reports the bytes free and how many uploads wait (for tests).
func (b *budget) state() (free int64, waiting int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.free, len(b.waiting)
}
