// Package events is the one event bus. Services publish through the Publisher
// interface; transports follow it: the desktop forwards to Wails events, the
// HTTP server streams Server-Sent Events. Neither kind of follower can slow a
// publisher down, and no topic can push another's events out: each follower
// has a bounded queue per topic (see Sub).
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

// TopicResync is the event a follower gets in place of events it lost: Data
// is a Resync naming the topic. The frontend reloads what it shows on it.
const TopicResync = "resync"

// Resync is the data of a TopicResync event the bus queues.
type Resync struct {
	Reason string `json:"reason"` // "overflow"
	Topic  string `json:"topic"`  // the topic whose events were lost
}

// Sub is one follower's subscription.
//
// Events go straight into its channel while it has room. When it is full
// (the follower is slow, or one topic is noisy), each topic waits in a
// queue of its own, bounded by the same length, and a pump moves them on
// in publish order as the follower reads. A topic whose queue fills loses
// what it had queued, replaced by one TopicResync event: a noisy topic can
// never push another topic's events (a reply's frames) out, and memory
// stays bounded by the topics times the queue length.
type Sub struct {
	bus    *Bus
	userID int64
	limit  int
	c      chan Event

	mu        sync.Mutex
	pending   []queued // publish order, once the channel was full
	nextSeq   uint64
	perTopic  map[string]int // pending events per topic (markers not counted)
	marked    map[string]bool
	overflows int
	pumping   bool
	done      chan struct{}
	closed    bool
	once      sync.Once
}

// DefaultQueue is the queue length of a follower: enough for a burst of
// stream frames, small enough that a stuck follower costs little.
const DefaultQueue = 256

// Subscribe follows the events of userID (and instance-wide ones). queue <= 0
// means DefaultQueue; it bounds the channel and each topic's queue behind
// it. Close the Sub when done.
func (b *Bus) Subscribe(userID int64, queue int) *Sub {
	if queue <= 0 {
		queue = DefaultQueue
	}
	s := &Sub{bus: b, userID: userID, limit: queue, c: make(chan Event, queue),
		perTopic: map[string]int{}, marked: map[string]bool{}, done: make(chan struct{})}
	b.mu.Lock()
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	return s
}

// Publish delivers ev to every matching follower without waiting, because
// one slow browser tab must never stall a reply for everyone.
func (b *Bus) Publish(ev Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		if ev.UserID != 0 && ev.UserID != s.userID {
			continue
		}
		s.push(ev)
	}
}

func (s *Sub) push(ev Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if len(s.pending) == 0 {
		select {
		case s.c <- ev:
			return
		default:
		}
	}
	if s.perTopic[ev.Topic] >= s.limit {
		// This topic's queue is full: what it holds is lost, and one resync
		// marker stands in for it until the follower reads that marker.
		kept := s.pending[:0]
		for _, p := range s.pending {
			if p.ev.Topic != ev.Topic {
				kept = append(kept, p)
			}
		}
		clear(s.pending[len(kept):])
		s.pending = kept
		s.perTopic[ev.Topic] = 0
		s.overflows++
		if !s.marked[ev.Topic] {
			s.marked[ev.Topic] = true
			s.queue(Event{Topic: TopicResync, UserID: s.userID,
				Data: Resync{Reason: "overflow", Topic: ev.Topic}})
		}
		return
	}
	s.queue(ev)
	s.perTopic[ev.Topic]++
	if !s.pumping {
		s.pumping = true
		go s.pump()
	}
}

type queued struct {
	seq uint64
	ev  Event
}

func (s *Sub) queue(ev Event) {
	s.nextSeq++
	s.pending = append(s.pending, queued{seq: s.nextSeq, ev: ev})
}

// pump moves queued events into the channel as the follower reads, and
// ends when none are left. Once the Sub is closed, the pump closes the
// channel if it was running then (Close cannot: a send may be under way).
func (s *Sub) pump() {
	stop := func() {
		s.mu.Lock()
		s.pumping = false
		if s.closed {
			close(s.c)
		}
		s.mu.Unlock()
	}
	for {
		s.mu.Lock()
		if len(s.pending) == 0 || s.closed {
			s.mu.Unlock()
			stop()
			return
		}
		head := s.pending[0]
		s.mu.Unlock()
		ev := head.ev
		select {
		case s.c <- ev:
		case <-s.done:
			stop()
			return
		}
		s.mu.Lock()
		// While it was being sent, an overflow of its own topic may have
		// taken it out of pending already.
		if len(s.pending) > 0 && s.pending[0].seq == head.seq {
			s.pending[0] = queued{}
			s.pending = s.pending[1:]
			if ev.Topic == TopicResync {
				if r, ok := ev.Data.(Resync); ok {
					s.marked[r.Topic] = false
				}
			} else {
				s.perTopic[ev.Topic]--
			}
		}
		s.mu.Unlock()
	}
}

// Followers is the number of live subscriptions.
func (b *Bus) Followers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}

// C delivers events; it is closed when the Sub is closed.
func (s *Sub) C() <-chan Event { return s.c }

// Overflows reports how many times one of this follower's topic queues
// filled and lost its events (a TopicResync took their place).
func (s *Sub) Overflows() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.overflows
}

// Close ends the subscription. Safe to call more than once.
func (s *Sub) Close() {
	s.bus.mu.Lock()
	delete(s.bus.subs, s)
	s.bus.mu.Unlock()
	s.once.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.pending = nil
		pumping := s.pumping
		s.mu.Unlock()
		close(s.done)
		if !pumping {
			close(s.c) // else the pump closes it as it stops
		}
	})
}
