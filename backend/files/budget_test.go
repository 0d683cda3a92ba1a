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

// heldUpload is an upload whose bytes stop once the service has seen its
// first attach.PeekSize bytes (it has decided what the upload costs) and
// wait for a release: the test sees which uploads are being processed.
type heldUpload struct {
	name    string
	data    []byte
	off     int
	started chan<- *heldUpload
	release chan struct{}
	once    sync.Once
}

func (h *heldUpload) Read(p []byte) (int, error) {
	if h.off > attach.PeekSize {
		h.once.Do(func() { h.started <- h })
		<-h.release
	}
	if h.off >= len(h.data) {
		return 0, io.EOF
	}
	if h.off <= attach.PeekSize {
		p = p[:min(len(p), attach.PeekSize+1-h.off)]
	}
	n := copy(p, h.data[h.off:])
	h.off += n
	return n, nil
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
}

func (u *uploads) start(user ids.UserID, name string, data []byte) *heldUpload {
	h := &heldUpload{name: name, data: data, started: u.started, release: make(chan struct{})}
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		if _, err := u.s.Upload(context.Background(), user, name, h); err != nil {
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
	s.budget = newBudget(2 * attach.Cost(pic, s.proc)) // two such images at once
	u := &uploads{t: t, s: s, started: make(chan *heldUpload, 8)}
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
	u := &uploads{t: t, s: s, started: make(chan *heldUpload, 2*PlainBudget)}
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
	if free, waiting := s.plain.state(); free != PlainBudget*s.limits.MaxBytes || waiting != 0 {
		t.Errorf("after every upload: %d free, %d waiting", free, waiting)
	}
}

// A member whose images queue up does not hold another member back by
// more than the one that finishes first.
func TestUploadsAreAdmittedFairlyBetweenUsers(t *testing.T) {
	s, sam, rosie := twoUsers(t)
	pic := picture(t)
	s.budget = newBudget(2 * attach.Cost(pic, s.proc))
	u := &uploads{t: t, s: s, started: make(chan *heldUpload, 8)}
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
	b := newBudget(100)
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
