// Package secrets keeps API keys encrypted at rest.
//
// Values are sealed as Fernet tokens (https://github.com/fernet/spec) so that
// a database copied off the machine, or read by another tool, exposes no key.
// The Fernet key itself lives outside the database: in the OS keychain, in
// LEMBAS_SECRET_KEY, or in a 0600 key file next to the data; Resolve decides
// which, and refuses to guess once something has been encrypted.
package secrets

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// ErrWrongKey reports a token whose HMAC does not verify: it was made with a
// different key, or it was altered after it was made.
var ErrWrongKey = errors.New("secrets: wrong key")

// ErrMalformed reports a token that is not a well-formed Fernet token.
var ErrMalformed = errors.New("secrets: malformed token")

const (
	fernetVersion = 0x80
	keyLen        = 32
	halfKeyLen    = keyLen / 2
	tsLen         = 8
	ivLen         = aes.BlockSize
	macLen        = sha256.Size
	headerLen     = 1 + tsLen + ivLen
	// minTokenLen is a token with exactly one cipher block: PKCS7 always
	// pads, so even an empty plaintext produces one block.
	minTokenLen = headerLen + aes.BlockSize + macLen
)

// Key is a Fernet key. Its zero value is not usable; get one from ParseKey.
type Key struct {
	raw        [keyLen]byte
	signing    []byte
	encryption []byte
}

// GenerateKey returns a new random Fernet key in its textual form (URL-safe
// base64 with padding, 44 characters).
func GenerateKey() (string, error) {
	var raw [keyLen]byte
	if _, err := io.ReadFull(rand.Reader, raw[:]); err != nil {
		return "", fmt.Errorf("secrets: generate key: %w", err)
	}
	return base64.URLEncoding.EncodeToString(raw[:]), nil
}

// ParseKey decodes a Fernet key from its textual form. Surrounding white
// space is ignored because keys arrive from files and environment variables
// that often carry a trailing newline. Errors never include the key text.
func ParseKey(s string) (*Key, error) {
	k, err := parseKey(s)
	if err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	return k, nil
}

// parseKey is ParseKey without the package prefix on its errors, so callers
// can say where the bad key came from without stuttering.
func parseKey(s string) (*Key, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("key is empty")
	}
	raw, err := base64.URLEncoding.DecodeString(s)
	if err != nil {
		// The decoder's error holds only an offset; saying what is expected
		// helps more when a key was pasted by hand.
		return nil, errors.New("key is not URL-safe base64 with padding (want 44 characters, as made by GenerateKey)")
	}
	if len(raw) != keyLen {
		return nil, fmt.Errorf("key decodes to %d bytes, want %d", len(raw), keyLen)
	}
	k := &Key{}
	copy(k.raw[:], raw)
	k.signing = k.raw[:halfKeyLen]
	k.encryption = k.raw[halfKeyLen:]
	return k, nil
}

// Fingerprint returns the first 16 hex characters of the SHA-256 of the raw
// key bytes. It identifies a key without revealing it, so it may be stored
// and shown.
func (k *Key) Fingerprint() string {
	sum := sha256.Sum256(k.raw[:])
	return hex.EncodeToString(sum[:])[:16]
}

// String describes the key by fingerprint so that logging a Key by mistake
// does not leak it.
func (k *Key) String() string {
	return "secrets.Key(" + k.Fingerprint() + ")"
}

// GoString is String for %#v, which would otherwise print the raw bytes.
func (k *Key) GoString() string {
	return k.String()
}

// Encrypt seals plaintext into a Fernet token stamped with the current time.
func (k *Key) Encrypt(plaintext []byte) (string, error) {
	return k.encryptAt(plaintext, time.Now(), rand.Reader)
}

// encryptAt is Encrypt with the clock and the IV source supplied, so tests
// can reproduce the spec's vectors byte for byte.
func (k *Key) encryptAt(plaintext []byte, now time.Time, rnd io.Reader) (string, error) {
	padLen := aes.BlockSize - len(plaintext)%aes.BlockSize
	token := make([]byte, headerLen, headerLen+len(plaintext)+padLen+macLen)
	token[0] = fernetVersion
	binary.BigEndian.PutUint64(token[1:1+tsLen], uint64(now.Unix()))
	iv := token[1+tsLen : headerLen]
	if _, err := io.ReadFull(rnd, iv); err != nil {
		return "", fmt.Errorf("secrets: read IV: %w", err)
	}

	block, err := aes.NewCipher(k.encryption)
	if err != nil {
		return "", fmt.Errorf("secrets: %w", err)
	}
	padded := make([]byte, len(plaintext)+padLen)
	copy(padded, plaintext)
	for i := len(plaintext); i < len(padded); i++ {
		padded[i] = byte(padLen)
	}
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(padded, padded)
	token = append(token, padded...)

	mac := hmac.New(sha256.New, k.signing)
	mac.Write(token)
	token = mac.Sum(token)
	return base64.URLEncoding.EncodeToString(token), nil
}

// Decrypt opens a Fernet token. A token that cannot be parsed yields an
// error wrapping ErrMalformed; one whose HMAC does not verify yields an error
// wrapping ErrWrongKey. Token age is not checked: these are values at rest,
// which stay valid until re-encrypted.
func (k *Key) Decrypt(token string) ([]byte, error) {
	data, err := base64.URLEncoding.DecodeString(token)
	if err != nil {
		return nil, fmt.Errorf("%w: not URL-safe base64", ErrMalformed)
	}
	if len(data) < minTokenLen {
		return nil, fmt.Errorf("%w: %d bytes is too short", ErrMalformed, len(data))
	}
	if data[0] != fernetVersion {
		return nil, fmt.Errorf("%w: unknown version 0x%02x", ErrMalformed, data[0])
	}
	body, sum := data[:len(data)-macLen], data[len(data)-macLen:]
	ciphertext := body[headerLen:]
	if len(ciphertext)%aes.BlockSize != 0 {
		return nil, fmt.Errorf("%w: ciphertext is not a whole number of blocks", ErrMalformed)
	}

	mac := hmac.New(sha256.New, k.signing)
	mac.Write(body)
	if !hmac.Equal(mac.Sum(nil), sum) {
		return nil, fmt.Errorf("%w: token was not made with this key, or was altered", ErrWrongKey)
	}

	block, err := aes.NewCipher(k.encryption)
	if err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	plain := make([]byte, len(ciphertext))
	cipher.NewCBCDecrypter(block, body[1+tsLen:headerLen]).CryptBlocks(plain, ciphertext)

	// The HMAC has already authenticated the ciphertext, so a padding check
	// here cannot act as a padding oracle; bad padding means the token was
	// built wrongly by someone holding the key.
	n := int(plain[len(plain)-1])
	if n == 0 || n > aes.BlockSize || !bytes.Equal(plain[len(plain)-n:], bytes.Repeat([]byte{byte(n)}, n)) {
		return nil, fmt.Errorf("%w: bad padding", ErrMalformed)
	}
	return plain[:len(plain)-n], nil
}
