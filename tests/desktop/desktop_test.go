// Package desktop runs the real desktop binary under Xvfb.
package desktop

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/config"
	"github.com/llembas/lembas/backend/connections"
	"github.com/llembas/lembas/backend/core"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/frontend"
	"github.com/llembas/lembas/tests/harness"
)

const tags = "desktop,production,webkit2_41"

// TestDesktopApp opens the window, lets the frontend's self-test drive the
// real Wails bridge (including a recovered nil dereference, which kills a
// v2.9.2 app without the SA_ONSTACK fix) and attaches a file through the
// asset-server handler, checks single-instance handoff,
// the data-directory lock, info and backup beside the app, screenshots both
// themes, and quits cleanly on SIGTERM.
func TestDesktopApp(t *testing.T) {
	harness.Require(t, "Xvfb", "xwininfo")
	bin := harness.Build(t, tags)
	display := harness.Xvfb(t)
	dataDir := t.TempDir()
	// A private session bus with a fake notification daemon: the app's
	// notifications go over D-Bus.
	bus := harness.SessionBus(t)
	notes := harness.StartFakeNotifications(t, bus)
	env := harness.Env(dataDir, "DISPLAY="+display, "LEMBAS_SELFTEST=1", "XDG_RUNTIME_DIR=", "DBUS_SESSION_BUS_ADDRESS="+bus)
	// A connection to a fake endpoint, so the self-test can send a message
	// through the composer and watch the reply stream in.
	llm := fakellm.New(t)
	llm.SetDefault(fakellm.Stream("Streamed ", "into the ", "desktop window.").Every(20 * time.Millisecond))
	seedConnection(t, dataDir, llm.URL())

	var seen []string
	for i := 0; i < 2; i++ {
		if i > 0 {
			// Second run: the other theme, stored as the theme switch does.
			other := map[string]string{"moria": "shire", "shire": "moria"}[seen[0]]
			setTheme(t, dataDir, other)
		}
		app := harness.Start(t, bin, env)
		app.WaitOutput(t, `selftest (PASS|FAIL) (done|error)`, 60*time.Second)
		out := app.Stdout()
		if fails := harness.Lines(out, "selftest FAIL"); len(fails) > 0 {
			t.Fatalf("self-test failures:\n%s", strings.Join(fails, "\n"))
		}
		for _, step := range []string{"transport bridge for mode desktop", "rendered", "event", "panic internal", "after-panic",
			// A native route that panics, through the asset server.
			"route-panic 500 internal", "after-route-panic 200", "asset", "styles", "handler-api", "chat Streamed into the desktop window.",
			// A PNG attached through the composer's file input: uploaded with
			// POST /api/files through the asset server, sent, and served back.
			"attach-upload selftest.png", "attach-sent chip selftest.png thumb 64x48", "attach-get 200 image/png 64x48",
			"notify sent",
			// The composer's mirror wraps and scrolls as the textarea does
			// in WebKitGTK too (issue 16).
			"mirror width",
			// The window refused to be taken to another site (webview_linux.c).
			"stay wails://",
			"done"} {
			if !strings.Contains(out, "selftest PASS "+step) {
				t.Errorf("step %q did not pass", step)
			}
		}
		t.Log(regexp.MustCompile(`selftest \w+ mirror .*`).FindString(out))
		theme := app.WaitOutput(t, `selftest PASS theme (\w+)`, time.Second)[1]
		// A session bus with nobody showing tray icons: no tray, and the
		// About card says why.
		app.WaitOutput(t, `selftest PASS window full .*tray=false \(no tray host.*about=no tray host`, 10*time.Second)
		seen = append(seen, theme)
		// WebKit asks the guard when it gets to the navigation, which the
		// self-test does not wait for: wait for the log line, not look once.
		app.WaitOutput(t, regexp.QuoteMeta(`msg="kept the window on the app" scheme=https`), 30*time.Second)
		if !strings.Contains(app.Stderr(), "via=bridge") {
			t.Error("no call was logged as coming through the bridge")
		}
		tree := harness.Tree(t, display)
		if !strings.Contains(tree, `"LLeMbas"`) {
			t.Errorf("no window titled LLeMbas:\n%s", tree)
		}
		if i == 1 && !regexp.MustCompile(`"LLeMbas": \([^)]*\)\s+1000x700\+`).MatchString(tree) {
			t.Errorf("the window did not come back at its saved size 1000x700:\n%s", tree)
		}
		if _, err := os.Stat("/usr/bin/import"); err == nil {
			time.Sleep(500 * time.Millisecond) // let the last frame paint
			p := filepath.Join(harness.ArtifactDir(t), "desktop-"+theme+".png")
			harness.X(t, display, "import", "-window", "root", p)
			t.Logf("screenshot %s", p)
		}

		if i == 0 {
			besideRunningApp(t, bin, env, app, dataDir)
		}

		app.Cmd.Process.Signal(syscall.SIGTERM)
		if code := app.Wait(t, 20*time.Second); code != 0 {
			t.Fatalf("exit code %d after SIGTERM, want 0", code)
		}
		if !strings.Contains(app.Stderr(), "desktop app closed") {
			t.Error("the app did not shut down through its own path")
		}
		if i == 0 {
			// Closing saved the window's size; the next start must use a
			// saved one (written here so the test knows what to expect).
			var ws struct{ Width, Height int }
			b, err := os.ReadFile(filepath.Join(dataDir, "window.json"))
			if err != nil || json.Unmarshal(b, &ws) != nil || ws.Width < 380 || ws.Height < 480 {
				t.Errorf("window state after closing: %s %v", b, err)
			}
			harness.Must(t, os.WriteFile(filepath.Join(dataDir, "window.json"), []byte(`{"width":1000,"height":700,"x":20,"y":20}`), 0o600), "write window state")
		}
	}
	// One self-test notification per run. On a loaded machine the
	// self-test's chat may also finish after it has moved on to another
	// chat, which rightly notifies too ("The reply is ready").
	selfTest := 0
	for _, n := range notes.Notes() {
		if n.App == "LLeMbas" && n.Summary == "Self-test" {
			selfTest++
		}
	}
	if selfTest < 2 {
		t.Errorf("notifications received: %+v; want the self-test's from each run", notes.Notes())
	}
	if len(seen) != 2 || seen[0] == seen[1] {
		t.Errorf("themes shown: %v, want both", seen)
	}
}

func besideRunningApp(t *testing.T, bin string, env []string, app *harness.Proc, dataDir string) {
	t.Run("second launch hands over", func(t *testing.T) {
		code, out, errOut := harness.Run(t, bin, env)
		if code != 0 || !strings.Contains(out, "already running") {
			t.Fatalf("second launch: exit %d\n%s\n%s", code, out, errOut)
		}
		app.WaitOutput(t, "second launch handed over", 10*time.Second)
	})
	t.Run("serve on the same data directory is refused", func(t *testing.T) {
		code, _, errOut := harness.Run(t, bin, env, "--serve", "--addr", "127.0.0.1:0")
		if code != 1 || !strings.Contains(errOut, "already using") {
			t.Fatalf("serve beside desktop: exit %d: %s", code, errOut)
		}
	})
	t.Run("info and backup work beside the app", func(t *testing.T) {
		code, out, errOut := harness.Run(t, bin, env, "info")
		if code != 0 || !strings.Contains(out, "users") || !strings.Contains(out, "key file") {
			t.Fatalf("info: exit %d\n%s\n%s", code, out, errOut)
		}
		dest := filepath.Join(t.TempDir(), "b.db")
		if code, out, errOut := harness.Run(t, bin, env, "backup", dest); code != 0 {
			t.Fatalf("backup: exit %d\n%s\n%s", code, out, errOut)
		}
		if _, err := os.Stat(dest); err != nil {
			t.Fatal(err)
		}
	})
}

// seedConnection adds a connection to the fake endpoint, as the settings
// page would, before the app starts.
func seedConnection(t testing.TB, dataDir, url string) {
	t.Helper()
	c := openInstance(t, dataDir)
	defer c.Close()
	v, err := c.Connections.Create(context.Background(), store.Actor{User: ids.UserID(c.Owner.ID), Admin: true},
		connections.Input{Name: "Fake", BaseURL: url})
	harness.Must(t, err, "create connection")
	if v.ModelCount == 0 {
		t.Fatalf("connection has no models: %+v", v)
	}
}

// setTheme stores the owner's theme between runs, as the theme switch does.
func setTheme(t *testing.T, dataDir, theme string) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(dataDir, "lembas.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	harness.Must(t, db.SetPref(ctx, 1, "theme", theme), "set theme")
}

// TestNoDisplay: without a display the desktop build says so and suggests
// --serve instead of crashing in GTK.
func TestNoDisplay(t *testing.T) {
	bin := harness.Build(t, tags)
	env := harness.Env(t.TempDir())
	code, _, errOut := harness.Run(t, bin, env)
	if code != 2 || !strings.Contains(errOut, "no display") || !strings.Contains(errOut, "--serve") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}

// openInstance opens the instance in dataDir as the desktop app does (no
// keychain), for a test to seed before the app starts; the caller closes
// it first.
func openInstance(t testing.TB, dataDir string) *core.Core {
	t.Helper()
	cfg, _ := config.Load(func(string) (string, bool) { return "", false })
	cfg.DataDir, cfg.NoKeychain = dataDir, true
	harness.Must(t, cfg.Validate(), "config")
	c, err := core.Open(context.Background(), cfg, core.Options{Mode: core.Desktop, Files: frontend.FS()})
	harness.Must(t, err, "open instance")
	return c
}

// selfTestSteps returns a wait for one named step of the self-test
// (frontend/js/dev/selftest.js) the app runs: its detail once it passed,
// the test failed if it (or the self-test) failed.
func selfTestSteps(t *testing.T, app *harness.Proc) func(name string, timeout time.Duration) string {
	return func(name string, timeout time.Duration) string {
		t.Helper()
		m := app.WaitOutput(t, `selftest (PASS|FAIL) (`+name+`|error)( .*)?\n`, timeout)
		if m[1] != "PASS" {
			t.Fatalf("self-test step %s: %s", m[2], strings.TrimSpace(m[0]))
		}
		return strings.TrimSpace(m[3])
	}
}
