//go:build desktop && !linux

package main

import "log/slog"

// tray is not set up outside Linux yet: on macOS, tray libraries clash with
// Wails' AppDelegate (docs/NOTES.md).
type tray struct{}

func startTray(log *slog.Logger, icon []byte, act trayActions) *tray { return &tray{} }

func (t *tray) Registered() bool { return false }

func (t *tray) Status() string { return "no tray on this platform yet" }

func (t *tray) Close() {}

func (t *tray) SetSharing(on bool, where string) {}
