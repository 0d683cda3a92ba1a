//go:build desktop && !(linux && cgo)

package main

import "log/slog"

// hookWebView is Linux-only for now: elsewhere the frontend's own guards
// (drops cancelled, foreign links sent to App.OpenURL) are all that keeps
// the window on the app, and files cannot be dropped onto it.
func hookWebView(*slog.Logger, func(paths []string)) {}
