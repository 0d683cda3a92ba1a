package desktop

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/tests/harness"
)

// TestDesktopHide checks how the window gets out of the way while a tray
// icon can bring it back, with real X input under openbox: Escape typed in
// quick chat hides the window; closing it (the window manager's close, as
// the title bar's button does) hides it with close-to-tray on, and in quick
// chat; without close-to-tray closing the full window quits with exit code
// 0. Open LLeMbas in the tray brings a hidden window back at full size.
func TestDesktopHide(t *testing.T) {
	harness.Require(t, "Xvfb", "xwininfo", "xprop", "openbox", "dbus-daemon")
	bin := harness.Build(t, tags)
	display := harness.Xvfb(t)
	startOpenbox(t, display)
	x := harness.DialX(t, display)

	t.Run("escape hides quick chat", func(t *testing.T) {
		h := startHideApp(t, bin, display, nil)
		code, out, errOut := harness.Run(t, bin, h.env, "--quick")
		if code != 0 {
			t.Fatalf("lembas --quick: exit %d\n%s\n%s", code, out, errOut)
		}
		h.app.WaitOutput(t, `selftest PASS window quick `, 20*time.Second)
		waitCompact(t, display, h.win, true)
		waitMapped(t, display, h.win, true)

		// The key goes where a keyboard's would: to the focused window.
		x.Activate(t, harness.WindowID(t, h.win))
		waitActive(t, display, h.win)
		x.Key(t, 0xff1b) // Escape
		waitMapped(t, display, h.win, false)

		h.open(t)
		waitCompact(t, display, h.win, false)
		h.app.WaitOutput(t, `selftest PASS window full `, 20*time.Second)

		// Closing quick chat is Escape too, close-to-tray off as it is here.
		n := countLines(h.app.Stdout(), "selftest PASS window ")
		if code, _, _ := harness.Run(t, bin, h.env, "--quick"); code != 0 {
			t.Fatalf("second lembas --quick: exit %d", code)
		}
		waitReports(t, h.app, n+1)
		waitCompact(t, display, h.win, true)
		waitMapped(t, display, h.win, true)
		x.CloseWindow(t, harness.WindowID(t, h.win))
		waitMapped(t, display, h.win, false)
		h.open(t)
		waitCompact(t, display, h.win, false)
		h.quit(t)
	})

	t.Run("close to tray", func(t *testing.T) {
		h := startHideApp(t, bin, display, map[string]string{"close_to_tray": "1"})
		w, _ := windowSize(t, display, h.win)
		x.CloseWindow(t, harness.WindowID(t, h.win))
		waitMapped(t, display, h.win, false)
		if strings.Contains(h.app.Stdout()+h.app.Stderr(), "desktop app closed") {
			t.Fatal("closing the window quit the app with close-to-tray on")
		}
		// The tray answering proves the process is still there.
		h.open(t)
		if w2, _ := windowSize(t, display, h.win); w2 != w {
			t.Errorf("the window came back %d px wide, was %d", w2, w)
		}
		h.quit(t)
	})

	t.Run("close quits", func(t *testing.T) {
		h := startHideApp(t, bin, display, nil)
		x.CloseWindow(t, harness.WindowID(t, h.win))
		if code := h.app.Wait(t, 20*time.Second); code != 0 {
			t.Fatalf("exit code %d after closing the window, want 0", code)
		}
		if !strings.Contains(h.app.Stdout()+h.app.Stderr(), "desktop app closed") {
			t.Error("the app exited without closing its window cleanly")
		}
	})
}

// hideApp is one app with its own data, session bus and fake tray host,
// its self-test passed and its full window up.
type hideApp struct {
	app     *harness.Proc
	env     []string
	display string
	watcher *harness.FakeWatcher
	item    harness.TrayItem
	win     string
}

func startHideApp(t *testing.T, bin, display string, prefs map[string]string) *hideApp {
	t.Helper()
	bus := harness.SessionBus(t)
	watcher := harness.StartFakeWatcher(t, bus)
	harness.StartFakeNotifications(t, bus) // the self-test sends one
	dataDir := t.TempDir()
	env := harness.Env(dataDir, "DISPLAY="+display, "LEMBAS_SELFTEST=1", "XDG_RUNTIME_DIR=", "DBUS_SESSION_BUS_ADDRESS="+bus)
	llm := fakellm.New(t)
	llm.SetDefault(fakellm.Stream("An answer ", "for the self-test."))
	seedConnection(t, dataDir, llm.URL())
	for k, v := range prefs {
		setPref(t, dataDir, k, v)
	}
	app := harness.Start(t, bin, env)
	app.WaitOutput(t, `selftest (PASS|FAIL) (done|error)`, 90*time.Second)
	if fails := harness.Lines(app.Stdout(), "selftest FAIL"); len(fails) > 0 {
		t.Fatalf("self-test failures:\n%s", strings.Join(fails, "\n"))
	}
	h := &hideApp{app: app, env: env, display: display, watcher: watcher, item: watcher.WaitItem(t, 20*time.Second)}
	app.WaitOutput(t, `selftest PASS window full .*tray=true \(registered`, 20*time.Second)
	h.win = appWindow(t, display)
	waitMapped(t, display, h.win, true)
	if w, _ := windowSize(t, display, h.win); w < 700 {
		t.Fatalf("the full window is only %d px wide", w)
	}
	return h
}

// open chooses Open LLeMbas in the tray menu and waits for the window to
// be mapped at full size.
func (h *hideApp) open(t *testing.T) {
	t.Helper()
	h.watcher.Click(t, h.item, "Open LLeMbas")
	waitMapped(t, h.display, h.win, true)
	waitCompact(t, h.display, h.win, false)
}

// quit chooses Quit in the tray menu and expects exit code 0.
func (h *hideApp) quit(t *testing.T) {
	t.Helper()
	h.watcher.Click(t, h.item, "Quit")
	if code := h.app.Wait(t, 20*time.Second); code != 0 {
		t.Fatalf("exit code %d after Quit, want 0", code)
	}
}

// waitMapped waits for the window to be shown (xwininfo's IsViewable) or
// hidden: unmapped and withdrawn, not iconified (a minimised window is
// unmapped too, but WM_STATE says Iconic).
func waitMapped(t *testing.T, display, id string, mapped bool) {
	t.Helper()
	want := map[bool]string{true: "IsViewable", false: "IsUnMapped"}[mapped]
	var info, wmState string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		info = windowInfo(t, display, id)
		wmState = harness.X(t, display, "xprop", "-id", id, "WM_STATE")
		if strings.Contains(info, "Map State: "+want) && (mapped || !strings.Contains(wmState, "Iconic")) {
			return
		}
	}
	state := "unknown"
	if _, s, ok := strings.Cut(info, "Map State: "); ok {
		state, _, _ = strings.Cut(s, "\n")
	}
	t.Fatalf("window %s map state is %s (%s); want %s, not iconified", id, state, strings.Join(strings.Fields(wmState), " "), want)
}

// waitActive waits for the window manager to name id the active window.
func waitActive(t *testing.T, display, id string) {
	t.Helper()
	var got string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		got = harness.X(t, display, "xprop", "-root", "_NET_ACTIVE_WINDOW")
		if f := strings.Fields(got); len(f) > 0 && harness.WindowID(t, f[len(f)-1]) == harness.WindowID(t, id) {
			return
		}
	}
	t.Fatalf("window %s never became active: %s", id, strings.TrimSpace(got))
}

// windowInfo is xwininfo's report on one window. xwininfo reads the
// window's own attributes first and then walks up the tree for its
// absolute corners; while the window manager unmaps a window it destroys
// the frame around it, and that walk fails with BadWindow for the frame.
// A report that got as far as the map state is still a true report on
// this window, so only a failure before it means the window is gone.
func windowInfo(t *testing.T, display, id string) string {
	t.Helper()
	cmd := exec.Command("xwininfo", "-id", id)
	cmd.Env = append(os.Environ(), "DISPLAY="+display)
	out, err := cmd.CombinedOutput()
	if err != nil && !strings.Contains(string(out), "Map State:") {
		t.Fatalf("window %s is gone (did the app quit?): %s", id, strings.TrimSpace(string(out)))
	}
	return string(out)
}
