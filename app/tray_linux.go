//go:build desktop && linux

package main

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"fyne.io/systray"
	"github.com/godbus/dbus/v5"
)

const watcherName = "org.kde.StatusNotifierWatcher"

// tray is the StatusNotifierItem icon (fyne.io/systray, which talks D-Bus
// itself and leaves GTK's main loop to Wails). It is started only when a
// session bus answers: systray's end() dereferences a connection it never
// made when there was none. Whether the icon is shown is the watcher's
// business, so Status asks the bus each time instead of trusting a start.
type tray struct {
	log *slog.Logger

	mu      sync.Mutex
	reason  string // why there is no tray, when it did not start
	started bool
	end     func()
	conn    *dbus.Conn // our own connection, for status checks
	share   *systray.MenuItem
}

// startTray puts the icon and its menu on the session bus. act's functions
// run on a goroutine of their own, never on GTK's thread.
func startTray(log *slog.Logger, icon []byte, act trayActions) *tray {
	t := &tray{log: log}
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.reason = "no D-Bus session bus, so no tray icon (" + shortErr(err) + ")"
		log.Info("running without a tray", "why", t.reason)
		return t
	}
	t.conn = conn
	// A left click opens the window; the menu is on the right button.
	systray.SetOnTapped(act.Open)
	start, end := systray.RunWithExternalLoop(func() {
		systray.SetIcon(icon)
		systray.SetTitle("LLeMbas")
		systray.SetTooltip("LLeMbas")
		quick := systray.AddMenuItem("Quick chat", "A small window that stays on top")
		newChat := systray.AddMenuItem("New chat", "Open the window on a new chat")
		open := systray.AddMenuItem("Open LLeMbas", "Show the full window")
		systray.AddSeparator()
		share := systray.AddMenuItemCheckbox("Share on this network", "Serve LLeMbas to the other devices at home", false)
		t.mu.Lock()
		t.share = share
		t.mu.Unlock()
		systray.AddSeparator()
		quit := systray.AddMenuItem("Quit", "Quit LLeMbas")
		// systray drops a click when nobody is receiving at that moment
		// (a non-blocking send), so this loop only receives: every action
		// runs on a goroutine of its own. Stopping sharing waits for
		// connections to close, and a Quit chosen meanwhile was lost.
		go func() {
			for {
				select {
				case <-quick.ClickedCh:
					go act.Quick()
				case <-newChat.ClickedCh:
					go act.NewChat()
				case <-open.ClickedCh:
					go act.Open()
				case <-share.ClickedCh:
					if act.Share != nil {
						go act.Share()
					}
				case <-quit.ClickedCh:
					go act.Quit()
					return
				}
			}
		}()
	}, nil)
	start()
	t.started, t.end = true, end
	log.Info("tray icon started", "status", t.Status())
	return t
}

// SetSharing shows whether the app is shared, and where, on the menu's
// checkbox.
func (t *tray) SetSharing(on bool, where string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	item := t.share
	t.mu.Unlock()
	if item == nil {
		return
	}
	if on {
		item.Check()
		item.SetTitle("Share on this network (" + where + ")")
	} else {
		item.Uncheck()
		item.SetTitle("Share on this network")
	}
}

// Registered reports whether the icon is shown by a tray host right now.
func (t *tray) Registered() bool {
	ok, _ := t.check()
	return ok
}

// Status says, for the About card, whether the icon is shown or why not.
func (t *tray) Status() string {
	_, s := t.check()
	return s
}

func (t *tray) check() (bool, string) {
	if t == nil {
		return false, "no tray"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.started {
		return false, t.reason
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var has bool
	if err := t.conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus.NameHasOwner", 0, watcherName).Store(&has); err != nil {
		return false, "the session bus did not answer (" + shortErr(err) + ")"
	}
	if !has {
		return false, "no tray host: nothing on the session bus shows tray icons (no StatusNotifierWatcher)"
	}
	w := t.conn.Object(watcherName, "/StatusNotifierWatcher")
	if v, err := w.GetProperty(watcherName + ".IsStatusNotifierHostRegistered"); err == nil {
		if b, ok := v.Value().(bool); ok && !b {
			return false, "no tray host: a StatusNotifierWatcher runs but no panel shows its icons"
		}
	}
	if v, err := w.GetProperty(watcherName + ".RegisteredStatusNotifierItems"); err == nil {
		items, _ := v.Value().([]string)
		if me := ourBusName(); me != "" && !slices.ContainsFunc(items, func(s string) bool { return strings.HasPrefix(s, me) }) {
			return false, "the tray host has not taken the icon (yet)"
		}
	}
	return true, "registered (StatusNotifierItem)"
}

// ourBusName is the unique name of the connection systray uses (the shared
// session bus connection).
func ourBusName() string {
	c, err := dbus.SessionBus()
	if err != nil || len(c.Names()) == 0 {
		return ""
	}
	return c.Names()[0]
}

// Close removes the icon. It is a no-op when the tray never started.
func (t *tray) Close() {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.started {
		t.started = false
		t.reason = "closed"
		func() {
			// end() dereferences systray's connection, which is nil if its
			// own start failed half-way; the app is closing anyway.
			defer func() {
				if r := recover(); r != nil {
					t.log.Warn("tray did not close cleanly", "panic", r)
				}
			}()
			t.end()
		}()
	}
	if t.conn != nil {
		t.conn.Close()
		t.conn = nil
	}
}

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 120 {
		s = s[:119] + "…"
	}
	return s
}
