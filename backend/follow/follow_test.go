package follow

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// frame is a test payload: text appended since the last frame (Add), or
// all of it (Full, in snapshots and kept final frames).
type frame struct {
	Seq   int64
	Add   string
	Full  string
	Final bool
}

// doc is a growing text followed by a feed: text[:sent] has been framed.
type doc struct {
	mu    sync.Mutex
	text  string
	sent  int
	panic bool // Next panics
}

func (d *doc) Next(seq int64) (frame, bool) {
	if d.panic {
		panic("injected: rendering failed")
	}
	if d.sent == len(d.text) {
		return frame{}, false
	}
	f := frame{Seq: seq, Add: d.text[d.sent:]}
	d.sent = len(d.text)
	return f, true
}

func (d *doc) Snapshot(seq int64) frame { return frame{Seq: seq, Full: d.text[:d.sent]} }

// final builds the final frame: the rest to followers, the whole to Live.
func (d *doc) final(seq int64) (sent, kept frame) {
	sent = frame{Seq: seq, Add: d.text[d.sent:], Final: true}
	d.sent = len(d.text)
	return sent, frame{Seq: seq, Full: d.text, Final: true}
}

// env is a doc, its feed running, and what the feed published.
type env struct {
	d    *doc
	f    *Feed[frame]
	out  chan frame
	ran  chan any // Run's end: nil, or what it panicked with
	pubs []frame
}

func newEnv(t *testing.T, every time.Duration, run bool) *env {
	t.Helper()
	e := &env{d: &doc{}, out: make(chan frame, 1<<12), ran: make(chan any, 1)}
	// A buffered channel: publish must not block (it runs under the lock).
	e.f = New[frame](&e.d.mu, every, e.d, func(f frame) { e.out <- f })
	if run {
		go func() {
			defer func() { e.ran <- recover() }()
			e.f.Run()
		}()
	}
	t.Cleanup(func() {
		// A test that failed with the lock held must still end.
		if e.d.mu.TryLock() {
			e.d.mu.Unlock()
			e.f.Finish(e.d.final)
		}
	})
	return e
}

// write appends s to the doc and wakes the feed, as a producer does.
func (e *env) write(s string) {
	e.d.mu.Lock()
	e.d.text += s
	e.d.mu.Unlock()
	e.f.Wake()
}

// got returns every frame published so far.
func (e *env) got() []frame {
	for {
		select {
		case f := <-e.out:
			e.pubs = append(e.pubs, f)
		default:
			return e.pubs
		}
	}
}

// waitFrames polls until at least n frames were published.
func (e *env) waitFrames(t *testing.T, n int) []frame {
	t.Helper()
	poll(t, fmt.Sprintf("%d frames", n), func() bool { return len(e.got()) >= n })
	return e.got()
}

// poll waits for cond with a deadline generous enough for a loaded machine.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// ran waits for Run to return and returns what it panicked with.
func (e *env) ranOut(t *testing.T) any {
	t.Helper()
	select {
	case p := <-e.ran:
		return p
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return")
		return nil
	}
}

// Frames are numbered 1, 2, 3… with no gap, the final one after the last,
// and together they carry the whole text once.
func TestSeqContinuity(t *testing.T) {
	e := newEnv(t, 0, true)
	var want strings.Builder
	for i := range 300 {
		s := fmt.Sprintf("%d ", i)
		want.WriteString(s)
		e.write(s)
		if i%50 == 0 {
			time.Sleep(time.Millisecond) // let some frames go out mid-burst
		}
	}
	if !e.f.Finish(e.d.final) {
		t.Fatal("Finish did not count")
	}
	if p := e.ranOut(t); p != nil {
		t.Fatalf("Run panicked: %v", p)
	}
	var text strings.Builder
	fs := e.got()
	for i, f := range fs {
		if f.Seq != int64(i+1) {
			t.Fatalf("frame %d has seq %d", i, f.Seq)
		}
		if f.Final != (i == len(fs)-1) {
			t.Errorf("frame %d final=%v of %d", f.Seq, f.Final, len(fs))
		}
		text.WriteString(f.Add)
	}
	if text.String() != want.String() {
		t.Errorf("frames carry %q, want %q", text.String(), want.String())
	}
}

// A burst is coalesced: the first change goes out at once, the rest waits
// for the interval (an hour here, so it is the final frame that brings it).
func TestCoalescesABurst(t *testing.T) {
	e := newEnv(t, time.Hour, true)
	e.write("first ")
	first := e.waitFrames(t, 1)[0]
	if first.Seq != 1 || first.Add != "first " {
		t.Fatalf("first frame %+v", first)
	}
	var rest strings.Builder
	for i := range 1000 {
		s := fmt.Sprintf("w%d ", i)
		rest.WriteString(s)
		e.write(s)
	}
	e.f.Finish(e.d.final)
	e.ranOut(t)
	fs := e.got()
	if len(fs) != 2 {
		t.Fatalf("%d frames for a burst within one interval, want 2: %+v", len(fs), fs)
	}
	if f := fs[1]; f.Seq != 2 || !f.Final || f.Add != rest.String() {
		t.Errorf("final frame %d final=%v carries %d bytes, want seq 2 with the %d held back", f.Seq, f.Final, len(f.Add), rest.Len())
	}
}

// Nothing changed, nothing sent: a wake without a change spends no seq.
func TestNoChangeNoFrame(t *testing.T) {
	e := newEnv(t, 0, true)
	e.write("a")
	e.waitFrames(t, 1)
	for range 20 {
		e.f.Wake()
	}
	e.write("b")
	fs := e.waitFrames(t, 2)
	if len(fs) != 2 || fs[1].Seq != 2 || fs[1].Add != "b" {
		t.Errorf("frames %+v, want seq 2 with b", fs)
	}
}

// A snapshot covers exactly the frames up to its seq: what is not framed
// yet comes with the next frame, which applies on top of it. A follower
// that misses a frame sees a gap, and catches up from a snapshot.
func TestSnapshotSeqAndLaterFrames(t *testing.T) {
	e := newEnv(t, 0, false)
	// Before any frame: seq 0, nothing framed, even with text pending.
	e.d.mu.Lock()
	e.d.text = "pending "
	e.d.mu.Unlock()
	if s := e.f.Live(); s.Seq != 0 || s.Full != "" {
		t.Errorf("snapshot before any frame %+v", s)
	}
	go func() {
		defer func() { e.ran <- recover() }()
		e.f.Run()
	}()
	e.f.Wake()
	e.waitFrames(t, 1)
	e.write("two ")
	e.waitFrames(t, 2)
	snap := e.f.Live()
	if snap.Seq != 2 || snap.Full != "pending two " {
		t.Fatalf("snapshot %+v, want seq 2 with both frames", snap)
	}
	e.write("three ")
	e.waitFrames(t, 3)
	e.f.Finish(e.d.final)
	fs := e.got()

	// A follower from the snapshot: frames up to its seq are duplicates,
	// the later ones apply and end with the whole text.
	c := Cursor{}
	c.Snapshot(snap.Seq)
	text := snap.Full
	for _, f := range fs {
		step := c.Take(f.Seq)
		if want := map[bool]Step{true: Duplicate, false: Apply}[f.Seq <= snap.Seq]; step != want {
			t.Errorf("frame %d: step %d, want %d", f.Seq, step, want)
		}
		if step == Apply {
			text += f.Add
		}
	}
	if text != "pending two three " || c.Seq() != 4 {
		t.Errorf("follower from the snapshot has %q at seq %d", text, c.Seq())
	}

	// A follower that missed frame 2 stops at the gap; Live after the end
	// is the kept final state.
	late := Cursor{Fresh: true}
	if late.Take(1) != Apply || late.Take(3) != Gap || late.Seq() != 1 {
		t.Errorf("a missed frame is not a gap (at seq %d)", late.Seq())
	}
	final := e.f.Live()
	late.Snapshot(final.Seq)
	if !final.Final || final.Seq != 4 || final.Full != "pending two three " || late.Take(4) != Duplicate {
		t.Errorf("Live after the end %+v", final)
	}
}

// The final frame always goes out, even while frames are held back, once
// only; after it Run returns, Wake sends nothing, and Live answers the
// kept state.
func TestFinalFrameAlwaysSent(t *testing.T) {
	e := newEnv(t, time.Hour, true)
	e.write("a")
	e.waitFrames(t, 1)
	e.write("b") // held back for an hour
	if !e.f.Finish(e.d.final) {
		t.Fatal("first Finish did not count")
	}
	select {
	case <-e.f.Done():
	default:
		t.Error("Done is open after Finish")
	}
	if p := e.ranOut(t); p != nil {
		t.Fatalf("Run panicked: %v", p)
	}
	e.write("c")
	if e.f.Finish(e.d.final) {
		t.Error("a second Finish counted")
	}
	fs := e.got()
	if len(fs) != 2 || fs[1].Seq != 2 || !fs[1].Final || fs[1].Add != "b" {
		t.Fatalf("frames %+v, want the final (seq 2, b) last", fs)
	}
	if l := e.f.Live(); l.Seq != 2 || !l.Final || l.Full != "ab" {
		t.Errorf("Live after the end %+v", l)
	}

	// A feed that never ran nor framed anything still ends with frame 1.
	q := newEnv(t, time.Hour, false)
	q.f.Finish(q.d.final)
	if fs := q.got(); len(fs) != 1 || fs[0].Seq != 1 || !fs[0].Final {
		t.Errorf("frames of an empty feed %+v", fs)
	}
}

// A panic in the source ends Run without leaving the lock held: the owner
// goes on writing, Live answers, and the final frame still comes (one seq
// after the last published, so a follower resyncs across nothing lost).
func TestPanicInSourceFreesTheLock(t *testing.T) {
	e := newEnv(t, 0, true)
	e.write("a")
	e.waitFrames(t, 1)
	e.d.mu.Lock()
	e.d.panic = true
	e.d.mu.Unlock()
	e.write("b")
	if p := e.ranOut(t); p == nil {
		t.Fatal("Run returned without the panic")
	}
	poll(t, "the lock is free", func() bool {
		if e.d.mu.TryLock() {
			e.d.mu.Unlock()
			return true
		}
		return false
	})
	e.write("c")
	if l := e.f.Live(); l.Seq != 1 || l.Full != "a" {
		t.Errorf("Live after the panic %+v", l)
	}
	e.f.Finish(e.d.final)
	if fs := e.got(); len(fs) != 2 || fs[1].Seq != 2 || fs[1].Add != "bc" {
		t.Errorf("frames %+v, want the final with the rest", fs)
	}
}

// Cursor follows frames.js: a fresh follower takes frame 1 without a
// snapshot, any other needs one; duplicates are dropped, gaps resync.
func TestCursor(t *testing.T) {
	for _, tc := range []struct {
		name  string
		c     Cursor
		snap  int64 // >0: start from a snapshot at this seq
		seqs  []int64
		steps []Step
	}{
		{"fresh", Cursor{Fresh: true}, 0, []int64{1, 2, 2, 3}, []Step{Apply, Apply, Duplicate, Apply}},
		{"not fresh", Cursor{}, 0, []int64{1}, []Step{Gap}},
		{"fresh but late", Cursor{Fresh: true}, 0, []int64{2}, []Step{Gap}},
		{"snapshot", Cursor{}, 5, []int64{4, 5, 6, 8, 7}, []Step{Duplicate, Duplicate, Apply, Gap, Apply}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			if tc.snap > 0 {
				c.Snapshot(tc.snap)
			}
			for i, s := range tc.seqs {
				if got := c.Take(s); got != tc.steps[i] {
					t.Errorf("frame %d: got %d, want %d", s, got, tc.steps[i])
				}
			}
		})
	}
}
