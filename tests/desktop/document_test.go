package desktop

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/config"
	"github.com/llembas/lembas/backend/core"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/frontend"
	"github.com/llembas/lembas/tests/harness"
)

// documentBase is the knowledge base the self-test's document step looks
// for (frontend/js/dev/selftest.js DOCUMENT_BASE).
const documentBase = "Documents for the self-test"

// TestDesktopDocument saves a library document from its link in the
// desktop window, where WebKitGTK saves nothing for a download link: the
// system's save dialog opens in the download folder with the document's
// name, Return saves it there, and the file holds the document's bytes.
func TestDesktopDocument(t *testing.T) {
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
	const name = "Road notes — Bree.txt"
	content := "The road goes ever on and on,\ndown from the door where it began.\n« Bree » is east.\n"
	seedDocument(t, dataDir, name, content)

	app := harness.Start(t, bin, env)
	step := func(name string, timeout time.Duration) string {
		t.Helper()
		m := app.WaitOutput(t, `selftest (PASS|FAIL) (`+name+`|error)( .*)?\n`, timeout)
		if m[1] != "PASS" {
			t.Fatalf("self-test step %s: %s", m[2], strings.TrimSpace(m[0]))
		}
		return strings.TrimSpace(m[3])
	}
	step("document-asked", 180*time.Second)
	dlg := windowNamed(t, display, "Save document")
	x := harness.DialX(t, display)
	x.Activate(t, harness.WindowID(t, dlg))
	waitActive(t, display, dlg)
	screenshot(t, display, "desktop-document-dialog.png")
	x.Key(t, 0xff0d) // Return: save under the name given
	saved := step("document-saved", 60*time.Second)
	if !strings.Contains(saved, "Saved "+name) {
		t.Errorf("the toast said %q", saved)
	}
	b, err := os.ReadFile(filepath.Join(downloads, name))
	if err != nil {
		t.Fatalf("the document was not saved in the download folder: %v", err)
	}
	if string(b) != content {
		t.Errorf("the saved document holds %q, want %q", b, content)
	}
	left, _ := filepath.Glob(filepath.Join(downloads, ".*.part"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %q", left)
	}
}

// seedDocument stores a knowledge base named documentBase holding one
// text document.
func seedDocument(t *testing.T, dataDir, name, content string) {
	t.Helper()
	ctx := context.Background()
	cfg, _ := config.Load(func(string) (string, bool) { return "", false })
	cfg.DataDir, cfg.NoKeychain = dataDir, true
	harness.Must(t, cfg.Validate(), "config")
	c, err := core.Open(ctx, cfg, core.Options{Mode: core.Desktop, Files: frontend.FS()})
	harness.Must(t, err, "open instance")
	defer c.Close()
	user := ids.UserID(c.Owner.ID)
	b, err := c.Library.CreateBase(ctx, user, documentBase, "")
	harness.Must(t, err, "create base")
	_, err = c.Library.Ingest(ctx, user, b.ID, name, strings.NewReader(content))
	harness.Must(t, err, "ingest document")
}
