package desktop

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
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
	r := startSaveDialogs(t)
	llm := fakellm.New(t)
	llm.SetDefault(fakellm.Stream("An answer for the self-test."))
	seedConnection(t, r.dataDir, llm.URL())
	seedExportChat(t, r.dataDir)

	app := harness.Start(t, r.bin, r.env)
	step := selfTestSteps(t, app)
	step("export-link", 180*time.Second)
	step("export-asked", 60*time.Second)
	saveInDialog(t, r.display, "Export chat", "desktop-export-dialog.png")
	saved := step("export-saved", 60*time.Second)
	if !strings.Contains(saved, "Saved "+exportTitle+".md") {
		t.Errorf("the toast said %q", saved)
	}
	downloads, dataDir := r.downloads, r.dataDir
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
	c := openInstance(t, dataDir)
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

// saveDialogs is the desktop app ready to start under Xvfb (with openbox
// and a session bus) for a test of its save dialog: HOME is the data
// directory, whose Downloads folder is where the dialog opens.
type saveDialogs struct {
	bin, display, dataDir, downloads string
	env                              []string
}

func startSaveDialogs(t *testing.T) saveDialogs {
	t.Helper()
	harness.Require(t, "Xvfb", "xwininfo", "xprop", "openbox", "dbus-daemon")
	r := saveDialogs{bin: harness.Build(t, tags), display: harness.Xvfb(t), dataDir: t.TempDir()}
	startOpenbox(t, r.display)
	r.downloads = filepath.Join(r.dataDir, "Downloads")
	harness.Must(t, os.Mkdir(r.downloads, 0o700), "make Downloads")
	bus := harness.SessionBus(t)
	harness.StartFakeNotifications(t, bus) // the self-test sends one
	r.env = harness.Env(r.dataDir, "DISPLAY="+r.display, "LEMBAS_SELFTEST=1", "XDG_RUNTIME_DIR=", "DBUS_SESSION_BUS_ADDRESS="+bus)
	return r
}

// saveInDialog answers the save dialog titled title with Return (save
// under the name it offers), after a screenshot of it.
func saveInDialog(t *testing.T, display, title, shot string) {
	t.Helper()
	dlg := windowNamed(t, display, title)
	x := harness.DialX(t, display)
	x.Activate(t, harness.WindowID(t, dlg))
	waitActive(t, display, dlg)
	screenshot(t, display, shot)
	x.Key(t, 0xff0d) // Return
}
