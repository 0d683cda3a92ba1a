// Package sshx is LLeMbas's SSH client: every connection configured
// explicitly (no SSH agent, nothing read from ~/.ssh or ssh_config, no
// ProxyCommand: every LLeMbas user shares one unix account), host keys
// pinned per host and port, commands each in a fresh session with a
// working directory, output cap and time limit, files over SFTP (a path is
// a path, never spliced into a command), and interactive shells on a PTY
// for the terminal panel.
package sshx

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

var errTodo = errors.New("sshx: not built yet")

// Target is where to connect.
type Target struct {
	Host string
	Port int
	User string
}

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
func ClientConfig(t Target, auth Auth, pinned string) (*ssh.ClientConfig, error) {
	return nil, errTodo
}

// CaptureHostKey connects to t, completes the key exchange, records the
// server's host key and stops before any authentication: no user name or
// credential is sent.
func CaptureHostKey(ctx context.Context, t Target) (HostKey, error) {
	return HostKey{}, errTodo
}

// Client is one SSH connection.
type Client struct {
	ssh *ssh.Client
}

// Dial connects to t with auth, checking the host key against pinned.
// ctx bounds the connection's setup only.
func Dial(ctx context.Context, t Target, auth Auth, pinned string) (*Client, error) {
	return nil, errTodo
}

// Close closes the connection (and every session on it).
func (c *Client) Close() error { return errTodo }

// RunOptions bound one command.
type RunOptions struct {
	// Dir is the working directory ("" is the login directory). It is
	// quoted for the remote shell by Run, never spliced by the caller.
	Dir string
	// Timeout ends the command (0: no limit beyond ctx).
	Timeout time.Duration
	// MaxOutput caps the output kept (stdout and stderr interleaved as
	// they arrive); the rest is counted, not kept.
	MaxOutput int
}

// RunResult is how a command ended.
type RunResult struct {
	Output    []byte
	Truncated bool // output passed MaxOutput
	Exit      int  // exit status; -1 when killed by a signal or cut off
	TimedOut  bool
}

// Run runs command in a fresh session (each command is a fresh shell:
// nothing carries over from the one before).
func (c *Client) Run(ctx context.Context, command string, opt RunOptions) (RunResult, error) {
	return RunResult{}, errTodo
}

// SFTP opens an SFTP session on the connection.
func (c *Client) SFTP() (*sftp.Client, error) { return nil, errTodo }

// Shell is an interactive shell on a PTY.
type Shell struct {
	Stdin  io.WriteCloser
	Stdout io.Reader // stdout and stderr (a PTY has one stream)
}

// Shell starts command (the login shell when "") on a PTY of cols × rows
// with TERM=xterm-256color.
func (c *Client) Shell(ctx context.Context, command string, cols, rows int) (*Shell, error) {
	return nil, errTodo
}

// Resize tells the PTY its new size.
func (s *Shell) Resize(cols, rows int) error { return errTodo }

// Wait waits for the shell to end.
func (s *Shell) Wait() error { return errTodo }

// Close ends the shell.
func (s *Shell) Close() error { return errTodo }

// GenerateKey makes a new ed25519 key: the private key in OpenSSH PEM
// form and its authorized_keys line (comment "lembas").
func GenerateKey() (private []byte, authorized string, err error) {
	return nil, "", errTodo
}

// PublicKey parses a private key (an import) and returns its
// authorized_keys line; a key with a passphrase is refused with a message
// saying so.
func PublicKey(private []byte) (string, error) { return "", errTodo }

// Fingerprint returns the SHA256 fingerprint of an authorized_keys line.
func Fingerprint(authorized string) (string, error) { return "", errTodo }

// Quote quotes s as one word for a POSIX shell.
func Quote(s string) string { return "" }
