package sshx_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/sshx"
)

// trap is a home directory full of things a careless SSH client would
// use: a key in ~/.ssh, a known_hosts, an ssh_config whose ProxyCommand
// would create a file, and a listening agent socket that records every
// connection.
type trap struct {
	proxyMarker string
	mu          sync.Mutex
	agentDials  int
	homeKey     ssh.PublicKey
}

func setTrap(t *testing.T) *trap {
	t.Helper()
	home := t.TempDir()
	tr := &trap{proxyMarker: filepath.Join(home, "proxy-ran")}
	dotssh := filepath.Join(home, ".ssh")
	os.MkdirAll(dotssh, 0o700)
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	block, _ := ssh.MarshalPrivateKey(priv, "home key")
	os.WriteFile(filepath.Join(dotssh, "id_ed25519"), pem.EncodeToMemory(block), 0o600)
	tr.homeKey, _ = ssh.NewPublicKey(pub)
	os.WriteFile(filepath.Join(dotssh, "id_ed25519.pub"), ssh.MarshalAuthorizedKey(tr.homeKey), 0o644)
	os.WriteFile(filepath.Join(dotssh, "config"), []byte("Host *\n  ProxyCommand touch "+tr.proxyMarker+"\n  IdentityFile ~/.ssh/id_ed25519\n"), 0o600)
	os.WriteFile(filepath.Join(dotssh, "known_hosts"), []byte("* "+string(ssh.MarshalAuthorizedKey(tr.homeKey))), 0o600)

	sock := filepath.Join(home, "agent.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			tr.mu.Lock()
			tr.agentDials++
			tr.mu.Unlock()
			c.Close()
		}
	}()
	t.Setenv("HOME", home)
	t.Setenv("SSH_AUTH_SOCK", sock)
	return tr
}

func (tr *trap) check(t *testing.T) {
	t.Helper()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.agentDials != 0 {
		t.Errorf("the SSH agent socket was dialled %d times", tr.agentDials)
	}
	if _, err := os.Stat(tr.proxyMarker); err == nil {
		t.Error("the ssh_config ProxyCommand ran")
	}
}

// attempt is one authentication attempt an in-process server saw.
type attempt struct {
	user, method string
	key          []byte // the offered public key, for publickey
}

// recordingServer answers one SSH connection on conn, records every
// authentication attempt and accepts none.
func recordingServer(t *testing.T, conn net.Conn, hostKey ssh.Signer) func() []attempt {
	t.Helper()
	var mu sync.Mutex
	var seen []attempt
	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(meta ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			mu.Lock()
			seen = append(seen, attempt{meta.User(), "publickey", key.Marshal()})
			mu.Unlock()
			return nil, errors.New("no")
		},
		PasswordCallback: func(meta ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			mu.Lock()
			seen = append(seen, attempt{meta.User(), "password:" + string(pw), nil})
			mu.Unlock()
			return nil, errors.New("no")
		},
		KeyboardInteractiveCallback: func(meta ssh.ConnMetadata, ch ssh.KeyboardInteractiveChallenge) (*ssh.Permissions, error) {
			answers, err := ch("", "", []string{"Password: "}, []bool{false})
			mu.Lock()
			a := attempt{meta.User(), "keyboard-interactive", nil}
			if err == nil && len(answers) == 1 {
				a.method += ":" + answers[0]
			}
			seen = append(seen, a)
			mu.Unlock()
			return nil, errors.New("no")
		},
		AuthLogCallback: func(meta ssh.ConnMetadata, method string, err error) {
			if method == "none" {
				mu.Lock()
				seen = append(seen, attempt{meta.User(), "none", nil})
				mu.Unlock()
			}
		},
	}
	cfg.AddHostKey(hostKey)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if sc, _, _, err := ssh.NewServerConn(conn, cfg); err == nil {
			sc.Close()
		}
		conn.Close()
	}()
	return func() []attempt {
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatal("the in-process server did not finish")
		}
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// connPair is both ends of a loopback TCP connection. (Not net.Pipe: it
// has no buffer, and both SSH sides write their version line at once.)
func connPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := l.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

func newSigner(t *testing.T) ssh.Signer {
	t.Helper()
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The configuration offers only the credential it was given: not the key
// in ~/.ssh, not the agent's, and follows no ssh_config.
func TestClientConfigOffersOnlyTheGivenCredential(t *testing.T) {
	tr := setTrap(t)
	hostKey := newSigner(t)
	pinned := string(ssh.MarshalAuthorizedKey(hostKey.PublicKey()))
	private, authorized, err := sshx.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	given, _, _, _, _ := ssh.ParseAuthorizedKey([]byte(authorized))

	for _, tc := range []struct {
		name string
		auth sshx.Auth
		ok   func(attempt) bool
	}{
		{"key", sshx.Auth{PrivateKey: private}, func(a attempt) bool {
			return a.method == "none" || (a.method == "publickey" && bytes.Equal(a.key, given.Marshal()))
		}},
		{"password", sshx.Auth{Password: "s3cret"}, func(a attempt) bool {
			return a.method == "none" || a.method == "password:s3cret" || a.method == "keyboard-interactive:s3cret"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := sshx.ClientConfig(sshx.Target{Host: "example.invalid", Port: 22, User: "deploy"}, tc.auth, pinned)
			if err != nil {
				t.Fatal(err)
			}
			client, server := connPair(t)
			attempts := recordingServer(t, server, hostKey)
			_, _, _, err = ssh.NewClientConn(client, "example.invalid:22", cfg)
			if err == nil {
				t.Fatal("signed in to a server that accepts nothing")
			}
			client.Close()
			seen := attempts()
			if len(seen) < 2 {
				t.Fatalf("the server saw %v; want the given credential offered", seen)
			}
			for _, a := range seen {
				if a.user != "deploy" || !tc.ok(a) {
					t.Errorf("offered %s as %q (key %x); only the given credential may be offered", a.method, a.user, a.key)
				}
			}
			tr.check(t)
		})
	}
}

// No pinned key refuses every host, whatever ~/.ssh/known_hosts says.
func TestClientConfigWithoutPinRefusesEveryKey(t *testing.T) {
	tr := setTrap(t)
	cfg, err := sshx.ClientConfig(sshx.Target{Host: "h", Port: 22, User: "u"}, sshx.Auth{Password: "x"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.HostKeyCallback("h:22", &net.TCPAddr{}, tr.homeKey); !errors.Is(err, sshx.ErrHostKeyUnknown) {
		t.Fatalf("HostKeyCallback = %v, want ErrHostKeyUnknown", err)
	}
	tr.check(t)
}

// Capturing a host key over a real TCP connection sends no user name and
// no credential: the server sees no authentication attempt at all.
func TestCaptureHostKeyStopsBeforeAuth(t *testing.T) {
	tr := setTrap(t)
	hostKey := newSigner(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan func() []attempt, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		accepted <- recordingServer(t, c, hostKey)
	}()
	port := l.Addr().(*net.TCPAddr).Port
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got, err := sshx.CaptureHostKey(ctx, sshx.Target{Host: "127.0.0.1", Port: port, User: "must-not-be-sent"})
	if err != nil {
		t.Fatal(err)
	}
	want := ssh.FingerprintSHA256(hostKey.PublicKey())
	if got.Fingerprint != want {
		t.Fatalf("fingerprint %s, want %s", got.Fingerprint, want)
	}
	if seen := (<-accepted)(); len(seen) != 0 {
		t.Fatalf("the server saw authentication attempts %v; capturing must stop before auth", seen)
	}
	tr.check(t)
}

// A server with several host keys shows the pinned one, whichever type
// it is, rather than the one the default order prefers.
func TestPinnedKeyTypeIsAskedFor(t *testing.T) {
	_, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	ed, _ := ssh.NewSignerFromKey(edPriv)
	ecPriv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ec, _ := ssh.NewSignerFromKey(ecPriv)
	rsaPriv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := ssh.NewSignerFromKey(rsaPriv)
	for _, pin := range []ssh.Signer{ed, ec, rs} {
		t.Run(pin.PublicKey().Type(), func(t *testing.T) {
			cfg, err := sshx.ClientConfig(sshx.Target{Host: "h", Port: 22, User: "u"}, sshx.Auth{Password: "x"}, string(ssh.MarshalAuthorizedKey(pin.PublicKey())))
			if err != nil {
				t.Fatal(err)
			}
			client, server := connPair(t)
			go func() {
				sc := &ssh.ServerConfig{PasswordCallback: func(ssh.ConnMetadata, []byte) (*ssh.Permissions, error) { return nil, nil }}
				sc.AddHostKey(ed)
				sc.AddHostKey(ec)
				sc.AddHostKey(rs)
				if c, _, _, err := ssh.NewServerConn(server, sc); err == nil {
					c.Close()
				}
			}()
			c, _, _, err := ssh.NewClientConn(client, "h:22", cfg)
			if err != nil {
				t.Fatalf("pinned %s: %v", pin.PublicKey().Type(), err)
			}
			c.Close()
		})
	}
}

func TestKeys(t *testing.T) {
	private, authorized, err := sshx.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(private), "-----BEGIN OPENSSH PRIVATE KEY-----") || !strings.HasPrefix(authorized, "ssh-ed25519 ") || !strings.HasSuffix(authorized, " lembas") {
		t.Fatalf("GenerateKey: %q / %q", private[:40], authorized)
	}
	pub, err := sshx.PublicKey(private)
	if err != nil || pub != strings.TrimSuffix(authorized, " lembas") {
		t.Fatalf("PublicKey = %q, %v; want %q", pub, err, authorized)
	}

	// The fingerprint is the one ssh-keygen shows.
	if path, err := exec.LookPath("ssh-keygen"); err == nil {
		f := filepath.Join(t.TempDir(), "k.pub")
		os.WriteFile(f, []byte(authorized+"\n"), 0o644)
		out, err := exec.Command(path, "-l", "-E", "sha256", "-f", f).Output()
		if err != nil {
			t.Fatal(err)
		}
		fp, err := sshx.Fingerprint(authorized)
		if err != nil || !strings.Contains(string(out), " "+fp+" ") {
			t.Fatalf("Fingerprint = %q, %v; ssh-keygen says %q", fp, err, out)
		}
	}

	// A key with a passphrase is refused, saying so.
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	block, err := ssh.MarshalPrivateKeyWithPassphrase(priv, "", []byte("pass"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = sshx.PublicKey(pem.EncodeToMemory(block))
	if _, msg := apperr.Public(err); apperr.KindOf(err) != apperr.Invalid || !strings.Contains(msg, "passphrase") {
		t.Fatalf("passphrase key: %v", err)
	}
	if _, err := sshx.PublicKey([]byte("not a key")); apperr.KindOf(err) != apperr.Invalid {
		t.Fatalf("garbage: %v", err)
	}
	if _, err := sshx.ClientConfig(sshx.Target{}, sshx.Auth{PrivateKey: pem.EncodeToMemory(block)}, ""); apperr.KindOf(err) != apperr.Invalid {
		t.Fatalf("ClientConfig with a passphrase key: %v", err)
	}
	if _, err := sshx.ClientConfig(sshx.Target{}, sshx.Auth{PrivateKey: private, Password: "x"}, ""); apperr.KindOf(err) != apperr.Invalid {
		t.Fatalf("ClientConfig with two credentials: %v", err)
	}
	if _, err := sshx.ClientConfig(sshx.Target{}, sshx.Auth{}, ""); apperr.KindOf(err) != apperr.Invalid {
		t.Fatalf("ClientConfig with no credential: %v", err)
	}
}

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"":         `''`,
		"a b":      `'a b'`,
		`it's`:     `'it'\''s'`,
		`$(x) "y"`: `'$(x) "y"'`,
	} {
		if got := sshx.Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}
