package files

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/attach"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// heldUpload is an upload held once it is admitted to a budget (while it
// would be decoded) until the test releases it: the test sees which
// uploads are being processed.
type heldUpload struct {
	name    string
	release chan struct{}
}

// picture is a real 1000 × 1000 RGBA PNG, padded past PeekSize (a decoder
// stops at IEND).
func picture(t *testing.T) []byte {
	t.Helper()
	m := image.NewNRGBA(image.Rect(0, 0, 1000, 1000))
	for i := range m.Pix {
		m.Pix[i] = byte(i % 251)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, m); err != nil {
		t.Fatal(err)
	}
	return append(buf.Bytes(), make([]byte, 2*attach.PeekSize)...)
}

type uploads struct {
	t       *testing.T
	s       *Service
	started chan *heldUpload
	wg      sync.WaitGroup
	mu      sync.Mutex
	held    map[string]*heldUpload
}

// hold makes the service's uploads started with start wait, once admitted,
// for their release.
func (u *uploads) hold() *uploads {
	u.held = map[string]*heldUpload{}
	u.s.process = func(ctx context.Context, name string, r io.Reader, lim attach.Limits) (attach.Result, error) {
		u.mu.Lock()
		h := u.held[name]
		u.mu.Unlock()
		if h != nil {
			u.started <- h
			<-h.release
		}
		return attach.Process(ctx, name, r, lim)
	}
	return u
}

func (u *uploads) start(user ids.UserID, name string, data []byte) *heldUpload {
	h := &heldUpload{name: name, release: make(chan struct{})}
	u.mu.Lock()
	u.held[name] = h
	u.mu.Unlock()
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		if _, err := u.s.Upload(context.Background(), user, name, bytes.NewReader(data)); err != nil {
			u.t.Errorf("upload %s: %v", name, err)
		}
	}()
	return h
}

// next returns the next upload to be processed (generous deadline: only a
// missing admission fails it).
func (u *uploads) next() *heldUpload {
	u.t.Helper()
	select {
	case h := <-u.started:
		return h
	case <-time.After(30 * time.Second):
		u.t.Fatal("no upload started processing")
		return nil
	}
}

// waitQueued waits until n uploads wait for the budget.
func (u *uploads) waitQueued(n int) {
	u.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		if _, w := u.s.budget.state(); w == n {
			return
		}
		if time.Now().After(deadline) {
			_, w := u.s.budget.state()
			u.t.Fatalf("%d uploads waiting, want %d", w, n)
		}
	}
}

func twoUsers(t *testing.T) (*Service, ids.UserID, ids.UserID) {
	s, db, a := newService(t, Limits{MaxPending: 40})
	u, err := db.CreateUser(context.Background(), store.NewUser{Username: "rosie", DisplayName: "Rosie"})
	if err != nil {
		t.Fatal(err)
	}
	return s, a, ids.UserID(u.ID)
}

// While one member's images fill the decoding budget, a text upload does
// not wait at all: a 24-byte text waited 18 s behind six images.
func TestTextDoesNotWaitForImages(t *testing.T) {
	s, sam, rosie := twoUsers(t)
	pic := picture(t)
	c := attach.Cost(pic, s.proc)
	s.budget = newBudget(2*c, 2*c) // two such images at once
	u := (&uploads{t: t, s: s, started: make(chan *heldUpload, 8)}).hold()
	held := []*heldUpload{u.start(sam, "a.png", pic), u.start(sam, "b.png", pic)}
	u.next()
	u.next()
	if free, _ := s.budget.state(); free != 0 {
		t.Fatalf("%d bytes free with two images decoding", free)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Upload(context.Background(), rosie, "note.txt", bytes.NewReader([]byte("twenty-four bytes of txt")))
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("text upload: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Error("the text upload waited for the images")
	}
	for _, h := range held {
		close(h.release)
	}
	u.wg.Wait()
}

// Large text uploads are read whole into memory: any number of them ran at
// once (32 MB each), with no bound at all once images had a budget of their
// own. They are bounded by a budget of their own, which small ones skip.
func TestLargeTextUploadsAreBounded(t *testing.T) {
	s, sam, rosie := twoUsers(t)
	text := bytes.Repeat([]byte("a line of plain text\n"), 3*attach.PeekSize/21)
	size := int64(len(text))
	s.plain = newBudget(PlainBudget*size, PlainBudget*size) // as if each were MaxBytes
	u := (&uploads{t: t, s: s, started: make(chan *heldUpload, 2*PlainBudget)}).hold()
	var held []*heldUpload
	for i := range PlainBudget {
		held = append(held, u.start(sam, fmt.Sprintf("t%d.txt", i), text))
	}
	for range PlainBudget {
		u.next()
	}
	extra := u.start(rosie, "one-more.txt", text)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		if _, w := s.plain.state(); w == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a text upload beyond %d at once was not held back", PlainBudget)
		}
	}
	// A small text does not wait.
	if _, err := s.Upload(context.Background(), rosie, "note.txt", bytes.NewReader([]byte("small"))); err != nil {
		t.Errorf("small text: %v", err)
	}
	close(held[0].release)
	if got := u.next(); got != extra {
		t.Errorf("%s went next, want one-more.txt", got.name)
	}
	close(extra.release)
	for _, h := range held[1:] {
		close(h.release)
	}
	u.wg.Wait()
	if free, waiting := s.plain.state(); free != PlainBudget*size || waiting != 0 {
		t.Errorf("after every upload: %d free, %d waiting", free, waiting)
	}
}

// A member whose images queue up does not hold another member back by
// more than the one that finishes first.
func TestUploadsAreAdmittedFairlyBetweenUsers(t *testing.T) {
	s, sam, rosie := twoUsers(t)
	pic := picture(t)
	c := attach.Cost(pic, s.proc)
	s.budget = newBudget(2*c, 2*c) // no cap of one's own: the order alone is tested
	u := (&uploads{t: t, s: s, started: make(chan *heldUpload, 8)}).hold()
	var sams []*heldUpload
	for i := range 2 {
		sams = append(sams, u.start(sam, fmt.Sprintf("sam%d.png", i), pic))
	}
	first := u.next()
	u.next()
	for i := 2; i < 5; i++ {
		sams = append(sams, u.start(sam, fmt.Sprintf("sam%d.png", i), pic))
	}
	u.waitQueued(3)
	theirs := u.start(rosie, "rosie.png", pic)
	u.waitQueued(4)

	close(first.release)
	if got := u.next(); got != theirs {
		t.Errorf("%s was processed next; want rosie.png, queued after three of Sam's", got.name)
	}
	close(theirs.release)
	for _, h := range sams {
		if h != first { // either of the first two may have started first
			close(h.release)
		}
	}
	u.wg.Wait()
}

// Small images share the budget by their cost: more than two decode at
// once when they fit, and a cancelled wait gives its place up.
func TestBudgetAdmitsByCost(t *testing.T) {
	b := newBudget(100, 100)
	var releases []func()
	for i := range 5 {
		r, err := b.acquire(context.Background(), ids.UserID(i%2+1), 20)
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, r)
	}
	if free, waiting := b.state(); free != 0 || waiting != 0 {
		t.Fatalf("free %d, waiting %d", free, waiting)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := b.acquire(ctx, 1, 50); errc <- err }()
	for _, w := b.state(); w != 1; _, w = b.state() {
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-errc; err == nil {
		t.Error("a cancelled wait was admitted")
	}
	for _, r := range releases {
		r()
	}
	if free, waiting := b.state(); free != 100 || waiting != 0 {
		t.Errorf("free %d, waiting %d after every release", free, waiting)
	}
	// An upload costing more than everything runs alone.
	r, err := b.acquire(context.Background(), 1, 1000)
	if err != nil {
		t.Fatal(err)
	}
	r()
}
