package sshx_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/sshx"
	"github.com/llembas/lembas/backend/sshx/sshtest"
)

// keyServer starts a real sshd that lets a fresh key sign in, and returns
// it with the target and the key.
func keyServer(t *testing.T) (*sshtest.Server, sshx.Target, sshx.Auth) {
	t.Helper()
	srv := sshtest.Start(t)
	private, authorized, err := sshx.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	srv.AuthorizeKey(authorized)
	return srv, sshx.Target{Host: srv.Host, Port: srv.Port, User: srv.User}, sshx.Auth{PrivateKey: private}
}

func dial(t *testing.T, target sshx.Target, auth sshx.Auth, pinned string) *sshx.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := sshx.Dial(ctx, target, auth, pinned)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func run(t *testing.T, c *sshx.Client, command string, opt sshx.RunOptions) sshx.RunResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := c.Run(ctx, command, opt)
	if err != nil {
		t.Fatalf("Run %q: %v", command, err)
	}
	return r
}

func TestKeySignInRunsInHome(t *testing.T) {
	srv, target, auth := keyServer(t)
	c := dial(t, target, auth, srv.HostKey())
	r := run(t, c, "pwd; whoami", sshx.RunOptions{})
	want := srv.Home + "\n" + srv.User + "\n"
	if string(r.Output) != want || r.Exit != 0 {
		t.Fatalf("got %q exit %d, want %q exit 0", r.Output, r.Exit, want)
	}
}

func TestPasswordSignIn(t *testing.T) {
	srv := sshtest.Start(t)
	if srv.Password == "" {
		skipUnlessCI(t, "no password user (tests not run as root)")
	}
	target := sshx.Target{Host: srv.Host, Port: srv.Port, User: srv.User}
	c := dial(t, target, sshx.Auth{Password: srv.Password}, srv.HostKey())
	if r := run(t, c, "whoami", sshx.RunOptions{}); strings.TrimSpace(string(r.Output)) != srv.User {
		t.Fatalf("whoami = %q", r.Output)
	}
}

func skipUnlessCI(t *testing.T, why string) {
	t.Helper()
	if ciStrict() {
		t.Fatal(why)
	}
	t.Skip(why)
}
