package desktop

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/ids"
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
	r := startSaveDialogs(t)
	const name = "Road notes — Bree.txt"
	content := "The road goes ever on and on,\ndown from the door where it began.\n« Bree » is east.\n"
	seedDocument(t, r.dataDir, name, content)

	app := harness.Start(t, r.bin, r.env)
	step := selfTestSteps(t, app)
	step("document-asked", 180*time.Second)
	saveInDialog(t, r.display, "Save document", "desktop-document-dialog.png")
	downloads := r.downloads
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
	c := openInstance(t, dataDir)
	defer c.Close()
	user := ids.UserID(c.Owner.ID)
	b, err := c.Library.CreateBase(ctx, user, documentBase, "")
	harness.Must(t, err, "create base")
	_, err = c.Library.Ingest(ctx, user, b.ID, name, strings.NewReader(content))
	harness.Must(t, err, "ingest document")
}
