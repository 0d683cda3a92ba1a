package terminal

import (
	"sync"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
)

func attachChat(t *testing.T, s *Service, chat ids.ChatID) *Viewer {
	t.Helper()
	v, err := s.Attach(ctx(t), 1, chat, 80, 24)
	if err != nil {
		t.Fatalf("chat %d: %v", chat, err)
	}
	return v
}

// A person's shells are bounded (each is an SSH connection held open): a
// new one ends their longest idle unwatched shell, and is refused while
// every one is watched.
func TestShellsPerPersonAreBounded(t *testing.T) {
	s, _ := newTest(t, Options{MaxShells: 2})
	v1 := attachChat(t, s, 1)
	attachChat(t, s, 2)
	if _, err := s.Attach(ctx(t), 1, 3, 80, 24); apperr.KindOf(err) != apperr.Conflict {
		t.Fatalf("a third shell while two are watched: %v, want a conflict", err)
	}
	if s.Running(3) {
		t.Error("the refused shell runs")
	}
	v1.Close()
	attachChat(t, s, 3)
	if s.Running(1) || !s.Running(2) || !s.Running(3) {
		t.Errorf("running 1:%v 2:%v 3:%v; want the unwatched shell 1 ended for 3", s.Running(1), s.Running(2), s.Running(3))
	}
}

// A person's viewers are bounded, all chats together (each holds a queue
// and a socket): a script opening sockets in a loop is refused past it.
func TestViewersPerPersonAreBounded(t *testing.T) {
	s, _ := newTest(t, Options{MaxViewers: 3})
	a := attachChat(t, s, 1)
	attachChat(t, s, 1)
	attachChat(t, s, 2)
	if _, err := s.Attach(ctx(t), 1, 2, 80, 24); apperr.KindOf(err) != apperr.Conflict {
		t.Fatalf("a fourth viewer: %v, want a conflict", err)
	}
	// Nor is a shell started for a viewer that would be refused.
	if _, err := s.Attach(ctx(t), 1, 4, 80, 24); apperr.KindOf(err) != apperr.Conflict || s.Running(4) {
		t.Fatalf("a fourth viewer in a new chat: %v, running %v; want a conflict and no shell", err, s.Running(4))
	}
	a.Close()
	attachChat(t, s, 2)
}

// A size from the page is clamped: 0×0 and negative sizes are the
// default, 100000×100000 what a PTY and a person have at most.
func TestSizesAreClamped(t *testing.T) {
	s, h := newTest(t, Options{})
	v := attach(t, s, 1, 0, 0)
	if got := h.pty(t, 0).size(); got != (size{80, 24}) {
		t.Errorf("0×0 gave %v", got)
	}
	for _, tc := range []struct {
		cols, rows int
		want       size
	}{
		{100000, 100000, size{1000, 500}},
		{-5, -5, size{80, 24}},
		{1, 0, size{2, 24}},
	} {
		v.Resize(tc.cols, tc.rows)
		if got := h.pty(t, 0).size(); got != tc.want {
			t.Errorf("%d×%d gave %v, want %v", tc.cols, tc.rows, got, tc.want)
		}
	}
}

// Churn (run with -race): attaches, inputs, resizes and closes on a few
// chats while the reaper, EndChat and EndProfile run beside them. Every
// viewer ends (its Next returns), no shell is left but those still
// attached, and Shutdown closes every PTY that was started.
func TestChurn(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	var clock sync.Mutex
	s, h := newTest(t, Options{Idle: time.Minute, MaxViewers: 1000, MaxShells: 1000, Now: func() time.Time {
		clock.Lock()
		defer clock.Unlock()
		return now
	}})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				chat := ids.ChatID(1 + (w+i)%3)
				v, err := s.Attach(ctx(t), 1, chat, 80+i%5, 24)
				if err != nil {
					continue // ended as it started, three times: allowed under this churn
				}
				v.Input([]byte("x"))
				v.Resize(70+i%7, 20)
				if i%3 == 0 {
					v.Close()
				}
				go func() {
					for {
						if _, err := v.Next(ctx(t)); err != nil {
							return
						}
					}
				}()
				if i%5 == 0 {
					v.Close()
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 60 {
			switch i % 4 {
			case 0:
				clock.Lock()
				now = now.Add(2 * time.Minute)
				clock.Unlock()
				s.Reap(ctx(t))
			case 1:
				s.EndChat(ids.ChatID(1 + i%3))
			case 2:
				s.EndProfile(h.profile)
			}
			time.Sleep(time.Millisecond)
		}
	}()
	wg.Wait()
	s.Shutdown()
	h.mu.Lock()
	ptys := append([]*fakePTY(nil), h.ptys...)
	h.mu.Unlock()
	for _, p := range ptys {
		waitClosed(t, p)
	}
	for c := range 3 {
		if s.Running(ids.ChatID(1 + c)) {
			t.Errorf("chat %d's shell outlived Shutdown", 1+c)
		}
	}
}
