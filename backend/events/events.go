// Package events is the one event bus. Services publish through the Publisher
// interface; transports follow it: the desktop forwards to Wails events, the
// HTTP server streams Server-Sent Events. Neither kind of follower can slow a
// publisher down: each has a bounded queue and is dropped when it fills.
package events

import (
	"sync"
)

// Event is one thing that happened. UserID scopes it: a follower only ever
// receives its own user's events, plus instance-wide ones (UserID 0) that
// carry nothing private.
type Event struct {
	Topic  string
	UserID int64
	Data   any
}

// Envelope is the wire shape every transport sends.
type Envelope struct {
	Topic string `json:"topic"`
	Data  any    `json:"data"`
}

// Publisher is what services depend on.
type Publisher interface {
	Publish(Event)
}

// Bus fans events out to subscriptions.
type Bus struct {
	mu   sync.Mutex
	subs map[*Sub]struct{}
}

var _ Publisher = (*Bus)(nil)

// NewBus returns an empty bus.
func NewBus() *Bus { return &Bus{subs: map[*Sub]struct{}{}} }

// Sub is one follower's subscription.
type Sub struct {
	bus     *Bus
	userID  int64
	c       chan Event
	dropped bool
	once    sync.Once
}

// DefaultQueue is the queue length of a follower: enough for a burst of
// stream frames, small enough that a stuck follower is noticed quickly.
const DefaultQueue = 256

// Subscribe follows the events of userID (and instance-wide ones). queue <= 0
// means DefaultQueue. Close the Sub when done.
func (b *Bus) Subscribe(userID int64, queue int) *Sub {
	if queue <= 0 {
		queue = DefaultQueue
	}
	s := &Sub{bus: b, userID: userID, c: make(chan Event, queue)}
	b.mu.Lock()
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	return s
}

// Publish delivers ev to every matching follower without waiting: a follower
// whose queue is full is dropped (its channel closed, Dropped reports true),
// because one slow browser tab must never stall a reply for everyone.
func (b *Bus) Publish(ev Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		if ev.UserID != 0 && ev.UserID != s.userID {
			continue
		}
		select {
		case s.c <- ev:
		default:
			s.dropped = true
			delete(b.subs, s)
			s.once.Do(func() { close(s.c) })
		}
	}
}

// Followers is the number of live subscriptions.
func (b *Bus) Followers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}

// C delivers events; it is closed when the Sub is closed or dropped.
func (s *Sub) C() <-chan Event { return s.c }

// Dropped reports whether the bus dropped this follower for falling behind.
func (s *Sub) Dropped() bool {
	s.bus.mu.Lock()
	defer s.bus.mu.Unlock()
	return s.dropped
}

// Close ends the subscription. Safe to call more than once.
func (s *Sub) Close() {
	s.bus.mu.Lock()
	delete(s.bus.subs, s)
	s.bus.mu.Unlock()
	s.once.Do(func() { close(s.c) })
}
