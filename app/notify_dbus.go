//go:build desktop

package main

import (
	"fmt"
	"sync"

	"github.com/godbus/dbus/v5"
)

// notifier sends notifications to org.freedesktop.Notifications on the
// session bus (Wails v2 has no notification API). It connects on first use,
// so a desktop without a bus only loses notifications.
type notifier struct {
	mu   sync.Mutex
	conn *dbus.Conn
}

func (n *notifier) Notify(title, body string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.conn == nil {
		c, err := dbus.ConnectSessionBus()
		if err != nil {
			return fmt.Errorf("no session bus: %w", err)
		}
		n.conn = c
	}
	obj := n.conn.Object("org.freedesktop.Notifications", "/org/freedesktop/Notifications")
	call := obj.Call("org.freedesktop.Notifications.Notify", 0,
		"LLeMbas", uint32(0), "lembas", title, body, []string{}, map[string]dbus.Variant{}, int32(-1))
	if call.Err != nil {
		n.conn.Close()
		n.conn = nil
		return fmt.Errorf("notification daemon: %w", call.Err)
	}
	return nil
}

func (n *notifier) Close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.conn != nil {
		n.conn.Close()
		n.conn = nil
	}
}
