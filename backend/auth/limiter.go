package auth

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LimitOptions configure a Limiter: each key may spend Burst attempts at
// once, and gets one back every Every. At most MaxKeys keys are remembered.
type LimitOptions struct {
	Burst   int
	Every   time.Duration
	MaxKeys int
	Now     func() time.Time // nil: time.Now
}

// Limiter is a token bucket per key with bounded memory. A full bucket is
// the same as no bucket, so full ones are dropped first; when MaxKeys keys
// are still remembered, the least recently used is forgotten (which hands
// that key a fresh bucket: the price of a fixed memory bound).
type Limiter struct {
	mu   sync.Mutex
	o    LimitOptions
	keys map[string]*list.Element
	lru  *list.List // of *bucket; front is the most recently used
}

type bucket struct {
	key    string
	tokens float64
	at     time.Time
}

// NewLimiter returns a Limiter; zero options get 10 attempts, one more a
// minute, and 10 000 keys.
func NewLimiter(o LimitOptions) *Limiter {
	if o.Burst <= 0 {
		o.Burst = 10
	}
	if o.Every <= 0 {
		o.Every = time.Minute
	}
	if o.MaxKeys <= 0 {
		o.MaxKeys = 10_000
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Limiter{o: o, keys: map[string]*list.Element{}, lru: list.New()}
}

// refill brings b up to now and reports whether it is full.
func (l *Limiter) refill(b *bucket, now time.Time) bool {
	if d := now.Sub(b.at); d > 0 {
		b.tokens += float64(d) / float64(l.o.Every)
		b.at = now
	}
	if b.tokens >= float64(l.o.Burst) {
		b.tokens = float64(l.o.Burst)
		return true
	}
	return false
}

// bucket returns key's bucket, brought up to now, creating (and making room
// for) it when create is set; nil when absent and not created.
func (l *Limiter) bucket(key string, now time.Time, create bool) *bucket {
	if e, ok := l.keys[key]; ok {
		l.lru.MoveToFront(e)
		b := e.Value.(*bucket)
		l.refill(b, now)
		return b
	}
	if !create {
		return nil
	}
	for l.lru.Len() > 0 {
		back := l.lru.Back()
		if !l.refill(back.Value.(*bucket), now) && l.lru.Len() < l.o.MaxKeys {
			break
		}
		l.lru.Remove(back)
		delete(l.keys, back.Value.(*bucket).key)
	}
	b := &bucket{key: key, tokens: float64(l.o.Burst), at: now}
	l.keys[key] = l.lru.PushFront(b)
	return b
}

func (l *Limiter) wait(b *bucket) time.Duration {
	if b == nil || b.tokens >= 1 {
		return 0
	}
	return time.Duration((1 - b.tokens) * float64(l.o.Every))
}

// Take spends one attempt of key. It returns 0 when the attempt may go
// ahead, or how long until the next one would be allowed (and spends
// nothing).
func (l *Limiter) Take(key string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucket(key, l.o.Now(), true)
	if w := l.wait(b); w > 0 {
		return w
	}
	b.tokens--
	return 0
}

// Wait says how long until key may make an attempt, spending nothing.
func (l *Limiter) Wait(key string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.wait(l.bucket(key, l.o.Now(), false))
}

// Give returns one attempt to key (undoing a Take).
func (l *Limiter) Give(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b := l.bucket(key, l.o.Now(), false); b != nil {
		b.tokens = min(b.tokens+1, float64(l.o.Burst))
	}
}

// Reset forgets key, giving it a full bucket.
func (l *Limiter) Reset(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.keys[key]; ok {
		l.lru.Remove(e)
		delete(l.keys, key)
	}
}

// Len is how many keys are remembered.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lru.Len()
}

// LoginLimits configure a LoginLimiter.
type LoginLimits struct {
	PerAddress  LimitOptions
	PerUsername LimitOptions
}

// DefaultLoginLimits allow 10 attempts at once from one address, then one
// every 10 s, and 10 attempts at one username, then one a minute. The
// username limit is what stops guessing from many addresses; it is looser
// than a lockout so that someone else's guessing costs the owner a minute's
// wait at most once it stops.
var DefaultLoginLimits = LoginLimits{
	PerAddress:  LimitOptions{Burst: 10, Every: 10 * time.Second, MaxKeys: 10_000},
	PerUsername: LimitOptions{Burst: 10, Every: time.Minute, MaxKeys: 10_000},
}

// LoginLimiter limits login attempts per client address and per username.
// Call Attempt before checking a password and Succeeded after a successful
// login.
type LoginLimiter struct {
	mu         sync.Mutex
	addr, user *Limiter
	// known are address/username pairs that have signed in before: their
	// attempts skip the username's bucket, so that a stranger guessing a
	// name cannot keep its owner out. Bounded; forgotten when full.
	known map[string]struct{}
}

// maxKnown bounds the known sign-ins kept.
const maxKnown = 10_000

// NewLoginLimiter returns a limiter with the given limits; now (nil:
// time.Now) overrides both clocks.
func NewLoginLimiter(l LoginLimits, now func() time.Time) *LoginLimiter {
	if now != nil {
		l.PerAddress.Now, l.PerUsername.Now = now, now
	}
	return &LoginLimiter{addr: NewLimiter(l.PerAddress), user: NewLimiter(l.PerUsername), known: map[string]struct{}{}}
}

// Attempt spends one attempt of both the client address and the username
// and returns 0, or spends nothing and returns how long to wait (the
// longer of the two). Every attempt counts, successful or not, so parallel
// requests cannot slip through between a check and a failure.
//
// An address that has signed in as this username before spends only its
// own attempts: someone else guessing the name elsewhere does not lock the
// owner out of their usual devices.
func (l *LoginLimiter) Attempt(addr, username string) time.Duration {
	a, u := AddressKey(addr), usernameKey(username)
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.known[a+"\x00"+u]; ok {
		return l.addr.Take(a)
	}
	if w := max(l.addr.Wait(a), l.user.Wait(u)); w > 0 {
		return w
	}
	l.addr.Take(a)
	l.user.Take(u)
	return 0
}

// AttemptAddress is Attempt for a request that names no account (a
// sign-up): it spends one attempt of the client address only, so that one
// client's requests never use up anyone else's.
func (l *LoginLimiter) AttemptAddress(addr string) time.Duration {
	a := AddressKey(addr)
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.addr.Take(a)
}

// AttemptAccount spends one attempt at checking user's password from
// inside a session (changing it) and returns 0, or how long to wait. A
// stolen session must not become a way to guess the password without the
// login limits.
func (l *LoginLimiter) AttemptAccount(user int64) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.user.Take("#account:" + strconv.FormatInt(user, 10))
}

// Succeeded forgets the username's attempts after a correct password, so a
// user who mistyped a few times starts afresh. The address keeps its count:
// otherwise logging into one's own account between guesses would reset it.
func (l *LoginLimiter) Succeeded(addr, username string) {
	u := usernameKey(username)
	l.user.Reset(u)
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.known) >= maxKnown {
		clear(l.known)
	}
	l.known[AddressKey(addr)+"\x00"+u] = struct{}{}
}

// AddressKey is the rate-limit key of a client address: the address itself
// for IPv4, its /64 for IPv6 (one host usually owns a whole /64 and can
// rotate through it). A port, if present, is dropped; a string that is not
// an address is used as it is.
func AddressKey(addr string) string {
	if ap, err := netip.ParseAddrPort(addr); err == nil {
		addr = ap.Addr().String()
	}
	ip, err := netip.ParseAddr(strings.Trim(addr, "[]"))
	if err != nil {
		return boundedKey(addr)
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is4() {
		return ip.String()
	}
	p, _ := ip.Prefix(64)
	return p.String()
}

func usernameKey(name string) string {
	return boundedKey(strings.ToLower(strings.TrimSpace(name)))
}

// boundedKey keeps arbitrary client input from making big map keys.
func boundedKey(s string) string {
	if len(s) <= 64 {
		return s
	}
	h := sha256.Sum256([]byte(s))
	return "#" + hex.EncodeToString(h[:16])
}
