// Package cli tests the lembas command line as a user runs it.
package cli

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/llembas/lembas/backend/secrets"
	"github.com/llembas/lembas/tests/harness"
)

func server(t testing.TB) string { return harness.Build(t, "", "CGO_ENABLED=0") }

func TestHelpIsAccurateForEveryCommand(t *testing.T) {
	bin := server(t)
	env := harness.Env(t.TempDir())
	for _, args := range [][]string{{"--help"}, {"info", "--help"}, {"secret-key", "--help"}, {"backup", "--help"}, {"version", "--help"}} {
		code, out, errOut := harness.Run(t, bin, env, args...)
		if code != 0 || !strings.Contains(out, "Usage:") {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
	_, out, _ := harness.Run(t, bin, env, "--help")
	for _, want := range []string{"--serve", "--addr", "info", "secret-key", "backup", "version", "LEMBAS_DATA_DIR", "LEMBAS_ALLOWED_HOSTS", "127.0.0.1:8484"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help does not mention %s", want)
		}
	}
}

func TestVersionAndSecretKey(t *testing.T) {
	bin := server(t)
	env := harness.Env(t.TempDir())
	code, out, _ := harness.Run(t, bin, env, "version")
	if code != 0 || !strings.HasPrefix(out, "lembas 0.1.0") || !strings.Contains(out, "cgo-off") {
		t.Errorf("version: %d %q", code, out)
	}
	code, k1, _ := harness.Run(t, bin, env, "secret-key")
	_, k2, _ := harness.Run(t, bin, env, "secret-key")
	if code != 0 || k1 == k2 {
		t.Fatalf("secret-key: %d, %q vs %q", code, k1, k2)
	}
	if _, err := secrets.ParseKey(strings.TrimSpace(k1)); err != nil {
		t.Errorf("secret-key printed an unusable key: %v", err)
	}
}

func TestBadInputIsRefusedClearly(t *testing.T) {
	bin := server(t)
	dir := t.TempDir()
	tests := []struct {
		name string
		env  []string
		args []string
		code int
		want string
	}{
		{"window in a server build", nil, nil, 2, "lembas --serve"},
		{"create-admin without a terminal", nil, []string{"create-admin"}, 2, "--username"},
		{"create-admin without a password", nil, []string{"create-admin", "--username", "alice"}, 2, "--password-stdin"},
		{"bad trusted proxy", []string{"LEMBAS_TRUSTED_PROXIES=proxy.lan"}, []string{"info"}, 2, "LEMBAS_TRUSTED_PROXIES"},
		{"bad address", nil, []string{"--serve", "--addr", "nonsense"}, 2, "not host:port"},
		{"bad log level", []string{"LEMBAS_LOG_LEVEL=loud"}, []string{"info"}, 2, "LEMBAS_LOG_LEVEL"},
		{"bad allowed host", []string{"LEMBAS_ALLOWED_HOSTS=http://x/"}, []string{"info"}, 2, "not a URL"},
		{"bad bool", []string{"LEMBAS_NO_KEYCHAIN=maybe"}, []string{"info"}, 2, "LEMBAS_NO_KEYCHAIN"},
		{"unusable secret key", []string{"LEMBAS_SECRET_KEY=short"}, []string{"--serve", "--addr", "127.0.0.1:0"}, 2, "LEMBAS_SECRET_KEY is not a usable key"},
		{"unknown command", nil, []string{"frobnicate"}, 1, "unknown command"},
		{"backup without a database", nil, []string{"backup", filepath.Join(dir, "x.db")}, 1, "no database"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := harness.Run(t, bin, harness.Env(t.TempDir(), tt.env...), tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q (stdout %q); want exit %d mentioning %q", code, errOut, out, tt.code, tt.want)
			}
		})
	}
}

func TestServeBesideItselfInfoAndBackup(t *testing.T) {
	bin := server(t)
	dataDir := t.TempDir()
	env := harness.Env(dataDir)

	code, out, _ := harness.Run(t, bin, env, "info")
	if code != 0 || !strings.Contains(out, "not created yet") {
		t.Errorf("info before first start: %d %s", code, out)
	}
	p, _ := harness.Serve(t, bin, dataDir)

	code, _, errOut := harness.Run(t, bin, env, "--serve", "--addr", "127.0.0.1:0")
	if code != 1 || !strings.Contains(errOut, "LLeMbas serve (pid") {
		t.Errorf("second server: exit %d %s", code, errOut)
	}

	code, out, errOut = harness.Run(t, bin, env, "info")
	for _, want := range []string{"data dir:    " + dataDir, "users", "key file", "LEMBAS_SECRET_KEY      (unset)", "cgo-off"} {
		if !strings.Contains(out, want) {
			t.Errorf("info lacks %q:\n%s%s", want, out, errOut)
		}
	}
	if code != 0 {
		t.Errorf("info exit %d", code)
	}

	dest := filepath.Join(t.TempDir(), "backup.db")
	if code, out, errOut := harness.Run(t, bin, env, "backup", dest); code != 0 || !strings.Contains(out, "backed up") {
		t.Fatalf("backup: %d %s %s", code, out, errOut)
	}
	db, err := sql.Open("sqlite", dest)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM users WHERE is_owner = 1 AND is_admin = 1`).Scan(&n); err != nil || n != 1 {
		t.Errorf("backup holds %d owners (%v)", n, err)
	}
	db.Close()
	if code, _, errOut := harness.Run(t, bin, env, "backup", dest); code != 1 || !strings.Contains(errOut, "already exists") {
		t.Errorf("backup over an existing file: %d %s", code, errOut)
	}

	p.Cmd.Process.Signal(syscall.SIGTERM)
	if code := p.Wait(t, 20*time.Second); code != 0 {
		t.Errorf("serve exit %d after SIGTERM", code)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "secret.key")); err != nil {
		t.Errorf("key file: %v", err)
	}
}
