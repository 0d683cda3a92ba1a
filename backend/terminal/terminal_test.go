package terminal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
)

// fakePTY is a shell that prints what the test writes to out and keeps
// what is typed and every size it was given.
type fakePTY struct {
	pr  *io.PipeReader
	out *io.PipeWriter

	mu     sync.Mutex
	typed  bytes.Buffer
	sizes  []size
	closed bool
}

func (p *fakePTY) Read(b []byte) (int, error) { return p.pr.Read(b) }
func (p *fakePTY) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.typed.Write(b)
}
func (p *fakePTY) Resize(cols, rows int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sizes = append(p.sizes, size{cols, rows})
	return nil
}
func (p *fakePTY) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.pr.Close()
	return nil
}
func (p *fakePTY) size() size {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.sizes) == 0 {
		return size{}
	}
	return p.sizes[len(p.sizes)-1]
}
func (p *fakePTY) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}

// fakeHost dials fakePTYs: one per start, the first size kept.
type fakeHost struct {
	mu      sync.Mutex
	dials   int
	ptys    []*fakePTY
	owner   ids.UserID
	profile ids.ProfileID
	broken  string        // when set, a shell prints it (no announcement) and ends
	gate    chan struct{} // when set, each Dial waits for a value
	dialing chan struct{} // when set, told when a Dial begins
}

var _ Dialer = (*fakeHost)(nil)

func (h *fakeHost) Dial(ctx context.Context, user ids.UserID, chat ids.ChatID) (Conn, ids.ProfileID, error) {
	if user != h.owner {
		return nil, 0, apperr.New(apperr.NotFound, "no such chat")
	}
	h.mu.Lock()
	h.dials++
	h.mu.Unlock()
	if h.dialing != nil {
		h.dialing <- struct{}{}
	}
	if h.gate != nil {
		<-h.gate
	}
	return fakeConn{h}, h.profile, nil
}

type fakeConn struct{ h *fakeHost }

func (c fakeConn) Shell(ctx context.Context, command string, cols, rows int) (PTY, error) {
	pr, pw := io.Pipe()
	p := &fakePTY{pr: pr, out: pw, sizes: []size{{cols, rows}}}
	c.h.mu.Lock()
	c.h.ptys = append(c.h.ptys, p)
	c.h.mu.Unlock()
	if c.h.broken != "" {
		go func() { pw.Write([]byte(c.h.broken)); pw.Close() }()
		return p, nil
	}
	// An announcement, as the real command prints first.
	go pw.Write([]byte("\x1b]133;L;bash\x07"))
	return p, nil
}
func (c fakeConn) Close() error { return nil }

func (h *fakeHost) pty(t *testing.T, i int) *fakePTY {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if i >= len(h.ptys) {
		t.Fatalf("%d shells started, want at least %d", len(h.ptys), i+1)
	}
	return h.ptys[i]
}

func newTest(t *testing.T, opt Options) (*Service, *fakeHost) {
	t.Helper()
	h := &fakeHost{owner: 1, profile: 7}
	if opt.ReapEvery == 0 {
		opt.ReapEvery = -1
	}
	s := New(h, opt)
	t.Cleanup(s.Shutdown)
	return s, h
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

// readUntil reads v's messages until its bytes contain want.
func readUntil(t *testing.T, v *Viewer, want string) string {
	t.Helper()
	var got strings.Builder
	for !strings.Contains(got.String(), want) {
		m, err := v.Next(ctx(t))
		if err != nil {
			t.Fatalf("waiting for %q: %v (got %q)", want, err, got.String())
		}
		if m.Type == "closed" {
			t.Fatalf("closed (%s) waiting for %q (got %q)", m.Reason, want, got.String())
		}
		got.Write(m.Data)
	}
	return got.String()
}

func attach(t *testing.T, s *Service, user ids.UserID, cols, rows int) *Viewer {
	t.Helper()
	v, err := s.Attach(ctx(t), user, 3, cols, rows)
	if err != nil {
		t.Fatal(err)
	}
	m, err := v.Next(ctx(t))
	if err != nil || m.Type != "ready" || !m.Marks {
		t.Fatalf("first message %+v, %v; want ready, with marks (the fake announces bash)", m, err)
	}
	return v
}

func TestTwoViewersShareOneShell(t *testing.T) {
	s, h := newTest(t, Options{})
	a := attach(t, s, 1, 80, 24)
	b := attach(t, s, 1, 80, 24)
	if h.dials != 1 {
		t.Fatalf("dialed %d times, want 1 shell for the chat", h.dials)
	}
	p := h.pty(t, 0)
	p.out.Write([]byte("hello"))
	readUntil(t, a, "hello")
	readUntil(t, b, "hello")
	if err := b.Input([]byte("ls\r")); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	typed := p.typed.String()
	p.mu.Unlock()
	if typed != "ls\r" {
		t.Errorf("the shell got %q, want what b typed", typed)
	}
	// Closing one detaches it; the other goes on.
	a.Close()
	p.out.Write([]byte("still"))
	readUntil(t, b, "still")
	if p.isClosed() {
		t.Error("closing a viewer ended the shell")
	}
}

func TestAnotherPersonsChatIsNotFound(t *testing.T) {
	s, _ := newTest(t, Options{})
	attach(t, s, 1, 80, 24)
	if _, err := s.Attach(ctx(t), 2, 3, 80, 24); apperr.KindOf(err) != apperr.NotFound {
		t.Fatalf("another user attaching to a running shell: %v, want not found", err)
	}
	if _, err := s.LastCommand(2, 3); apperr.KindOf(err) != apperr.NotFound {
		t.Fatalf("another user's LastCommand: %v, want not found", err)
	}
}

func TestSmallestViewerDecidesTheSize(t *testing.T) {
	s, h := newTest(t, Options{})
	big := attach(t, s, 1, 120, 40)
	p := h.pty(t, 0)
	if got := p.size(); got != (size{120, 40}) {
		t.Fatalf("size %v, want the only viewer's 120×40", got)
	}
	small := attach(t, s, 1, 100, 50)
	if got := p.size(); got != (size{100, 40}) {
		t.Fatalf("size %v, want the smallest of each: 100×40", got)
	}
	small.Resize(90, 30)
	if got := p.size(); got != (size{90, 30}) {
		t.Fatalf("size %v after a resize, want 90×30", got)
	}
	small.Close()
	if got := p.size(); got != (size{120, 40}) {
		t.Fatalf("size %v once the small viewer left, want 120×40", got)
	}
	big.Close()
	if got := p.size(); got != (size{120, 40}) {
		t.Fatalf("size %v with nobody attached, want it unchanged", got)
	}
}

// A viewer that reads nothing is dropped once its queue fills, with reason
// "slow"; the one that reads gets everything, and the shell never waited.
func TestSlowViewerIsDroppedOthersGoOn(t *testing.T) {
	s, h := newTest(t, Options{QueueChunks: 8, QueueBytes: 1 << 20})
	slow := attach(t, s, 1, 80, 24)
	fast := attach(t, s, 1, 80, 24)
	p := h.pty(t, 0)
	// In step with the reading viewer, so that only the other falls behind.
	for i := range 200 {
		line := fmt.Sprintf("line %d\n", i)
		p.out.Write([]byte(line)) // returns once the pump read it
		readUntil(t, fast, line)
	}
	// The slow one: dropped, its backlog gone, told why.
	m, err := slow.Next(ctx(t))
	if err != nil || m.Type != "closed" || m.Reason != ReasonSlow {
		t.Fatalf("slow viewer got %+v, %v; want closed with reason slow", m, err)
	}
	if _, err := slow.Next(ctx(t)); !errors.Is(err, ErrClosed) {
		t.Fatalf("after closed: %v, want ErrClosed", err)
	}
	// It reconnects and gets the scrollback.
	again := attach(t, s, 1, 80, 24)
	readUntil(t, again, "line 199\n")
}

func TestReattachReplaysTheScrollback(t *testing.T) {
	s, h := newTest(t, Options{Scrollback: 64})
	v := attach(t, s, 1, 80, 24)
	p := h.pty(t, 0)
	p.out.Write([]byte("first\n"))
	readUntil(t, v, "first")
	v.Close()
	p.out.Write([]byte("while away\n"))
	w := attach(t, s, 1, 80, 24)
	m, err := w.Next(ctx(t))
	if err != nil || !strings.Contains(string(m.Data), "first\nwhile away\n") {
		t.Fatalf("scrollback %q, %v; want what was printed, with and without a viewer", m.Data, err)
	}
	// Past its size the ring keeps the end, from a line's start.
	for i := range 20 {
		p.out.Write(fmt.Appendf(nil, "row %02d\n", i))
	}
	readUntil(t, w, "row 19")
	x := attach(t, s, 1, 80, 24)
	m, _ = x.Next(ctx(t))
	if len(m.Data) > 64 || !strings.HasPrefix(string(m.Data), "row ") || !strings.HasSuffix(string(m.Data), "row 19\n") {
		t.Fatalf("wrapped scrollback %q: want at most 64 bytes, whole lines, ending with the last", m.Data)
	}
}

func TestReaperEndsIdleShells(t *testing.T) {
	var mu sync.Mutex
	now := time.Unix(1_000_000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	s, h := newTest(t, Options{Now: clock})
	v := attach(t, s, 1, 80, 24)
	p := h.pty(t, 0)

	advance(time.Hour)
	if n := s.Reap(ctx(t)); n != 0 {
		t.Fatal("the reaper ended a shell someone watches")
	}
	v.Close()
	advance(14 * time.Minute)
	if s.Reap(ctx(t)) != 0 {
		t.Fatal("ended after 14 minutes, want 15")
	}
	// Typing (through another viewer, since gone) restarts the clock.
	w := attach(t, s, 1, 80, 24)
	w.Input([]byte("x"))
	w.Close()
	advance(14 * time.Minute)
	if s.Reap(ctx(t)) != 0 {
		t.Fatal("ended 14 minutes after the last input")
	}
	advance(time.Minute)
	if s.Reap(ctx(t)) != 1 || s.Running(3) {
		t.Fatal("not ended after 15 minutes without viewer or input")
	}
	waitClosed(t, p)
}

// nextControl skips terminal bytes to v's next control message.
func nextControl(t *testing.T, v *Viewer) (Msg, error) {
	for {
		m, err := v.Next(ctx(t))
		if err != nil || m.Type != "" {
			return m, err
		}
	}
}

func waitClosed(t *testing.T, p *fakePTY) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !p.isClosed() {
		if time.Now().After(deadline) {
			t.Fatal("the shell was never closed")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestEndChatClosesViewersAndShell(t *testing.T) {
	s, h := newTest(t, Options{})
	v := attach(t, s, 1, 80, 24)
	p := h.pty(t, 0)
	s.EndChat(3)
	m, err := nextControl(t, v)
	if err != nil || m.Type != "closed" || m.Reason != ReasonChat {
		t.Fatalf("got %+v, %v; want closed, reason chat", m, err)
	}
	waitClosed(t, p)
	if s.Running(3) {
		t.Error("still running")
	}
	// The next attach starts a new shell.
	attach(t, s, 1, 80, 24)
	if h.dials != 2 {
		t.Errorf("dials %d, want a second shell", h.dials)
	}
}

func TestEndProfileAndShutdown(t *testing.T) {
	s, h := newTest(t, Options{})
	v := attach(t, s, 1, 80, 24)
	s.EndProfile(8) // another profile: nothing happens
	if !s.Running(3) {
		t.Fatal("ended by another profile's change")
	}
	s.EndProfile(7)
	if m, _ := nextControl(t, v); m.Reason != ReasonProfile {
		t.Fatalf("got %+v, want closed for the profile", m)
	}
	attach(t, s, 1, 80, 24)
	s.Shutdown()
	waitClosed(t, h.pty(t, 1))
	if _, err := s.Attach(ctx(t), 1, 3, 80, 24); apperr.KindOf(err) != apperr.Unavailable {
		t.Fatalf("attach after shutdown: %v", err)
	}
}

// The shell ending closes its viewers with what it printed last.
func TestShellExitClosesViewers(t *testing.T) {
	s, h := newTest(t, Options{})
	v := attach(t, s, 1, 80, 24)
	p := h.pty(t, 0)
	p.out.Write([]byte("logout\n"))
	p.out.Close()
	got := ""
	for {
		m, err := v.Next(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		if m.Type == "closed" {
			if m.Reason != ReasonExited || !strings.Contains(got, "logout") {
				t.Fatalf("closed %q after %q", m.Reason, got)
			}
			break
		}
		got += string(m.Data)
	}
	if s.Running(3) {
		t.Error("a shell that exited is still listed")
	}
}

// The reaper also ends the shells of chats its Check no longer passes:
// gone (not found) or agent chats turned off (forbidden); a passing error
// (a database hiccup) leaves them.
func TestReaperEndsShellsWhoseChatIsGone(t *testing.T) {
	var mu sync.Mutex
	var verdict error
	check := func(context.Context, ids.UserID, ids.ChatID) error { mu.Lock(); defer mu.Unlock(); return verdict }
	set := func(err error) { mu.Lock(); verdict = err; mu.Unlock() }
	s, h := newTest(t, Options{Check: check})
	v := attach(t, s, 1, 80, 24)
	set(errors.New("database is locked"))
	if s.Reap(ctx(t)) != 0 {
		t.Fatal("ended on a passing error")
	}
	set(apperr.New(apperr.Forbidden, "Agent chats are turned off on this server."))
	if s.Reap(ctx(t)) != 1 {
		t.Fatal("not ended once agent chats were turned off")
	}
	if m, _ := nextControl(t, v); m.Reason != ReasonRefused {
		t.Fatalf("got %+v", m)
	}
	waitClosed(t, h.pty(t, 0))
	set(nil)
	attach(t, s, 1, 80, 24)
	set(apperr.New(apperr.NotFound, "no such chat"))
	if s.Reap(ctx(t)) != 1 || s.Running(3) {
		t.Fatal("not ended once the chat was gone")
	}
}

// A profile changed while a shell was connecting ends that shell too (it
// may be using the profile as it was); the attach waiting on it gets a
// new one.
func TestEndProfileWhileConnecting(t *testing.T) {
	s, h := newTest(t, Options{})
	h.gate, h.dialing = make(chan struct{}, 2), make(chan struct{}, 2)
	got := make(chan error, 1)
	go func() {
		v, err := s.Attach(context.Background(), 1, 3, 80, 24)
		if err == nil {
			var m Msg
			m, err = v.Next(context.Background())
			if err == nil && m.Type != "ready" {
				err = fmt.Errorf("first message %+v", m)
			}
		}
		got <- err
	}()
	<-h.dialing
	s.EndProfile(7)
	h.gate <- struct{}{} // the first connection, ended meanwhile
	h.gate <- struct{}{} // the second
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if h.dials != 2 {
		t.Fatalf("dials %d, want a new connection after the change", h.dials)
	}
	waitClosed(t, h.pty(t, 0))
	if h.pty(t, 1).isClosed() {
		t.Fatal("the new shell was closed")
	}
}

// A shell that ends as it starts (a broken login shell) is not started
// again and again: the attach gets what it printed, then closed.
func TestShellEndingAtOnceIsShownNotRetried(t *testing.T) {
	s, h := newTest(t, Options{})
	h.broken = "/bin/sh: not found\n"
	got := make(chan *Viewer, 1)
	go func() {
		v, err := s.Attach(context.Background(), 1, 3, 80, 24)
		if err != nil {
			t.Error(err)
		}
		got <- v
	}()
	var v *Viewer
	select {
	case v = <-got:
	case <-time.After(30 * time.Second):
		h.mu.Lock()
		defer h.mu.Unlock()
		t.Fatalf("Attach did not return (%d dials)", h.dials)
	}
	if v == nil {
		t.Fatal("no viewer")
	}
	var text string
	for {
		m, err := v.Next(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		if m.Type == "closed" {
			if m.Reason != ReasonExited {
				t.Fatalf("closed %q", m.Reason)
			}
			break
		}
		text += string(m.Data)
	}
	if !strings.Contains(text, "/bin/sh: not found") {
		t.Fatalf("the viewer got %q, want what the shell said", text)
	}
	if h.dials != 1 {
		t.Fatalf("dialed %d times, want once", h.dials)
	}
}
