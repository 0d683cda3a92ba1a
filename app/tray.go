//go:build desktop

package main

// trayActions are what the tray menu's items do.
type trayActions struct {
	Quick, NewChat, Open, Quit func()
	// Share switches sharing on the local network on or off.
	Share func()
}
