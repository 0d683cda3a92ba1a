// Package sshtest starts a real OpenSSH sshd for tests: Debian's
// /usr/sbin/sshd with its own configuration, host key, authorized_keys file
// and port on loopback, so the SSH client is tested against the server it
// will meet, not against a model of it.
//
// Run as root, the server signs in a local user "lembas-sshtest" (created
// when missing) by key or by password; otherwise it signs in the current
// user by key only, and Password is "".
package sshtest

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// UserName is the local user the server signs in when the tests run as root.
const UserName = "lembas-sshtest"

const sshdPath = "/usr/sbin/sshd"

// Server is one running sshd.
type Server struct {
	Host string
	Port int
	// User is the account commands run as; its home is the login directory.
	User string
	// Password is User's password, "" when the tests cannot set one (not
	// root): password tests skip then, unless CI=true.
	Password string
	// Home is User's home directory.
	Home string

	t   testing.TB
	dir string // config, host key, authorized_keys; readable by User

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	log  *syncBuffer
}

// Start starts an sshd for the test and stops it when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	if _, err := os.Stat(sshdPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing; `make test` installs openssh-server (CI=true never skips these tests)", sshdPath)
		}
		t.Skipf("%s not installed (run `make test`, which installs openssh-server)", sshdPath)
	}
	s := &Server{Host: "127.0.0.1", t: t, log: &syncBuffer{}}
	if os.Geteuid() == 0 {
		if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
			t.Fatalf("sshtest: %v", err)
		}
		pw, err := ensureUser()
		if err != nil {
			t.Fatalf("sshtest: %v", err)
		}
		s.User, s.Password = UserName, pw
	} else {
		u, err := user.Current()
		if err != nil {
			t.Fatalf("sshtest: %v", err)
		}
		s.User = u.Username
	}
	u, err := user.Lookup(s.User)
	if err != nil {
		t.Fatalf("sshtest: %v", err)
	}
	s.Home = u.HomeDir

	// Not t.TempDir: its parent is 0700 root's, and sshd reads
	// authorized_keys as the user.
	dir, err := os.MkdirTemp("", "lembas-sshtest-")
	if err != nil {
		t.Fatalf("sshtest: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatalf("sshtest: %v", err)
	}
	s.dir = dir
	if err := os.WriteFile(s.path("authorized_keys"), nil, 0o644); err != nil {
		t.Fatalf("sshtest: %v", err)
	}
	if err := s.newHostKey(); err != nil {
		t.Fatalf("sshtest: %v", err)
	}
	// A port is picked free, then handed to sshd: another process can take
	// it in between, so a start that fails is retried on a new port.
	var lastErr error
	for range 5 {
		if s.Port, err = freePort(); err != nil {
			t.Fatalf("sshtest: %v", err)
		}
		if lastErr = s.start(); lastErr == nil {
			break
		}
	}
	if lastErr != nil {
		t.Fatalf("sshtest: %v\n%s", lastErr, s.log.String())
	}
	t.Cleanup(s.stop)
	return s
}

// Addr is host:port.
func (s *Server) Addr() string { return net.JoinHostPort(s.Host, strconv.Itoa(s.Port)) }

// AuthorizeKey lets the holder of the key (an authorized_keys line) sign in.
func (s *Server) AuthorizeKey(authorized string) {
	s.t.Helper()
	f, err := os.OpenFile(s.path("authorized_keys"), os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		s.t.Fatalf("sshtest: %v", err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.TrimSpace(authorized) + "\n"); err != nil {
		s.t.Fatalf("sshtest: %v", err)
	}
}

// HostKey is the server's current host key as an authorized_keys line,
// what a client pins.
func (s *Server) HostKey() string {
	s.t.Helper()
	b, err := os.ReadFile(s.path("host_ed25519.pub"))
	if err != nil {
		s.t.Fatalf("sshtest: %v", err)
	}
	k, _, _, _, err := ssh.ParseAuthorizedKey(b)
	if err != nil {
		s.t.Fatalf("sshtest: %v", err)
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))
}

// Log is what sshd has logged so far (LogLevel VERBOSE).
func (s *Server) Log() string { return s.log.String() }

// RotateHostKey restarts the server with a new host key on the same port.
func (s *Server) RotateHostKey() {
	s.t.Helper()
	s.stop()
	if err := s.newHostKey(); err != nil {
		s.t.Fatalf("sshtest: %v", err)
	}
	if err := s.start(); err != nil {
		s.t.Fatalf("sshtest: restart: %v\n%s", err, s.log.String())
	}
}

func (s *Server) path(name string) string { return filepath.Join(s.dir, name) }

func (s *Server) newHostKey() error {
	key := s.path("host_ed25519")
	os.Remove(key)
	os.Remove(key + ".pub")
	out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "sshtest", "-f", key).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ssh-keygen: %v: %s", err, out)
	}
	return nil
}

func (s *Server) config(penalties bool) string {
	var b strings.Builder
	line := func(k, v string) { fmt.Fprintf(&b, "%s %s\n", k, v) }
	line("Port", strconv.Itoa(s.Port))
	line("ListenAddress", "127.0.0.1")
	line("HostKey", s.path("host_ed25519"))
	line("AuthorizedKeysFile", s.path("authorized_keys"))
	line("PidFile", "none")
	line("StrictModes", "no")
	line("UsePAM", "no")
	line("LogLevel", "VERBOSE")
	line("AllowUsers", s.User)
	line("PermitRootLogin", "no")
	line("PubkeyAuthentication", "yes")
	line("PasswordAuthentication", "yes")
	line("KbdInteractiveAuthentication", "no")
	line("AllowAgentForwarding", "no")
	line("AllowTcpForwarding", "no")
	line("AllowStreamLocalForwarding", "no")
	line("X11Forwarding", "no")
	line("PermitTTY", "yes")
	line("PrintMotd", "no")
	line("PrintLastLog", "no")
	line("MaxStartups", "200")
	line("MaxSessions", "100")
	line("Subsystem", "sftp internal-sftp")
	if penalties {
		// OpenSSH 9.8+ slows down a source that fails to sign in; the
		// tests fail sign-ins on purpose, all from 127.0.0.1.
		line("PerSourcePenalties", "no")
	}
	return b.String()
}

// writeConfig writes sshd_config, leaving out the options this sshd does
// not know.
func (s *Server) writeConfig() error {
	cfg := s.path("sshd_config")
	for _, penalties := range []bool{true, false} {
		if err := os.WriteFile(cfg, []byte(s.config(penalties)), 0o644); err != nil {
			return err
		}
		out, err := exec.Command(sshdPath, "-t", "-f", cfg).CombinedOutput()
		if err == nil {
			return nil
		}
		if !penalties || !bytes.Contains(out, []byte("PerSourcePenalties")) {
			return fmt.Errorf("sshd -t: %v: %s", err, out)
		}
	}
	return nil
}

// start starts sshd on s.Port and waits until it answers with an SSH
// banner, or has exited.
func (s *Server) start() error {
	if err := s.writeConfig(); err != nil {
		return err
	}
	cmd := exec.Command(sshdPath, "-D", "-e", "-f", s.path("sshd_config"))
	cmd.Stdout = s.log
	cmd.Stderr = s.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()

	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			s.mu.Lock()
			s.cmd = nil
			s.mu.Unlock()
			return errors.New("sshd exited while starting")
		default:
		}
		if s.banner() {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.stop()
	return errors.New("sshd did not answer within 30s")
}

// banner reports whether something on the port speaks SSH.
func (s *Server) banner() bool {
	c, err := net.DialTimeout("tcp", s.Addr(), 2*time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "SSH-2.0-")
}

// stop ends sshd and every session it started (they share its process
// group), and waits for it.
func (s *Server) stop() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// userLock is where concurrent test processes agree on the password.
const (
	userLock     = "/run/lembas-sshtest.lock"
	passwordFile = "/run/lembas-sshtest.password"
)

// ensureUser creates the test user when missing and returns its password.
// The password is random, made once per boot and kept in a root-only file
// under /run: test packages run in parallel, and a fresh password per
// process would sign out the processes already running.
func ensureUser() (string, error) {
	lock, err := os.OpenFile(userLock, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)

	if _, err := user.Lookup(UserName); err != nil {
		out, err := exec.Command("useradd", "-m", "-s", "/bin/bash", UserName).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("useradd: %v: %s", err, out)
		}
		os.Remove(passwordFile)
	}
	if b, err := os.ReadFile(passwordFile); err == nil && len(b) > 0 {
		return string(b), nil
	}
	raw := make([]byte, 18)
	rand.Read(raw)
	pw := hex.EncodeToString(raw)
	chpasswd := exec.Command("chpasswd")
	chpasswd.Stdin = strings.NewReader(UserName + ":" + pw + "\n")
	if out, err := chpasswd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("chpasswd: %v: %s", err, out)
	}
	if err := os.WriteFile(passwordFile, []byte(pw), 0o600); err != nil {
		return "", err
	}
	return pw, nil
}

// syncBuffer collects sshd's log from its output pipes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
