package events

import (
	"testing"
	"time"
)

func TestScopedDelivery(t *testing.T) {
	b := NewBus()
	alice := b.Subscribe(1, 4)
	bob := b.Subscribe(2, 4)
	defer alice.Close()
	defer bob.Close()
	b.Publish(Event{Topic: "private", UserID: 1, Data: "for alice"})
	b.Publish(Event{Topic: "instance", UserID: 0})
	if got := len(alice.C()); got != 2 {
		t.Errorf("alice queued %d events, want 2", got)
	}
	if got := len(bob.C()); got != 1 {
		t.Fatalf("bob queued %d events, want 1 (only the instance-wide one)", got)
	}
	if ev := <-bob.C(); ev.Topic != "instance" {
		t.Errorf("bob got %q", ev.Topic)
	}
}

// drain reads what s has delivered until nothing more comes for a while
// (the pump moves queued events on as the channel is read).
func drain(t *testing.T, s *Sub, want int) []Event {
	t.Helper()
	var got []Event
	deadline := time.After(30 * time.Second)
	for len(got) < want {
		select {
		case ev, ok := <-s.C():
			if !ok {
				return got
			}
			got = append(got, ev)
		case <-deadline:
			t.Fatalf("got %d events, want %d: %+v", len(got), want, got)
		}
	}
	return got
}

// A follower that reads nothing holds the publisher up no more than one
// that keeps up; once its topic's queue is full, what that topic had
// queued is replaced by one resync, and the follower stays subscribed.
func TestSlowFollowerLosesItsBacklogNotItsSubscription(t *testing.T) {
	b := NewBus()
	slow := b.Subscribe(1, 2)
	fast := b.Subscribe(1, 100)
	defer slow.Close()
	defer fast.Close()
	for i := 0; i < 10; i++ {
		b.Publish(Event{Topic: "tick", UserID: 1, Data: i})
	}
	if got := len(fast.C()); got != 10 {
		t.Errorf("fast follower got %d, want 10", got)
	}
	if b.Followers() != 2 {
		t.Errorf("followers = %d, want 2", b.Followers())
	}
	if slow.Overflows() == 0 {
		t.Fatal("the slow follower's queue never overflowed")
	}
	// Its channel (2) came first, then a resync for what was lost, then
	// what came after that, in order.
	got := drain(t, slow, 3)
	if got[0].Data != 0 || got[1].Data != 1 {
		t.Errorf("first events %+v, want ticks 0 and 1", got[:2])
	}
	if got[2].Topic != TopicResync || got[2].Data != (Resync{Reason: "overflow", Topic: "tick"}) {
		t.Errorf("third event %+v, want a resync for tick", got[2])
	}
	// It still follows.
	b.Publish(Event{Topic: "tick", UserID: 1, Data: "after"})
	var last Event
	for _, ev := range drain(t, slow, 1) {
		last = ev
	}
	for last.Data != "after" {
		last = drain(t, slow, 1)[0]
	}
}

// TestNoisyTopicCannotPushFramesOut: a topic that floods a follower loses
// its own backlog; every event of another topic (a reply's frames) still
// arrives, in order.
func TestNoisyTopicCannotPushFramesOut(t *testing.T) {
	b := NewBus()
	s := b.Subscribe(1, 16) // room for the 10 frames, not for the noise
	defer s.Close()
	for i := 0; i < 100; i++ {
		b.Publish(Event{Topic: "noise", UserID: 1, Data: i})
		if i%10 == 0 {
			b.Publish(Event{Topic: "gen", UserID: 1, Data: i / 10})
		}
	}
	var frames []any
	resyncs := 0
	timeout := time.After(30 * time.Second)
	for len(frames) < 10 {
		select {
		case ev := <-s.C():
			switch ev.Topic {
			case "gen":
				frames = append(frames, ev.Data)
			case TopicResync:
				if r := ev.Data.(Resync); r.Topic != "noise" {
					t.Errorf("resync for %q, want noise", r.Topic)
				}
				resyncs++
			}
		case <-timeout:
			t.Fatalf("only %d of 10 frames arrived: %v", len(frames), frames)
		}
	}
	for i, f := range frames {
		if f != i {
			t.Fatalf("frames %v, want 0…9 in order", frames)
		}
	}
	if resyncs == 0 {
		t.Error("the noisy topic lost events without a resync")
	}
}

// TestCloseEndsTheChannel: Close ends the channel whether or not events
// were waiting behind it, so a range over it ends.
func TestCloseEndsTheChannel(t *testing.T) {
	b := NewBus()
	for _, queued := range []int{0, 1, 50} {
		s := b.Subscribe(1, 1)
		for i := 0; i < queued; i++ {
			b.Publish(Event{Topic: "tick", UserID: 1, Data: i})
		}
		s.Close()
		s.Close()
		done := make(chan struct{})
		go func() {
			for range s.C() {
			}
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("with %d published, the channel never closed", queued)
		}
		b.Publish(Event{Topic: "tick", UserID: 1}) // no panic after Close
	}
	if b.Followers() != 0 {
		t.Errorf("followers = %d after Close", b.Followers())
	}
}

// BenchmarkPublish fans one event out to ten followers that keep up. It
// fails if any follower fell behind, since publishing to nobody is not the
// figure we want.
func BenchmarkPublish(b *testing.B) {
	bus := NewBus()
	var subs []*Sub
	for i := 0; i < 10; i++ {
		s := bus.Subscribe(1, 1<<20)
		subs = append(subs, s)
		go func() {
			for range s.C() {
			}
		}()
	}
	ev := Event{Topic: "frame", UserID: 1, Data: "x"}
	b.ReportAllocs()
	for b.Loop() {
		bus.Publish(ev)
	}
	b.StopTimer()
	for _, s := range subs {
		if s.Overflows() > 0 {
			b.Fatal("a follower fell behind; the figure would be meaningless")
		}
		s.Close()
	}
}
