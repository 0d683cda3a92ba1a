// Package follow is the follower protocol of a live stream (a reply being
// written today, a terminal later), apart from its transport and its
// content: a Feed numbers the frames it publishes, coalesces changes into
// at most one frame per interval (the first at once, so the first token
// shows without waiting), answers a snapshot carrying the seq it covers,
// and always ends with a final frame.
//
// A follower applies frames in seq order, each exactly one after the last.
// When it sees a gap (a frame dropped by a slow transport, a follower that
// attached late) it asks for a snapshot (Live) and applies the frames
// after the snapshot's seq on top of it; a frame at or below that seq is
// already in the snapshot.
//
// The content is the owner's: a Feed is built with the owner's lock, which
// guards both the content and the Feed's counter, so a snapshot, a frame
// and the final frame each see one consistent state, and a frame can never
// overtake the final one.
package follow

import (
	"sync"
	"time"
)

// Source is the content a Feed follows. Its methods are called with the
// Feed's lock held, and build frames of the owner's payload type F.
type Source[F any] interface {
	// Next returns the frame of everything that changed since the last
	// one, numbered seq, and marks it sent; false when nothing changed
	// (then seq is not used).
	Next(seq int64) (F, bool)
	// Snapshot returns all the followers have been sent up to frame seq,
	// for one attaching now; what is not yet framed arrives with the next
	// frame, on top of it.
	Snapshot(seq int64) F
}

// Feed numbers, coalesces and publishes the frames of one stream.
type Feed[F any] struct {
	mu      sync.Locker
	src     Source[F]
	publish func(F)
	every   time.Duration
	kick    chan struct{}
	done    chan struct{}

	// Guarded by mu.
	seq      int64
	finished bool
	final    F
}

// New returns a feed of src guarded by mu (the lock the owner holds while
// it changes the content), publishing at most one frame per every (the
// first at once). publish is called with mu held, so it must not block or
// take mu: a bus that queues, or drops a slow follower.
func New[F any](mu sync.Locker, every time.Duration, src Source[F], publish func(F)) *Feed[F] {
	return &Feed[F]{mu: mu, src: src, publish: publish, every: every,
		kick: make(chan struct{}, 1), done: make(chan struct{})}
}

// Wake tells the feed that the content changed. It never blocks: wakes
// while a frame is pending are one frame.
func (f *Feed[F]) Wake() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// Run publishes coalesced frames until Finish: the first at once after a
// Wake, later ones at most every interval. It returns once the feed has
// finished. A panic in the source or in publish leaves the lock free and
// ends Run (the caller recovers it); followers then get the final frame
// only.
func (f *Feed[F]) Run() {
	var last time.Time
	for {
		select {
		case <-f.kick:
		case <-f.done:
			return
		}
		if wait := f.every - time.Since(last); !last.IsZero() && wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-f.done:
				t.Stop()
				return
			}
		}
		last = time.Now()
		if !f.send() {
			return
		}
	}
}

// send publishes the next frame, if anything changed, and reports false
// once the feed has finished. The lock is released by a defer: a panic in
// the source or publish must not leave it held, or the owner would wait
// forever.
func (f *Feed[F]) send() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.finished {
		return false
	}
	if fr, ok := f.src.Next(f.seq + 1); ok {
		f.seq++
		f.publish(fr)
	}
	return true
}

// Live returns a snapshot for a follower attaching now: the frames it
// needs next are numbered after the snapshot's seq. Once the feed has
// finished it is the final state (Finish's kept frame).
func (f *Feed[F]) Live() F {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.finished {
		return f.final
	}
	return f.src.Snapshot(f.seq)
}

// Finish publishes the final frame, numbered one after the last frame, and
// ends the feed: Run returns, Wake publishes nothing more, and Live
// answers kept from now on. build makes both from the content (with the
// lock held): sent is what followers get (the changes since the last
// frame), kept is the whole final state for one attaching later. Only the
// first Finish counts; it reports whether this one did.
func (f *Feed[F]) Finish(build func(seq int64) (sent, kept F)) bool {
	f.mu.Lock()
	if f.finished {
		f.mu.Unlock()
		return false
	}
	// finished is set before building, so a panic in build still ends
	// the feed rather than leaving it half open.
	f.finished = true
	defer close(f.done)
	defer f.mu.Unlock()
	f.seq++
	sent, kept := build(f.seq)
	f.final = kept
	f.publish(sent)
	return true
}

// Finished reports whether Finish has run. The caller holds the feed's
// lock (the owner checks it beside its own state).
func (f *Feed[F]) Finished() bool { return f.finished }

// Seq is the number of the last frame published. The caller holds the
// feed's lock.
func (f *Feed[F]) Seq() int64 { return f.seq }

// Done is closed once Finish has published the final frame.
func (f *Feed[F]) Done() <-chan struct{} { return f.done }

// Step is what a follower does with a frame (Cursor.Take).
type Step int

// The steps: apply the frame; drop it (already in what the follower has);
// or, for a gap, change nothing and resync from a snapshot (Live).
const (
	Apply Step = iota
	Duplicate
	Gap
)

// Cursor is a follower's place in a feed, the rule frames.js follows in
// the page: a follower that knows nothing takes the first frame only when
// it started the stream itself (Fresh), else it needs a snapshot.
type Cursor struct {
	// Fresh: the follower started the stream, so frame 1 needs no
	// snapshot.
	Fresh bool
	seq   int64
	known bool
}

// Snapshot places the cursor at a snapshot's seq.
func (c *Cursor) Snapshot(seq int64) { c.seq, c.known, c.Fresh = seq, true, false }

// Take says what to do with frame seq and, for Apply, moves past it.
func (c *Cursor) Take(seq int64) Step {
	switch {
	case !c.known && !(c.Fresh && seq <= 1):
		return Gap
	case c.known && seq <= c.seq:
		return Duplicate
	case c.known && seq != c.seq+1:
		return Gap
	}
	c.seq, c.known, c.Fresh = seq, true, false
	return Apply
}

// Seq is the last frame applied (or the snapshot's), 0 when unknown.
func (c *Cursor) Seq() int64 { return c.seq }
