package auth

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestLimiterBlocksThenReleases(t *testing.T) {
	c := newClock()
	l := NewLimiter(LimitOptions{Burst: 3, Every: 10 * time.Second, Now: c.Now})
	for i := range 3 {
		if w := l.Take("k"); w != 0 {
			t.Fatalf("attempt %d within the burst: wait %v", i+1, w)
		}
	}
	if w := l.Take("k"); w != 10*time.Second {
		t.Errorf("fourth attempt: wait %v, want 10s", w)
	}
	if w := l.Take("other"); w != 0 {
		t.Errorf("another key is blocked too: wait %v", w)
	}
	c.Add(4 * time.Second)
	if w := l.Wait("k"); w != 6*time.Second {
		t.Errorf("after 4s: wait %v, want 6s", w)
	}
	c.Add(6 * time.Second)
	if w := l.Take("k"); w != 0 {
		t.Errorf("after the wait: still blocked for %v", w)
	}
	if w := l.Take("k"); w == 0 {
		t.Error("one token came back but two attempts went through")
	}
	l.Give("k")
	if w := l.Take("k"); w != 0 {
		t.Errorf("after Give: blocked for %v", w)
	}
	c.Add(time.Hour)
	for i := range 3 {
		if w := l.Take("k"); w != 0 {
			t.Fatalf("after an hour, attempt %d: wait %v (the bucket should be full, not over-full)", i+1, w)
		}
	}
	if w := l.Take("k"); w == 0 {
		t.Error("an hour of waiting gave more than the burst")
	}
	l.Reset("k")
	if w := l.Wait("k"); w != 0 {
		t.Errorf("after Reset: wait %v", w)
	}
}

func TestLimiterMemoryIsBounded(t *testing.T) {
	c := newClock()
	l := NewLimiter(LimitOptions{Burst: 2, Every: time.Minute, MaxKeys: 100, Now: c.Now})
	l.Take("victim")
	l.Take("victim")
	for i := range 1000 {
		l.Take(fmt.Sprintf("k%d", i))
	}
	if n := l.Len(); n > 100 {
		t.Errorf("remembers %d keys, want at most 100", n)
	}
	// Buckets that have refilled are dropped before anything is evicted.
	c.Add(time.Hour)
	l.Take("late")
	if n := l.Len(); n != 1 {
		t.Errorf("after every bucket refilled, %d keys are kept, want 1", n)
	}
}

func TestLoginLimiterPerAddressAndPerUsername(t *testing.T) {
	c := newClock()
	l := NewLoginLimiter(LoginLimits{
		PerAddress:  LimitOptions{Burst: 3, Every: 10 * time.Second},
		PerUsername: LimitOptions{Burst: 5, Every: time.Minute},
	}, c.Now)

	// One address runs out; another address is unaffected.
	for range 3 {
		if w := l.Attempt("192.0.2.7", "sam"); w != 0 {
			t.Fatalf("within the address burst: wait %v", w)
		}
	}
	if w := l.Attempt("192.0.2.7:5555", "frodo"); w != 10*time.Second {
		t.Errorf("blocked address (with a port) trying another user: wait %v, want 10s", w)
	}
	if w := l.Attempt("198.51.100.1", "frodo"); w != 0 {
		t.Errorf("another address is locked out by the first: wait %v", w)
	}
	// Spread over addresses, guesses at one username still stop.
	l.Attempt("198.51.100.2", "sam")
	l.Attempt("198.51.100.3", "SAM ")
	if w := l.Attempt("198.51.100.4", "Sam"); w != time.Minute {
		t.Errorf("sixth guess at sam from a fresh address: wait %v, want 1m", w)
	}
	// A refused attempt spends nothing from the address.
	if w := l.Attempt("198.51.100.4", "rosie"); w != 0 {
		t.Errorf("the refused attempt cost the address a token: wait %v", w)
	}
	// A successful login forgets the username's attempts, not the address's.
	l.Succeeded("198.51.100.4", "sam")
	if w := l.Attempt("198.51.100.5", "sam"); w != 0 {
		t.Errorf("after a success sam is still limited: %v", w)
	}
	c.Add(10 * time.Second)
	if w := l.Attempt("192.0.2.7", "sam"); w != 0 {
		t.Errorf("the address did not get a token back after 10s: %v", w)
	}
}

func TestLoginLimiterIPv6ByPrefix(t *testing.T) {
	l := NewLoginLimiter(LoginLimits{PerAddress: LimitOptions{Burst: 1, Every: time.Minute}}, newClock().Now)
	if w := l.Attempt("2001:db8:1:2::1", "a"); w != 0 {
		t.Fatal(w)
	}
	if w := l.Attempt("[2001:db8:1:2:ffff::9]:443", "b"); w == 0 {
		t.Error("another address in the same /64 was not limited")
	}
	if w := l.Attempt("2001:db8:1:3::1", "c"); w != 0 {
		t.Errorf("another /64 was limited: %v", w)
	}
	for in, want := range map[string]string{
		"::ffff:192.0.2.1": "192.0.2.1",
		"192.0.2.1:80":     "192.0.2.1",
		"fe80::1%eth0":     "fe80::/64",
		"not an address":   "not an address",
	} {
		if got := AddressKey(in); got != want {
			t.Errorf("AddressKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLoginLimiterUnderConcurrentAttempts(t *testing.T) {
	l := NewLoginLimiter(LoginLimits{PerAddress: LimitOptions{Burst: 5, Every: time.Hour}}, newClock().Now)
	var allowed atomic.Int32
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if l.Attempt("192.0.2.1", "sam") == 0 {
				allowed.Add(1)
			}
		})
	}
	wg.Wait()
	if n := allowed.Load(); n != 5 {
		t.Errorf("%d of 50 parallel attempts went through, want exactly the burst of 5", n)
	}
}

// A stranger guessing a username from many addresses does not keep its
// owner out of a device they signed in from before.
func TestLoginLimiterKnownDeviceIsNotLockedOut(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	l := NewLoginLimiter(LoginLimits{
		PerAddress:  LimitOptions{Burst: 5, Every: time.Hour},
		PerUsername: LimitOptions{Burst: 3, Every: time.Hour},
	}, func() time.Time { return now })
	if w := l.Attempt("192.168.1.7", "sam"); w != 0 {
		t.Fatal("first attempt waited")
	}
	l.Succeeded("192.168.1.7", "sam")
	for i := range 3 {
		l.Attempt(fmt.Sprintf("203.0.113.%d", i), "Sam")
	}
	if w := l.Attempt("203.0.113.50", "sam"); w == 0 {
		t.Fatal("the username limit let a stranger's fourth guess through")
	}
	if w := l.Attempt("192.168.1.7", "sam"); w != 0 {
		t.Errorf("sam's own laptop is locked out for %v by someone else's guessing", w)
	}
	// The known device still has its own address limit.
	for range 5 {
		l.Attempt("192.168.1.7", "sam")
	}
	if w := l.Attempt("192.168.1.7", "sam"); w == 0 {
		t.Error("a known device escaped its address limit")
	}
}
