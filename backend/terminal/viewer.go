package terminal

import (
	"context"
	"sync"
)

// Msg is one message to a viewer: terminal bytes (Data), or a control
// message (Type "ready" with Marks, Cols and Rows; "closed" with Reason).
type Msg struct {
	Data   []byte
	Type   string
	Marks  bool
	Cols   int
	Rows   int
	Reason string
}

// maxMerge bounds the terminal bytes Next joins into one message.
const maxMerge = 64 << 10

// Viewer is one attachment to a chat's shell: a browser tab's socket or
// the desktop window. Its queue is bounded; the shell never waits for it.
type Viewer struct {
	ss         *session
	cols, rows int // under ss.mu

	mu       sync.Mutex
	q        []Msg
	qBytes   int
	wake     chan struct{}
	closed   bool
	reason   string
	sentLast bool // the closing message was read
}

func newViewer(ss *session, cols, rows int) *Viewer {
	return &Viewer{ss: ss, cols: cols, rows: rows, wake: make(chan struct{}, 1)}
}

// push queues m whatever the bounds (attach's ready and scrollback).
func (v *Viewer) push(m Msg) {
	v.mu.Lock()
	v.q = append(v.q, m)
	v.qBytes += len(m.Data)
	v.mu.Unlock()
	v.signal()
}

func (v *Viewer) signal() {
	select {
	case v.wake <- struct{}{}:
	default:
	}
}

// offer queues chunk unless the queue is full; false means the viewer is
// too slow and must be dropped.
func (v *Viewer) offer(chunk []byte) bool {
	opt := &v.ss.svc.opt
	v.mu.Lock()
	if v.closed {
		v.mu.Unlock()
		return true
	}
	if len(v.q)+1 > opt.QueueChunks || v.qBytes+len(chunk) > opt.QueueBytes {
		v.mu.Unlock()
		return false
	}
	v.q = append(v.q, Msg{Data: chunk})
	v.qBytes += len(chunk)
	v.mu.Unlock()
	v.signal()
	return true
}

// closeWith closes the viewer: what it had queued is still delivered
// (but for a slow viewer, which reconnects for the scrollback), then a
// "closed" message.
func (v *Viewer) closeWith(reason string) {
	v.mu.Lock()
	if !v.closed {
		v.closed, v.reason = true, reason
		if reason == ReasonSlow {
			clear(v.q)
			v.q, v.qBytes = nil, 0
		}
	}
	v.mu.Unlock()
	v.signal()
}

// Next waits for the viewer's next message. Consecutive terminal bytes
// come joined (up to 64 KiB). After the "closed" message it returns
// ErrClosed.
func (v *Viewer) Next(ctx context.Context) (Msg, error) {
	for {
		v.mu.Lock()
		if len(v.q) > 0 {
			m := v.pop()
			if m.Data != nil && len(m.Data) < maxMerge && len(v.q) > 0 && v.q[0].Data != nil {
				joined := append(make([]byte, 0, maxMerge), m.Data...)
				for len(v.q) > 0 && v.q[0].Data != nil && len(joined)+len(v.q[0].Data) <= maxMerge {
					joined = append(joined, v.pop().Data...)
				}
				m.Data = joined
			}
			v.mu.Unlock()
			return m, nil
		}
		if v.closed {
			if v.sentLast {
				v.mu.Unlock()
				return Msg{}, ErrClosed
			}
			v.sentLast = true
			m := Msg{Type: "closed", Reason: v.reason}
			v.mu.Unlock()
			return m, nil
		}
		v.mu.Unlock()
		select {
		case <-v.wake:
		case <-ctx.Done():
			return Msg{}, ctx.Err()
		}
	}
}

// pop takes the queue's first message; v.mu is held.
func (v *Viewer) pop() Msg {
	m := v.q[0]
	v.q[0] = Msg{}
	v.q = v.q[1:]
	v.qBytes -= len(m.Data)
	return m
}

// Input types data into the shell.
func (v *Viewer) Input(data []byte) error {
	if v.isClosed() {
		return ErrClosed
	}
	return v.ss.input(data)
}

// Resize sets the viewer's size; the smallest viewer's is the shell's.
func (v *Viewer) Resize(cols, rows int) {
	cols, rows = clampSize(cols, rows)
	v.ss.mu.Lock()
	v.cols, v.rows = cols, rows
	v.ss.mu.Unlock()
	v.ss.fit()
}

// Close detaches the viewer; the shell goes on.
func (v *Viewer) Close() {
	v.ss.detach(v)
	v.closeWith(ReasonDetached)
}

// Chat is the chat whose shell v views.
func (v *Viewer) Chat() (user, chat int64) { return int64(v.ss.user), int64(v.ss.chat) }

func (v *Viewer) isClosed() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.closed
}
