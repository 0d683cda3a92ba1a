//go:build desktop

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// windowState is the window's size and position, kept between runs in the
// data directory (window.json): a per-machine fact, not a user preference.
type windowState struct {
	Width  int `json:"width"`
	Height int `json:"height"`
	X      int `json:"x"`
	Y      int `json:"y"`
}

const (
	minWidth, minHeight         = 380, 480
	defaultWidth, defaultHeight = 1200, 800
	maxSide                     = 16384
)

func windowStatePath(dataDir string) string { return filepath.Join(dataDir, "window.json") }

// loadWindowState reads the saved state, or the defaults when there is none
// or it is unusable (a size below the minimum or absurdly large).
func loadWindowState(dataDir string) (windowState, bool) {
	def := windowState{Width: defaultWidth, Height: defaultHeight}
	b, err := os.ReadFile(windowStatePath(dataDir))
	if err != nil {
		return def, false
	}
	var ws windowState
	if json.Unmarshal(b, &ws) != nil || ws.Width < minWidth || ws.Height < minHeight || ws.Width > maxSide || ws.Height > maxSide {
		return def, false
	}
	return ws, true
}

func saveWindowState(dataDir string, ws windowState) error {
	b, err := json.Marshal(ws)
	if err != nil {
		return err
	}
	tmp := windowStatePath(dataDir) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, windowStatePath(dataDir))
}
