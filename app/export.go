//go:build desktop

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	wruntime "github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/attach"
	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/ids"
)

// SavedExport is what Desktop.SaveExport or Desktop.SaveDocument did:
// Saved is false when the dialog was cancelled; Name is the file's name
// (not its folder).
type SavedExport struct {
	Saved bool   `json:"saved"`
	Name  string `json:"name,omitempty"`
}

// dialogs serialises the save dialog: Wails answers every file dialog on
// one shared channel, so two at once could swap their answers.
var dialogs sync.Mutex

// SaveExport saves one of the owner's chats as a file where the owner
// chooses, in the system's save dialog (chat.ExportMarkdown or
// chat.ExportJSON). A WebKitGTK window has no download manager: a link to
// the export route would be saved, unasked, wherever WebKit decides (or
// nowhere), so the window asks the app instead (docs/NOTES.md).
func (f *DesktopFacade) SaveExport(ctx context.Context, chatID ids.ChatID, format string) (SavedExport, error) {
	user := ids.UserID(api.CallerFrom(ctx).UserID)
	x, err := f.d.core.Chat.Export(ctx, user, chatID, format)
	if err != nil {
		return SavedExport{}, err
	}
	kind, pattern := "Markdown", "*.md"
	if format == chat.ExportJSON {
		kind, pattern = "JSON", "*.json"
	}
	saved, err := f.saveAs("Export chat", x.Name, []wruntime.FileFilter{{DisplayName: kind + " (" + pattern + ")", Pattern: pattern}},
		func(w io.Writer) error {
			if err := x.Write(ctx, w); err != nil {
				return fmt.Errorf("write the export: %w", err)
			}
			return nil
		})
	if saved.Saved {
		f.d.log.Info("chat exported", "chat", chatID, "format", format)
	}
	return saved, err
}

// SaveDocument saves a library document the owner can see (their own or
// one shared with them) where the owner chooses, in the system's save
// dialog: the window's download link, for the reason SaveExport gives.
// The document is opened through the download route's checks
// (api.LibraryRoutes.OpenDocument).
func (f *DesktopFacade) SaveDocument(ctx context.Context, id ids.DocumentID) (SavedExport, error) {
	doc, err := f.d.core.Documents().OpenDocument(ctx, api.CallerFrom(ctx), int64(id))
	if err != nil {
		return SavedExport{}, err
	}
	defer doc.Body.Close()
	name := documentName(doc.View.Name)
	var filters []wruntime.FileFilter
	if ext := filepath.Ext(name); plainExt.MatchString(ext) {
		pattern := "*" + ext
		filters = []wruntime.FileFilter{{DisplayName: strings.ToUpper(ext[1:]) + " (" + pattern + ")", Pattern: pattern}}
	}
	saved, err := f.saveAs("Save document", name, filters, func(w io.Writer) error {
		if _, err := io.Copy(w, doc.Body); err != nil {
			return fmt.Errorf("write the document: %w", err)
		}
		return nil
	})
	if saved.Saved {
		f.d.log.Info("document saved", "document", id)
	}
	return saved, err
}

// plainExt is an extension the save dialog's filter can take as it is.
var plainExt = regexp.MustCompile(`^\.[A-Za-z0-9]{1,15}$`)

// documentName is the save dialog's name for a document whose display
// name is name (untrusted): attach.DisplayName's base name without path
// separators or control characters, and no leading dots (which would hide
// the file).
func documentName(name string) string {
	name = strings.TrimLeft(attach.DisplayName(name), ". ")
	if name == "" {
		return "document"
	}
	return name
}

// saveAs asks where to save a file in the system's save dialog, titled
// title and opened in the download folder with the name given, then
// writes it with write beside the chosen path and renames it into place.
// Saved is false when the owner cancelled.
func (f *DesktopFacade) saveAs(title, name string, filters []wruntime.FileFilter, write func(io.Writer) error) (SavedExport, error) {
	f.d.mu.Lock()
	wctx := f.d.wctx
	f.d.mu.Unlock()
	if wctx == nil {
		return SavedExport{}, apperr.New(apperr.Unavailable, "the window is not ready yet")
	}
	dialogs.Lock()
	defer dialogs.Unlock()
	path, err := wruntime.SaveFileDialog(wctx, wruntime.SaveDialogOptions{
		Title:                title,
		DefaultDirectory:     exportFolder(),
		DefaultFilename:      name,
		Filters:              filters,
		CanCreateDirectories: true,
	})
	if err != nil {
		return SavedExport{}, apperr.Wrap(apperr.Internal, err, "the save dialog failed")
	}
	if path == "" {
		return SavedExport{}, nil
	}
	if err := writeFile(path, write); err != nil {
		return SavedExport{}, err
	}
	return SavedExport{Saved: true, Name: filepath.Base(path)}, nil
}

// writeFile writes a file with write beside path and renames it into
// place, so that a failure leaves no half file (and no half-overwritten
// one: the dialog has already asked before replacing a file).
func writeFile(path string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+strings.TrimPrefix(filepath.Base(path), ".")+".*.part")
	if err != nil {
		return apperr.Wrap(apperr.Invalid, err, "could not write in %s", dir)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := write(tmp); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return apperr.Wrap(apperr.Invalid, err, "could not write %s", path)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return apperr.Wrap(apperr.Invalid, err, "could not write %s", path)
	}
	done = true
	return nil
}

// exportFolder is where the save dialog opens: the XDG download folder
// when there is one, else the home folder.
func exportFolder() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	if d := xdgDownloads(home); d != "" {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
	}
	if st, err := os.Stat(filepath.Join(home, "Downloads")); err == nil && st.IsDir() {
		return filepath.Join(home, "Downloads")
	}
	return home
}

// xdgDownloads reads XDG_DOWNLOAD_DIR from user-dirs.dirs.
func xdgDownloads(home string) string {
	cfg := os.Getenv("XDG_CONFIG_HOME")
	if cfg == "" {
		cfg = filepath.Join(home, ".config")
	}
	b, err := os.ReadFile(filepath.Join(cfg, "user-dirs.dirs"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		v, ok := strings.CutPrefix(strings.TrimSpace(line), "XDG_DOWNLOAD_DIR=")
		if !ok {
			continue
		}
		v = strings.Trim(v, `"`)
		v = strings.Replace(v, "$HOME", home, 1)
		if filepath.IsAbs(v) {
			return v
		}
	}
	return ""
}
