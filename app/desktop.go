//go:build desktop

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	wruntime "github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/llembas/lembas/assets"
	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/config"
	"github.com/llembas/lembas/backend/core"
	"github.com/llembas/lembas/backend/events"
	"github.com/llembas/lembas/backend/single"
)

// eventName is the one Wails event every bus event travels in.
const eventName = "lembas"

func (c *cli) runDesktop(ctx context.Context, cfg config.Config, quick bool) error {
	if runtime.GOOS == "linux" && os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
		// GTK panics without a display; say so instead.
		return &exitError{code: 2, err: errors.New("no display found (DISPLAY and WAYLAND_DISPLAY are unset), so the desktop window cannot open.\n" +
			"Serve LLeMbas to a browser instead:  lembas --serve   (then open http://" + cfg.Addr + "/)")}
	}
	log := c.logger(cfg)

	// A second launch hands its arguments to the running app and exits
	// before touching the lock or the database.
	sock := single.SocketPath(cfg.DataDir)
	if err := single.Handoff(sock, single.Message{Args: os.Args[1:]}); err == nil {
		fmt.Fprintln(c.stdout, "LLeMbas is already running; brought its window forward.")
		return nil
	} else if !errors.Is(err, single.ErrNoInstance) {
		log.Warn("handoff failed; starting a new instance", "err", err)
	}

	d := &desktop{log: log, quick: quick, benchReplies: benchReplies()}
	if quick {
		d.seq = 1
	}
	// The tray goes up before the window (fyne.io/systray needs no GTK:
	// it talks D-Bus on its own goroutines).
	d.tray = startTray(log, assets.Icon256, trayActions{
		Quick:   func() { d.enterQuick() },
		NewChat: func() { d.leaveQuick(true) },
		Open:    func() { d.leaveQuick(false) },
		Quit:    func() { d.quit() },
		Share:   func() { d.toggleSharing() },
	})
	defer d.tray.Close()
	d.sharer = newSharer(log, cfg.Addr)
	d.sharer.onChange = d.sharingChanged

	opt := coreOptions(core.Desktop, log)
	opt.OpenURL = openInBrowser
	notes := &notifier{}
	defer notes.Close()
	opt.Notify = notes.Notify
	opt.TrayStatus = d.tray.Status
	opt.Sharer = d.sharer
	cr, err := openCore(ctx, cfg, opt)
	if err != nil {
		return err
	}
	defer cr.Close()
	d.sharer.attach(cr)
	defer d.sharer.close()
	handler, err := cr.Handler(true)
	if err != nil {
		return err
	}

	d.core = cr
	cr.Dispatcher.Register("Desktop", &DesktopFacade{d}, api.Table["Desktop"])
	ln, err := single.Listen(sock, log, d.handoff)
	if err != nil {
		log.Warn("single-instance socket unavailable; a second launch will be refused by the lock instead", "err", err)
	} else {
		defer ln.Close()
	}
	bridge := &Bridge{dispatcher: cr.Dispatcher, caller: cr.OwnerCaller}
	win, placed := loadWindowState(cfg.DataDir)
	width, height := win.Width, win.Height
	if quick {
		// Started by `lembas --quick` with no app running: open as quick
		// chat; "Open in full window" goes to the saved size and place.
		d.full, d.fullPlaced = win, placed
		width, height = quickWidth, quickHeight
	}

	err = wails.Run(&options.App{
		Title:       "LLeMbas",
		Width:       width,
		Height:      height,
		AlwaysOnTop: quick,
		MinWidth:    minWidth,
		MinHeight:   minHeight,
		AssetServer: &assetserver.Options{
			Handler: handler,
		},
		BackgroundColour: &options.RGBA{R: 0x17, G: 0x18, B: 0x1c, A: 0xff},
		Bind:             []any{bridge},
		Logger:           wailsLogger{log},
		OnStartup: func(wctx context.Context) {
			d.start(wctx)
			hookWebView(log, func(paths []string) { go d.droppedFiles(wctx, paths) })
			if placed && !quick {
				wruntime.WindowSetPosition(wctx, win.X, win.Y)
			}
			// Quit the window on SIGINT/SIGTERM so that deferred cleanups
			// run and the exit code is 0. Wails v2.9.2 starts its own
			// handler for these signals, which quits from a goroutine too;
			// with ours, two gtk_main_quit calls raced the main loop's
			// teardown and crashed now and then (seen in CI). Take the
			// signals back so that exactly one handler quits.
			signal.Reset(os.Interrupt, syscall.SIGTERM)
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
			go func() {
				select {
				case <-sigs:
				case <-ctx.Done(): // a signal before the reset
				case <-wctx.Done():
					return
				}
				log.Info("signal received; closing the window")
				d.quit()
			}()
		},
		OnDomReady: func(context.Context) {
			// WebKit has installed its signal handlers by now.
			restoreOnStack()
		},
		OnShutdown: func(context.Context) { d.stop() },
		OnBeforeClose: func(wctx context.Context) bool {
			if d.closeToTray() {
				// Close-to-tray (a preference, or quick chat): hide, and
				// let the tray bring it back.
				d.hide()
				return true
			}
			// Remember where the full window was; Quit runs this too.
			if ws, ok := d.windowToSave(wctx); ok {
				if err := saveWindowState(cfg.DataDir, ws); err != nil {
					log.Warn("could not save the window's size", "err", err)
				}
			}
			return false
		},
		// No DragAndDrop options. Files dropped onto the window are taken
		// from GTK's own drag signals (webview_linux.c) and shelved by
		// droppedFiles: WebKitGTK gives the page no File for a drop from
		// outside any more (the fix for CVE-2025-13947), and Wails'
		// EnableFileDrop reports drops on a channel page scripts can
		// forge. WebKit still acts on the drop afterwards: the page
		// cancels it, and the navigation guard refuses the file:// load
		// WebKit falls back to.
		Linux: &linux.Options{
			ProgramName: "lembas",
			Icon:        assets.Icon256,
			// Wails turns WebKit's GPU compositing off only when no Linux
			// options are given; giving any (the zero value is Always) turned
			// it on. Composited, the web process grew by 250 MB over 200
			// streamed replies (its tile and texture caches, in RAM with
			// Mesa's software GL); without, by 30 MB (docs/NOTES.md).
			WebviewGpuPolicy: linux.WebviewGpuPolicyNever,
		},
	})
	if err != nil {
		return fmt.Errorf("desktop window: %w", err)
	}
	log.Info("desktop app closed")
	return nil
}

// desktop is the glue between the core and the Wails runtime. Only this
// file and the bridge touch the runtime, and only with the context Wails
// handed to OnStartup (any other context makes the runtime call log.Fatal).
type desktop struct {
	core   *core.Core
	log    *slog.Logger
	tray   *tray
	sharer *sharer
	// quitting is set by a real Quit, which close-to-tray must let through.
	quitting     atomic.Bool
	benchReplies int

	mu   sync.Mutex
	wctx context.Context
	sub  *events.Sub
	done chan struct{}
	// quick chat: the mode, whether Escape hid it, how often it was opened,
	// and the full window's size and place to go back to.
	quick, hidden bool
	seq           int
	full          windowState
	fullPlaced    bool
	fullMax       bool
}

func (d *desktop) start(wctx context.Context) {
	d.mu.Lock()
	d.wctx = wctx
	d.done = make(chan struct{})
	d.mu.Unlock()
	go d.forwardEvents(wctx)
	go d.sharer.resume(wctx)
}

// droppedFiles shelves files dropped onto the window and tells the window
// (only it: not the owner's other devices) what it may claim.
func (d *desktop) droppedFiles(wctx context.Context, paths []string) {
	offers := d.core.Drops.Offer(paths)
	if len(offers) == 0 {
		return
	}
	d.log.Info("files dropped onto the window", "count", len(offers))
	wruntime.EventsEmit(wctx, eventName, events.Envelope{Topic: "files-dropped", Data: offers})
}

// toggleSharing is the tray's "Share on this network". Turning it on the
// first time needs a password, which the window asks for: it opens on the
// sharing settings instead.
func (d *desktop) toggleSharing() {
	ctx := context.Background()
	st := d.sharer.Status(ctx)
	if st.On {
		d.sharer.Stop(ctx)
		return
	}
	if st.NeedsPassword {
		d.leaveQuick(false)
		d.publishSharing(ctx, true)
		return
	}
	if _, err := d.sharer.Start(ctx); err != nil {
		d.log.Warn("sharing from the tray failed", "err", err)
		d.leaveQuick(false)
		d.publishSharing(ctx, true)
	}
}

// sharingChanged keeps the tray's checkbox and the window's settings in
// step with the sharer.
func (d *desktop) sharingChanged(on bool) {
	ctx := context.Background()
	st := d.sharer.Status(ctx)
	where := ""
	if len(st.Addresses) > 0 {
		where = strings.TrimSuffix(strings.TrimPrefix(st.Addresses[0], "http://"), "/")
	}
	d.tray.SetSharing(st.On, where)
	d.publishSharing(ctx, false)
}

// publishSharing tells the window the sharing state; open asks it to show
// the sharing settings.
func (d *desktop) publishSharing(ctx context.Context, open bool) {
	if d.core == nil {
		return
	}
	d.core.Bus.Publish(events.Event{Topic: "sharing", UserID: d.core.Owner.ID,
		Data: struct {
			api.ShareStatus
			Open bool `json:"open"`
		}{d.sharer.Status(ctx), open}})
}

// forwardEvents is the Wails sink of the event bus: the owner's events go
// to the window as one Wails event. A window that falls behind loses only
// the backlog of the topic that overflowed, and gets a resync event in its
// place (events.Sub), on which the frontend reloads what it shows.
func (d *desktop) forwardEvents(wctx context.Context) {
	sub := d.core.Bus.Subscribe(d.core.Owner.ID, 1024)
	d.mu.Lock()
	d.sub = sub
	d.mu.Unlock()
	for ev := range sub.C() {
		wruntime.EventsEmit(wctx, eventName, events.Envelope{Topic: ev.Topic, Data: ev.Data})
	}
}

func (d *desktop) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done != nil {
		close(d.done)
	}
	if d.sub != nil {
		d.sub.Close()
	}
}

// handoff is called when a second launch hands over its arguments: quick
// chat for `lembas --quick`, else the full window brought forward.
func (d *desktop) handoff(m single.Message) {
	d.log.Info("second launch handed over", "args", m.Args)
	if slices.Contains(m.Args, "--quick") {
		d.enterQuick()
	} else {
		d.leaveQuick(false)
	}
	d.core.Bus.Publish(events.Event{Topic: "handoff", UserID: d.core.Owner.ID, Data: m.Args})
}

// openInBrowser opens a vetted link with the desktop's opener. The URL is
// checked by App.OpenURL before it gets here; it is passed as one argument,
// never through a shell.
func openInBrowser(link string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", link)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", link)
	default:
		cmd = exec.Command("xdg-open", link)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}

// wailsLogger sends Wails' own log lines to our slog logger.
type wailsLogger struct{ log *slog.Logger }

func (l wailsLogger) Print(m string)   { l.log.Info(m, "from", "wails") }
func (l wailsLogger) Trace(m string)   { l.log.Debug(m, "from", "wails") }
func (l wailsLogger) Debug(m string)   { l.log.Debug(m, "from", "wails") }
func (l wailsLogger) Info(m string)    { l.log.Debug(m, "from", "wails") }
func (l wailsLogger) Warning(m string) { l.log.Warn(m, "from", "wails") }
func (l wailsLogger) Error(m string)   { l.log.Error(m, "from", "wails") }
func (l wailsLogger) Fatal(m string)   { l.log.Error(m, "from", "wails"); os.Exit(1) }
