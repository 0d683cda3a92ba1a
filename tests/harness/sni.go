package harness

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/godbus/dbus/v5/introspect"
	"github.com/godbus/dbus/v5/prop"
)

const (
	watcherName  = "org.kde.StatusNotifierWatcher"
	watcherPath  = "/StatusNotifierWatcher"
	itemIface    = "org.kde.StatusNotifierItem"
	dbusmenuName = "com.canonical.dbusmenu"
)

// FakeWatcher is a StatusNotifierWatcher (what a desktop panel runs to show
// tray icons) on a private bus. It records the items that register and can
// read and click their menus as a panel would.
type FakeWatcher struct {
	conn *dbus.Conn

	mu    sync.Mutex
	items []TrayItem
	props *prop.Properties
}

// TrayItem is one registered StatusNotifierItem: the bus name it came from
// and its object path.
type TrayItem struct {
	Service string
	Path    dbus.ObjectPath
}

// watcherMethods is the exported method set; kept apart from FakeWatcher so
// that the test-facing methods are not exported on the bus.
type watcherMethods struct{ w *FakeWatcher }

// RegisterStatusNotifierItem implements the watcher method. service is a
// bus name or, as fyne.io/systray sends it, an object path (then the item
// lives on the sender's connection).
func (m watcherMethods) RegisterStatusNotifierItem(sender dbus.Sender, service string) *dbus.Error {
	it := TrayItem{Service: string(sender), Path: "/StatusNotifierItem"}
	if strings.HasPrefix(service, "/") {
		it.Path = dbus.ObjectPath(service)
	} else if service != "" {
		it.Service = service
	}
	m.w.mu.Lock()
	m.w.items = append(m.w.items, it)
	names := make([]string, len(m.w.items))
	for i, x := range m.w.items {
		names[i] = x.Service + string(x.Path)
	}
	props := m.w.props
	m.w.mu.Unlock()
	if props != nil {
		props.SetMust(watcherName, "RegisteredStatusNotifierItems", names)
	}
	m.w.conn.Emit(watcherPath, watcherName+".StatusNotifierItemRegistered", it.Service+string(it.Path))
	return nil
}

// RegisterStatusNotifierHost implements the watcher method (a panel calls
// it; nothing to do here).
func (m watcherMethods) RegisterStatusNotifierHost(service string) *dbus.Error { return nil }

// StartFakeWatcher owns org.kde.StatusNotifierWatcher on the bus at addr.
func StartFakeWatcher(t testing.TB, addr string) *FakeWatcher {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatalf("connect to the test bus: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	w := &FakeWatcher{conn: conn}
	if err := conn.Export(watcherMethods{w}, watcherPath, watcherName); err != nil {
		t.Fatal(err)
	}
	props, err := prop.Export(conn, watcherPath, map[string]map[string]*prop.Prop{
		watcherName: {
			"RegisteredStatusNotifierItems":  {Value: []string{}, Emit: prop.EmitTrue},
			"IsStatusNotifierHostRegistered": {Value: true, Emit: prop.EmitTrue},
			"ProtocolVersion":                {Value: int32(0), Emit: prop.EmitTrue},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	w.props = props
	node := &introspect.Node{Name: watcherPath, Interfaces: []introspect.Interface{introspect.IntrospectData, prop.IntrospectData,
		{Name: watcherName, Methods: introspect.Methods(watcherMethods{})}}}
	conn.Export(introspect.NewIntrospectable(node), watcherPath, "org.freedesktop.DBus.Introspectable")
	reply, err := conn.RequestName(watcherName, dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own %s: %v (%v)", watcherName, reply, err)
	}
	return w
}

// WaitItem waits for an item to register and returns it.
func (w *FakeWatcher) WaitItem(t testing.TB, timeout time.Duration) TrayItem {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		w.mu.Lock()
		n := len(w.items)
		var it TrayItem
		if n > 0 {
			it = w.items[n-1]
		}
		w.mu.Unlock()
		if n > 0 {
			return it
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no StatusNotifierItem registered within %s", timeout)
	return TrayItem{}
}

// MenuEntry is one item of a tray menu.
type MenuEntry struct {
	ID    int32
	Label string
	// Toggled is a checkbox item's state (dbusmenu "toggle-state" 1).
	Toggled bool
}

type menuLayout struct {
	ID       int32
	Props    map[string]dbus.Variant
	Children []dbus.Variant
}

// Menu reads the item's menu (its Menu property, then com.canonical.dbusmenu
// GetLayout) and returns the entries that have a label, in order.
func (w *FakeWatcher) Menu(t testing.TB, it TrayItem) (dbus.ObjectPath, []MenuEntry) {
	t.Helper()
	obj := w.conn.Object(it.Service, it.Path)
	v, err := obj.GetProperty(itemIface + ".Menu")
	if err != nil {
		t.Fatalf("read the item's Menu property: %v", err)
	}
	path, ok := v.Value().(dbus.ObjectPath)
	if !ok {
		t.Fatalf("Menu property is %T, not an object path", v.Value())
	}
	var rev uint32
	var root menuLayout
	call := w.conn.Object(it.Service, path).Call(dbusmenuName+".GetLayout", 0, int32(0), int32(-1), []string{})
	if call.Err != nil {
		t.Fatalf("GetLayout: %v", call.Err)
	}
	if err := call.Store(&rev, &root); err != nil {
		t.Fatalf("GetLayout reply: %v", err)
	}
	var out []MenuEntry
	for _, c := range root.Children {
		var child menuLayout
		if err := dbus.Store([]any{c.Value()}, &child); err != nil {
			t.Fatalf("menu child: %v (%T)", err, c.Value())
		}
		if l, ok := child.Props["label"].Value().(string); ok && l != "" {
			e := MenuEntry{ID: child.ID, Label: l}
			if v, ok := child.Props["toggle-state"]; ok {
				n, _ := v.Value().(int32)
				e.Toggled = n == 1
			}
			out = append(out, e)
		}
	}
	return path, out
}

// Click sends a "clicked" event for the menu entry labelled label (or, with
// a label ending in "(", the entry whose label starts with it), as a panel
// does when it is chosen.
func (w *FakeWatcher) Click(t testing.TB, it TrayItem, label string) {
	t.Helper()
	path, entries := w.Menu(t, it)
	for _, e := range entries {
		if e.Label == label || strings.HasSuffix(label, "(") && strings.HasPrefix(e.Label, label) {
			call := w.conn.Object(it.Service, path).Call(dbusmenuName+".Event", 0, e.ID, "clicked", dbus.MakeVariant(int32(0)), uint32(time.Now().Unix()))
			if call.Err != nil {
				t.Fatalf("click %q: %v", label, call.Err)
			}
			return
		}
	}
	t.Fatalf("no menu entry %q in %s", label, fmt.Sprint(entries))
}
