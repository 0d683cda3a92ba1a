package harness

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// XConn is a minimal X11 protocol client for what no installed tool does:
// closing a window the way its title bar's close button does (the window
// manager sends WM_DELETE_WINDOW) and typing a key as a keyboard would
// (XTEST, so the event is not flagged as synthetic). xdotool, wmctrl and
// xte are not in build/deps.sh; this needs nothing beyond Xvfb.
//
// It speaks little-endian X11 over the display's Unix socket with no
// authorisation, which Xvfb grants to local clients.
type XConn struct {
	c              net.Conn
	root           uint32
	minKey, maxKey byte
	xtest          byte // XTEST's major opcode, 0 until looked up
	idBase, idMask uint32
	nextID         uint32
	events         [][]byte // events read while waiting for a reply, oldest first
}

// DialX connects to display (":N"). It is closed at test cleanup.
func DialX(t testing.TB, display string) *XConn {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimPrefix(display, ":"))
	if err != nil {
		t.Fatalf("display %q: %v", display, err)
	}
	c, err := net.Dial("unix", fmt.Sprintf("/tmp/.X11-unix/X%d", n))
	if err != nil {
		t.Fatalf("connect to X display %s: %v", display, err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(30 * time.Second))
	// Connection setup: byte order 'l', protocol 11.0, no authorisation.
	if _, err := c.Write([]byte{'l', 0, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 8)
	if _, err := io.ReadFull(c, head); err != nil {
		t.Fatalf("X setup: %v", err)
	}
	body := make([]byte, 4*int(binary.LittleEndian.Uint16(head[6:])))
	if _, err := io.ReadFull(c, body); err != nil {
		t.Fatalf("X setup: %v", err)
	}
	if head[0] != 1 {
		t.Fatalf("X server refused the connection: %q", body[:min(int(head[1]), len(body))])
	}
	vendor := int(binary.LittleEndian.Uint16(body[16:]))
	formats := int(body[21])
	screen := 32 + (vendor+3)&^3 + 8*formats
	return &XConn{c: c, root: binary.LittleEndian.Uint32(body[screen:]), minKey: body[26], maxKey: body[27],
		idBase: binary.LittleEndian.Uint32(body[4:]), idMask: binary.LittleEndian.Uint32(body[8:])}
}

// request sends one request; it returns the reply (nil when the request
// has none). Errors fail the test. The sequence is kept simple: each
// request with a reply is read before the next is sent, and a request
// without one is followed by GetInputFocus so that its error, if any,
// arrives before that reply.
func (x *XConn) request(t testing.TB, req []byte, reply bool) []byte {
	t.Helper()
	for len(req)%4 != 0 {
		req = append(req, 0)
	}
	binary.LittleEndian.PutUint16(req[2:], uint16(len(req)/4))
	x.c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := x.c.Write(req); err != nil {
		t.Fatalf("X request %d: %v", req[0], err)
	}
	if !reply {
		x.request(t, []byte{43, 0, 0, 0}, true) // GetInputFocus, as a round trip
		return nil
	}
	for {
		msg := make([]byte, 32)
		if _, err := io.ReadFull(x.c, msg); err != nil {
			t.Fatalf("X reply: %v", err)
		}
		switch msg[0] {
		case 0:
			t.Fatalf("X error %d for request %d.%d (value 0x%x)", msg[1], msg[10], binary.LittleEndian.Uint16(msg[8:]), binary.LittleEndian.Uint32(msg[4:]))
		case 1:
			extra := make([]byte, 4*int(binary.LittleEndian.Uint32(msg[4:])))
			if _, err := io.ReadFull(x.c, extra); err != nil {
				t.Fatalf("X reply: %v", err)
			}
			return append(msg, extra...)
		}
		// An event, kept for whoever waits for one (drag and drop does).
		x.events = append(x.events, msg)
	}
}

func withName(opcode, b1 byte, name string) []byte {
	req := []byte{opcode, b1, 0, 0, 0, 0, 0, 0}
	binary.LittleEndian.PutUint16(req[4:], uint16(len(name)))
	return append(req, name...)
}

// Atom interns name.
func (x *XConn) Atom(t testing.TB, name string) uint32 {
	t.Helper()
	return binary.LittleEndian.Uint32(x.request(t, withName(16, 0, name), true)[8:])
}

// clientMessage sends a 32-bit format ClientMessage about win to the root
// window, where the window manager listens (EWMH).
func (x *XConn) clientMessage(t testing.TB, win uint32, typ string, data ...uint32) {
	t.Helper()
	atom := x.Atom(t, typ)
	ev := make([]byte, 32)
	ev[0], ev[1] = 33, 32 // ClientMessage, format 32
	binary.LittleEndian.PutUint32(ev[4:], win)
	binary.LittleEndian.PutUint32(ev[8:], atom)
	for i, d := range data {
		binary.LittleEndian.PutUint32(ev[12+4*i:], d)
	}
	req := make([]byte, 12, 44)
	req[0] = 25 // SendEvent, propagate false
	binary.LittleEndian.PutUint32(req[4:], x.root)
	binary.LittleEndian.PutUint32(req[8:], 0x180000) // SubstructureNotify|SubstructureRedirect
	x.request(t, append(req, ev...), false)
}

// CloseWindow asks the window manager to close win (_NET_CLOSE_WINDOW),
// as a click on its close button does: the window gets WM_DELETE_WINDOW
// and decides for itself.
func (x *XConn) CloseWindow(t testing.TB, win uint32) {
	t.Helper()
	x.clientMessage(t, win, "_NET_CLOSE_WINDOW", 0, 2)
}

// Activate asks the window manager to raise and focus win
// (_NET_ACTIVE_WINDOW, from a pager).
func (x *XConn) Activate(t testing.TB, win uint32) {
	t.Helper()
	x.clientMessage(t, win, "_NET_ACTIVE_WINDOW", 2, 0, 0)
}

// Key presses and releases the key that types keysym (e.g. 0xff1b,
// Escape) with XTEST, as a keyboard does: it goes to the focused window.
func (x *XConn) Key(t testing.TB, keysym uint32) {
	t.Helper()
	if x.xtest == 0 {
		r := x.request(t, withName(98, 0, "XTEST"), true) // QueryExtension
		if r[8] == 0 {
			t.Fatal("the X server has no XTEST extension")
		}
		x.xtest = r[9]
	}
	code := x.keycode(t, keysym)
	for _, typ := range []byte{2, 3} { // KeyPress, KeyRelease
		req := make([]byte, 36)
		req[0], req[1] = x.xtest, 2 // FakeInput
		req[4], req[5] = typ, code
		binary.LittleEndian.PutUint32(req[12:], x.root)
		x.request(t, req, false)
	}
}

// keycode finds the key that carries keysym in the server's keymap.
func (x *XConn) keycode(t testing.TB, keysym uint32) byte {
	t.Helper()
	n := int(x.maxKey) - int(x.minKey) + 1
	r := x.request(t, []byte{101, 0, 0, 0, x.minKey, byte(n), 0, 0}, true) // GetKeyboardMapping
	per := int(r[1])
	syms := r[32:]
	for i := 0; i < n; i++ {
		for j := 0; j < per; j++ {
			if binary.LittleEndian.Uint32(syms[4*(i*per+j):]) == keysym {
				return x.minKey + byte(i)
			}
		}
	}
	t.Fatalf("no key types keysym 0x%x", keysym)
	return 0
}

// WindowID parses a window id as xwininfo prints it ("0x1a00003").
func WindowID(t testing.TB, s string) uint32 {
	t.Helper()
	n, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 32)
	if err != nil {
		t.Fatalf("window id %q: %v", s, err)
	}
	return uint32(n)
}
