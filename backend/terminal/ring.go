package terminal

import "bytes"

// ring keeps the last n bytes the shell printed.
type ring struct {
	buf  []byte
	n    int
	full bool // it has wrapped: what it holds starts mid-stream
}

func newRing(n int) *ring { return &ring{n: n} }

func (r *ring) write(p []byte) {
	r.buf = append(r.buf, p...)
	if len(r.buf) > 2*r.n { // trimmed in steps, not on every write
		r.buf = r.buf[:copy(r.buf, r.buf[len(r.buf)-r.n:])]
		r.full = true
	}
}

// snapshot is a copy of the last n bytes. Once the ring has wrapped it
// starts after a line break, not mid-line (nor, mostly, mid-escape or
// mid-character).
func (r *ring) snapshot() []byte {
	b := r.buf
	cut := r.full
	if len(b) > r.n {
		b, cut = b[len(b)-r.n:], true
	}
	if cut {
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	return append([]byte(nil), b...)
}
