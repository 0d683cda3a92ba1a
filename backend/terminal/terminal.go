// Package terminal is the terminal panel's backend: one interactive shell
// per agent chat on the chat's SSH host, shared by every viewer (a browser
// tab's WebSocket, the desktop window) that opens the panel.
//
// A shell is keyed on the chat, not on a socket: a reload is
// indistinguishable from a second tab, and closing the panel detaches,
// never kills (a build running behind a shut panel is the case the whole
// lifetime exists for). The smallest attached viewer decides the PTY's
// size. What the shell prints goes into a scrollback ring, replayed to a
// viewer on attach, and into each viewer's bounded queue: a viewer whose
// queue fills is dropped (closed with reason "slow"; it reconnects and
// gets the scrollback, which is the state), so the pump never waits on a
// viewer and `yes` in one tab neither stalls another nor grows memory.
// Bytes are never decoded here: a read lands mid-character often enough,
// and xterm's decoder is stateful across writes. A reaper ends shells that
// no one watches or types into; so do EndChat, EndProfile and Shutdown.
package terminal

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
)

// PTY is an interactive shell on a pseudo-terminal: reads are what it
// prints, writes what is typed.
type PTY interface {
	io.Reader
	io.Writer
	Resize(cols, rows int) error
	Close() error
}

// Conn is one connection to a chat's host.
type Conn interface {
	// Shell starts command on a PTY of cols × rows.
	Shell(ctx context.Context, command string, cols, rows int) (PTY, error)
	Close() error
}

// Dialer connects to the host of user's agent chat. Its errors are shown
// to the person (apperr kinds with plain messages); another person's chat
// is NotFound.
type Dialer interface {
	Dial(ctx context.Context, user ids.UserID, chat ids.ChatID) (Conn, ids.ProfileID, error)
}

// DialFunc is a Dialer.
type DialFunc func(ctx context.Context, user ids.UserID, chat ids.ChatID) (Conn, ids.ProfileID, error)

// Dial calls f.
func (f DialFunc) Dial(ctx context.Context, user ids.UserID, chat ids.ChatID) (Conn, ids.ProfileID, error) {
	return f(ctx, user, chat)
}

// Options tune a Service; zero values are the defaults.
type Options struct {
	Log *slog.Logger
	// Check says whether user may open chat's shell (user's agent chat,
	// still there, agent chats on): every attach asks, and the reaper ends
	// the shells it refuses (NotFound, Forbidden). nil: every chat passes.
	Check func(ctx context.Context, user ids.UserID, chat ids.ChatID) error
	// Idle ends a shell with no viewer and no input for this long (15 min).
	Idle time.Duration
	// ReapEvery is how often the reaper looks (1 min); negative: never
	// (tests call Reap).
	ReapEvery time.Duration
	// Now is the clock of the idle timeout (time.Now).
	Now func() time.Time
	// Scrollback is the ring replayed on attach (256 KiB).
	Scrollback int
	// QueueChunks and QueueBytes bound a viewer's queue (64 chunks, 1
	// MiB); a viewer past either is dropped.
	QueueChunks int
	QueueBytes  int
	// DialTimeout bounds connecting and starting the shell (30 s).
	DialTimeout time.Duration
	// AnnounceWait is how long an attach waits for the shell's first
	// words (which say whether it sets marks) before saying it does not (5 s).
	AnnounceWait time.Duration
	// Command is the PTY command (ShellCommand()); tests may replace it.
	Command string
	// MaxShells bounds one person's shells (8): each is an SSH connection
	// held open. A new one past it ends their longest idle shell that no
	// one watches, or is refused when every one is watched.
	MaxShells int
	// MaxViewers bounds one person's open viewers, all chats together
	// (16): each holds a queue of up to QueueBytes and a socket.
	MaxViewers int
}

// Reasons a viewer is closed with.
const (
	ReasonSlow     = "slow"     // its queue filled: reconnect for the scrollback
	ReasonExited   = "exited"   // the shell ended
	ReasonIdle     = "idle"     // nobody watched or typed for the idle time
	ReasonChat     = "chat"     // the chat was deleted or trashed
	ReasonProfile  = "profile"  // the chat's SSH connection changed or was deleted
	ReasonShutdown = "shutdown" // the server is stopping
	ReasonDetached = "detached" // the viewer closed itself
	ReasonRefused  = "refused"  // its person may no longer open it (signed out, agent.use taken away, agent chats off)
)

// Service holds the shells.
type Service struct {
	dial Dialer
	opt  Options
	log  *slog.Logger

	mu       sync.Mutex
	sessions map[ids.ChatID]*session
	closed   bool

	// attachMu makes counting a person's viewers and adding one a single
	// step (MaxViewers).
	attachMu sync.Mutex

	stop     chan struct{}
	stopOnce sync.Once
	reaped   sync.WaitGroup
}

// New returns a service dialing through d; its reaper runs until Shutdown.
func New(d Dialer, opt Options) *Service {
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.Idle <= 0 {
		opt.Idle = 15 * time.Minute
	}
	if opt.ReapEvery == 0 {
		opt.ReapEvery = time.Minute
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Scrollback <= 0 {
		opt.Scrollback = 256 << 10
	}
	if opt.QueueChunks <= 0 {
		opt.QueueChunks = 64
	}
	if opt.QueueBytes <= 0 {
		opt.QueueBytes = 1 << 20
	}
	if opt.DialTimeout <= 0 {
		opt.DialTimeout = 30 * time.Second
	}
	if opt.AnnounceWait <= 0 {
		opt.AnnounceWait = 5 * time.Second
	}
	if opt.Command == "" {
		opt.Command = ShellCommand()
	}
	if opt.MaxShells <= 0 {
		opt.MaxShells = 8
	}
	if opt.MaxViewers <= 0 {
		opt.MaxViewers = 16
	}
	s := &Service{dial: d, opt: opt, log: opt.Log, sessions: map[ids.ChatID]*session{}, stop: make(chan struct{})}
	if opt.ReapEvery > 0 {
		s.reaped.Add(1)
		go s.reaper()
	}
	return s
}

func (s *Service) reaper() {
	defer s.reaped.Done()
	t := time.NewTicker(s.opt.ReapEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.Reap(context.Background())
		}
	}
}

// Reap ends the shells idle for Options.Idle (no viewer, no input) and
// those whose chat is gone; it returns how many it ended.
func (s *Service) Reap(ctx context.Context) int {
	now := s.opt.Now()
	s.mu.Lock()
	list := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		list = append(list, ss)
	}
	s.mu.Unlock()
	n := 0
	for _, ss := range list {
		if ss.idleSince(now) >= s.opt.Idle {
			s.end(ss, ReasonIdle)
			n++
			continue
		}
		if s.opt.Check != nil {
			switch apperr.KindOf(s.opt.Check(ctx, ss.user, ss.chat)) {
			case apperr.NotFound:
				s.end(ss, ReasonChat)
				n++
			case apperr.Forbidden:
				// Agent chats turned off, agent.use taken away: not "the
				// chat was deleted".
				s.end(ss, ReasonRefused)
				n++
			}
		}
	}
	return n
}

// Attach opens a viewer of chat's shell for user, starting the shell on
// the first attach. The viewer's first message is "ready", then the
// scrollback, then what the shell prints. cols and rows are the viewer's
// size.
func (s *Service) Attach(ctx context.Context, user ids.UserID, chat ids.ChatID, cols, rows int) (*Viewer, error) {
	cols, rows = clampSize(cols, rows)
	if s.opt.Check != nil {
		if err := s.opt.Check(ctx, user, chat); err != nil {
			return nil, err
		}
	}
	// Refused before a shell is started for it, too (it would be left
	// running with no one to watch it).
	if err := s.roomForViewer(user); err != nil {
		return nil, err
	}
	for range 3 {
		ss, err := s.session(ctx, user, chat, cols, rows)
		if err != nil {
			return nil, err
		}
		select {
		case <-ss.announced:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		v, err := s.attachCapped(ss, cols, rows)
		if err != nil {
			return nil, err
		}
		if v != nil {
			ss.fit()
			return v, nil
		}
		// It was ended (its profile changed, say) between starting and
		// attaching: start another.
	}
	return nil, apperr.New(apperr.Unavailable, "The terminal was ended as it started; try again.")
}

// attachCapped attaches a viewer to ss unless its user has MaxViewers
// open already.
func (s *Service) attachCapped(ss *session, cols, rows int) (*Viewer, error) {
	s.attachMu.Lock()
	defer s.attachMu.Unlock()
	if err := s.roomForViewer(ss.user); err != nil {
		return nil, err
	}
	return ss.attach(cols, rows), nil
}

// roomForViewer refuses a viewer past user's MaxViewers.
func (s *Service) roomForViewer(user ids.UserID) error {
	s.mu.Lock()
	var mine []*session
	for _, o := range s.sessions {
		if o.user == user {
			mine = append(mine, o)
		}
	}
	s.mu.Unlock()
	n := 0
	for _, o := range mine {
		o.mu.Lock()
		n += len(o.viewers)
		o.mu.Unlock()
	}
	if n >= s.opt.MaxViewers {
		return apperr.New(apperr.Conflict, "%d terminal windows are open already; close one first.", n)
	}
	return nil
}

// session returns chat's running shell, starting one if there is none.
// Only one start runs per chat; others wait for it.
func (s *Service) session(ctx context.Context, user ids.UserID, chat ids.ChatID, cols, rows int) (*session, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, apperr.New(apperr.Unavailable, "The server is stopping.")
	}
	ss := s.sessions[chat]
	if ss != nil {
		s.mu.Unlock()
		if ss.user != user {
			return nil, apperr.New(apperr.NotFound, "no such chat")
		}
		select {
		case <-ss.started:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if ss.startErr != nil {
			return nil, ss.startErr
		}
		return ss, nil
	}
	// A person's shells are bounded: the longest idle one no one
	// watches makes room, else the new one is refused.
	var room *session
	var roomSince time.Time
	n := 0
	for _, o := range s.sessions {
		if o.user != user {
			continue
		}
		n++
		if since, ok := o.unwatched(); ok && (room == nil || since.Before(roomSince)) {
			room, roomSince = o, since
		}
	}
	if n >= s.opt.MaxShells {
		if room == nil {
			s.mu.Unlock()
			return nil, apperr.New(apperr.Conflict, "%d terminals are open already; close one first.", n)
		}
		delete(s.sessions, room.chat)
	} else {
		room = nil
	}
	ss = newSession(s, user, chat, cols, rows)
	s.sessions[chat] = ss
	s.mu.Unlock()
	if room != nil {
		room.close(ReasonIdle)
	}

	// Started apart from ctx (a tab that goes away mid-start must not
	// leave the next one a half-open shell), bounded by DialTimeout.
	dctx, cancel := context.WithTimeout(context.Background(), s.opt.DialTimeout)
	defer cancel()
	err := ss.start(dctx)
	if err != nil {
		s.mu.Lock()
		if s.sessions[chat] == ss {
			delete(s.sessions, chat)
		}
		s.mu.Unlock()
		return nil, err
	}
	return ss, nil
}

// Check says whether user may open chat's terminal (Options.Check): the
// WebSocket route asks before it upgrades.
func (s *Service) Check(ctx context.Context, user ids.UserID, chat ids.ChatID) error {
	if s.opt.Check == nil {
		return nil
	}
	return s.opt.Check(ctx, user, chat)
}

// LastCommand is what the marks say of the last command in user's chat.
// A chat without a running shell is NotFound.
func (s *Service) LastCommand(user ids.UserID, chat ids.ChatID) (LastCommand, error) {
	s.mu.Lock()
	ss := s.sessions[chat]
	s.mu.Unlock()
	if ss == nil || ss.user != user {
		return LastCommand{}, apperr.New(apperr.NotFound, "No terminal is open in this chat.")
	}
	return ss.lastCommand(), nil
}

// Running reports whether chat has a shell (tests, diagnostics).
func (s *Service) Running(chat ids.ChatID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.sessions[chat]
	return ok
}

// EndChat ends chat's shell (the chat was deleted or trashed).
func (s *Service) EndChat(chat ids.ChatID) {
	s.mu.Lock()
	ss := s.sessions[chat]
	s.mu.Unlock()
	if ss != nil {
		s.end(ss, ReasonChat)
	}
}

// EndProfile ends the shells of every chat on profile (changed or
// deleted), and those still connecting (they may be using the profile as
// it was; an attach waiting on one starts another).
func (s *Service) EndProfile(profile ids.ProfileID) {
	s.mu.Lock()
	var list []*session
	for _, ss := range s.sessions {
		if ss.on(profile) {
			list = append(list, ss)
		}
	}
	s.mu.Unlock()
	for _, ss := range list {
		s.end(ss, ReasonProfile)
	}
}

// Shutdown ends every shell and the reaper; later attaches are refused.
func (s *Service) Shutdown() {
	s.stopOnce.Do(func() { close(s.stop) })
	s.reaped.Wait()
	s.mu.Lock()
	s.closed = true
	list := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		list = append(list, ss)
	}
	s.mu.Unlock()
	for _, ss := range list {
		s.end(ss, ReasonShutdown)
	}
	// The closes run in the background; give them a moment to finish.
	deadline := time.After(5 * time.Second)
	for _, ss := range list {
		select {
		case <-ss.gone:
		case <-deadline:
			return
		}
	}
}

// end takes ss out of the service and closes it and its viewers.
func (s *Service) end(ss *session, reason string) {
	s.mu.Lock()
	if s.sessions[ss.chat] == ss {
		delete(s.sessions, ss.chat)
	}
	s.mu.Unlock()
	ss.close(reason)
}

// clampSize keeps a size within what a PTY takes and a person has.
func clampSize(cols, rows int) (int, int) {
	if cols <= 0 {
		cols = 80
	}
	if rows <= 0 {
		rows = 24
	}
	return min(max(cols, 2), 1000), min(max(rows, 1), 500)
}

// ErrClosed is what a closed viewer's Next returns once its closing
// message was read.
var ErrClosed = errors.New("terminal viewer closed")
