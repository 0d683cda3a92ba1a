package terminal

import (
	"context"
	"sync"
	"time"

	"github.com/llembas/lembas/backend/ids"
)

// session is one chat's shell and its viewers.
type session struct {
	svc     *Service
	user    ids.UserID
	chat    ids.ChatID
	profile ids.ProfileID // under mu; 0 until started

	started  chan struct{} // closed once start has finished, well or not
	startErr error
	conn     Conn
	pty      PTY

	announced    chan struct{} // closed once it is known whether the shell sets marks
	announceOnce sync.Once
	gone         chan struct{} // closed once the PTY and the connection are closed

	inMu     sync.Mutex // one input at a time reaches the PTY whole
	resizeMu sync.Mutex // resizes reach the PTY in the order they were decided

	mu         sync.Mutex
	viewers    map[*Viewer]struct{}
	ring       *ring
	marks      parser
	cols, rows int // the PTY's size
	lastActive time.Time
	ended      bool
	reason     string // why it ended
}

func newSession(s *Service, user ids.UserID, chat ids.ChatID, cols, rows int) *session {
	return &session{svc: s, user: user, chat: chat, started: make(chan struct{}), announced: make(chan struct{}),
		gone: make(chan struct{}), viewers: map[*Viewer]struct{}{}, ring: newRing(s.opt.Scrollback),
		cols: cols, rows: rows, lastActive: s.opt.Now()}
}

// start connects and starts the shell, then pumps what it prints.
func (ss *session) start(ctx context.Context) error {
	defer close(ss.started)
	conn, profile, err := ss.svc.dial.Dial(ctx, ss.user, ss.chat)
	if err != nil {
		ss.startErr = err
		return err
	}
	pty, err := conn.Shell(ctx, ss.svc.opt.Command, ss.cols, ss.rows)
	if err != nil {
		conn.Close()
		ss.startErr = err
		return err
	}
	ss.mu.Lock()
	ss.conn, ss.pty, ss.profile = conn, pty, profile
	ss.mu.Unlock()
	ss.svc.log.Info("terminal started", "user", ss.user, "chat", ss.chat, "profile", profile)
	go ss.pump()
	go func() {
		t := time.NewTimer(ss.svc.opt.AnnounceWait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ss.announced:
		case <-ss.gone:
		}
		ss.announce()
	}()
	return nil
}

func (ss *session) announce() { ss.announceOnce.Do(func() { close(ss.announced) }) }

// pump reads what the shell prints into the scrollback, the marks and
// every viewer's queue. It never waits on a viewer: one whose queue is
// full is dropped.
func (ss *session) pump() {
	buf := make([]byte, 32<<10)
	for {
		n, err := ss.pty.Read(buf)
		if n > 0 {
			chunk := append([]byte(nil), buf[:n]...) // shared by the viewers, never changed
			var slow []*Viewer
			ss.mu.Lock()
			ss.ring.write(chunk)
			if ss.marks.feed(chunk) {
				ss.announce()
			}
			for v := range ss.viewers {
				if !v.offer(chunk) {
					slow = append(slow, v)
					delete(ss.viewers, v)
				}
			}
			ss.mu.Unlock()
			for _, v := range slow {
				ss.svc.log.Info("terminal viewer too slow, dropped", "chat", ss.chat)
				v.closeWith(ReasonSlow)
			}
			if len(slow) > 0 {
				ss.fit()
			}
		}
		if err != nil {
			ss.svc.end(ss, ReasonExited)
			return
		}
	}
}

// attach adds a viewer of cols × rows, its queue holding "ready" and the
// scrollback; the caller then fits the PTY to it. Once the session has ended it returns nil, but for a shell
// that exited by itself: the viewer gets what it printed (why it ended,
// when it ended at once) and then "closed".
func (ss *session) attach(cols, rows int) *Viewer {
	ss.mu.Lock()
	if ss.ended && ss.reason != ReasonExited {
		ss.mu.Unlock()
		return nil
	}
	v := newViewer(ss, cols, rows)
	want := size{cols, rows}
	if !ss.ended {
		ss.viewers[v] = struct{}{}
		want = ss.sizeLocked()
	}
	v.push(Msg{Type: "ready", Marks: ss.marks.marks(), Cols: want.cols, Rows: want.rows})
	if back := ss.ring.snapshot(); len(back) > 0 {
		v.push(Msg{Data: back})
	}
	ended := ss.ended
	ss.mu.Unlock()
	if ended {
		v.closeWith(ReasonExited)
	}
	return v
}

// detach removes v (it closed itself).
func (ss *session) detach(v *Viewer) {
	ss.mu.Lock()
	_, ok := ss.viewers[v]
	delete(ss.viewers, v)
	if ok {
		ss.lastActive = ss.svc.opt.Now()
	}
	ss.mu.Unlock()
	if ok {
		ss.fit()
	}
}

type size struct{ cols, rows int }

// sizeLocked is the size the viewers decide: the smallest of each.
func (ss *session) sizeLocked() size {
	if len(ss.viewers) == 0 {
		return size{ss.cols, ss.rows}
	}
	want := size{1 << 30, 1 << 30}
	for v := range ss.viewers {
		want.cols, want.rows = min(want.cols, v.cols), min(want.rows, v.rows)
	}
	return want
}

// fit gives the PTY the size its viewers decide, if it changed.
func (ss *session) fit() {
	ss.resizeMu.Lock()
	defer ss.resizeMu.Unlock()
	ss.mu.Lock()
	want := ss.sizeLocked()
	same := want == size{ss.cols, ss.rows} || ss.ended
	ss.cols, ss.rows = want.cols, want.rows
	ss.mu.Unlock()
	if !same {
		if err := ss.pty.Resize(want.cols, want.rows); err != nil {
			ss.svc.log.Debug("terminal resize", "chat", ss.chat, "err", err)
		}
	}
}

// input types data into the shell.
func (ss *session) input(data []byte) error {
	ss.mu.Lock()
	if ss.ended {
		ss.mu.Unlock()
		return ErrClosed
	}
	ss.lastActive = ss.svc.opt.Now()
	ss.mu.Unlock()
	if len(data) == 0 {
		return nil
	}
	ss.inMu.Lock()
	defer ss.inMu.Unlock()
	_, err := ss.pty.Write(data)
	return err
}

// idleSince is how long the shell has had no viewer and no input (0
// while someone watches).
func (ss *session) idleSince(now time.Time) time.Duration {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if len(ss.viewers) > 0 {
		return 0
	}
	return now.Sub(ss.lastActive)
}

// unwatched reports whether the shell has started and has no viewer, and
// since when nobody watched or typed.
func (ss *session) unwatched() (time.Time, bool) {
	select {
	case <-ss.started:
	default:
		return time.Time{}, false
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.lastActive, len(ss.viewers) == 0 && ss.startErr == nil
}

func (ss *session) lastCommand() LastCommand {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.marks.last == nil {
		return LastCommand{Marks: ss.marks.marks()}
	}
	return *ss.marks.last
}

// close ends the session: every viewer is closed with reason, then the
// shell and its connection (in the background: a dead connection must
// not hold up the caller; gone says when it is done).
func (ss *session) close(reason string) {
	ss.mu.Lock()
	if ss.ended {
		ss.mu.Unlock()
		return
	}
	ss.ended, ss.reason = true, reason
	viewers := ss.viewers
	ss.viewers = map[*Viewer]struct{}{}
	ss.mu.Unlock()
	for v := range viewers {
		v.closeWith(reason)
	}
	ss.announce()
	ss.svc.log.Info("terminal ended", "user", ss.user, "chat", ss.chat, "why", reason)
	go func() {
		defer close(ss.gone)
		<-ss.started
		if ss.pty != nil {
			ss.pty.Close()
		}
		if ss.conn != nil {
			ss.conn.Close()
		}
	}()
}

// on reports whether the session is on profile, or may be: one still
// connecting does not know its profile yet, and might be using the
// profile's old settings.
func (ss *session) on(profile ids.ProfileID) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.profile == profile || ss.profile == 0
}
