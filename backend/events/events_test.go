package events

import "testing"

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

func TestSlowFollowerIsDropped(t *testing.T) {
	b := NewBus()
	slow := b.Subscribe(1, 2)
	fast := b.Subscribe(1, 100)
	defer fast.Close()
	for i := 0; i < 10; i++ {
		b.Publish(Event{Topic: "tick", UserID: 1, Data: i})
	}
	if !slow.Dropped() {
		t.Fatal("slow follower not dropped")
	}
	n := 0
	for range slow.C() {
		n++
	}
	if n != 2 {
		t.Errorf("slow follower drained %d, want its 2 queued events then a closed channel", n)
	}
	if got := len(fast.C()); got != 10 {
		t.Errorf("fast follower got %d, want 10", got)
	}
	if b.Followers() != 1 {
		t.Errorf("followers = %d, want 1", b.Followers())
	}
	slow.Close() // safe after drop
}

// BenchmarkPublish fans one event out to ten followers that keep up. It
// fails if any follower was dropped, since publishing to nobody is not the
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
		if s.Dropped() {
			b.Fatal("a follower was dropped; the figure would be meaningless")
		}
		s.Close()
	}
}
