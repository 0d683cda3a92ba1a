package desktop

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/tests/harness"
)

// TestDesktopDrop drags files from outside onto the desktop window with
// X's drag-and-drop protocol, as a file manager does, and checks that
// WebKit hands them to the page rather than opening them in its place: a
// photo dropped on the sidebar and a text file (a space and an accent in
// its name) dropped on the composer both become ready attachments,
// uploaded through the handler.
func TestDesktopDrop(t *testing.T) {
	harness.Require(t, "Xvfb", "xwininfo", "xprop", "dbus-daemon")
	bin := harness.Build(t, tags)
	display := harness.Xvfb(t)
	dataDir := t.TempDir()
	bus := harness.SessionBus(t)
	harness.StartFakeNotifications(t, bus) // the self-test sends one
	env := harness.Env(dataDir, "DISPLAY="+display, "LEMBAS_SELFTEST=1", "XDG_RUNTIME_DIR=", "DBUS_SESSION_BUS_ADDRESS="+bus)
	llm := fakellm.New(t)
	llm.SetDefault(fakellm.Stream("An answer ", "for the self-test."))
	seedConnection(t, dataDir, llm.URL())

	// The files live where a user's would: outside the data directory.
	dir := t.TempDir()
	photo := filepath.Join(dir, "rotated.jpg")
	notes := filepath.Join(dir, "Notes from Bree é.txt")
	copyFile(t, filepath.Join(harness.RepoRoot(), "backend/attach/testdata/rotated.jpg"), photo)
	if err := os.WriteFile(notes, []byte("The Prancing Pony, Bree.\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	app := harness.Start(t, bin, env)
	app.WaitOutput(t, `selftest (PASS|FAIL) (done|error)`, 90*time.Second)
	if fails := harness.Lines(app.Stdout(), "selftest FAIL"); len(fails) > 0 {
		t.Fatalf("self-test failures:\n%s", strings.Join(fails, "\n"))
	}
	at := app.WaitOutput(t, `selftest PASS composer-at (-?\d+) (-?\d+) (\d+) (\d+) ([\d.]+)`, 20*time.Second)
	left, top, width, height := atoi(t, at[1]), atoi(t, at[2]), atoi(t, at[3]), atoi(t, at[4])
	if at[5] != "1" {
		t.Fatalf("device pixel ratio %s; the test places the drop in CSS pixels", at[5])
	}

	win := appWindow(t, display)
	if aware := harness.X(t, display, "xprop", "-id", win, "XdndAware"); !strings.Contains(aware, "XdndAware(ATOM)") {
		t.Fatalf("the window takes no drops: %s", strings.TrimSpace(aware))
	}
	wx, wy := windowOrigin(t, display, win)
	x := harness.DialX(t, display)
	id := harness.WindowID(t, win)
	// The photo over the sidebar, well left of the composer: a drop
	// anywhere in the window is for the message being written.
	side := x.DragFiles(t, id, wx+left/3, wy+top/2, []string{photo})
	// The notes over the message box itself, where a drop of text would
	// go in as text.
	bx := app.WaitOutput(t, `selftest PASS box-at (-?\d+) (-?\d+) (\d+) (\d+)`, 20*time.Second)
	box := x.DragFiles(t, id, wx+atoi(t, bx[1])+atoi(t, bx[3])/2, wy+atoi(t, bx[2])+atoi(t, bx[4])/2, []string{notes})
	for _, r := range []harness.DropResult{side, box} {
		if !r.Accepted || !r.Finished || r.Served == 0 {
			t.Errorf("drop: %+v; want accepted, handed over and finished", r)
		}
	}
	for _, name := range []string{"rotated.jpg", "Notes from Bree é.txt"} {
		line := app.WaitOutput(t, `selftest (PASS|FAIL) dropped `+regexp.QuoteMeta(name)+`.*`, 30*time.Second)
		if !strings.HasPrefix(line[0], "selftest PASS") {
			t.Errorf("dropped %s: %s", name, line[0])
		}
	}
	// WebKit still acts on each drop after the app has taken it and tries
	// to open the file in the window, which the navigation guard refuses
	// (the self-test's "stay" step checks the guard itself). The window
	// must still be the app a while later: a third drop still attaches.
	time.Sleep(time.Second)
	third := filepath.Join(dir, "third.txt")
	if err := os.WriteFile(third, []byte("Crickhollow\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := x.DragFiles(t, id, wx+left+width/2, wy+top+height/2, []string{third}); !r.Finished {
		t.Errorf("third drop: %+v", r)
	}
	app.WaitOutput(t, `selftest PASS dropped third\.txt`, 30*time.Second)
	if fails := harness.Lines(app.Stdout(), "selftest FAIL"); len(fails) > 0 {
		t.Errorf("after the drops:\n%s", strings.Join(fails, "\n"))
	}
	t.Logf("navigations refused after drops: %d", strings.Count(app.Stderr(), `msg="kept the window on the app" scheme=file`))
	if _, err := os.Stat("/usr/bin/import"); err == nil {
		time.Sleep(300 * time.Millisecond) // let the chips' thumbnails paint
		p := filepath.Join(harness.ArtifactDir(t), "desktop-drop.png")
		harness.X(t, display, "import", "-window", "root", p)
		t.Logf("screenshot %s", p)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

var originRe = regexp.MustCompile(`Absolute upper-left X:\s+(-?\d+)\s+Absolute upper-left Y:\s+(-?\d+)`)

// windowOrigin is where the window's top left is on the screen.
func windowOrigin(t *testing.T, display, id string) (int, int) {
	t.Helper()
	m := originRe.FindStringSubmatch(windowInfo(t, display, id))
	if m == nil {
		t.Fatalf("no position for window %s", id)
	}
	return atoi(t, m[1]), atoi(t, m[2])
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
