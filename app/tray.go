//go:build desktop

package main

// trayActions are what the tray menu's items do.
type trayActions struct {
	Quick, NewChat, Open, Quit func()
}
