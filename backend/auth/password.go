// Package auth holds the account building blocks of a shared instance:
// password hashing and policy, login rate limiting, server-side sessions,
// sign-up (with the first account becoming the admin exactly once) and the
// permission resolver. It knows no transport; httpapi and the CLI call it.
package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Params are argon2id's cost parameters. Memory is in KiB.
type Params struct {
	Memory  uint32
	Time    uint32
	Threads uint8
	SaltLen uint32
	KeyLen  uint32
}

// DefaultParams are OWASP's minimum for argon2id (Password Storage Cheat
// Sheet: 19 MiB, 2 iterations, 1 degree of parallelism), with a 16-byte
// salt and a 32-byte hash. Raising them makes NeedsRehash true for older
// hashes, which are then upgraded at the next successful login.
var DefaultParams = Params{Memory: 19 * 1024, Time: 2, Threads: 1, SaltLen: 16, KeyLen: 32}

// ErrMalformedHash is returned for a stored hash that is not an argon2id PHC
// string this package can verify.
var ErrMalformedHash = errors.New("malformed password hash")

// b64 is the PHC string format's base64: standard alphabet, no padding.
var b64 = base64.RawStdEncoding

// HashPassword hashes password with DefaultParams.
func HashPassword(password string) (string, error) { return DefaultParams.Hash(password) }

// Hash hashes password with p and a fresh random salt, and returns it in the
// PHC string format: $argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>.
func (p Params) Hash(password string) (string, error) {
	salt := make([]byte, p.SaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, p.KeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, p.Memory, p.Time, p.Threads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// VerifyPassword reports whether password matches encoded. The comparison
// takes the same time wherever the first differing byte is. A malformed
// hash is an error (wrapping ErrMalformedHash), never a match.
func VerifyPassword(encoded, password string) (bool, error) {
	p, salt, key, err := decodeHash(encoded)
	if err != nil {
		return false, err
	}
	got := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, p.KeyLen)
	return subtle.ConstantTimeCompare(got, key) == 1, nil
}

// NeedsRehash reports whether encoded was made with other parameters than
// DefaultParams (or cannot be read), so that the password should be hashed
// again after it has been verified.
func NeedsRehash(encoded string) bool { return DefaultParams.NeedsRehash(encoded) }

// NeedsRehash reports whether encoded was made with other parameters than p
// (or cannot be read).
func (p Params) NeedsRehash(encoded string) bool {
	h, _, _, err := decodeHash(encoded)
	return err != nil || h != p
}

// Limits on what decodeHash accepts, so that a tampered row cannot make one
// verification allocate gigabytes or run for minutes.
const (
	maxMemory = 1 << 20 // KiB: 1 GiB
	maxTime   = 64
)

func decodeHash(encoded string) (Params, []byte, []byte, error) {
	bad := func(why string) (Params, []byte, []byte, error) {
		return Params{}, nil, nil, fmt.Errorf("%w: %s", ErrMalformedHash, why)
	}
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" {
		return bad("not a PHC string")
	}
	if parts[1] != "argon2id" {
		return bad("algorithm " + parts[1] + " is not argon2id")
	}
	var v int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return bad("unsupported version " + parts[2])
	}
	var p Params
	var threads uint32
	if n, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &threads); err != nil || n != 3 ||
		fmt.Sprintf("m=%d,t=%d,p=%d", p.Memory, p.Time, threads) != parts[3] {
		return bad("parameters " + parts[3])
	}
	if threads < 1 || threads > 255 || p.Time < 1 || p.Time > maxTime || p.Memory < 8*threads || p.Memory > maxMemory {
		return bad("parameters out of range " + parts[3])
	}
	p.Threads = uint8(threads)
	salt, err := b64.DecodeString(parts[4])
	if err != nil || len(salt) < 8 || len(salt) > 64 {
		return bad("salt")
	}
	key, err := b64.DecodeString(parts[5])
	if err != nil || len(key) < 16 || len(key) > 128 {
		return bad("hash")
	}
	p.SaltLen, p.KeyLen = uint32(len(salt)), uint32(len(key))
	return p, salt, key, nil
}
