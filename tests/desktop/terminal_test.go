package desktop

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/sshx/sshtest"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/tests/harness"
)

// TestDesktopTerminal: the terminal panel of an agent chat in the real
// desktop window, on a real sshd, over the desktop's own transport
// (Terminal.* through the Wails bridge, output as `terminal` Wails events
// in base64; no WebSocket). xterm styles itself under WebKitGTK's CSP
// (adopted sheets; a 24-bit colour drawn as such); commands typed with
// real keys (XTEST, to the focused window) run and their output, UTF-8
// both ways, is in xterm's buffer; a burst of output arrives whole; a
// resync of the terminal topic (the window fell behind) attaches again;
// closing the panel and opening it again finds the same shell, its
// scrollback shown; nothing was refused by the CSP.
func TestDesktopTerminal(t *testing.T) {
	harness.Require(t, "Xvfb", "xwininfo", "xprop", "openbox", "dbus-daemon")
	sshd := sshtest.Start(t)
	if sshd.Password == "" && os.Getenv("CI") != "true" {
		t.Skip("an sshd not run as root may not open a PTY")
	}
	bin := harness.Build(t, tags)
	display := harness.Xvfb(t)
	startOpenbox(t, display)
	dataDir := t.TempDir()
	bus := harness.SessionBus(t)
	harness.StartFakeNotifications(t, bus) // the self-test sends one
	env := harness.Env(dataDir, "DISPLAY="+display, "LEMBAS_SELFTEST=1", "XDG_RUNTIME_DIR=", "DBUS_SESSION_BUS_ADDRESS="+bus)
	llm := fakellm.New(t)
	llm.SetDefault(fakellm.Stream("An answer ", "for the self-test."))
	seedConnection(t, dataDir, llm.URL())
	seedAgentChat(t, dataDir, sshd)

	app := harness.Start(t, bin, env)
	step := selfTestSteps(t, app)
	step("term-open", 180*time.Second)
	step("term-styled", 20*time.Second)
	step("term-at", 20*time.Second)

	// Real keys, as a keyboard types them, to the focused window (the
	// page has put the focus in xterm's text box, and typed a line of its
	// own that is not ASCII, which the first Return runs).
	win := appWindow(t, display)
	x := harness.DialX(t, display)
	x.Activate(t, harness.WindowID(t, win))
	waitActive(t, display, win)
	typeLine := func(s string) {
		t.Helper()
		for _, r := range s {
			x.Key(t, uint32(r)) // Latin-1 keysyms are the characters; these need no Shift
		}
		x.Key(t, 0xff0d) // Return
	}
	typeLine("")
	typeLine("seq 41 43")
	// "red" in a 24-bit colour, then é€ as UTF-8 from octal escapes.
	typeLine(`printf '\033[38;2;200;30;40mred\033[0m \303\251\342\202\254\n'`)
	step("term-output", 90*time.Second)
	step("term-colour", 20*time.Second)
	screenshot(t, display, "desktop-terminal.png")
	typeLine("seq 150000")
	bulk := step("term-bulk", 150*time.Second)
	inOrder, _, _ := strings.Cut(bulk, ":")
	t.Logf("burst: %s", inOrder)

	// The page sends the resync the bus sends a window that fell behind
	// on the terminal topic: its output was lost, so the page must attach
	// again for the scrollback.
	step("term-resync", 90*time.Second)
	step("term-reopen", 90*time.Second)
	step("term-csp", 20*time.Second)

	t.Logf("Terminal.Open calls: %d (first, resync, reopen; more if the burst dropped the viewer as slow)",
		strings.Count(app.Stderr(), "method=Terminal.Open"))
	screenshot(t, display, "desktop-terminal-after.png")

	// Quitting with a shell open ends it and exits cleanly.
	app.Cmd.Process.Signal(syscall.SIGTERM)
	if code := app.Wait(t, 30*time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM with the terminal open, want 0", code)
	}
	if !strings.Contains(app.Stderr(), "desktop app closed") {
		t.Error("the app did not shut down through its own path")
	}

	// Closing the panel detached the first viewer: one shell for the chat
	// all along, so the sshd saw one session.
	if n := strings.Count(sshd.Log(), "Accepted publickey"); n != 1 {
		t.Errorf("the sshd accepted %d sign-ins, want 1 (one shell, reattached):\n%s", n, sshd.Log())
	}
}

// seedAgentChat gives the owner an SSH profile for sshd, as the settings
// page would (a generated key, authorized on the host; the host key
// scanned and accepted, through the dispatcher as the owner), and an agent
// chat on it in the user's home directory.
func seedAgentChat(t *testing.T, dataDir string, sshd *sshtest.Server) {
	t.Helper()
	ctx := context.Background()
	c := openInstance(t, dataDir)
	defer c.Close()
	owner := c.OwnerCaller()
	call := func(out any, method string, args ...any) {
		t.Helper()
		raw, err := json.Marshal(args)
		harness.Must(t, err, "encode "+method)
		r := c.Dispatcher.Call(ctx, owner, method, raw)
		if r.Error != nil {
			t.Fatalf("%s: %s: %s", method, r.Error.Kind, r.Error.Message)
		}
		if out != nil {
			harness.Must(t, json.Unmarshal(r.Result, out), "decode "+method)
		}
	}
	var p struct {
		ID        ids.ProfileID `json:"id"`
		PublicKey string        `json:"publicKey"`
	}
	call(&p, "Agent.CreateProfile", map[string]any{
		"name": "test host", "host": sshd.Host, "port": sshd.Port, "username": sshd.User, "auth": "key",
	})
	sshd.AuthorizeKey(p.PublicKey)
	var scan struct {
		Fingerprint string `json:"fingerprint"`
	}
	call(&scan, "Agent.ScanHostKey", p.ID)
	call(nil, "Agent.AcceptHostKey", p.ID, scan.Fingerprint)
	_, _, err := c.DB.CreateChat(ctx, ids.UserID(c.Owner.ID), store.NewChat{
		Title: "On the test host", Kind: store.ChatAgent,
		Agent: store.AgentChat{Profile: &p.ID, Dir: sshd.Home, Mode: store.ModeManual},
	}, store.Message{Role: store.RoleUser, Content: "Look around."})
	harness.Must(t, err, "create agent chat")
}

// screenshot saves the screen as name in the artifacts, when ImageMagick
// is there to take it.
func screenshot(t *testing.T, display, name string) {
	t.Helper()
	if _, err := exec.LookPath("import"); err != nil {
		return
	}
	time.Sleep(500 * time.Millisecond) // let the last frame paint
	p := filepath.Join(harness.ArtifactDir(t), name)
	harness.X(t, display, "import", "-window", "root", p)
	t.Logf("screenshot %s", p)
}
