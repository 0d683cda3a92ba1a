package secrets

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// specKey, specToken and friends are the first case of generate.json and
// verify.json in https://github.com/fernet/spec.
const (
	specKey   = "cw_0x689RpI-jtRR7oE8h_eQsKImvJapLeSbXpwF4e4="
	specToken = "gAAAAAAdwJ6wAAECAwQFBgcICQoLDA0ODy021cpGVWKZ_eEwCGM4BLLF_5CV9dOPmrhuVUPgJobwOz7JcbmrR64jVmpU4IwqDA=="
	specNow   = "1985-10-26T01:20:00-07:00"
	specSrc   = "hello"
)

func specIV() []byte {
	iv := make([]byte, 16)
	for i := range iv {
		iv[i] = byte(i)
	}
	return iv
}

func mustParseKey(t *testing.T, s string) *Key {
	t.Helper()
	k, err := ParseKey(s)
	if err != nil {
		t.Fatalf("ParseKey: %v", err)
	}
	return k
}

func newTestKey(t *testing.T) *Key {
	t.Helper()
	s, err := GenerateKey()
	if err != nil {
		t.Fatalf("GenerateKey: %v", err)
	}
	return mustParseKey(t, s)
}

func TestSpecGenerate(t *testing.T) {
	now, err := time.Parse(time.RFC3339, specNow)
	if err != nil {
		t.Fatal(err)
	}
	if now.Unix() != 499162800 {
		t.Fatalf("spec time = %d, want 499162800", now.Unix())
	}
	k := mustParseKey(t, specKey)
	got, err := k.encryptAt([]byte(specSrc), now, bytes.NewReader(specIV()))
	if err != nil {
		t.Fatalf("encryptAt: %v", err)
	}
	if got != specToken {
		t.Errorf("token mismatch\n got %s\nwant %s", got, specToken)
	}
}

func TestSpecVerify(t *testing.T) {
	k := mustParseKey(t, specKey)
	got, err := k.Decrypt(specToken)
	if err != nil {
		t.Fatalf("Decrypt: %v", err)
	}
	if string(got) != specSrc {
		t.Errorf("Decrypt = %q, want %q", got, specSrc)
	}
}

// TestSpecInvalid runs invalid.json from the spec, minus the TTL and clock
// skew cases: stored secrets do not expire, so Decrypt checks no age.
func TestSpecInvalid(t *testing.T) {
	k := mustParseKey(t, specKey)
	cases := []struct {
		desc  string
		token string
		want  error
	}{
		{"incorrect mac", "gAAAAAAdwJ6xAAECAwQFBgcICQoLDA0OD3HkMATM5lFqGaerZ-fWPAl1-szkFVzXTuGb4hR8AKtwcaX1YdykQUFBQUFBQUFBQQ==", ErrWrongKey},
		{"too short", "gAAAAAAdwJ6xAAECAwQFBgcICQoLDA0OD3HkMATM5lFqGaerZ-fWPA==", ErrMalformed},
		{"invalid base64", "%%%%%%%%%%%%%AECAwQFBgcICQoLDA0OD3HkMATM5lFqGaerZ-fWPAl1-szkFVzXTuGb4hR8AKtwcaX1YdykRtfsH-p1YsUD2Q==", ErrMalformed},
		{"payload size not multiple of block size", "gAAAAAAdwJ6xAAECAwQFBgcICQoLDA0OD3HkMATM5lFqGaerZ-fWPOm73QeoCk9uGib28Xe5vz6oxq5nmxbx_v7mrfyudzUm", ErrMalformed},
		{"payload padding error", "gAAAAAAdwJ6xAAECAwQFBgcICQoLDA0ODz4LEpdELGQAad7aNEHbf-JkLPIpuiYRLQ3RtXatOYREu2FWke6CnJNYIbkuKNqOhw==", ErrMalformed},
		{"incorrect IV (causes padding error)", "gAAAAAAdwJ6xBQECAwQFBgcICQoLDA0OD3HkMATM5lFqGaerZ-fWPAkLhFLHpGtDBRLRTZeUfWgHSv49TF2AUEZ1TIvcZjK1zQ==", ErrMalformed},
		{"trailing characters after b64 padding", specToken + "trailingdata", ErrMalformed},
		{"invalid characters in b64", "*gAAAAAAdwJ6wAAECAwQFBgcI!CQoLDA0ODy021?cpGVWKZ_eEwC@GM4BLLF_5CV9dOPmrhuVUPgJobwOz7JcbmrR64jVmpU4IwqDA==", ErrMalformed},
		{"invalid non-urlsafe characters in b64", "gAAAAAAdwJ6wAAEC/AwQFBgcICQoLDA0ODy+021cpGVWKZ_eEwCGM4BLLF_5CV9dOPmrhuVUPgJobwOz7JcbmrR64jVmpU4IwqDA==", ErrMalformed},
	}
	for _, c := range cases {
		t.Run(c.desc, func(t *testing.T) {
			got, err := k.Decrypt(c.token)
			if !errors.Is(err, c.want) {
				t.Fatalf("Decrypt error = %v, want %v", err, c.want)
			}
			if got != nil {
				t.Errorf("Decrypt returned %q with an error", got)
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	k := newTestKey(t)
	for _, msg := range []string{"", "x", "sk-0123456789abcdef", strings.Repeat("a", 16), strings.Repeat("é", 100)} {
		tok, err := k.Encrypt([]byte(msg))
		if err != nil {
			t.Fatalf("Encrypt(%q): %v", msg, err)
		}
		got, err := k.Decrypt(tok)
		if err != nil {
			t.Fatalf("Decrypt(Encrypt(%q)): %v", msg, err)
		}
		if string(got) != msg {
			t.Errorf("round trip = %q, want %q", got, msg)
		}
	}
}

func TestEncryptUsesFreshIV(t *testing.T) {
	k := newTestKey(t)
	a, _ := k.Encrypt([]byte("same"))
	b, _ := k.Encrypt([]byte("same"))
	if a == b {
		t.Error("two encryptions of the same value gave the same token")
	}
}

func TestTamperedTokenIsWrongKey(t *testing.T) {
	k := newTestKey(t)
	tok, err := k.Encrypt([]byte("sk-secret-value"))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.URLEncoding.DecodeString(tok)
	for _, i := range []int{1, 9, 25, len(raw) - 1} { // timestamp, IV, ciphertext, MAC
		b := bytes.Clone(raw)
		b[i] ^= 0x01
		_, err := k.Decrypt(base64.URLEncoding.EncodeToString(b))
		if !errors.Is(err, ErrWrongKey) {
			t.Errorf("flipped byte %d: error = %v, want ErrWrongKey", i, err)
		}
	}

	other := newTestKey(t)
	if _, err := other.Decrypt(tok); !errors.Is(err, ErrWrongKey) {
		t.Errorf("other key: error = %v, want ErrWrongKey", err)
	}
}

func TestGarbageTokenIsMalformed(t *testing.T) {
	k := newTestKey(t)
	tok, _ := k.Encrypt([]byte("v"))
	raw, _ := base64.URLEncoding.DecodeString(tok)
	badVersion := bytes.Clone(raw)
	badVersion[0] = 0x81
	for name, s := range map[string]string{
		"empty":       "",
		"text":        "not a token at all",
		"short":       base64.URLEncoding.EncodeToString([]byte{0x80, 1, 2, 3}),
		"bad version": base64.URLEncoding.EncodeToString(badVersion),
		"truncated":   base64.URLEncoding.EncodeToString(raw[:len(raw)-1]),
	} {
		if _, err := k.Decrypt(s); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: error = %v, want ErrMalformed", name, err)
		}
	}
}

func TestParseKeyErrors(t *testing.T) {
	short := base64.URLEncoding.EncodeToString(make([]byte, 16))
	cases := map[string]string{
		"empty":        "",
		"blank":        "   \n",
		"wrong length": short,
		"too long":     base64.URLEncoding.EncodeToString(make([]byte, 33)),
		"bad base64":   "this is not base64!!",
		"unpadded":     strings.TrimRight(specKey, "="),
		"std alphabet": strings.NewReplacer("-", "+", "_", "/").Replace(specKey),
	}
	for name, s := range cases {
		k, err := ParseKey(s)
		if err == nil {
			t.Errorf("%s: ParseKey succeeded", name)
			continue
		}
		if k != nil {
			t.Errorf("%s: ParseKey returned a key with an error", name)
		}
		if !strings.HasPrefix(err.Error(), "secrets: ") {
			t.Errorf("%s: error %q lacks package prefix", name, err)
		}
		if len(strings.TrimSpace(s)) > 8 && strings.Contains(err.Error(), strings.TrimSpace(s)) {
			t.Errorf("%s: error %q echoes the key", name, err)
		}
	}
	if _, err := ParseKey(short); err == nil || !strings.Contains(err.Error(), "16 bytes") {
		t.Errorf("wrong length error = %v, want it to give the length", err)
	}
}

func TestParseKeyTrimsSpace(t *testing.T) {
	a := mustParseKey(t, specKey)
	b := mustParseKey(t, "  "+specKey+"\n")
	if a.Fingerprint() != b.Fingerprint() {
		t.Error("surrounding space changed the key")
	}
}

func TestFingerprint(t *testing.T) {
	k := mustParseKey(t, specKey)
	raw, _ := base64.URLEncoding.DecodeString(specKey)
	sum := sha256.Sum256(raw)
	want := hex.EncodeToString(sum[:])[:16]
	if got := k.Fingerprint(); got != want {
		t.Errorf("Fingerprint = %q, want %q", got, want)
	}
}

func TestKeyFormattingHidesKey(t *testing.T) {
	k := mustParseKey(t, specKey)
	raw, _ := base64.URLEncoding.DecodeString(specKey)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(verb, k)
		if strings.Contains(out, specKey) || strings.Contains(out, hex.EncodeToString(raw[:4])) || strings.Contains(out, string(raw[:4])) {
			t.Errorf("%s of a Key leaks it: %q", verb, out)
		}
	}
}
