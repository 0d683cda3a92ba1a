package desktop

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/config"
	"github.com/llembas/lembas/backend/core"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/frontend"
	"github.com/llembas/lembas/tests/harness"
)

// exportTitle is the chat the self-test's export step looks for
// (frontend/js/dev/selftest.js EXPORT_TITLE).
const exportTitle = "Exported by the self-test"

// TestDesktopExport exports a chat from its header menu in the desktop
// window: the system's save dialog opens in the download folder with the
// chat's name, Return saves it there, and the file holds the chosen
// version of the reply, not the newest. It also logs what a plain
// download link does in WebKitGTK (the reason for the dialog).
func TestDesktopExport(t *testing.T) {
	harness.Require(t, "Xvfb", "xwininfo", "xprop", "openbox", "dbus-daemon")
	bin := harness.Build(t, tags)
	display := harness.Xvfb(t)
	startOpenbox(t, display)
	dataDir := t.TempDir()
	downloads := filepath.Join(dataDir, "Downloads") // HOME is the data directory
	harness.Must(t, os.Mkdir(downloads, 0o700), "make Downloads")
	bus := harness.SessionBus(t)
	harness.StartFakeNotifications(t, bus) // the self-test sends one
	env := harness.Env(dataDir, "DISPLAY="+display, "LEMBAS_SELFTEST=1", "XDG_RUNTIME_DIR=", "DBUS_SESSION_BUS_ADDRESS="+bus)
	llm := fakellm.New(t)
	llm.SetDefault(fakellm.Stream("An answer for the self-test."))
	seedConnection(t, dataDir, llm.URL())
	seedExportChat(t, dataDir)

	app := harness.Start(t, bin, env)
	step := func(name string, timeout time.Duration) string {
		t.Helper()
		m := app.WaitOutput(t, `selftest (PASS|FAIL) (`+name+`|error)( .*)?\n`, timeout)
		if m[1] != "PASS" {
			t.Fatalf("self-test step %s: %s", m[2], strings.TrimSpace(m[0]))
		}
		return strings.TrimSpace(m[3])
	}
	step("export-link", 180*time.Second)
	step("export-asked", 60*time.Second)
	dlg := windowNamed(t, display, "Export chat")
	x := harness.DialX(t, display)
	x.Activate(t, harness.WindowID(t, dlg))
	waitActive(t, display, dlg)
	screenshot(t, display, "desktop-export-dialog.png")
	x.Key(t, 0xff0d) // Return: save under the name given
	saved := step("export-saved", 60*time.Second)
	if !strings.Contains(saved, "Saved "+exportTitle+".md") {
		t.Errorf("the toast said %q", saved)
	}
	b, err := os.ReadFile(filepath.Join(downloads, exportTitle+".md"))
	if err != nil {
		t.Fatalf("the export was not saved in the download folder: %v", err)
	}
	md := string(b)
	if !strings.Contains(md, "# "+exportTitle) || !strings.Contains(md, "Which road?") || !strings.Contains(md, "the old road") || strings.Contains(md, "the new road") {
		t.Errorf("the saved export:\n%s", md)
	}
	// What the plain link did: WebKitGTK has no download manager here.
	var found []string
	filepath.WalkDir(dataDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(filepath.Base(p), ".json") {
			found = append(found, p)
		}
		return nil
	})
	t.Logf("a plain download link left: %q; log: %q", found, harness.Lines(app.Stderr(), "download"))
}

var namedWindow = regexp.MustCompile(`(0x[0-9a-f]+) "([^"]*)": `)

// windowNamed waits for a window titled name.
func windowNamed(t *testing.T, display, name string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range namedWindow.FindAllStringSubmatch(harness.Tree(t, display), -1) {
			if m[2] == name {
				return m[1]
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no window named %q:\n%s", name, harness.Tree(t, display))
	return ""
}

// seedExportChat stores a chat titled exportTitle whose question has two
// replies, the older one chosen.
func seedExportChat(t *testing.T, dataDir string) {
	t.Helper()
	ctx := context.Background()
	cfg, _ := config.Load(func(string) (string, bool) { return "", false })
	cfg.DataDir, cfg.NoKeychain = dataDir, true
	harness.Must(t, cfg.Validate(), "config")
	c, err := core.Open(ctx, cfg, core.Options{Mode: core.Desktop, Files: frontend.FS()})
	harness.Must(t, err, "open instance")
	defer c.Close()
	user := ids.UserID(c.Owner.ID)
	ch, q, err := c.DB.CreateChat(ctx, user, store.NewChat{Title: exportTitle},
		store.Message{Role: store.RoleUser, Status: store.StatusFinal, Content: "Which road?"})
	harness.Must(t, err, "create chat")
	old, err := c.DB.AddMessage(ctx, user, ch.ID, store.Message{Role: store.RoleAssistant, Status: store.StatusFinal, Content: "the old road", ModelLabel: "Fake"})
	harness.Must(t, err, "add reply")
	_, err = c.DB.AddMessageAt(ctx, user, ch.ID, &q.ID, store.Message{Role: store.RoleAssistant, Status: store.StatusFinal, Content: "the new road", ModelLabel: "Fake"})
	harness.Must(t, err, "add version")
	_, err = c.DB.SwitchVersion(ctx, user, old.ID)
	harness.Must(t, err, "switch version")
}
