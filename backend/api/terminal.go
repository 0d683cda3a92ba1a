package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/events"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/terminal"
)

// TopicTerminal carries the desktop window's terminal output (Terminal
// events), to the owner only: the browser's event stream skips it (a
// browser has its own WebSocket).
const TopicTerminal = "terminal"

// Terminal is the facade of the terminal panel in the desktop window,
// which has no WebSocket: output arrives as TopicTerminal events, input
// and sizes as calls. (Browsers use GET /api/terminal/{chatID}.) Its
// LastCommand serves both.
type Terminal struct {
	svc *terminal.Service
	bus events.Publisher

	mu      sync.Mutex
	viewers map[string]*deskViewer
}

type deskViewer struct {
	id     string
	chat   ids.ChatID
	v      *terminal.Viewer
	cancel context.CancelFunc
}

// NewTerminal returns the Terminal facade.
func NewTerminal(svc *terminal.Service, bus events.Publisher) *Terminal {
	return &Terminal{svc: svc, bus: bus, viewers: map[string]*deskViewer{}}
}

// TerminalOpened names the viewer that Open attached.
type TerminalOpened struct {
	Viewer string `json:"viewer"`
}

// TerminalEvent is one TopicTerminal event: terminal bytes (data, base64
// in JSON), or "ready" (marks, cols, rows), "closed" (reason) or "error"
// (message).
type TerminalEvent struct {
	Viewer  string `json:"viewer"`
	Data    []byte `json:"data,omitempty"`
	Type    string `json:"type,omitempty"`
	Marks   *bool  `json:"marks,omitempty"`
	Cols    int    `json:"cols,omitempty"`
	Rows    int    `json:"rows,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// Open attaches the desktop window to chat's shell (starting it), as a
// viewer of cols × rows; its output follows as events. The window has one
// viewer per chat: opening again (after a reload, or a resync of the
// terminal topic) replaces the one before.
func (t *Terminal) Open(ctx context.Context, chat ids.ChatID, cols, rows int) (TerminalOpened, error) {
	user := ids.UserID(CallerFrom(ctx).UserID)
	v, err := t.svc.Attach(ctx, user, chat, cols, rows)
	if err != nil {
		return TerminalOpened{}, err
	}
	b := make([]byte, 12)
	rand.Read(b)
	dv := &deskViewer{id: hex.EncodeToString(b), chat: chat, v: v}
	var pctx context.Context
	pctx, dv.cancel = context.WithCancel(context.Background())
	t.mu.Lock()
	var old []*deskViewer
	for id, o := range t.viewers {
		if o.chat == chat {
			old = append(old, o)
			delete(t.viewers, id)
		}
	}
	t.viewers[dv.id] = dv
	t.mu.Unlock()
	for _, o := range old {
		o.close()
	}
	go t.pump(pctx, int64(user), dv)
	return TerminalOpened{Viewer: dv.id}, nil
}

// deskEvery is the least time between two of the window's terminal
// events (each up to 64 KiB): 4 MB/s at most.
const deskEvery = 16 * time.Millisecond

// pump publishes what the viewer receives. The bus never waits: a window
// that falls behind loses the topic's backlog and gets a resync for
// "terminal", on which it opens again (and gets the scrollback).
func (t *Terminal) pump(ctx context.Context, user int64, dv *deskViewer) {
	defer func() {
		t.mu.Lock()
		if t.viewers[dv.id] == dv {
			delete(t.viewers, dv.id)
		}
		t.mu.Unlock()
	}()
	var last time.Time
	for {
		// Paced: the window's web view takes each event as a script call,
		// and a shell printing faster than this fills the viewer's queue,
		// which drops it (closed, slow) like a slow browser tab, rather
		// than the bus holding a backlog of output for the window.
		if wait := deskEvery - time.Since(last); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return
			}
		}
		m, err := dv.v.Next(ctx)
		if err != nil {
			return
		}
		last = time.Now()
		ev := TerminalEvent{Viewer: dv.id, Data: m.Data, Type: m.Type, Reason: m.Reason}
		if m.Type == "ready" {
			marks := m.Marks
			ev.Marks, ev.Cols, ev.Rows = &marks, m.Cols, m.Rows
		}
		t.bus.Publish(events.Event{Topic: TopicTerminal, UserID: user, Data: ev})
	}
}

func (dv *deskViewer) close() {
	dv.v.Close()
	dv.cancel()
}

func (t *Terminal) viewer(id string) (*deskViewer, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	dv, ok := t.viewers[id]
	if !ok {
		return nil, apperr.New(apperr.NotFound, "This terminal was closed; open it again.")
	}
	return dv, nil
}

// Input types data (base64 in JSON) into the viewer's shell.
func (t *Terminal) Input(ctx context.Context, viewer string, data []byte) error {
	dv, err := t.viewer(viewer)
	if err != nil {
		return err
	}
	if err := dv.v.Input(data); err != nil {
		if errors.Is(err, terminal.ErrClosed) {
			return apperr.New(apperr.NotFound, "This terminal was closed; open it again.")
		}
		return apperr.Wrap(apperr.Unavailable, err, "The shell did not take the input.")
	}
	return nil
}

// Resize sets the viewer's size (the smallest viewer's is the shell's).
func (t *Terminal) Resize(ctx context.Context, viewer string, cols, rows int) error {
	dv, err := t.viewer(viewer)
	if err != nil {
		return err
	}
	dv.v.Resize(cols, rows)
	return nil
}

// Close detaches the viewer; the shell goes on.
func (t *Terminal) Close(ctx context.Context, viewer string) error {
	t.mu.Lock()
	dv := t.viewers[viewer]
	delete(t.viewers, viewer)
	t.mu.Unlock()
	if dv != nil {
		dv.close()
	}
	return nil
}

// LastCommand is the last command run in chat's shell, its output and
// exit status, from the shell's marks (marks false: the shell sets none).
func (t *Terminal) LastCommand(ctx context.Context, chat ids.ChatID) (terminal.LastCommand, error) {
	return t.svc.LastCommand(ids.UserID(CallerFrom(ctx).UserID), chat)
}

// TerminalRoutes opens terminals for the WebSocket route
// (httpapi.Terminals), as the resolved caller.
type TerminalRoutes struct {
	svc     *terminal.Service
	permits Permits
}

// NewTerminalRoutes returns the WebSocket route's terminals.
func NewTerminalRoutes(svc *terminal.Service, permits Permits) TerminalRoutes {
	return TerminalRoutes{svc: svc, permits: permits}
}

// Check refuses a caller without agent.use, or whose agent chat chat is
// not (another person's is not found, like none).
func (r TerminalRoutes) Check(ctx context.Context, c Caller, chat int64) error {
	ctx = WithCaller(ctx, c)
	if err := r.permits.Require(ctx, auth.AgentUse); err != nil {
		return err
	}
	return r.svc.Check(ctx, ids.UserID(c.UserID), ids.ChatID(chat))
}

// Attach attaches a viewer of cols × rows to chat's shell, starting it.
func (r TerminalRoutes) Attach(ctx context.Context, c Caller, chat int64, cols, rows int) (*terminal.Viewer, error) {
	if err := r.Check(ctx, c, chat); err != nil {
		return nil, err
	}
	return r.svc.Attach(ctx, ids.UserID(c.UserID), ids.ChatID(chat), cols, rows)
}
