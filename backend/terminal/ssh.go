package terminal

import (
	"context"

	"github.com/llembas/lembas/backend/sshx"
)

// SSH is the Conn of an SSH connection; closing it closes the connection.
func SSH(c *sshx.Client) Conn { return sshConn{c} }

type sshConn struct{ c *sshx.Client }

func (s sshConn) Shell(ctx context.Context, command string, cols, rows int) (PTY, error) {
	sh, err := s.c.Shell(ctx, command, cols, rows)
	if err != nil {
		return nil, err
	}
	return sshPTY{sh}, nil
}

func (s sshConn) Close() error { return s.c.Close() }

type sshPTY struct{ s *sshx.Shell }

func (p sshPTY) Read(b []byte) (int, error)  { return p.s.Stdout.Read(b) }
func (p sshPTY) Write(b []byte) (int, error) { return p.s.Stdin.Write(b) }
func (p sshPTY) Resize(cols, rows int) error { return p.s.Resize(cols, rows) }
func (p sshPTY) Close() error                { return p.s.Close() }
