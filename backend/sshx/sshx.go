// Package sshx is LLeMbas's SSH client: every connection configured
// explicitly (no SSH agent, nothing read from ~/.ssh or ssh_config, no
// ProxyCommand: every LLeMbas user shares one unix account), host keys
// pinned per host and port, commands each in a fresh session with a
// working directory, output cap and time limit, files over SFTP (a path is
// a path, never spliced into a command), and interactive shells on a PTY
// for the terminal panel.
package sshx

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"

	"github.com/llembas/lembas/backend/apperr"
)

// connectTimeout bounds the TCP connection and, separately, the SSH
// handshake (key exchange and sign-in) when ctx has no earlier deadline.
const connectTimeout = 30 * time.Second

// Target is where to connect.
type Target struct {
	Host string
	Port int
	User string
}

func (t Target) addr() string { return net.JoinHostPort(t.Host, strconv.Itoa(t.Port)) }

// Auth is the one credential offered: a private key (OpenSSH or PEM
// form) or a password. Nothing else is ever offered.
type Auth struct {
	PrivateKey []byte
	Password   string
}

// HostKey is a server's host key as captured.
type HostKey struct {
	// Key is the authorized_keys form ("ssh-ed25519 AAAA…"), what a
	// profile pins.
	Key string `json:"key"`
	// Fingerprint is the SHA256 fingerprint ("SHA256:…"), what a person
	// compares.
	Fingerprint string `json:"fingerprint"`
}

// Errors a connection reports (wrapped, with a message saying what to do).
var (
	// ErrHostKeyUnknown: no key is pinned; capture and accept one first.
	ErrHostKeyUnknown = errors.New("the host's key has not been accepted")
	// ErrHostKeyChanged: the server's key differs from the pinned one.
	ErrHostKeyChanged = errors.New("the host's key has changed")
)

// ClientConfig is the explicit configuration of every connection: the one
// credential in auth, the host key checked against pinned (an
// authorized_keys line; "" refuses every key with ErrHostKeyUnknown), a
// dial timeout. Exported so a test can prove it without a server.
//
// golang.org/x/crypto/ssh reads no files and no environment by itself;
// building the configuration here, whole, keeps it that way: no agent
// socket, no ~/.ssh keys, no known_hosts, no ssh_config.
func ClientConfig(t Target, auth Auth, pinned string) (*ssh.ClientConfig, error) {
	var methods []ssh.AuthMethod
	switch {
	case len(auth.PrivateKey) > 0 && auth.Password != "":
		return nil, apperr.New(apperr.Invalid, "A connection signs in with a key or a password, not both.")
	case len(auth.PrivateKey) > 0:
		signer, err := parsePrivate(auth.PrivateKey)
		if err != nil {
			return nil, err
		}
		methods = []ssh.AuthMethod{ssh.PublicKeys(signer)}
	case auth.Password != "":
		pw := auth.Password
		given := false // the challenge callback runs on the handshake's goroutine only
		methods = []ssh.AuthMethod{
			ssh.Password(pw),
			// Servers that sign in through PAM ask for the password as a
			// keyboard-interactive prompt. The server asks what it likes,
			// so the password goes once, to a round with one hidden
			// prompt that does not ask for a code: a one-time code asked
			// after it, a second hidden prompt beside it, or a shown one
			// (never a password) gets an empty answer, and the sign-in
			// fails instead of sending the password where it was not
			// asked for.
			ssh.KeyboardInteractive(func(_, _ string, questions []string, echos []bool) ([]string, error) {
				answers := make([]string, len(questions))
				hidden := -1
				for i := range questions {
					if !echos[i] {
						if hidden >= 0 {
							return answers, nil
						}
						hidden = i
					}
				}
				if hidden >= 0 && !asksForCode(questions[hidden]) && !given {
					given = true
					answers[hidden] = pw
				}
				return answers, nil
			}),
		}
	default:
		return nil, apperr.New(apperr.Invalid, "The connection has no key or password to sign in with.")
	}
	var want ssh.PublicKey
	if strings.TrimSpace(pinned) != "" {
		k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(pinned))
		if err != nil {
			return nil, apperr.Wrap(apperr.Invalid, err, "The pinned host key cannot be read; forget it and accept the host's key again.")
		}
		want = k
	}
	host := t.addr()
	return &ssh.ClientConfig{
		User:              t.User,
		Auth:              methods,
		HostKeyCallback:   pinnedCallback(host, want),
		HostKeyAlgorithms: hostKeyAlgorithms(want),
		Timeout:           connectTimeout,
	}, nil
}

// asksForCode reports a prompt asking for a one-time code or token
// rather than the password: by whole words, after OpenSSH's "(user@host)
// " prefix, so that a user or host named pinky or otp-box still gets
// the password.
func asksForCode(prompt string) bool {
	p := strings.ToLower(strings.TrimSpace(prompt))
	if strings.HasPrefix(p, "(") {
		if i := strings.Index(p, ")"); i >= 0 {
			p = p[i+1:]
		}
	}
	words := strings.FieldsFunc(p, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range words {
		switch w {
		case "code", "passcode", "token", "otp", "totp", "pin", "verification", "one", "2fa", "mfa":
			if w != "one" || strings.Contains(p, "one-time") || strings.Contains(p, "one time") {
				return true
			}
		}
	}
	return false
}

// pinnedCallback accepts exactly the pinned key.
func pinnedCallback(host string, want ssh.PublicKey) ssh.HostKeyCallback {
	return func(_ string, _ net.Addr, got ssh.PublicKey) error {
		if want == nil {
			return apperr.Wrap(apperr.Invalid, ErrHostKeyUnknown,
				"The host key of %s has not been accepted yet: scan it in the connection's settings, compare the fingerprint, and accept it.", host)
		}
		if bytes.Equal(got.Marshal(), want.Marshal()) {
			return nil
		}
		return apperr.Wrap(apperr.Conflict, ErrHostKeyChanged,
			"The host key of %s has changed: it is now %s, not the accepted %s. If the host was reinstalled or its keys replaced, scan the key again in the connection's settings and accept it; otherwise someone may be intercepting the connection.",
			host, ssh.FingerprintSHA256(got), ssh.FingerprintSHA256(want))
	}
}

// hostKeyAlgorithms puts the pinned key's algorithms first, so that a
// server with several host keys shows the pinned one rather than whichever
// the default order prefers (which would look like a changed key); the
// rest follow, so a server that dropped that key type still reports a
// changed key rather than failing to negotiate.
func hostKeyAlgorithms(want ssh.PublicKey) []string {
	all := ssh.SupportedAlgorithms().HostKeys
	if want == nil {
		return nil
	}
	first := []string{want.Type()}
	if want.Type() == ssh.KeyAlgoRSA {
		first = []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256}
	}
	out := append([]string(nil), first...)
	for _, a := range all {
		if !contains(first, a) {
			out = append(out, a)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func parsePrivate(private []byte) (ssh.Signer, error) {
	signer, err := ssh.ParsePrivateKey(private)
	if err != nil {
		var pp *ssh.PassphraseMissingError
		if errors.As(err, &pp) {
			return nil, apperr.New(apperr.Invalid, "This key is protected by a passphrase, which LLeMbas cannot type for you: remove it (ssh-keygen -p -f KEYFILE) or let LLeMbas generate a new key.")
		}
		// Not err: its text can quote what was pasted (ssh: unsupported
		// key type "…"), and a refused call's error is logged. Nothing
		// from a credential field reaches a log.
		return nil, apperr.Wrap(apperr.Invalid, errUnreadableKey, "This is not a private key LLeMbas can read; paste the whole key in OpenSSH or PEM form, from its BEGIN line to its END line.")
	}
	return signer, nil
}

var errUnreadableKey = errors.New("sshx: unreadable private key")

// errCaptured stops CaptureHostKey's handshake once the key is in hand.
var errCaptured = errors.New("sshx: host key captured")

// CaptureHostKey connects to t, completes the key exchange, records the
// server's host key and stops before any authentication: no user name or
// credential is sent.
func CaptureHostKey(ctx context.Context, t Target) (HostKey, error) {
	var got ssh.PublicKey
	cfg := &ssh.ClientConfig{
		// The host key callback runs during the key exchange, before the
		// user-auth service is even requested, and its error ends the
		// handshake: the user name below never leaves this process.
		User: "",
		HostKeyCallback: func(_ string, _ net.Addr, key ssh.PublicKey) error {
			got = key
			return errCaptured
		},
		Timeout: connectTimeout,
	}
	conn, err := handshake(ctx, t, cfg)
	if conn != nil {
		conn.Close()
		return HostKey{}, errors.New("sshx: handshake went past the host key")
	}
	if got == nil {
		return HostKey{}, err
	}
	return HostKey{
		Key:         strings.TrimSpace(string(ssh.MarshalAuthorizedKey(got))),
		Fingerprint: ssh.FingerprintSHA256(got),
	}, nil
}

// Client is one SSH connection.
type Client struct {
	ssh *ssh.Client
}

// Dial connects to t with auth, checking the host key against pinned.
// ctx bounds the connection's setup only.
func Dial(ctx context.Context, t Target, auth Auth, pinned string) (*Client, error) {
	cfg, err := ClientConfig(t, auth, pinned)
	if err != nil {
		return nil, err
	}
	c, err := handshake(ctx, t, cfg)
	if err != nil {
		return nil, err
	}
	return &Client{ssh: c}, nil
}

// handshake dials t and runs the SSH handshake under ctx, turning its
// failures into errors that say what to do.
func handshake(ctx context.Context, t Target, cfg *ssh.ClientConfig) (*ssh.Client, error) {
	addr := t.addr()
	d := net.Dialer{Timeout: cfg.Timeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, apperr.Wrap(apperr.Unavailable, err, "%s did not answer within %s; check the host name and port, and that the host is up.", addr, cfg.Timeout)
		}
		return nil, apperr.Wrap(apperr.Unavailable, err, "Cannot reach %s; check the host name and port, and that the host is up and runs an SSH server.", addr)
	}
	deadline := time.Now().Add(connectTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	c, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
	stopped := stop()
	if err != nil {
		conn.Close()
		var ae *apperr.Error
		switch {
		case errors.As(err, &ae):
			return nil, ae
		case errors.Is(err, errCaptured):
			return nil, err
		case !stopped || ctx.Err() != nil:
			return nil, ctx.Err()
		case strings.Contains(err.Error(), "unable to authenticate"):
			return nil, apperr.Wrap(apperr.Invalid, err, "%s refused the sign-in as %q; check the user name, and that the key is in the user's authorized_keys (or that the password is right).", addr, cfg.User)
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, apperr.Wrap(apperr.Unavailable, err, "%s did not finish the SSH handshake in time.", addr)
		}
		return nil, apperr.Wrap(apperr.Unavailable, err, "The SSH handshake with %s failed; is an SSH server listening on that port?", addr)
	}
	client := ssh.NewClient(c, chans, reqs)
	if !stopped {
		// ctx ended just as the handshake finished: its deadline may
		// land on the connection at any moment now.
		client.Close()
		return nil, ctx.Err()
	}
	conn.SetDeadline(time.Time{})
	return client, nil
}

// Close closes the connection (and every session on it).
func (c *Client) Close() error { return c.ssh.Close() }

// Wait waits for the connection to end (closed, or dropped by the
// network or the server).
func (c *Client) Wait() error { return c.ssh.Wait() }

// RunOptions bound one command.
type RunOptions struct {
	// Dir is the working directory ("" is the login directory). It is
	// quoted for the remote shell by Run, never spliced by the caller.
	Dir string
	// Timeout ends the command (0: no limit beyond ctx).
	Timeout time.Duration
	// MaxOutput caps the output kept (stdout and stderr interleaved as
	// they arrive); the rest is counted, not kept. 0 keeps everything.
	MaxOutput int
	// StopAfter ends the command once it has printed this many bytes in
	// all (0: never): past the cap output is only counted, but `yes`
	// would still be read, decrypted and counted at full speed until the
	// time limit.
	StopAfter int64
}

// RunResult is how a command ended.
type RunResult struct {
	Output    []byte
	Truncated bool  // output passed MaxOutput
	Omitted   int64 // bytes of output past MaxOutput, counted and dropped
	Exit      int   // exit status; -1 when killed by a signal or cut off
	TimedOut  bool
	Flooded   bool // stopped at StopAfter bytes of output
}

// killGrace is how long a killed command's session may take to report
// before it is closed regardless.
const killGrace = 10 * time.Second

// Run runs command in a fresh session (each command is a fresh shell:
// nothing carries over from the one before).
//
// command is shell syntax, run as `exec "$SHELL" -l -c SCRIPT`: sshd
// runs a command through the user's shell without its login files, and a
// login shell gives the agent the PATH the person's own terminal has
// (~/.local/bin, toolchains added in ~/.profile). When Dir is set SCRIPT is
// "cd -- 'DIR' || exit", a newline, then command: a directory that is
// missing fails the command with cd's message, and the newline keeps any
// ";", "&" or comment in command from binding to the cd. The login shell
// is assumed POSIX-like (sh, bash, zsh, dash).
//
// On the time limit or ctx's end the command's process group is sent
// SIGKILL (sshd runs a command without a PTY as its own session leader,
// so this reaches what it started) and the session is closed. A timeout
// is a result (TimedOut, Exit -1); ctx's end returns ctx.Err() with the
// output so far.
func (c *Client) Run(ctx context.Context, command string, opt RunOptions) (RunResult, error) {
	out := &capped{max: opt.MaxOutput, stopAfter: opt.StopAfter, flooded: make(chan struct{})}
	script := command
	if opt.Dir != "" {
		script = "cd -- " + Quote(opt.Dir) + " || exit\n" + command
	}
	full := `exec "$SHELL" -l -c ` + Quote(script)
	var sess *ssh.Session
	err := c.setup(ctx, opt.Timeout, func() error {
		var err error
		if sess, err = c.ssh.NewSession(); err != nil {
			return apperr.Wrap(apperr.Unavailable, err, "The SSH connection refused a new session.")
		}
		sess.Stdout = out
		sess.Stderr = out
		if err := sess.Start(full); err != nil {
			return apperr.Wrap(apperr.Unavailable, err, "The SSH server would not start the command.")
		}
		return nil
	})
	if sess != nil {
		defer sess.Close()
	}
	if err != nil {
		return RunResult{Exit: -1}, err
	}
	done := make(chan error, 1)
	go func() { done <- sess.Wait() }()

	var timer <-chan time.Time
	if opt.Timeout > 0 {
		tm := time.NewTimer(opt.Timeout)
		defer tm.Stop()
		timer = tm.C
	}
	result := func() RunResult {
		b, omitted := out.result()
		return RunResult{Output: b, Truncated: omitted > 0, Omitted: omitted, Exit: -1}
	}
	kill := func() {
		sess.Signal(ssh.SIGKILL)
		select {
		case <-done:
		case <-time.After(killGrace):
		}
		sess.Close()
	}
	select {
	case err := <-done:
		r := result()
		var ee *ssh.ExitError
		var missing *ssh.ExitMissingError
		switch {
		case err == nil:
			r.Exit = 0
		case errors.As(err, &ee):
			if ee.Signal() == "" {
				r.Exit = ee.ExitStatus()
			}
		case errors.As(err, &missing):
		default:
			return r, apperr.Wrap(apperr.Unavailable, err, "The SSH connection ended while the command ran.")
		}
		return r, nil
	case <-timer:
		kill()
		r := result()
		r.TimedOut = true
		return r, nil
	case <-out.flooded:
		kill()
		r := result()
		r.Flooded = true
		return r, nil
	case <-ctx.Done():
		kill()
		return result(), ctx.Err()
	}
}

// errNoAnswer is a session's start the server did not answer in time.
var errNoAnswer = errors.New("sshx: the server did not answer")

// setup runs fn, the start of a session (opening it, asking for a PTY, a
// command or a subsystem), each step of which waits for the server's
// answer, which a server need never send. So ctx's end, or timeout (0:
// none), closes the connection, which is of no use any more: fn then
// fails, and setup returns ctx's error or one saying the server did not
// answer.
func (c *Client) setup(ctx context.Context, timeout time.Duration, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		sctx, cancel = context.WithTimeoutCause(ctx, timeout, errNoAnswer)
		defer cancel()
	}
	stop := context.AfterFunc(sctx, func() { c.ssh.Close() })
	err := fn()
	if !stop() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return apperr.Wrap(apperr.Unavailable, errNoAnswer, "The SSH server did not start the command within %s; the connection was closed.", timeout)
	}
	return err
}

// capped keeps the first max bytes written to it and counts the rest.
// stdout and stderr are copied into it from two goroutines.
// Past stopAfter bytes in all it closes flooded, once.
type capped struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	max       int
	omitted   int64
	stopAfter int64
	flooded   chan struct{}
}

func (w *capped) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	keep := len(p)
	if w.max > 0 {
		keep = min(keep, max(w.max-w.buf.Len(), 0))
	}
	w.buf.Write(p[:keep])
	w.omitted += int64(len(p) - keep)
	if w.stopAfter > 0 && int64(w.buf.Len())+w.omitted > w.stopAfter {
		w.stopAfter = 0
		close(w.flooded)
	}
	return len(p), nil
}

func (w *capped) result() ([]byte, int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return bytes.Clone(w.buf.Bytes()), w.omitted
}

// SFTP is an SFTP session: the sftp client, and ReadDirMax, a directory
// read whose size the server does not decide.
type SFTP struct {
	*sftp.Client
	sess  *ssh.Session
	meter *meter
	mu    sync.Mutex // one ReadDirMax at a time: the meter is the session's
}

// SFTP opens an SFTP session on the connection.
func (c *Client) SFTP() (*SFTP, error) {
	fail := func(err error) (*SFTP, error) {
		return nil, apperr.Wrap(apperr.Unavailable, err, "The host does not offer SFTP, which LLeMbas uses to read and write files.")
	}
	sess, err := c.ssh.NewSession()
	if err != nil {
		return fail(err)
	}
	w, err := sess.StdinPipe()
	if err != nil {
		sess.Close()
		return fail(err)
	}
	r, err := sess.StdoutPipe()
	if err != nil {
		sess.Close()
		return fail(err)
	}
	if err := sess.RequestSubsystem("sftp"); err != nil {
		sess.Close()
		return fail(err)
	}
	m := &meter{r: r}
	fs, err := sftp.NewClientPipe(m, w)
	if err != nil {
		sess.Close()
		return fail(err)
	}
	return &SFTP{Client: fs, sess: sess, meter: m}, nil
}

// Close ends the SFTP session without waiting for the server: sftp's own
// Close waits until the server closes the channel, which a server need
// never do, and that held a file call (and its reply) for ever. The wait
// goes on in the background until the server closes the channel or the
// connection is closed, which every caller does next.
func (s *SFTP) Close() error {
	err := s.sess.Close()
	go s.Client.Close()
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return err
}

// errListTooLong ends a directory read that passed its byte budget.
var errListTooLong = errors.New("sshx: directory listing too long")

// ReadDirMax reads directory p, at most max entries (in the server's
// order), and reports whether it holds more. sftp's ReadDir keeps
// everything the server sends: a directory of a million files, or a
// server that never ends one, would fill the memory. This one stops
// asking once the server has sent about max entries' worth of bytes.
func (s *SFTP) ReadDirMax(ctx context.Context, p string, max int) ([]os.FileInfo, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// About 512 bytes an entry (a long name, its "ls -l" line and
	// attributes), and one packet more.
	s.meter.arm(int64(max)*512+256<<10, func() { cancel(errListTooLong) })
	defer s.meter.disarm()
	infos, err := s.Client.ReadDirContext(ctx, p)
	more := false
	if errors.Is(context.Cause(ctx), errListTooLong) {
		err, more = nil, true
	}
	if len(infos) > max {
		infos, more = infos[:max], true
	}
	return infos, more, err
}

// meter counts the bytes an SFTP client reads, and calls over once
// when, while armed, they pass a limit.
type meter struct {
	r     io.Reader
	mu    sync.Mutex
	n     int64
	limit int64 // 0: disarmed
	over  func()
}

func (m *meter) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	m.mu.Lock()
	var over func()
	if m.limit > 0 {
		m.n += int64(n)
		if m.n > m.limit {
			over, m.over, m.limit = m.over, nil, 0
		}
	}
	m.mu.Unlock()
	if over != nil {
		over()
	}
	return n, err
}

func (m *meter) arm(limit int64, over func()) {
	m.mu.Lock()
	m.n, m.limit, m.over = 0, limit, over
	m.mu.Unlock()
}

func (m *meter) disarm() {
	m.mu.Lock()
	m.limit, m.over = 0, nil
	m.mu.Unlock()
}

// Shell is an interactive shell on a PTY.
type Shell struct {
	Stdin  io.WriteCloser
	Stdout io.Reader // stdout and stderr (a PTY has one stream)

	sess *ssh.Session
}

// Shell starts command (the login shell when "") on a PTY of cols × rows
// with TERM=xterm-256color. ctx bounds the setup only (a server that does
// not answer it in time has its connection closed); Stdout must be read,
// or the connection's flow control stalls the shell.
func (c *Client) Shell(ctx context.Context, command string, cols, rows int) (*Shell, error) {
	var sh *Shell
	err := c.setup(ctx, 0, func() error {
		sess, err := c.ssh.NewSession()
		if err != nil {
			return apperr.Wrap(apperr.Unavailable, err, "The SSH connection refused a new session.")
		}
		fail := func(err error, msg string) error {
			sess.Close()
			return apperr.Wrap(apperr.Unavailable, err, "%s", msg)
		}
		modes := ssh.TerminalModes{ssh.ECHO: 1, ssh.TTY_OP_ISPEED: 38400, ssh.TTY_OP_OSPEED: 38400}
		if err := sess.RequestPty("xterm-256color", rows, cols, modes); err != nil {
			return fail(err, "The SSH server refused a terminal (PTY).")
		}
		stdin, err := sess.StdinPipe()
		if err != nil {
			return fail(err, "The shell's input could not be opened.")
		}
		stdout, err := sess.StdoutPipe()
		if err != nil {
			return fail(err, "The shell's output could not be opened.")
		}
		if command == "" {
			err = sess.Shell()
		} else {
			err = sess.Start(command)
		}
		if err != nil {
			return fail(err, "The SSH server would not start the shell.")
		}
		sh = &Shell{Stdin: stdin, Stdout: stdout, sess: sess}
		return nil
	})
	if err != nil {
		if sh != nil {
			sh.Close()
		}
		return nil, err
	}
	return sh, nil
}

// Resize tells the PTY its new size.
func (s *Shell) Resize(cols, rows int) error { return s.sess.WindowChange(rows, cols) }

// Wait waits for the shell to end.
func (s *Shell) Wait() error { return s.sess.Wait() }

// Close ends the shell.
func (s *Shell) Close() error { return s.sess.Close() }

// GenerateKey makes a new ed25519 key: the private key in OpenSSH PEM
// form and its authorized_keys line (comment "lembas").
func GenerateKey() (private []byte, authorized string, err error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, "", err
	}
	block, err := ssh.MarshalPrivateKey(priv, "lembas")
	if err != nil {
		return nil, "", err
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		return nil, "", err
	}
	return pem.EncodeToMemory(block), authorizedLine(sp) + " lembas", nil
}

func authorizedLine(k ssh.PublicKey) string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))
}

// PublicKey parses a private key (an import) and returns its
// authorized_keys line; a key with a passphrase is refused with a message
// saying so.
func PublicKey(private []byte) (string, error) {
	signer, err := parsePrivate(private)
	if err != nil {
		return "", err
	}
	return authorizedLine(signer.PublicKey()), nil
}

// Fingerprint returns the SHA256 fingerprint of an authorized_keys line.
func Fingerprint(authorized string) (string, error) {
	k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(authorized))
	if err != nil {
		return "", apperr.Wrap(apperr.Invalid, err, "This is not a public key line (like \"ssh-ed25519 AAAA…\").")
	}
	return ssh.FingerprintSHA256(k), nil
}

// Quote quotes s as one word for a POSIX shell: single quotes, each ' in
// s written as '\”.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
