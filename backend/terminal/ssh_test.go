package terminal_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/sshx"
	"github.com/llembas/lembas/backend/sshx/sshtest"
	"github.com/llembas/lembas/backend/terminal"
)

// ptyOrSkip skips a test that needs a PTY from srv where sshd does not
// run as root (it must chown the PTY to the tty group, which fails where
// /dev/pts is mounted without gid=5), unless CI=true.
func ptyOrSkip(t testing.TB, srv *sshtest.Server) {
	t.Helper()
	if srv.Password == "" && os.Getenv("CI") != "true" {
		t.Skip("sshd not run as root may not open a PTY")
	}
}

// SSHDialer dials srv with a fresh key it authorizes, pinning srv's host
// key: shells on a real OpenSSH server, for tests.
func SSHDialer(t testing.TB, srv *sshtest.Server) terminal.Dialer {
	t.Helper()
	key, authorized, err := sshx.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	srv.AuthorizeKey(authorized)
	pinned := srv.HostKey()
	return terminal.DialFunc(func(ctx context.Context, user ids.UserID, chat ids.ChatID) (terminal.Conn, ids.ProfileID, error) {
		c, err := sshx.Dial(ctx, sshx.Target{Host: srv.Host, Port: srv.Port, User: srv.User}, sshx.Auth{PrivateKey: key}, pinned)
		if err != nil {
			return nil, 0, err
		}
		return terminal.SSH(c), 1, nil
	})
}

// Against a real sshd and the account's bash: the command string sets the
// marks up, and the last command, its output and status come from them.
func TestLastCommandFromBashMarks(t *testing.T) {
	srv := sshtest.Start(t)
	ptyOrSkip(t, srv)
	s := terminal.New(SSHDialer(t, srv), terminal.Options{ReapEvery: -1})
	defer s.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	v, err := s.Attach(ctx, 1, 9, 100, 30)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	m, err := v.Next(ctx)
	if err != nil || m.Type != "ready" || !m.Marks {
		t.Fatalf("first message %+v, %v: want ready with marks (the account's shell is bash)", m, err)
	}
	// The prompt's end mark says the shell is reading.
	var seen strings.Builder
	wait := func(want string) {
		t.Helper()
		for !strings.Contains(seen.String(), want) {
			m, err := v.Next(ctx)
			if err != nil || m.Type == "closed" {
				t.Fatalf("waiting for %q: %+v %v\n%q", want, m, err, seen.String())
			}
			seen.Write(m.Data)
		}
	}
	wait("\x1b]133;B\x07")
	if lc, _ := s.LastCommand(1, 9); lc.Command != "" || !lc.Marks {
		t.Fatalf("before any command: %+v", lc)
	}
	if err := v.Input([]byte("echo hi; false\r")); err != nil {
		t.Fatal(err)
	}
	wait("\x1b]133;D;1\x07")
	lc, err := s.LastCommand(1, 9)
	if err != nil {
		t.Fatal(err)
	}
	if want := (terminal.LastCommand{Command: "echo hi; false", Output: "hi", Exit: 1, Marks: true}); lc != want {
		t.Fatalf("last command %+v, want %+v", lc, want)
	}
	// A command in a directory with spaces, and its status 0.
	seen.Reset()
	v.Input([]byte("mkdir -p 'a b' && cd 'a b' && pwd\r"))
	wait("\x1b]133;D;0\x07")
	lc, _ = s.LastCommand(1, 9)
	if !strings.HasSuffix(lc.Output, "/a b") || lc.Exit != 0 || lc.Command != "mkdir -p 'a b' && cd 'a b' && pwd" {
		t.Fatalf("last command %+v", lc)
	}
	// Typing exit ends the shell; its viewers are told.
	v.Input([]byte("exit\r"))
	for {
		m, err := v.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if m.Type == "closed" {
			if m.Reason != terminal.ReasonExited {
				t.Fatalf("closed %q, want exited", m.Reason)
			}
			break
		}
	}
}
