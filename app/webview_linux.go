//go:build desktop && linux && cgo

package main

/*
#cgo pkg-config: gtk+-3.0
#cgo !webkit2_41 pkg-config: webkit2gtk-4.0
#cgo webkit2_41 pkg-config: webkit2gtk-4.1
void lembas_hook_webview(void);
*/
import "C"

import (
	"log/slog"
	"strings"
	"sync/atomic"
	"unsafe"
)

// The hooks' logger and drop handler, set before the hooks are installed
// and read on GTK's thread.
var (
	webviewLog   atomic.Pointer[slog.Logger]
	webviewDrops atomic.Pointer[func(paths []string)]
)

// hookWebView adds to Wails' web view, from the next turns of GTK's main
// loop (webview_linux.c):
//
//   - a navigation guard: WebKit refuses to take the window anywhere but
//     wails:, and to open new windows. Wails has none, and WebKit opens a
//     file dropped onto the window in place of the app.
//   - file drops: the paths of local files dropped onto the window go to
//     dropped, on GTK's thread. They come from GTK's drag-and-drop signals
//     only. Wails' EnableFileDrop is not used: it reports drops as a
//     message on the channel page scripts post to, so a script could make
//     the app take any file it names, and it sends the paths to the page.
//
// Call it once the window exists (OnStartup).
func hookWebView(log *slog.Logger, dropped func(paths []string)) {
	webviewLog.Store(log)
	webviewDrops.Store(&dropped)
	C.lembas_hook_webview()
}

func webviewLogger() *slog.Logger {
	if l := webviewLog.Load(); l != nil {
		return l
	}
	return slog.Default()
}

//export lembasNavigationRefused
func lembasNavigationRefused(uri *C.char, newWindow C.int) {
	// Only the scheme: a dropped file's path or a link's query may be
	// private, and the log is for telling what kind of thing was refused.
	// Every file dropped onto the window comes by here once: WebKit tries
	// to open it after the app has taken it.
	scheme, _, _ := strings.Cut(C.GoString(uri), ":")
	webviewLogger().Info("kept the window on the app", "scheme", scheme, "newWindow", newWindow != 0)
}

//export lembasFilesDropped
func lembasFilesDropped(paths **C.char, n C.int) {
	list := make([]string, 0, int(n))
	for _, p := range unsafe.Slice(paths, int(n)) {
		list = append(list, C.GoString(p))
	}
	if f := webviewDrops.Load(); f != nil && *f != nil {
		(*f)(list)
	}
}

//export lembasWebViewHooked
func lembasWebViewHooked(ok C.int) {
	if ok == 0 {
		webviewLogger().Error("no web view found: the window is not guarded against navigating away and takes no file drops")
		return
	}
	webviewLogger().Debug("web view hooked: navigation guard and file drops")
}
