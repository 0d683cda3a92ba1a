//go:build desktop && !(linux && cgo)

package main

// restoreOnStack is only needed where WebKitGTK installs signal handlers.
func restoreOnStack() {}
