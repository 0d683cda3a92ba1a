package harness

import (
	"encoding/binary"
	"net/url"
	"strings"
	"testing"
	"time"
)

// DropResult is what a drag with DragFiles came to.
type DropResult struct {
	Accepted bool // the target's last XdndStatus accepted the drop
	Dropped  bool // XdndDrop was sent (only when accepted)
	Finished bool // the target answered XdndFinished with success
	Served   int  // how many times the file list was handed over
}

// DragFiles drags files onto the top-level window target as a file
// manager does, with the XDND protocol (version 5): it enters the window,
// moves over the root position (rootX, rootY) until the window accepts
// (for up to 15 s), and drops; if the window never accepts it leaves, as a
// source does when the user lets go over a place that refuses the drop. It
// hands over the list as text/uri-list whenever the target asks, which
// WebKit does already while the pointer moves.
//
// The window is found by the caller (it must carry XdndAware); there is
// no pointer involved, just as XDND needs none.
func (x *XConn) DragFiles(t testing.TB, target uint32, rootX, rootY int, paths []string) DropResult {
	t.Helper()
	var res DropResult
	src := x.createWindow(t)
	defer x.request(t, []byte{4, 0, 0, 0, byte(src), byte(src >> 8), byte(src >> 16), byte(src >> 24)}, false) // DestroyWindow

	var list strings.Builder
	for _, p := range paths {
		list.WriteString((&url.URL{Scheme: "file", Path: p}).String() + "\r\n")
	}
	atoms := map[string]uint32{}
	for _, n := range []string{"XdndSelection", "XdndEnter", "XdndPosition", "XdndStatus", "XdndDrop", "XdndLeave",
		"XdndFinished", "XdndActionCopy", "text/uri-list", "TARGETS", "ATOM"} {
		atoms[n] = x.Atom(t, n)
	}
	// SetSelectionOwner(XdndSelection, src, CurrentTime)
	req := make([]byte, 16)
	req[0] = 22
	binary.LittleEndian.PutUint32(req[4:], src)
	binary.LittleEndian.PutUint32(req[8:], atoms["XdndSelection"])
	x.request(t, req, false)

	send := func(typ string, data ...uint32) {
		x.sendClientMessage(t, target, atoms[typ], append([]uint32{src}, data...)...)
	}
	// serve answers the target's requests for the data; handle returns
	// true for the XDND message the caller waits for.
	wait := func(want string, d time.Duration, handle func(data []uint32) bool) bool {
		for deadline := time.Now().Add(d); time.Now().Before(deadline); {
			if len(x.events) == 0 {
				x.request(t, []byte{43, 0, 0, 0}, true) // a round trip collects what has come
				if len(x.events) == 0 {
					time.Sleep(20 * time.Millisecond)
					continue
				}
			}
			ev := x.events[0]
			x.events = x.events[1:]
			switch ev[0] & 0x7f {
			case 30: // SelectionRequest
				x.answerSelection(t, ev, atoms, list.String())
				res.Served++
			case 33: // ClientMessage
				// Only this drag's: to our window, from the target. A late
				// answer to an earlier drag that gave up must not count.
				if binary.LittleEndian.Uint32(ev[4:]) != src || binary.LittleEndian.Uint32(ev[8:]) != atoms[want] ||
					binary.LittleEndian.Uint32(ev[12:]) != target {
					continue
				}
				data := make([]uint32, 5)
				for i := range data {
					data[i] = binary.LittleEndian.Uint32(ev[12+4*i:])
				}
				if handle(data) {
					return true
				}
			}
		}
		return false
	}

	send("XdndEnter", 5<<24, atoms["text/uri-list"], 0, 0)
	// A pointer sends positions as it moves; WebKit answers only once the
	// page has seen the dragover, so keep moving a little until it has.
	// A slow machine can take seconds to answer; a refusal may be the
	// page not having had its say yet, so only the deadline ends this.
	for i, deadline := 0, time.Now().Add(15*time.Second); !res.Accepted && time.Now().Before(deadline); i++ {
		send("XdndPosition", 0, uint32(rootX+i%2)<<16|uint32(rootY), 0, atoms["XdndActionCopy"])
		wait("XdndStatus", 200*time.Millisecond, func(d []uint32) bool {
			res.Accepted = d[1]&1 == 1
			return true
		})
	}
	if !res.Accepted {
		send("XdndLeave", 0)
		x.request(t, []byte{43, 0, 0, 0}, true)
		return res
	}
	send("XdndDrop", 0, 0)
	res.Dropped = true
	wait("XdndFinished", 10*time.Second, func(d []uint32) bool {
		res.Finished = d[1]&1 == 1
		return true
	})
	return res
}

// createWindow makes an unmapped 1×1 input-only window: the drag's source
// and the owner of its selection.
func (x *XConn) createWindow(t testing.TB) uint32 {
	t.Helper()
	x.nextID++
	id := x.idBase | (x.nextID & x.idMask)
	req := make([]byte, 32)
	req[0] = 1 // CreateWindow, depth 0 (input-only)
	binary.LittleEndian.PutUint32(req[4:], id)
	binary.LittleEndian.PutUint32(req[8:], x.root)
	binary.LittleEndian.PutUint16(req[16:], 1) // width
	binary.LittleEndian.PutUint16(req[18:], 1) // height
	binary.LittleEndian.PutUint16(req[22:], 2) // class InputOnly; visual and value mask 0
	x.request(t, req, false)
	return id
}

// sendClientMessage sends a 32-bit ClientMessage straight to win (XDND
// messages go to the window, not through the root).
func (x *XConn) sendClientMessage(t testing.TB, win, typ uint32, data ...uint32) {
	t.Helper()
	ev := make([]byte, 32)
	ev[0], ev[1] = 33, 32
	binary.LittleEndian.PutUint32(ev[4:], win)
	binary.LittleEndian.PutUint32(ev[8:], typ)
	for i, d := range data {
		binary.LittleEndian.PutUint32(ev[12+4*i:], d)
	}
	req := make([]byte, 12, 44)
	req[0] = 25 // SendEvent, propagate false, event mask 0: to the window's owner
	binary.LittleEndian.PutUint32(req[4:], win)
	x.request(t, append(req, ev...), false)
}

// answerSelection answers a SelectionRequest for the drag's data: the list
// of types (TARGETS) or the file list; anything else is refused.
func (x *XConn) answerSelection(t testing.TB, ev []byte, atoms map[string]uint32, list string) {
	t.Helper()
	requestor := binary.LittleEndian.Uint32(ev[12:])
	selection := binary.LittleEndian.Uint32(ev[16:])
	target := binary.LittleEndian.Uint32(ev[20:])
	property := binary.LittleEndian.Uint32(ev[24:])
	if property == 0 {
		property = target // an old client's request
	}
	change := func(typ uint32, format byte, data []byte, units int) {
		req := make([]byte, 24, 24+len(data)+3)
		req[0], req[1] = 18, 0 // ChangeProperty, Replace
		binary.LittleEndian.PutUint32(req[4:], requestor)
		binary.LittleEndian.PutUint32(req[8:], property)
		binary.LittleEndian.PutUint32(req[12:], typ)
		req[16] = format
		binary.LittleEndian.PutUint32(req[20:], uint32(units))
		x.request(t, append(req, data...), false)
	}
	switch target {
	case atoms["TARGETS"]:
		data := make([]byte, 8)
		binary.LittleEndian.PutUint32(data, atoms["TARGETS"])
		binary.LittleEndian.PutUint32(data[4:], atoms["text/uri-list"])
		change(atoms["ATOM"], 32, data, 2)
	case atoms["text/uri-list"]:
		change(atoms["text/uri-list"], 8, []byte(list), len(list))
	default:
		property = 0
	}
	notify := make([]byte, 32)
	notify[0] = 31             // SelectionNotify
	copy(notify[4:8], ev[4:8]) // the request's time
	binary.LittleEndian.PutUint32(notify[8:], requestor)
	binary.LittleEndian.PutUint32(notify[12:], selection)
	binary.LittleEndian.PutUint32(notify[16:], target)
	binary.LittleEndian.PutUint32(notify[20:], property)
	req := make([]byte, 12, 44)
	req[0] = 25
	binary.LittleEndian.PutUint32(req[4:], requestor)
	x.request(t, append(req, notify...), false)
}
