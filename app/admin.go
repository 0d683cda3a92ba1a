package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/config"
	"github.com/llembas/lembas/backend/core"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

func (c *cli) createAdminCmd() *cobra.Command {
	var username string
	var fromStdin bool
	cmd := &cobra.Command{
		Use:   "create-admin",
		Short: "Create an administrator, or make an existing user one, with a new password",
		Long: `Create an administrator who can sign in to the household server, or make an
existing user (any letter case) an active administrator with a new password;
that user's sessions end. Run it on the instance's data directory; it works
beside a running server.

Interactive on a terminal: it asks for the username (suggesting the desktop
owner's, whose chats then come along) and the password twice. In scripts,
give --username and pipe the password with --password-stdin.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := c.config(cmd)
			if err != nil {
				return err
			}
			return c.createAdmin(cmd.Context(), cfg, username, fromStdin)
		},
	}
	cmd.Flags().StringVar(&username, "username", "", "the administrator's username (asked for when omitted on a terminal)")
	cmd.Flags().BoolVar(&fromStdin, "password-stdin", false, "read the password from the first line of standard input")
	return cmd
}

func (c *cli) input() io.Reader {
	if c.stdin != nil {
		return c.stdin
	}
	return os.Stdin
}

func (c *cli) createAdmin(ctx context.Context, cfg config.Config, username string, fromStdin bool) error {
	db, release, err := c.openForAdmin(ctx, cfg)
	if err != nil {
		return err
	}
	defer release()

	in := bufio.NewReader(c.input())
	interactive := !fromStdin && isTerminal(c.input())
	if username == "" {
		if !interactive {
			return &exitError{code: 2, err: errors.New("give --username (and --password-stdin) when not on a terminal")}
		}
		suggest := suggestedAdmin(ctx, db)
		fmt.Fprintf(c.stdout, "Username [%s]: ", suggest)
		line, err := in.ReadString('\n')
		if err != nil && line == "" {
			return &exitError{code: 1, err: errors.New("no username given")}
		}
		if username = strings.TrimSpace(line); username == "" {
			username = suggest
		}
	}
	var password string
	switch {
	case fromStdin:
		line, err := in.ReadString('\n')
		if err != nil && line == "" {
			return &exitError{code: 1, err: errors.New("no password on standard input")}
		}
		password = strings.TrimRight(line, "\r\n")
	case interactive:
		p1, err := readSecret(c.input(), in, c.stdout, "Password: ")
		if err != nil {
			return err
		}
		p2, err := readSecret(c.input(), in, c.stdout, "Password again: ")
		if err != nil {
			return err
		}
		if p1 != p2 {
			return &exitError{code: 1, err: errors.New("the two passwords differ; nothing was changed")}
		}
		password = p1
	default:
		return &exitError{code: 2, err: errors.New("not on a terminal: pipe the password with --password-stdin")}
	}

	accounts := auth.NewAccounts(db, auth.NewSessions(db, auth.SessionOptions{}), auth.AccountOptions{})
	u, created, err := accounts.EnsureAdmin(ctx, username, password)
	if err != nil {
		if k := apperr.KindOf(err); k == apperr.Invalid || k == apperr.Conflict {
			_, msg := apperr.Public(err)
			return &exitError{code: 1, err: errors.New(msg)}
		}
		return err
	}
	if created {
		fmt.Fprintf(c.stdout, "Created the administrator %s.\n", u.Username)
	} else {
		fmt.Fprintf(c.stdout, "%s is now an active administrator with the new password; their sessions were ended.\n", u.Username)
	}
	return nil
}

// openForAdmin opens the instance's database for create-admin. With no
// process running it opens the instance properly (lock, schema sync, owner),
// so a fresh directory works too; beside a running app or server, whose
// lock it cannot take, it opens the database directly: that process has
// already brought the schema up to date.
func (c *cli) openForAdmin(ctx context.Context, cfg config.Config) (*store.DB, func(), error) {
	cr, err := core.Open(ctx, cfg, coreOptions(core.Serve, c.logger(cfg)))
	if err == nil {
		return cr.DB, func() { cr.Close() }, nil
	}
	if !errors.Is(err, store.ErrLocked) {
		if store.IsManual(err) {
			return nil, nil, &exitError{code: 1, err: err}
		}
		return nil, nil, err
	}
	db, err := store.Open(ctx, cfg.DBPath())
	if err != nil {
		return nil, nil, err
	}
	return db, func() { db.Close() }, nil
}

// suggestedAdmin is the desktop owner's username when the owner has no
// password yet (giving them one shares the desktop's chats with its owner on
// other devices), else "admin".
func suggestedAdmin(ctx context.Context, db *store.DB) string {
	users, _, err := db.ListUsers(ctx, store.UserFilter{Limit: 500})
	if err != nil {
		return "admin"
	}
	for _, u := range users {
		if u.IsOwner {
			if h, err := db.PasswordHash(ctx, ids.UserID(u.ID)); err == nil && h == "" {
				return u.Username
			}
		}
	}
	return "admin"
}
