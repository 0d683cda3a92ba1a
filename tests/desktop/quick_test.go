package desktop

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/tests/harness"
)

// TestDesktopAppQuickChat runs the app under a window manager (openbox) with
// a fake tray host on a private session bus. `lembas --quick`, handed to the
// running app, makes the window compact and always on top; the tray menu's
// items work (Open LLeMbas puts the full window back, Quick chat, New chat,
// Quit); an app started with --quick opens as quick chat. It screenshots
// quick chat in both themes (the name matches `make screenshots`).
func TestDesktopAppQuickChat(t *testing.T) {
	harness.Require(t, "Xvfb", "xwininfo", "xprop", "openbox")
	bin := harness.Build(t, tags)
	display := harness.Xvfb(t)
	startOpenbox(t, display)
	bus := harness.SessionBus(t)
	watcher := harness.StartFakeWatcher(t, bus)
	harness.StartFakeNotifications(t, bus) // the self-test sends one
	dataDir := t.TempDir()
	sharePort := freePort(t)
	env := harness.Env(dataDir, "DISPLAY="+display, "LEMBAS_SELFTEST=1", "XDG_RUNTIME_DIR=", "DBUS_SESSION_BUS_ADDRESS="+bus,
		"LEMBAS_ADDR=127.0.0.1:"+sharePort)
	llm := fakellm.New(t)
	llm.SetDefault(fakellm.Stream("A quick answer, ", "kept with ", "the other chats.").Every(10 * time.Millisecond))
	seedConnection(t, dataDir, llm.URL())
	// Quick chat continues the last quick chat: chat 1, which the self-test
	// creates, so that the screenshots show a conversation.
	setPref(t, dataDir, "quick_continue", "1")
	setPref(t, dataDir, "quick_chat", "1")

	app := harness.Start(t, bin, env)
	app.WaitOutput(t, `selftest (PASS|FAIL) (done|error)`, 90*time.Second)
	if fails := harness.Lines(app.Stdout(), "selftest FAIL"); len(fails) > 0 {
		t.Fatalf("self-test failures:\n%s", strings.Join(fails, "\n"))
	}
	theme := app.WaitOutput(t, `selftest PASS theme (\w+)`, time.Second)[1]
	item := watcher.WaitItem(t, 20*time.Second)
	win := appWindow(t, display)
	if w, _ := windowSize(t, display, win); w < 700 {
		t.Fatalf("the full window is only %d px wide", w)
	}

	t.Run("quick from a second launch", func(t *testing.T) {
		code, out, errOut := harness.Run(t, bin, env, "--quick")
		if code != 0 || !strings.Contains(out, "already running") {
			t.Fatalf("lembas --quick: exit %d\n%s\n%s", code, out, errOut)
		}
		app.WaitOutput(t, `selftest PASS window quick #/chat/1 `, 20*time.Second)
		waitCompact(t, display, win, true)
		waitAbove(t, display, win, true)
		screenshotWindow(t, display, win, "quick-"+theme+".png")
	})

	t.Run("tray menu", func(t *testing.T) {
		_, entries := watcher.Menu(t, item)
		var labels []string
		for _, e := range entries {
			labels = append(labels, e.Label)
		}
		if got := strings.Join(labels, ", "); got != "Quick chat, New chat, Open LLeMbas, Share on this network, Quit" {
			t.Fatalf("tray menu: %s", got)
		}
		n := countLines(app.Stdout(), "selftest PASS window ")
		watcher.Click(t, item, "Open LLeMbas")
		waitReports(t, app, n+1)
		l := lastLine(app.Stdout(), "selftest PASS window ")
		if !strings.Contains(l, "window full #/chat/1 ") {
			t.Errorf("Open LLeMbas did not carry the chat over: %s", l)
		}
		// The tray is registered, and the About card says so.
		if !strings.Contains(l, "tray=true (registered") || !strings.Contains(l, "about=registered") {
			t.Errorf("tray state: %s", l)
		}
		waitCompact(t, display, win, false)
		waitAbove(t, display, win, false)

		n = countLines(app.Stdout(), "selftest PASS window ")
		watcher.Click(t, item, "Quick chat")
		waitReports(t, app, n+1)
		waitCompact(t, display, win, true)
		waitAbove(t, display, win, true)

		n = countLines(app.Stdout(), "selftest PASS window ")
		watcher.Click(t, item, "New chat")
		waitReports(t, app, n+1)
		if l := lastLine(app.Stdout(), "selftest PASS window "); !strings.Contains(l, "window full #/ ") {
			t.Errorf("New chat: %s", l)
		}
		waitCompact(t, display, win, false)

		// Share on this network: with a password for the owner, the tray
		// starts the household server in the app and stops it again.
		owner := ownerName(t, dataDir)
		harness.Must(t, setPassword(bin, env, owner, "owner-shares-from-tray"), "create-admin")
		base := "http://127.0.0.1:" + sharePort
		watcher.Click(t, item, "Share on this network")
		waitServing(t, base, true)
		c := harness.Login(t, base, owner, "owner-shares-from-tray")
		var me struct{ Username string }
		harness.APIAs(t, c, base, "Account.Me", &me)
		if me.Username != owner {
			t.Errorf("signed in over the LAN as %q, want the owner %q", me.Username, owner)
		}
		_, entries = watcher.Menu(t, item)
		if !slices.ContainsFunc(entries, func(e harness.MenuEntry) bool {
			return strings.HasPrefix(e.Label, "Share on this network (") && e.Toggled
		}) {
			t.Errorf("the tray does not show sharing as on: %+v", entries)
		}
		watcher.Click(t, item, "Share on this network (")
		waitServing(t, base, false)

		watcher.Click(t, item, "Quit")
		if code := app.Wait(t, 20*time.Second); code != 0 {
			t.Fatalf("exit code %d after Quit, want 0", code)
		}
	})
	if t.Failed() {
		return
	}

	t.Run("started with --quick", func(t *testing.T) {
		other := map[string]string{"moria": "shire", "shire": "moria"}[theme]
		setTheme(t, dataDir, other)
		app := harness.Start(t, bin, env, "--quick")
		// The self-test takes the route over at start; the mode is the point.
		app.WaitOutput(t, `selftest PASS window quick `, 90*time.Second)
		win := appWindow(t, display)
		waitCompact(t, display, win, true)
		waitAbove(t, display, win, true)
		// The self-test moves about the app; let it finish before the picture.
		app.WaitOutput(t, `selftest (PASS|FAIL) (done|error)`, 90*time.Second)
		code, _, _ := harness.Run(t, bin, env, "--quick")
		if code != 0 {
			t.Fatalf("second --quick: exit %d", code)
		}
		app.WaitOutput(t, `second launch handed over`, 10*time.Second)
		time.Sleep(time.Second)
		screenshotWindow(t, display, win, "quick-"+other+".png")
		app.Cmd.Process.Signal(syscall.SIGTERM)
		if code := app.Wait(t, 20*time.Second); code != 0 {
			t.Fatalf("exit code %d after SIGTERM, want 0", code)
		}
	})
}

// TestDesktopNoBus: with no session bus there is no tray (and no
// notifications), and the app runs, takes --quick and quits cleanly.
func TestDesktopNoBus(t *testing.T) {
	harness.Require(t, "Xvfb", "xwininfo")
	bin := harness.Build(t, tags)
	display := harness.Xvfb(t)
	dataDir := t.TempDir()
	nobus := "unix:path=" + filepath.Join(t.TempDir(), "no-bus-here")
	env := harness.Env(dataDir, "DISPLAY="+display, "LEMBAS_SELFTEST=1", "XDG_RUNTIME_DIR=", "DBUS_SESSION_BUS_ADDRESS="+nobus)
	app := harness.Start(t, bin, env)
	app.WaitOutput(t, `selftest (PASS|FAIL) (done|error)`, 90*time.Second)
	for _, step := range []string{"rendered", "event", "after-panic", "done"} {
		if !strings.Contains(app.Stdout(), "selftest PASS "+step) {
			t.Errorf("step %q did not pass", step)
		}
	}
	app.WaitOutput(t, `selftest PASS window full .*tray=false \(no D-Bus session bus.*about=no D-Bus session bus`, 20*time.Second)
	if code, out, errOut := harness.Run(t, bin, env, "--quick"); code != 0 {
		t.Fatalf("lembas --quick: exit %d\n%s\n%s", code, out, errOut)
	}
	app.WaitOutput(t, `selftest PASS window quick `, 20*time.Second)
	app.Cmd.Process.Signal(syscall.SIGTERM)
	if code := app.Wait(t, 20*time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0", code)
	}
}

// freePort is a TCP port nothing listens on right now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// ownerName is the desktop owner's username (the OS account's).
func ownerName(t *testing.T, dataDir string) string {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(dataDir, "lembas.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var name string
	harness.Must(t, db.Write().QueryRow(`SELECT username FROM users WHERE is_owner = 1`).Scan(&name), "owner")
	return name
}

// setPassword runs `lembas create-admin` beside the running app.
func setPassword(bin string, env []string, user, password string) error {
	cmd := exec.Command(bin, "create-admin", "--username", user, "--password-stdin")
	cmd.Env = env
	cmd.Stdin = strings.NewReader(password + "\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

// waitServing waits until base answers (on) or refuses connections (off).
func waitServing(t *testing.T, base string, on bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(base + "/api/auth/state")
		if err == nil {
			resp.Body.Close()
		}
		if (err == nil && resp.StatusCode == 200) == on {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s serving = %v, want %v", base, !on, on)
}

// setPref stores one of the owner's preferences before the app starts.
func setPref(t *testing.T, dataDir, key, value string) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(dataDir, "lembas.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	harness.Must(t, db.SetPref(ctx, 1, key, value), "set "+key)
}

// startOpenbox runs the openbox window manager on display, so that window
// states such as always-on-top exist (Xvfb alone has no window manager).
func startOpenbox(t *testing.T, display string) {
	t.Helper()
	cmd := exec.Command("openbox", "--sm-disable")
	cmd.Env = append(os.Environ(), "DISPLAY="+display, "HOME="+t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		c := exec.Command("xprop", "-root", "_NET_SUPPORTING_WM_CHECK")
		c.Env = append(os.Environ(), "DISPLAY="+display)
		if out, err := c.Output(); err == nil && strings.Contains(string(out), "window id") {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("openbox did not start")
}

var windowLine = regexp.MustCompile(`(0x[0-9a-f]+) "LLeMbas": \([^)]*\)\s+(\d+)x(\d+)\+`)

// appWindow finds the app's top-level window: the largest window named
// LLeMbas.
func appWindow(t *testing.T, display string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		best, area := "", 0
		for _, m := range windowLine.FindAllStringSubmatch(harness.Tree(t, display), -1) {
			w, _ := strconv.Atoi(m[2])
			h, _ := strconv.Atoi(m[3])
			if w*h > area {
				best, area = m[1], w*h
			}
		}
		if best != "" {
			return best
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("no window named LLeMbas")
	return ""
}

var sizeRe = regexp.MustCompile(`Width: (\d+)\s+Height: (\d+)`)

func windowSize(t *testing.T, display, id string) (int, int) {
	t.Helper()
	m := sizeRe.FindStringSubmatch(windowInfo(t, display, id))
	if m == nil {
		t.Fatalf("no size for window %s", id)
	}
	w, _ := strconv.Atoi(m[1])
	h, _ := strconv.Atoi(m[2])
	return w, h
}

// waitCompact waits for the window to be quick-chat sized (or not).
func waitCompact(t *testing.T, display, id string, compact bool) {
	t.Helper()
	var w, h int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		w, h = windowSize(t, display, id)
		if (w <= 520 && h <= 660) == compact {
			return
		}
	}
	t.Fatalf("window is %dx%d; want compact=%v", w, h, compact)
}

// waitAbove waits for _NET_WM_STATE to carry _NET_WM_STATE_ABOVE (or not).
func waitAbove(t *testing.T, display, id string, above bool) {
	t.Helper()
	var state string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		state = harness.X(t, display, "xprop", "-id", id, "_NET_WM_STATE")
		if strings.Contains(state, "_NET_WM_STATE_ABOVE") == above {
			return
		}
	}
	t.Fatalf("_NET_WM_STATE is %q; want above=%v", strings.TrimSpace(state), above)
}

func screenshotWindow(t *testing.T, display, id, name string) {
	t.Helper()
	if _, err := os.Stat("/usr/bin/import"); err != nil {
		return
	}
	time.Sleep(500 * time.Millisecond) // let the last frame paint
	p := filepath.Join(harness.ArtifactDir(t), name)
	harness.X(t, display, "import", "-window", id, p)
	t.Logf("screenshot %s", p)
}

func countLines(s, prefix string) int { return len(harness.Lines(s, prefix)) }

func lastLine(s, prefix string) string {
	l := harness.Lines(s, prefix)
	if len(l) == 0 {
		return ""
	}
	return l[len(l)-1]
}

// waitReports waits until the frontend has reported n window modes.
func waitReports(t *testing.T, app *harness.Proc, n int) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if countLines(app.Stdout(), "selftest PASS window ") >= n {
			return
		}
	}
	t.Fatalf("the window reported no change of mode:\n%s", strings.Join(harness.Lines(app.Stdout(), "selftest PASS window "), "\n"))
}
