//go:build desktop && linux && cgo

package main

/*
#cgo pkg-config: gtk+-3.0
#cgo !webkit2_41 pkg-config: webkit2gtk-4.0
#cgo webkit2_41 pkg-config: webkit2gtk-4.1
void lembas_guard_navigation(void);
*/
import "C"

import (
	"log/slog"
	"strings"
)

// navLog is the app's logger, for the callbacks from GTK's thread.
var navLog = slog.Default()

// guardNavigation keeps the window on the app: from the next turn of GTK's
// main loop, WebKit refuses to navigate the window anywhere but wails://
// and to open new windows (navguard_linux.c). Call it once the window
// exists (OnStartup).
func guardNavigation(log *slog.Logger) {
	navLog = log
	C.lembas_guard_navigation()
}

//export lembasNavigationRefused
func lembasNavigationRefused(uri *C.char, newWindow C.int) {
	// Only the scheme: a dropped file's path or a link's query may be
	// private, and the log is for telling what kind of thing was refused.
	// Every file dropped onto the window comes by here once: WebKit tries
	// to open it after the app has taken it.
	scheme, _, _ := strings.Cut(C.GoString(uri), ":")
	navLog.Info("kept the window on the app", "scheme", scheme, "newWindow", newWindow != 0)
}

//export lembasNavigationGuard
func lembasNavigationGuard(ok C.int) {
	if ok == 0 {
		navLog.Error("no web view found: the window is not guarded against navigating away")
		return
	}
	navLog.Debug("navigation guard installed")
}
