//go:build desktop

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	wruntime "github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/ids"
)

// SavedExport is what Desktop.SaveExport did: Saved is false when the
// dialog was cancelled; Name is the file's name (not its folder).
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
	f.d.mu.Lock()
	wctx := f.d.wctx
	f.d.mu.Unlock()
	if wctx == nil {
		return SavedExport{}, apperr.New(apperr.Unavailable, "the window is not ready yet")
	}
	dialogs.Lock()
	defer dialogs.Unlock()
	kind, pattern := "Markdown", "*.md"
	if format == chat.ExportJSON {
		kind, pattern = "JSON", "*.json"
	}
	path, err := wruntime.SaveFileDialog(wctx, wruntime.SaveDialogOptions{
		Title:                "Export chat",
		DefaultDirectory:     exportFolder(),
		DefaultFilename:      x.Name,
		Filters:              []wruntime.FileFilter{{DisplayName: kind + " (" + pattern + ")", Pattern: pattern}},
		CanCreateDirectories: true,
	})
	if err != nil {
		return SavedExport{}, apperr.Wrap(apperr.Internal, err, "the save dialog failed")
	}
	if path == "" {
		return SavedExport{}, nil
	}
	if err := writeExport(ctx, x, path); err != nil {
		return SavedExport{}, err
	}
	f.d.log.Info("chat exported", "chat", chatID, "format", format)
	return SavedExport{Saved: true, Name: filepath.Base(path)}, nil
}

// writeExport writes the export beside path and renames it into place, so
// that a failure leaves no half file (and no half-overwritten one: the
// dialog has already asked before replacing a file).
func writeExport(ctx context.Context, x *chat.Export, path string) error {
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
	if err := x.Write(ctx, tmp); err != nil {
		return fmt.Errorf("write the export: %w", err)
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
