//go:build desktop

package main

import (
	"context"
	"os"
	"strconv"
	"time"

	wruntime "github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/llembas/lembas/backend/events"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/settings"
)

// Quick chat is the one window (Wails v2 has one per process) switched to a
// compact, always-on-top mode; "Open in full window" puts back the size and
// place it had.
const quickWidth, quickHeight = 460, 600

// WindowState is what the frontend needs to know about the window, sent as
// the `window` event and returned by Desktop.State.
type WindowState struct {
	// Mode is "full" or "quick".
	Mode string `json:"mode"`
	// Seq grows each time quick chat is (re)opened; with it, ChatID is
	// the chat to show (0: a new chat).
	Seq    int        `json:"seq"`
	ChatID ids.ChatID `json:"chatId"`
	// NewChat asks the full window for a new chat (the tray's New chat).
	NewChat bool `json:"newChat,omitempty"`
	// Tray is whether a tray icon is shown; TrayStatus says why not.
	Tray       bool   `json:"tray"`
	TrayStatus string `json:"trayStatus"`
	// BenchReplies (LEMBAS_BENCH_REPLIES, build/bench.sh only) makes the
	// window stream that many replies to measure its memory.
	BenchReplies int `json:"benchReplies,omitempty"`
}

// enterQuick switches the window to quick chat and shows it. When it is
// already showing quick chat it is only brought forward.
func (d *desktop) enterQuick() {
	d.mu.Lock()
	wctx := d.wctx
	if wctx == nil {
		d.quick = true // applied by OnStartup
		d.mu.Unlock()
		return
	}
	wasQuick, wasHidden := d.quick, d.hidden
	d.hidden = false
	d.mu.Unlock()

	if !wasQuick {
		var full windowState
		full.Width, full.Height = wruntime.WindowGetSize(wctx)
		full.X, full.Y = wruntime.WindowGetPosition(wctx)
		max := wruntime.WindowIsMaximised(wctx)
		if max {
			wruntime.WindowUnmaximise(wctx)
		}
		d.mu.Lock()
		d.full, d.fullPlaced, d.fullMax = full, true, max
		d.mu.Unlock()
	}
	fresh := !wasQuick || wasHidden
	d.mu.Lock()
	d.quick = true
	if fresh {
		d.seq++
	}
	d.mu.Unlock()
	if !wasQuick {
		setGeometry(wctx, quickWidth, quickHeight, 1)
		wruntime.WindowCenter(wctx)
	} else {
		setGeometry(wctx, 0, 0, 1)
	}
	wruntime.WindowUnminimise(wctx)
	wruntime.WindowShow(wctx)
	d.log.Info("window mode", "mode", "quick", "fresh", fresh)
	if fresh {
		d.publishWindow(false)
	}
}

// leaveQuick puts the window back as it was before quick chat. The chat
// shown stays: it is the same page.
func (d *desktop) leaveQuick(newChat bool) {
	d.mu.Lock()
	wctx, was := d.wctx, d.quick
	full, placed, max := d.full, d.fullPlaced, d.fullMax
	d.quick, d.hidden = false, false
	d.mu.Unlock()
	if wctx == nil {
		return
	}
	if was {
		setGeometry(wctx, full.Width, full.Height, 0)
		if placed {
			wruntime.WindowSetPosition(wctx, full.X, full.Y)
		} else {
			wruntime.WindowCenter(wctx)
		}
		if max {
			wruntime.WindowMaximise(wctx)
		}
		d.log.Info("window mode", "mode", "full", "width", full.Width, "height", full.Height, "placed", placed, "max", max)
	}
	wruntime.WindowUnminimise(wctx)
	wruntime.WindowShow(wctx)
	if was || newChat {
		d.publishWindow(newChat)
	}
}

// hide takes the window out of the way (Escape in quick chat): hidden when
// the tray can bring it back, minimised when nothing could.
func (d *desktop) hide() {
	d.mu.Lock()
	wctx := d.wctx
	d.mu.Unlock()
	if wctx == nil {
		return
	}
	if d.tray.Registered() {
		d.mu.Lock()
		d.hidden = true
		d.mu.Unlock()
		wruntime.WindowHide(wctx)
		return
	}
	wruntime.WindowMinimise(wctx)
}

// quit closes the app for real, even with close-to-tray on.
func (d *desktop) quit() {
	d.quitting.Store(true)
	d.mu.Lock()
	wctx := d.wctx
	d.mu.Unlock()
	if wctx != nil {
		wruntime.Quit(wctx)
	}
}

func (d *desktop) state() WindowState {
	d.mu.Lock()
	s := WindowState{Mode: "full", Seq: d.seq, BenchReplies: d.benchReplies}
	quick := d.quick
	d.mu.Unlock()
	if quick {
		s.Mode = "quick"
		s.ChatID = d.quickChat()
	}
	s.Tray, s.TrayStatus = d.tray.check()
	return s
}

func (d *desktop) publishWindow(newChat bool) {
	s := d.state()
	s.NewChat = newChat
	d.core.Bus.Publish(events.Event{Topic: "window", UserID: d.core.Owner.ID, Data: s})
}

// quickChat is the chat quick chat opens on: the last quick one when the
// owner chose to continue it and it is still there, else 0 (a new chat).
func (d *desktop) quickChat() ids.ChatID {
	ctx := context.Background()
	owner := d.core.Owner.ID
	m, err := d.core.DB.Prefs(ctx, owner)
	if err != nil {
		return 0
	}
	p := settings.DesktopPrefsFrom(m)
	if !p.QuickContinue || p.QuickChat == 0 {
		return 0
	}
	c, err := d.core.DB.ChatByID(ctx, ids.UserID(owner), p.QuickChat)
	if err != nil || c.DeletedAt != nil {
		return 0
	}
	return c.ID
}

// closeToTray reports whether closing the window should hide it instead.
func (d *desktop) closeToTray() bool {
	if d.quitting.Load() {
		return false
	}
	d.mu.Lock()
	quick := d.quick
	d.mu.Unlock()
	if !d.tray.Registered() {
		return false
	}
	if quick {
		return true // closing quick chat is Escape
	}
	m, err := d.core.DB.Prefs(context.Background(), d.core.Owner.ID)
	return err == nil && settings.DesktopPrefsFrom(m).CloseToTray
}

// windowToSave is the full window's size and place, also while quick chat
// has made it small.
func (d *desktop) windowToSave(wctx context.Context) (windowState, bool) {
	d.mu.Lock()
	quick, full, placed := d.quick, d.full, d.fullPlaced
	d.mu.Unlock()
	if quick {
		return full, placed
	}
	var ws windowState
	ws.Width, ws.Height = wruntime.WindowGetSize(wctx)
	ws.X, ws.Y = wruntime.WindowGetPosition(wctx)
	return ws, true
}

// DesktopFacade is the Desktop facade: the window's modes for the frontend.
// It exists only in the desktop app, and only the owner's window uses it:
// with sharing on, browsers (even the owner's phone) reach the facades
// too, so its guards (api.Table["Desktop"]) refuse every caller but the
// desktop window itself.
type DesktopFacade struct{ d *desktop }

// State returns the window's mode and whether there is a tray.
func (f *DesktopFacade) State(ctx context.Context) (WindowState, error) {
	return f.d.state(), nil
}

// Quick opens quick chat (the in-app shortcut).
func (f *DesktopFacade) Quick(ctx context.Context) error {
	go f.d.enterQuick()
	return nil
}

// Full leaves quick chat for the full window, keeping the chat.
func (f *DesktopFacade) Full(ctx context.Context) error {
	go f.d.leaveQuick(false)
	return nil
}

// Hide hides the window (Escape in quick chat).
func (f *DesktopFacade) Hide(ctx context.Context) error {
	go f.d.hide()
	return nil
}

// Shown is called once by the frontend when its first screen is drawn
// (the last chat's messages, or a new chat): the start-up figure ends here.
func (f *DesktopFacade) Shown(ctx context.Context, route string) error {
	if len(route) > 64 {
		route = route[:64]
	}
	f.d.log.Info("window shown", "route", route, "ms", time.Since(processStart).Milliseconds())
	return nil
}

// Mark logs a step of the memory benchmark (build/bench.sh), which reads
// the log and measures the processes at that moment.
func (f *DesktopFacade) Mark(ctx context.Context, stage string, n int) error {
	f.d.log.Info("bench mark", "stage", stage, "n", n)
	return nil
}

// processStart is when this process began, near enough (package variables
// are set before main).
var processStart = time.Now()

// benchReplies reads LEMBAS_BENCH_REPLIES, which only build/bench.sh sets.
func benchReplies() int {
	n, _ := strconv.Atoi(os.Getenv("LEMBAS_BENCH_REPLIES"))
	if n < 0 || n > 10000 {
		return 0
	}
	return n
}
