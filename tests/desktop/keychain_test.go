package desktop

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/llembas/lembas/backend/config"
	"github.com/llembas/lembas/backend/connections"
	"github.com/llembas/lembas/backend/core"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/secrets"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/frontend"
	"github.com/llembas/lembas/tests/harness"
)

// TestKeychainKeepsTheKey runs the desktop app against a real Secret
// Service (gnome-keyring-daemon on a private bus): the first start makes
// the encryption key and keeps it in the keychain, `lembas info` says so,
// a second start reads the same key (it decrypts the API key it sends),
// and once the keyring is locked the app still opens, says why secrets are
// unavailable, and makes no second key (README, "Where the encryption key
// lives").
func TestKeychainKeepsTheKey(t *testing.T) {
	harness.Require(t, "Xvfb", "xwininfo")
	kr := harness.StartKeyring(t)
	bin := harness.Build(t, tags)
	display := harness.Xvfb(t)
	dataDir := t.TempDir()
	env := keychainEnv(dataDir, display, kr.Bus, "LEMBAS_SELFTEST=1")

	// First start: nothing anywhere, so the app makes a key and stores it.
	app := runUntil(t, bin, env, `selftest (PASS|FAIL) (done|error)`)
	entries := kr.Entries(t, "lembas")
	if len(entries) != 1 {
		t.Fatalf("keychain entries under service lembas: %v, want one", keysOf(entries))
	}
	var account, stored string
	for account, stored = range entries {
	}
	key, err := secrets.ParseKey(stored)
	if err != nil {
		t.Fatalf("the keychain entry %s is not a key: %v", account, err)
	}
	fp := key.Fingerprint()
	if want := "OS keychain (service lembas, account " + account + "), fingerprint " + fp; !strings.Contains(app.Stderr(), want) {
		t.Errorf("the app did not log %q:\n%s", want, keyLines(app.Stderr()))
	}
	noKeyFile(t, dataDir)
	info := lembasInfo(t, bin, env)
	for _, want := range []string{"key:         OS keychain (fingerprint " + fp + ")", "key check:   ok"} {
		if !strings.Contains(info, want) {
			t.Errorf("lembas info lacks %q:\n%s", want, info)
		}
	}

	// An API key encrypted with that key, through the same keyring.
	llm := fakellm.New(t)
	llm.SetDefault(fakellm.Stream("Read with ", "the keychain's key."))
	const apiKey = "sk-kept-by-the-keychain"
	seedSecret(t, dataDir, llm.URL(), kr, apiKey)

	// Second start: the same key is read, or the API key could not be sent.
	app = runUntil(t, bin, env, `selftest (PASS|FAIL) (done|error)`)
	if !strings.Contains(app.Stdout(), "selftest PASS chat Read with the keychain's key.") {
		t.Errorf("the self-test's chat did not get its reply:\n%s", strings.Join(harness.Lines(app.Stdout(), "selftest"), "\n"))
	}
	sent := 0
	for _, r := range llm.Requests() {
		if r.Path == "/v1/chat/completions" {
			sent++
			if got := r.Header.Get("Authorization"); got != "Bearer "+apiKey {
				t.Errorf("chat request sent Authorization %q, want the stored key", got)
			}
		}
	}
	if sent == 0 {
		t.Error("no chat request reached the endpoint")
	}
	if got := kr.Entries(t, "lembas"); len(got) != 1 || got[account] != stored {
		t.Errorf("the keychain changed on the second start: %v", keysOf(got))
	}
	if info := lembasInfo(t, bin, env); !strings.Contains(info, "OS keychain (fingerprint "+fp+")") || !strings.Contains(info, "key check:   ok") {
		t.Errorf("lembas info after the second start:\n%s", info)
	}

	// Locked: the recorded key cannot be read, and encrypted secrets exist,
	// so the app opens without them and says what to do; no new key.
	kr.Lock(t)
	env = keychainEnv(dataDir, display, kr.Bus)
	app = runUntil(t, bin, env, `via=bridge`)
	if !strings.Contains(app.Stderr(), `msg="encryption key unavailable"`) || !strings.Contains(app.Stderr(), "unlock the keyring") {
		t.Errorf("with the keyring locked the app did not say why:\n%s", keyLines(app.Stderr()))
	}
	noKeyFile(t, dataDir)
	info = lembasInfo(t, bin, env)
	for _, want := range []string{"key:         OS keychain (fingerprint " + fp + ")", "key check:   unavailable: ", "unlock the keyring"} {
		if !strings.Contains(info, want) {
			t.Errorf("lembas info with the keyring locked lacks %q:\n%s", want, info)
		}
	}

	// Locked, on a fresh data directory: nothing is encrypted, so a key
	// file is safe and the app uses one.
	fresh := t.TempDir()
	app = runUntil(t, bin, keychainEnv(fresh, display, kr.Bus), `via=bridge`)
	keyFileIsUsed(t, app, fresh)
}

// TestNoSecretService: a session bus with no Secret Service on it (a
// desktop without a keyring). A fresh data directory gets a key file; one
// whose key was kept in a keychain opens without its secrets and says why.
func TestNoSecretService(t *testing.T) {
	harness.Require(t, "Xvfb", "xwininfo")
	bus := harness.BareSessionBus(t)
	bin := harness.Build(t, tags)
	display := harness.Xvfb(t)

	fresh := t.TempDir()
	app := runUntil(t, bin, keychainEnv(fresh, display, bus), `via=bridge`)
	keyFileIsUsed(t, app, fresh)

	// A data directory whose key was kept in some keychain (a map here)
	// and that holds an encrypted API key.
	dataDir := t.TempDir()
	llm := fakellm.New(t)
	seedSecret(t, dataDir, llm.URL(), mapKeyring{}, "sk-elsewhere")
	env := keychainEnv(dataDir, display, bus)
	app = runUntil(t, bin, env, `via=bridge`)
	if !strings.Contains(app.Stderr(), `msg="encryption key unavailable"`) || !strings.Contains(app.Stderr(), "start the secret service") {
		t.Errorf("without a Secret Service the app did not say why:\n%s", keyLines(app.Stderr()))
	}
	noKeyFile(t, dataDir)
	if info := lembasInfo(t, bin, env); !strings.Contains(info, "key check:   unavailable: ") {
		t.Errorf("lembas info without a Secret Service:\n%s", info)
	}
}

// keychainEnv runs the app with the keychain on (harness.Env turns it off
// for every other test) against the session bus at bus.
func keychainEnv(dataDir, display, bus string, extra ...string) []string {
	return harness.Env(dataDir, append([]string{"DISPLAY=" + display, "XDG_RUNTIME_DIR=",
		"DBUS_SESSION_BUS_ADDRESS=" + bus, "LEMBAS_NO_KEYCHAIN=0"}, extra...)...)
}

// runUntil starts the desktop app, waits for re in its output and quits it
// with SIGTERM.
func runUntil(t *testing.T, bin string, env []string, re string) *harness.Proc {
	t.Helper()
	app := harness.Start(t, bin, env)
	app.WaitOutput(t, re, 90*time.Second)
	app.Cmd.Process.Signal(syscall.SIGTERM)
	if code := app.Wait(t, 30*time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM:\n%s", code, app.Stderr())
	}
	return app
}

func lembasInfo(t *testing.T, bin string, env []string) string {
	t.Helper()
	code, out, errOut := harness.Run(t, bin, env, "info")
	if code != 0 {
		t.Fatalf("lembas info: exit %d: %s", code, errOut)
	}
	return out
}

func noKeyFile(t *testing.T, dataDir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dataDir, "secret.key")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a key file was made (%v); the key belongs in the keychain", err)
	}
}

func keyFileIsUsed(t *testing.T, app *harness.Proc, dataDir string) {
	t.Helper()
	path := filepath.Join(dataDir, "secret.key")
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("no 0600 key file: %v %v\n%s", err, fi, keyLines(app.Stderr()))
	}
	if !strings.Contains(app.Stderr(), "key file "+path) || strings.Contains(app.Stderr(), "encryption key unavailable") {
		t.Errorf("the app did not use the key file:\n%s", keyLines(app.Stderr()))
	}
}

// seedSecret stores a connection with an API key, encrypted with the key
// the data directory's keychain entry holds (read through kr).
func seedSecret(t *testing.T, dataDir, url string, kr secrets.Keyring, apiKey string) {
	t.Helper()
	cfg, _ := config.Load(func(string) (string, bool) { return "", false })
	cfg.DataDir, cfg.NoKeychain = dataDir, false
	harness.Must(t, cfg.Validate(), "config")
	c, err := core.Open(context.Background(), cfg, core.Options{Mode: core.Desktop, Files: frontend.FS(), Keyring: kr})
	harness.Must(t, err, "open instance")
	defer c.Close()
	if !strings.HasPrefix(c.KeySource(), "OS keychain") {
		t.Fatalf("the seeding process did not use the keychain: %s", c.KeySource())
	}
	_, err = c.Connections.Create(context.Background(), store.Actor{User: ids.UserID(c.Owner.ID), Admin: true},
		connections.Input{Name: "Fake", BaseURL: url, APIKey: &apiKey})
	harness.Must(t, err, "create connection")
}

// mapKeyring is a keychain in memory, for a data directory whose keychain
// is somewhere the app will not find it.
type mapKeyring map[string]string

func (m mapKeyring) Get(service, user string) (string, error) {
	if v, ok := m[service+"/"+user]; ok {
		return v, nil
	}
	return "", keyring.ErrNotFound
}

func (m mapKeyring) Set(service, user, password string) error {
	m[service+"/"+user] = password
	return nil
}

func keysOf(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// keyLines picks the log lines about the key, for failure messages.
func keyLines(log string) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "key") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
