//go:build desktop && !(linux && cgo)

package main

import (
	"context"

	wruntime "github.com/wailsapp/wails/v2/pkg/runtime"
)

// setGeometry resizes the window (when width and height are > 0) and sets
// or clears always-on-top (above: 1, 0; -1 leaves it).
func setGeometry(wctx context.Context, width, height, above int) {
	if width > 0 && height > 0 {
		wruntime.WindowSetSize(wctx, width, height)
	}
	if above >= 0 {
		wruntime.WindowSetAlwaysOnTop(wctx, above == 1)
	}
}
