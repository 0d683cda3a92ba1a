package sshx_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/apperr"
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

func TestHostKeyCaptureAcceptAndChange(t *testing.T) {
	srv, target, auth := keyServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	got, err := sshx.CaptureHostKey(ctx, target)
	if err != nil {
		t.Fatal(err)
	}
	if got.Key != srv.HostKey() {
		t.Fatalf("captured %q, server has %q", got.Key, srv.HostKey())
	}
	if fp, _ := sshx.Fingerprint(srv.HostKey()); got.Fingerprint != fp || !strings.HasPrefix(fp, "SHA256:") {
		t.Fatalf("fingerprint %q, want %q", got.Fingerprint, fp)
	}
	// Capturing stopped before sign-in: once sshd has logged the
	// connection's end, its log names no user.
	log := waitLog(t, srv, "[preauth]")
	if strings.Contains(log, target.User) || strings.Contains(log, "Invalid user") || strings.Contains(log, "Accepted") {
		t.Fatalf("sshd saw a sign-in attempt while the key was captured:\n%s", log)
	}

	// Nothing pinned: refused, with a message saying what to do.
	_, err = sshx.Dial(ctx, target, auth, "")
	if !errors.Is(err, sshx.ErrHostKeyUnknown) || apperr.KindOf(err) == apperr.Internal {
		t.Fatalf("Dial without a pin = %v, want ErrHostKeyUnknown", err)
	}
	if _, msg := apperr.Public(err); !strings.Contains(msg, "accept") {
		t.Fatalf("message %q does not say what to do", msg)
	}

	// Accepted: signs in.
	c := dial(t, target, auth, got.Key)
	c.Close()

	// The host's key changes: refused, naming the new fingerprint.
	srv.RotateHostKey()
	_, err = sshx.Dial(ctx, target, auth, got.Key)
	if !errors.Is(err, sshx.ErrHostKeyChanged) {
		t.Fatalf("Dial after the key changed = %v, want ErrHostKeyChanged", err)
	}
	newFP, _ := sshx.Fingerprint(srv.HostKey())
	if _, msg := apperr.Public(err); !strings.Contains(msg, newFP) || !strings.Contains(msg, "scan") {
		t.Fatalf("message %q should name the new fingerprint %s and say what to do", msg, newFP)
	}

	// Scanned and accepted anew: signs in again.
	again, err := sshx.CaptureHostKey(ctx, target)
	if err != nil || again.Fingerprint != newFP {
		t.Fatalf("recapture = %v, %v; want %s", again, err, newFP)
	}
	dial(t, target, auth, again.Key)
}

// waitLog polls sshd's log until it contains want.
func waitLog(t *testing.T, srv *sshtest.Server, want string) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		log := srv.Log()
		if strings.Contains(log, want) {
			return log
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q in sshd's log:\n%s", want, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSignInRefused(t *testing.T) {
	srv, target, _ := keyServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stranger, _, _ := sshx.GenerateKey()
	for name, auth := range map[string]sshx.Auth{
		"unknown key":    {PrivateKey: stranger},
		"wrong password": {Password: "not-the-password"},
	} {
		_, err := sshx.Dial(ctx, target, auth, srv.HostKey())
		if apperr.KindOf(err) != apperr.Invalid {
			t.Fatalf("%s: Dial = %v, want a refused sign-in", name, err)
		}
		if _, msg := apperr.Public(err); !strings.Contains(msg, "refused the sign-in") {
			t.Fatalf("%s: message %q", name, msg)
		}
	}
}

func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err = sshx.Dial(ctx, sshx.Target{Host: "127.0.0.1", Port: port, User: "u"}, sshx.Auth{Password: "x"}, "")
	if apperr.KindOf(err) != apperr.Unavailable {
		t.Fatalf("Dial to a closed port = %v, want unavailable", err)
	}
}

// trickyDir makes a directory whose name has spaces and both quotes, under
// a fresh directory in /tmp the server's user owns.
func trickyDir(t *testing.T, c *sshx.Client) string {
	t.Helper()
	r := run(t, c, "mktemp -d /tmp/lembas-sshx-XXXXXX", sshx.RunOptions{})
	base := strings.TrimSpace(string(r.Output))
	if r.Exit != 0 || !strings.HasPrefix(base, "/tmp/lembas-sshx-") {
		t.Fatalf("mktemp: %q exit %d", r.Output, r.Exit)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c.Run(ctx, "rm -rf -- "+sshx.Quote(base), sshx.RunOptions{})
	})
	sf, err := c.SFTP()
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Close()
	dir := base + `/it's a "dir" $(touch pwned)`
	if err := sf.Mkdir(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRunInDirectoryWithQuotes(t *testing.T) {
	srv, target, auth := keyServer(t)
	c := dial(t, target, auth, srv.HostKey())
	dir := trickyDir(t, c)

	r := run(t, c, "pwd; ls -A", sshx.RunOptions{Dir: dir})
	if string(r.Output) != dir+"\n" || r.Exit != 0 {
		t.Fatalf("pwd in %q: %q exit %d", dir, r.Output, r.Exit)
	}
	// A command with its own separators still runs in the directory, whole.
	r = run(t, c, "false; pwd # trailing comment", sshx.RunOptions{Dir: dir})
	if string(r.Output) != dir+"\n" {
		t.Fatalf("got %q", r.Output)
	}
	// A missing directory fails the command, which does not run elsewhere.
	r = run(t, c, "echo ran", sshx.RunOptions{Dir: dir + "/missing"})
	if r.Exit == 0 || strings.Contains(string(r.Output), "ran") || !strings.Contains(string(r.Output), "cd") {
		t.Fatalf("missing dir: %q exit %d", r.Output, r.Exit)
	}
}

// Commands run in a login shell, so they see the PATH the person's own
// terminal has.
func TestRunInLoginShell(t *testing.T) {
	srv, target, auth := keyServer(t)
	if srv.User != sshtest.UserName {
		t.Skip("the login shell of the current user may not be bash")
	}
	c := dial(t, target, auth, srv.HostKey())
	r := run(t, c, "shopt -q login_shell && echo login", sshx.RunOptions{Dir: "/tmp"})
	if string(r.Output) != "login\n" {
		t.Fatalf("got %q exit %d", r.Output, r.Exit)
	}
}

func TestRunIsFreshEachTime(t *testing.T) {
	srv, target, auth := keyServer(t)
	c := dial(t, target, auth, srv.HostKey())
	run(t, c, "cd /tmp; export LEMBAS_X=1", sshx.RunOptions{})
	r := run(t, c, `pwd; echo "[$LEMBAS_X]"`, sshx.RunOptions{})
	if want := srv.Home + "\n[]\n"; string(r.Output) != want {
		t.Fatalf("got %q, want %q", r.Output, want)
	}
}

func TestRunExitCodesAndStreams(t *testing.T) {
	srv, target, auth := keyServer(t)
	c := dial(t, target, auth, srv.HostKey())
	for _, tc := range []struct {
		command string
		exit    int
		output  string
	}{
		{"true", 0, ""},
		{"exit 3", 3, ""},
		{"echo out; echo err >&2; exit 1", 1, "out\nerr\n"},
		{"kill -KILL $$", -1, ""},
		{"cat", 0, ""}, // stdin is empty, not left open
	} {
		r := run(t, c, tc.command, sshx.RunOptions{Timeout: time.Minute})
		if r.Exit != tc.exit || r.TimedOut {
			t.Errorf("%q: exit %d timedOut %v, want %d", tc.command, r.Exit, r.TimedOut, tc.exit)
		}
		// stderr and stdout interleave as they arrive; compare as sets of lines.
		if got := sortedLines(string(r.Output)); got != sortedLines(tc.output) {
			t.Errorf("%q: output %q, want %q", tc.command, r.Output, tc.output)
		}
	}
}

func sortedLines(s string) string {
	lines := strings.Split(s, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func TestRunCapsOutput(t *testing.T) {
	srv, target, auth := keyServer(t)
	c := dial(t, target, auth, srv.HostKey())
	r := run(t, c, "head -c 100000 /dev/zero | tr '\\0' a; echo; echo done", sshx.RunOptions{MaxOutput: 1000})
	if len(r.Output) != 1000 || !r.Truncated || r.Omitted != 100000+1+5-1000 || r.Exit != 0 {
		t.Fatalf("kept %d truncated %v omitted %d exit %d", len(r.Output), r.Truncated, r.Omitted, r.Exit)
	}
	if strings.Trim(string(r.Output), "a") != "" {
		t.Fatal("kept output is not the start of the stream")
	}
	r = run(t, c, "echo small", sshx.RunOptions{MaxOutput: 1000})
	if string(r.Output) != "small\n" || r.Truncated || r.Omitted != 0 {
		t.Fatalf("small output: %q truncated %v omitted %d", r.Output, r.Truncated, r.Omitted)
	}
}

// A command that runs too long is killed with everything it started, and
// its output so far is kept.
func TestRunTimeout(t *testing.T) {
	srv, target, auth := keyServer(t)
	c := dial(t, target, auth, srv.HostKey())
	marker := fmt.Sprintf("%d", 600000+rand.IntN(99999))
	r := run(t, c, "sleep "+marker+"1 & echo started; sleep "+marker+"2; echo never", sshx.RunOptions{Timeout: 3 * time.Second})
	if !r.TimedOut || r.Exit != -1 || string(r.Output) != "started\n" {
		t.Fatalf("timedOut %v exit %d output %q", r.TimedOut, r.Exit, r.Output)
	}
	waitGone(t, c, marker)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	r, err := c.Run(ctx, "echo started; sleep "+marker+"3", sshx.RunOptions{})
	if !errors.Is(err, context.DeadlineExceeded) || string(r.Output) != "started\n" {
		t.Fatalf("cancelled: %v, output %q", err, r.Output)
	}
	waitGone(t, c, marker)
}

// waitGone polls until no process of the user has marker in its command
// line (the pattern's brackets keep pgrep's own shell from matching).
func waitGone(t *testing.T, c *sshx.Client, marker string) {
	t.Helper()
	pattern := "sleep " + marker[:len(marker)-1] + "[" + marker[len(marker)-1:] + "][0-9]"
	deadline := time.Now().Add(time.Minute)
	for {
		r := run(t, c, "pgrep -af "+sshx.Quote(pattern), sshx.RunOptions{})
		if r.Exit == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still running after the command was killed:\n%s", r.Output)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestSFTPPathWithQuotes(t *testing.T) {
	srv, target, auth := keyServer(t)
	c := dial(t, target, auth, srv.HostKey())
	dir := trickyDir(t, c)
	sf, err := c.SFTP()
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Close()
	name := dir + `/notes 'one' "two" ; rm -rf ~.txt`
	f, err := sf.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	g, err := sf.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(g)
	g.Close()
	if string(b) != "hello\n" {
		t.Fatalf("read back %q", b)
	}
	// The shell sees the same file, by its quoted name.
	r := run(t, c, "cat -- "+sshx.Quote(`notes 'one' "two" ; rm -rf ~.txt`), sshx.RunOptions{Dir: dir})
	if string(r.Output) != "hello\n" {
		t.Fatalf("cat: %q exit %d", r.Output, r.Exit)
	}
	// Nothing in the names was ever run.
	if _, err := sf.Stat(srv.Home + "/pwned"); err == nil {
		t.Fatal("a name was run as a command")
	}
}

func TestShellEchoAndResize(t *testing.T) {
	srv, target, auth := keyServer(t)
	c := dial(t, target, auth, srv.HostKey())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sh, err := c.Shell(ctx, "", 80, 24)
	if err != nil && srv.Password == "" {
		// A non-root sshd must chown the PTY to the tty group, which
		// fails where /dev/pts is mounted without gid=5 (containers).
		skipUnlessCI(t, fmt.Sprintf("sshd not run as root could not open a PTY: %v", err))
	}
	if err != nil {
		t.Fatalf("%v\nsshd's log:\n%s", err, srv.Log())
	}
	defer sh.Close()
	out := &lockedBuffer{}
	go io.Copy(out, sh.Stdout)

	io.WriteString(sh.Stdin, "echo TERM=$TERM; stty size\n")
	out.waitFor(t, "TERM=xterm-256color")
	out.waitFor(t, "24 80")
	if err := sh.Resize(100, 30); err != nil {
		t.Fatal(err)
	}
	io.WriteString(sh.Stdin, "echo hel''lo; stty size\n")
	out.waitFor(t, "hello")
	out.waitFor(t, "30 100")
	io.WriteString(sh.Stdin, "exit 0\n")
	done := make(chan error, 1)
	go func() { done <- sh.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Wait: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the shell did not end")
	}
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// waitFor polls until want appears in the output (after the echo of the
// command that prints it, when that echo differs).
func (b *lockedBuffer) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		b.mu.Lock()
		s := b.buf.String()
		b.mu.Unlock()
		if strings.Contains(s, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the shell's output:\n%s", want, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestQuoteRoundTripsThroughTheShell(t *testing.T) {
	srv, target, auth := keyServer(t)
	c := dial(t, target, auth, srv.HostKey())
	for _, s := range []string{"", "plain", "two words", `it's`, `"double"`, `$(id) $HOME`, "`id`", `back\slash`, "new\nline", `'`, `''`, "*", "-n"} {
		r := run(t, c, "printf '%s' "+sshx.Quote(s), sshx.RunOptions{})
		if string(r.Output) != s {
			t.Errorf("Quote(%q) came back as %q", s, r.Output)
		}
	}
}

// A server that accepts and never speaks: cancelling ctx ends the
// handshake with ctx's error.
func TestDialHonoursContext(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		if c, err := l.Accept(); err == nil {
			accepted <- c
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := sshx.Dial(ctx, sshx.Target{Host: "127.0.0.1", Port: port, User: "u"}, sshx.Auth{Password: "x"}, "")
		errc <- err
	}()
	c := <-accepted
	defer c.Close()
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Dial = %v, want context.Canceled", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("Dial did not return")
	}
}
