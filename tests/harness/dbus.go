package harness

import (
	"bufio"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// SessionBus starts a private D-Bus session daemon for one test and returns
// its address (for DBUS_SESSION_BUS_ADDRESS).
func SessionBus(t testing.TB) string {
	t.Helper()
	Require(t, "dbus-daemon")
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case addr := <-line:
		if addr == "" {
			t.Fatal("dbus-daemon printed no address")
		}
		return addr
	case <-time.After(10 * time.Second):
		t.Fatal("dbus-daemon did not start")
	}
	return ""
}

// Note is one notification a FakeNotifications daemon received.
type Note struct{ App, Summary, Body string }

// FakeNotifications owns org.freedesktop.Notifications on a bus and records
// what it is asked to show.
type FakeNotifications struct {
	mu    sync.Mutex
	notes []Note
	next  uint32
}

// Notify implements org.freedesktop.Notifications.Notify.
func (f *FakeNotifications) Notify(app string, replaces uint32, icon, summary, body string, actions []string,
	hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.notes = append(f.notes, Note{App: app, Summary: summary, Body: body})
	f.next++
	return f.next, nil
}

// GetServerInformation implements the method clients call to probe a daemon.
func (f *FakeNotifications) GetServerInformation() (string, string, string, string, *dbus.Error) {
	return "fake", "llembas-tests", "1", "1.2", nil
}

// Notes returns what was received so far.
func (f *FakeNotifications) Notes() []Note {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Note(nil), f.notes...)
}

// StartFakeNotifications runs a fake notification daemon on the bus at addr.
func StartFakeNotifications(t testing.TB, addr string) *FakeNotifications {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatalf("connect to the test bus: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	f := &FakeNotifications{}
	if err := conn.Export(f, "/org/freedesktop/Notifications", "org.freedesktop.Notifications"); err != nil {
		t.Fatal(err)
	}
	reply, err := conn.RequestName("org.freedesktop.Notifications", dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own org.freedesktop.Notifications: %v (%v)", reply, err)
	}
	return f
}
