package terminal

import (
	"testing"

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
