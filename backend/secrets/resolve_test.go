package secrets

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zalando/go-keyring"
)

// fakeKeyring is a Keyring whose behaviour each test supplies.
type fakeKeyring struct {
	get func(service, user string) (string, error)
	set func(service, user, password string) error
}

var _ Keyring = (*fakeKeyring)(nil)

func (f *fakeKeyring) Get(service, user string) (string, error) { return f.get(service, user) }

func (f *fakeKeyring) Set(service, user, password string) error {
	return f.set(service, user, password)
}

// memKeychain is a working keychain held in a map.
type memKeychain struct {
	mu      sync.Mutex
	entries map[string]string
	sets    int
}

func (m *memKeychain) keyring() *fakeKeyring {
	return &fakeKeyring{
		get: func(service, user string) (string, error) {
			m.mu.Lock()
			defer m.mu.Unlock()
			v, ok := m.entries[service+"/"+user]
			if !ok {
				return "", keyring.ErrNotFound
			}
			return v, nil
		},
		set: func(service, user, password string) error {
			m.mu.Lock()
			defer m.mu.Unlock()
			if m.entries == nil {
				m.entries = map[string]string{}
			}
			m.entries[service+"/"+user] = password
			m.sets++
			return nil
		},
	}
}

// brokenKeyring fails like go-keyring does without a secret service.
func brokenKeyring(t *testing.T) *fakeKeyring {
	err := errors.New("failed to unlock correct collection '/org/freedesktop/secrets/aliases/default'")
	return &fakeKeyring{
		get: func(string, string) (string, error) { return "", err },
		set: func(string, string, string) error {
			t.Error("Set called on a broken keychain")
			return err
		},
	}
}

// hangingKeyring never answers until the test ends.
func hangingKeyring(t *testing.T) *fakeKeyring {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	return &fakeKeyring{
		get: func(string, string) (string, error) { <-release; return "", keyring.ErrNotFound },
		set: func(string, string, string) error { <-release; return nil },
	}
}

// memLedger is an in-memory Ledger.
type memLedger struct {
	mu        sync.Mutex
	rec       Record
	ok        bool
	encrypted bool
	sets      int
}

func (l *memLedger) KeyRecord(context.Context) (Record, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rec, l.ok, nil
}

func (l *memLedger) SetKeyRecord(_ context.Context, rec Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rec, l.ok = rec, true
	l.sets++
	return nil
}

func (l *memLedger) HasEncrypted(context.Context) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.encrypted, nil
}

func expectedAccount(t *testing.T, dir string) string {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(filepath.Clean(abs)))
	return "data-key-" + hex.EncodeToString(sum[:])[:12]
}

func resolveOK(t *testing.T, opt Options, l Ledger) *Keeper {
	t.Helper()
	k, err := Resolve(context.Background(), opt, l)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	return k
}

func assertNoKeyFile(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, keyFileName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("key file exists or stat failed: %v", err)
	}
}

func assertNoSecret(t *testing.T, err error, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if k != "" && strings.Contains(err.Error(), strings.TrimSpace(k)) {
			t.Errorf("error reveals a key: %v", err)
		}
	}
}

func TestResolveFreshWithKeychainEntry(t *testing.T) {
	dir := t.TempDir()
	key, _ := GenerateKey()
	kc := &memKeychain{entries: map[string]string{"lembas/" + expectedAccount(t, dir): key}}
	l := &memLedger{}

	k := resolveOK(t, Options{DataDir: dir, Keyring: kc.keyring()}, l)

	want := Record{Source: SourceKeychain, Fingerprint: mustParseKey(t, key).Fingerprint()}
	if k.Record() != want {
		t.Errorf("Record = %+v, want %+v", k.Record(), want)
	}
	if !l.ok || l.rec != want {
		t.Errorf("ledger record = %+v (ok %v), want %+v", l.rec, l.ok, want)
	}
	if kc.sets != 0 {
		t.Error("existing keychain entry was overwritten")
	}
	assertNoKeyFile(t, dir)
	d := k.Describe()
	if !strings.Contains(d, "OS keychain") || !strings.Contains(d, expectedAccount(t, dir)) || strings.Contains(d, key) {
		t.Errorf("Describe = %q", d)
	}
}

func TestResolveKeychainNotFoundGeneratesAndStores(t *testing.T) {
	dir := t.TempDir()
	kc := &memKeychain{}
	l := &memLedger{}

	k := resolveOK(t, Options{DataDir: dir, Keyring: kc.keyring()}, l)

	stored, ok := kc.entries["lembas/"+expectedAccount(t, dir)]
	if !ok {
		t.Fatalf("no key stored under the expected account; entries: %v", len(kc.entries))
	}
	if fp := mustParseKey(t, stored).Fingerprint(); k.Record() != (Record{SourceKeychain, fp}) {
		t.Errorf("Record = %+v, want keychain %s", k.Record(), fp)
	}
	if l.rec != k.Record() {
		t.Errorf("ledger record = %+v, want %+v", l.rec, k.Record())
	}
	assertNoKeyFile(t, dir)

	// Once something is encrypted, the same key comes back.
	tok, err := k.Encrypt("sk-abc")
	if err != nil {
		t.Fatal(err)
	}
	l.encrypted = true
	k2 := resolveOK(t, Options{DataDir: dir, Keyring: kc.keyring()}, l)
	if got, err := k2.Decrypt(tok); err != nil || got != "sk-abc" {
		t.Errorf("second Resolve Decrypt = %q, %v", got, err)
	}
	if kc.sets != 1 {
		t.Errorf("keychain Set called %d times, want 1", kc.sets)
	}
}

func TestResolveTwoDataDirsTwoKeys(t *testing.T) {
	kc := &memKeychain{}
	a := resolveOK(t, Options{DataDir: t.TempDir(), Keyring: kc.keyring()}, &memLedger{})
	b := resolveOK(t, Options{DataDir: t.TempDir(), Keyring: kc.keyring()}, &memLedger{})
	if len(kc.entries) != 2 || a.Record().Fingerprint == b.Record().Fingerprint {
		t.Errorf("want two keychain entries with different keys; entries %d, fingerprints %s %s",
			len(kc.entries), a.Record().Fingerprint, b.Record().Fingerprint)
	}
	// The same directory spelled differently is the same account.
	dir := t.TempDir()
	if got, _ := keychainAccount(dir + string(filepath.Separator) + "." + string(filepath.Separator)); got != expectedAccount(t, dir) {
		t.Errorf("uncleaned path gave account %s, want %s", got, expectedAccount(t, dir))
	}
}

func TestResolveKeychainBrokenFallsBackToFile(t *testing.T) {
	dir := t.TempDir()
	l := &memLedger{}

	k := resolveOK(t, Options{DataDir: dir, Keyring: brokenKeyring(t)}, l)

	path := filepath.Join(dir, keyFileName)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("key file: %v", err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode = %04o, want 0600", fi.Mode().Perm())
	}
	if k.Record().Source != SourceFile || l.rec != k.Record() {
		t.Errorf("Record = %+v, ledger %+v, want file", k.Record(), l.rec)
	}
	if d := k.Describe(); !strings.Contains(d, path) || !strings.Contains(d, "0600") {
		t.Errorf("Describe = %q", d)
	}

	// The file is reused, not replaced.
	k2 := resolveOK(t, Options{DataDir: dir, NoKeychain: true}, l)
	if k2.Record() != k.Record() {
		t.Errorf("second Resolve Record = %+v, want %+v", k2.Record(), k.Record())
	}
}

func TestResolveKeychainTimeout(t *testing.T) {
	t.Run("fresh", func(t *testing.T) {
		dir := t.TempDir()
		l := &memLedger{}
		_, err := Resolve(context.Background(), Options{DataDir: dir, Keyring: hangingKeyring(t), Timeout: 50 * time.Millisecond}, l)
		if !errors.Is(err, ErrKeychainTimeout) {
			t.Fatalf("error = %v, want ErrKeychainTimeout", err)
		}
		if errors.Is(err, keyring.ErrNotFound) {
			t.Error("a timeout must not look like not found")
		}
		assertNoKeyFile(t, dir)
		if l.sets != 0 {
			t.Error("key record written after a timeout")
		}
	})
	t.Run("recorded", func(t *testing.T) {
		dir := t.TempDir()
		l := &memLedger{rec: Record{SourceKeychain, "0123456789abcdef"}, ok: true, encrypted: true}
		_, err := Resolve(context.Background(), Options{DataDir: dir, Keyring: hangingKeyring(t), Timeout: 50 * time.Millisecond}, l)
		if !errors.Is(err, ErrKeychainTimeout) {
			t.Fatalf("error = %v, want ErrKeychainTimeout", err)
		}
		for _, want := range []string{"OS keychain", "did not answer", EnvVar} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q lacks %q", err, want)
			}
		}
		assertNoKeyFile(t, dir)
	})
	t.Run("context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := Resolve(ctx, Options{DataDir: t.TempDir(), Keyring: hangingKeyring(t), Timeout: time.Hour}, &memLedger{})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error = %v, want context.Canceled", err)
		}
	})
}

func TestResolveRecordedKeychainBrokenRefuses(t *testing.T) {
	dir := t.TempDir()
	rec := Record{SourceKeychain, "0123456789abcdef"}
	l := &memLedger{rec: rec, ok: true, encrypted: true}

	_, err := Resolve(context.Background(), Options{DataDir: dir, Keyring: brokenKeyring(t)}, l)
	if err == nil {
		t.Fatal("Resolve succeeded with the recorded keychain unavailable")
	}
	for _, want := range []string{"encrypted with a key kept in the OS keychain", "did not answer", "unlock the keyring", "secret service", EnvVar, expectedAccount(t, dir)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	assertNoKeyFile(t, dir)
	if l.rec != rec || l.sets != 0 {
		t.Errorf("ledger record changed to %+v", l.rec)
	}
}

func TestResolveRecordedKeychainMissingNeverGenerates(t *testing.T) {
	dir := t.TempDir()
	kc := &memKeychain{}
	l := &memLedger{rec: Record{SourceKeychain, "0123456789abcdef"}, ok: true, encrypted: true}

	_, err := Resolve(context.Background(), Options{DataDir: dir, Keyring: kc.keyring()}, l)
	if !errors.Is(err, keyring.ErrNotFound) || !strings.Contains(err.Error(), EnvVar) {
		t.Fatalf("error = %v, want not-found with instructions", err)
	}
	if kc.sets != 0 {
		t.Error("a key was generated although secrets are encrypted")
	}
	assertNoKeyFile(t, dir)

	_, err = Resolve(context.Background(), Options{DataDir: dir, NoKeychain: true}, l)
	if err == nil || !strings.Contains(err.Error(), "keychain is disabled") {
		t.Errorf("NoKeychain with keychain record: error = %v", err)
	}
	assertNoKeyFile(t, dir)
}

func TestResolveRecordedFileMissing(t *testing.T) {
	dir := t.TempDir()
	l := &memLedger{rec: Record{SourceFile, "0123456789abcdef"}, ok: true, encrypted: true}
	_, err := Resolve(context.Background(), Options{DataDir: dir, Keyring: (&memKeychain{}).keyring()}, l)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, keyFileName)) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("error = %v, want one naming the missing key file", err)
	}
	assertNoKeyFile(t, dir)
}

func TestResolveRecordedEnvMissing(t *testing.T) {
	l := &memLedger{rec: Record{SourceEnv, "0123456789abcdef"}, ok: true, encrypted: true}
	_, err := Resolve(context.Background(), Options{DataDir: t.TempDir(), NoKeychain: true}, l)
	if err == nil || !strings.Contains(err.Error(), "set "+EnvVar) {
		t.Fatalf("error = %v, want one saying to set %s", err, EnvVar)
	}
}

func TestResolveEnv(t *testing.T) {
	key, _ := GenerateKey()
	l := &memLedger{}
	k := resolveOK(t, Options{EnvKey: key + "\n", Keyring: brokenKeyring(t)}, l)
	if k.Record().Source != SourceEnv || l.rec != k.Record() {
		t.Errorf("Record = %+v, ledger %+v", k.Record(), l.rec)
	}
	if d := k.Describe(); !strings.Contains(d, EnvVar) || strings.Contains(d, key) {
		t.Errorf("Describe = %q", d)
	}
}

func TestResolveEnvOverridesRecordedKeychain(t *testing.T) {
	dir := t.TempDir()
	key, _ := GenerateKey()
	rec := Record{SourceKeychain, mustParseKey(t, key).Fingerprint()}
	l := &memLedger{rec: rec, ok: true, encrypted: true}
	// The keychain is broken; the same key given in the environment works.
	k := resolveOK(t, Options{EnvKey: key, DataDir: dir, Keyring: brokenKeyring(t)}, l)
	if k.Record() != (Record{SourceEnv, rec.Fingerprint}) {
		t.Errorf("Record = %+v", k.Record())
	}
	if l.rec != rec || l.sets != 0 {
		t.Errorf("ledger record changed to %+v; it must still say where the key lives", l.rec)
	}
}

func TestResolveWrongEnvKeyAfterEncryption(t *testing.T) {
	right, _ := GenerateKey()
	wrong, _ := GenerateKey()
	rightFP := mustParseKey(t, right).Fingerprint()
	wrongFP := mustParseKey(t, wrong).Fingerprint()
	l := &memLedger{rec: Record{SourceKeychain, rightFP}, ok: true, encrypted: true}

	_, err := Resolve(context.Background(), Options{EnvKey: wrong, NoKeychain: true}, l)
	if !errors.Is(err, ErrWrongKey) {
		t.Fatalf("error = %v, want ErrWrongKey", err)
	}
	for _, want := range []string{rightFP, wrongFP, "does not match"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	assertNoSecret(t, err, right, wrong)
}

func TestResolveKeychainKeyChangedAfterEncryption(t *testing.T) {
	dir := t.TempDir()
	other, _ := GenerateKey()
	kc := &memKeychain{entries: map[string]string{"lembas/" + expectedAccount(t, dir): other}}
	l := &memLedger{rec: Record{SourceKeychain, "0123456789abcdef"}, ok: true, encrypted: true}
	_, err := Resolve(context.Background(), Options{DataDir: dir, Keyring: kc.keyring()}, l)
	if !errors.Is(err, ErrWrongKey) {
		t.Fatalf("error = %v, want ErrWrongKey", err)
	}
	assertNoSecret(t, err, other)
}

func TestResolveInvalidEnvKey(t *testing.T) {
	short := "c2hvcnQta2V5LW9ubHkxNg==" // 16 bytes
	for name, env := range map[string]string{"wrong length": short, "bad base64": "not*a*key*at*all"} {
		_, err := Resolve(context.Background(), Options{EnvKey: env, NoKeychain: true}, &memLedger{})
		if err == nil || !strings.Contains(err.Error(), EnvVar) {
			t.Errorf("%s: error = %v, want one naming %s", name, err, EnvVar)
			continue
		}
		assertNoSecret(t, err, env)
	}
	_, err := Resolve(context.Background(), Options{EnvKey: short, NoKeychain: true}, &memLedger{})
	if err == nil || !strings.Contains(err.Error(), "16 bytes, want 32") {
		t.Errorf("wrong length: error = %v", err)
	}
}

func TestResolveGroupReadableKeyFileRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("permission bits are not meaningful on Windows")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, keyFileName)
	key, _ := GenerateKey()
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o640); err != nil { // Chmod is not subject to umask.
		t.Fatal(err)
	}
	l := &memLedger{}
	_, err := Resolve(context.Background(), Options{DataDir: dir, NoKeychain: true}, l)
	if err == nil || !strings.Contains(err.Error(), "chmod 600") || !strings.Contains(err.Error(), path) {
		t.Fatalf("error = %v, want refusal with chmod advice", err)
	}
	assertNoSecret(t, err, key)
	if l.sets != 0 {
		t.Error("key record written for a refused key file")
	}
	if b, _ := os.ReadFile(path); string(b) != key+"\n" {
		t.Error("refused key file was changed")
	}
}

func TestResolveEncryptedWithoutRecord(t *testing.T) {
	t.Run("nothing found", func(t *testing.T) {
		dir := t.TempDir()
		kc := &memKeychain{}
		l := &memLedger{encrypted: true}
		_, err := Resolve(context.Background(), Options{DataDir: dir, Keyring: kc.keyring()}, l)
		if err == nil || !strings.Contains(err.Error(), EnvVar) {
			t.Fatalf("error = %v, want instructions", err)
		}
		if kc.sets != 0 || l.sets != 0 {
			t.Error("a key was generated or recorded")
		}
		assertNoKeyFile(t, dir)
	})
	t.Run("file found", func(t *testing.T) {
		dir := t.TempDir()
		key, _ := GenerateKey()
		if err := os.WriteFile(filepath.Join(dir, keyFileName), []byte(key), 0o600); err != nil {
			t.Fatal(err)
		}
		l := &memLedger{encrypted: true}
		k := resolveOK(t, Options{DataDir: dir, Keyring: brokenKeyring(t)}, l)
		if k.Record() != (Record{SourceFile, mustParseKey(t, key).Fingerprint()}) {
			t.Errorf("Record = %+v", k.Record())
		}
		if l.sets != 0 {
			t.Error("an unverified key was recorded")
		}
	})
}

func TestResolveNoDataDir(t *testing.T) {
	_, err := Resolve(context.Background(), Options{NoKeychain: true}, &memLedger{})
	if err == nil || !strings.Contains(err.Error(), EnvVar) {
		t.Fatalf("error = %v", err)
	}
}

func TestKeeperRoundTrip(t *testing.T) {
	dir := t.TempDir()
	k := resolveOK(t, Options{DataDir: dir, NoKeychain: true}, &memLedger{})
	tok, err := k.Encrypt("sk-live-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(tok, "sk-live") {
		t.Error("token contains the plaintext")
	}
	got, err := k.Decrypt(tok)
	if err != nil || got != "sk-live-0123456789" {
		t.Errorf("Decrypt = %q, %v", got, err)
	}
	if _, err := k.Decrypt("garbage"); !errors.Is(err, ErrMalformed) {
		t.Errorf("garbage: error = %v, want ErrMalformed", err)
	}
	keyText, err := os.ReadFile(filepath.Join(dir, keyFileName))
	if err != nil {
		t.Fatal(err)
	}
	if s := fmt.Sprintf("%v %+v %#v %s", k, *k, k, k.Describe()); strings.Contains(s, strings.TrimSpace(string(keyText))) {
		t.Errorf("formatting a Keeper leaks its key: %s", s)
	}
}

func TestResolveKeychainSetFailsFallsBackToFile(t *testing.T) {
	for name, set := range map[string]func(string, string, string) error{
		"set error":    func(string, string, string) error { return errors.New("read-only collection") },
		"set not kept": func(string, string, string) error { return nil },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			kr := &fakeKeyring{
				get: func(string, string) (string, error) { return "", keyring.ErrNotFound },
				set: set,
			}
			k := resolveOK(t, Options{DataDir: dir, Keyring: kr}, &memLedger{})
			if k.Record().Source != SourceFile {
				t.Errorf("Record = %+v, want file", k.Record())
			}
		})
	}
}
