package files

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/attach"
)

// stalled is a client that sends head and then nothing more until its
// request ends (ctx) or the test lets it go: a slow or hostile upload.
type stalled struct {
	ctx  context.Context
	head []byte
	sent chan struct{} // closed once head has been read
	gone chan struct{}
}

func newStalled(ctx context.Context, head []byte) *stalled {
	return &stalled{ctx: ctx, head: head, sent: make(chan struct{}), gone: make(chan struct{})}
}

func (s *stalled) Read(p []byte) (int, error) {
	if len(s.head) > 0 {
		n := copy(p, s.head)
		s.head = s.head[n:]
		return n, nil
	}
	select {
	case <-s.sent:
	default:
		close(s.sent)
	}
	select {
	case <-s.ctx.Done():
		return 0, s.ctx.Err()
	case <-s.gone:
		return 0, errors.New("client went away")
	}
}

// costlyHead is the start of a PNG whose header cannot be read from it: it
// is reckoned at the most an image may take (attach.MaxCost).
func costlyHead() []byte {
	return append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0xff}, 2*attach.PeekSize)...)
}

// temporaries lists the files an upload leaves in the files directory
// that are not stored attachments.
func temporaries(t *testing.T, s *Service) []string {
	t.Helper()
	entries, err := os.ReadDir(s.Dir())
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		if !attach.ValidStorageName(e.Name()) {
			left = append(left, e.Name())
		}
	}
	return left
}

// Two clients that send the header of the costliest image and then stall
// (as a slow link, or someone meaning harm, can until the server's read
// timeout) held the whole decoding budget: every other image upload waited
// for them. An upload is received whole before it takes any budget.
func TestStalledUploadsDoNotHoldTheBudget(t *testing.T) {
	s, sam, rosie := twoUsers(t)
	if c := attach.Cost(costlyHead(), s.proc); c != attach.MaxCost(s.proc) {
		t.Fatalf("the stalled header costs %d, want the most, %d", c, attach.MaxCost(s.proc))
	}
	var slow []*stalled
	errs := make(chan error, 2)
	for range 2 {
		st := newStalled(context.Background(), costlyHead())
		slow = append(slow, st)
		go func() {
			_, err := s.Upload(context.Background(), sam, "slow.png", st)
			errs <- err
		}()
	}
	for _, st := range slow {
		select {
		case <-st.sent:
		case <-time.After(30 * time.Second):
			t.Fatal("a stalled upload's header was never read")
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Upload(context.Background(), rosie, "rosie.png", bytes.NewReader(picture(t)))
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("rosie's upload: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Error("rosie's image waited for two stalled uploads")
	}
	for _, st := range slow {
		close(st.gone)
	}
	for range slow {
		if err := <-errs; err == nil {
			t.Error("a stalled upload whose client went away was stored")
		}
	}
	if free, waiting := s.budget.state(); free != s.budget.total || waiting != 0 {
		t.Errorf("after every upload: %d of %d free, %d waiting", free, s.budget.total, waiting)
	}
	if left := temporaries(t, s); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// One member's images take at most half the decoding budget, so another
// member's image starts while theirs are still decoding.
func TestOneUserHoldsHalfTheBudget(t *testing.T) {
	s, sam, rosie := twoUsers(t)
	if s.budget.perUser != s.budget.total/2 || s.plain.perUser != s.plain.total/2 {
		t.Fatalf("per-user shares %d of %d and %d of %d, want half", s.budget.perUser, s.budget.total,
			s.plain.perUser, s.plain.total)
	}
	pic := picture(t)
	c := attach.Cost(pic, s.proc)
	s.budget = newBudget(2*c, c) // as the service's: two of the costliest, one each
	u := (&uploads{t: t, s: s, started: make(chan *heldUpload, 8)}).hold()
	sams := []*heldUpload{u.start(sam, "sam0.png", pic), u.start(sam, "sam1.png", pic)}
	first := u.next()
	u.waitQueued(1)
	theirs := u.start(rosie, "rosie.png", pic)
	if got := u.next(); got != theirs {
		t.Errorf("%s was processed next; want rosie.png, with one of Sam's decoding", got.name)
	}
	close(theirs.release)
	close(first.release)
	second := u.next()
	close(second.release)
	u.wg.Wait()
	if first == second || (first != sams[0] && first != sams[1]) {
		t.Errorf("Sam's uploads went %s, %s", first.name, second.name)
	}
}

// The received upload's temporary file goes on every path: stored,
// refused, too large, and a request that ends mid-upload.
func TestUploadLeavesNoTemporaryFiles(t *testing.T) {
	s, _, sam := newService(t, Limits{})
	ctx := context.Background()
	if _, err := s.Upload(ctx, sam, "note.txt", strings.NewReader("a short note")); err != nil {
		t.Fatalf("text: %v", err)
	}
	if _, err := s.Upload(ctx, sam, "pic.png", bytes.NewReader(picture(t))); err != nil {
		t.Fatalf("image: %v", err)
	}
	if _, err := s.Upload(ctx, sam, "bad.png", bytes.NewReader(costlyHead())); err == nil {
		t.Error("a damaged PNG was stored")
	}
	big := bytes.Repeat([]byte("x"), int(s.limits.MaxBytes)+1)
	if _, err := s.Upload(ctx, sam, "big.txt", bytes.NewReader(big)); err == nil ||
		!strings.Contains(err.Error(), "larger than") {
		t.Errorf("too large: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	st := newStalled(cctx, costlyHead())
	errc := make(chan error, 1)
	go func() { _, err := s.Upload(cctx, sam, "cut.png", st); errc <- err }()
	select {
	case <-st.sent:
	case <-time.After(30 * time.Second):
		t.Fatal("the upload's header was never read")
	}
	if left := temporaries(t, s); len(left) != 1 || !strings.HasPrefix(left[0], ".upload-") {
		t.Errorf("while receiving: %v, want one .upload- file", left)
	} else if fi, err := os.Stat(filepath.Join(s.Dir(), left[0])); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the received file: %v, %v, want mode 0600", fi.Mode(), err)
	}
	cancel()
	if err := <-errc; err == nil {
		t.Error("a cancelled upload was stored")
	}
	if left := temporaries(t, s); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	if n, err := s.db.CountUnbound(ctx, sam); err != nil || n != 2 {
		t.Errorf("%d uploads stored (%v), want 2", n, err)
	}
}
