package secrets

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"path/filepath"
	"time"

	"github.com/zalando/go-keyring"
)

// keychainService is the service name under which keys are kept in the OS
// keychain.
const keychainService = "lembas"

// defaultKeychainTimeout bounds keychain calls when Options.Timeout is zero.
// A locked GNOME keyring or a missing D-Bus session can block forever, and
// the app must still start and explain itself.
const defaultKeychainTimeout = 3 * time.Second

// ErrKeychainTimeout reports a keychain call that did not return within
// Options.Timeout. It says nothing about whether a key exists.
var ErrKeychainTimeout = errors.New("secrets: OS keychain did not answer in time")

// Keyring is the OS keychain (go-keyring's Get/Set shape), swappable in
// tests. Get must return an error matching keyring.ErrNotFound, and only
// then, when there is no such entry.
type Keyring interface {
	Get(service, user string) (string, error)
	Set(service, user, password string) error
}

// osKeyring is the real OS keychain through go-keyring.
type osKeyring struct{}

func (osKeyring) Get(service, user string) (string, error) { return keyring.Get(service, user) }

func (osKeyring) Set(service, user, password string) error {
	return keyring.Set(service, user, password)
}

// keychainAccount names the keychain entry for a data directory. Hashing the
// path gives each data directory its own key while keeping the path, which
// may hold a user name, out of the keychain's listing.
func keychainAccount(dataDir string) (string, error) {
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(filepath.Clean(abs)))
	return "data-key-" + hex.EncodeToString(sum[:])[:12], nil
}

// keychain is one keychain entry with every call bounded in time.
type keychain struct {
	kr      Keyring
	account string
	timeout time.Duration
}

func (kc keychain) get(ctx context.Context) (string, error) {
	return bounded(ctx, kc.timeout, func() (string, error) {
		return kc.kr.Get(keychainService, kc.account)
	})
}

func (kc keychain) set(ctx context.Context, secret string) error {
	_, err := bounded(ctx, kc.timeout, func() (struct{}, error) {
		return struct{}{}, kc.kr.Set(keychainService, kc.account, secret)
	})
	return err
}

// bounded runs f in its own goroutine and waits at most timeout for it, or
// until ctx is done. Keychain back ends offer no cancellation, so a call
// that hangs is abandoned rather than stopped; the channel is buffered so
// the abandoned goroutine can still deliver its result and exit if the call
// ever returns.
func bounded[T any](ctx context.Context, timeout time.Duration, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	var zero T
	select {
	case r := <-done:
		return r.v, r.err
	case <-t.C:
		return zero, ErrKeychainTimeout
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// isNotFound reports whether a keychain error means the entry does not
// exist. Only go-keyring's sentinel counts: any other failure (no session
// bus, no secret service, a locked keyring) leaves the question open.
func isNotFound(err error) bool {
	return errors.Is(err, keyring.ErrNotFound)
}
