// Package frontend holds the web user interface — HTML, CSS, ES modules,
// images and pinned third-party libraries — and embeds it in the binary.
//
// The same files are served by the desktop app's Wails asset server and by
// `lembas --serve`. index.html carries <meta name="lembas-transport"
// content="http">, which the Go side rewrites to "desktop" in the desktop
// app so that js/core/transport.js picks the Wails bridge. 404.html is
// self-contained and uses absolute URLs, since it is served for any path;
// so is offline.html, which the service worker (sw.js, served at /sw.js so
// that its scope is the whole site) shows when the server is unreachable.
// Files under vendor/ are pinned by build/vendor.lock.json; check them with
// `go run ./build/vendor verify`.
package frontend

import (
	"embed"
	"io/fs"
)

//go:embed index.html 404.html offline.html sw.js css js img vendor
var files embed.FS

// FS returns the frontend files, rooted at this directory (so "index.html",
// "css/tokens.css", "vendor/htm-preact/standalone.module.js", …).
func FS() fs.FS {
	return files
}
