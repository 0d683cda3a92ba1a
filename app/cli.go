package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/llembas/lembas/backend/config"
	"github.com/llembas/lembas/backend/core"
	"github.com/llembas/lembas/backend/secrets"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/frontend"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

// cli is the command line: it parses, then hands a validated config to one
// of the run functions. Tests build it with their own output and environment.
type cli struct {
	stdout, stderr io.Writer
	stdin          io.Reader // nil: os.Stdin
	getenv         func(string) (string, bool)
}

func newCLI(stdout, stderr io.Writer, getenv func(string) (string, bool)) *cli {
	return &cli{stdout: stdout, stderr: stderr, getenv: getenv}
}

func (c *cli) run(ctx context.Context, args []string) int {
	root := c.root()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(c.stderr, "lembas:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(c.stderr, "lembas:", err)
	return 1
}

func (c *cli) config(cmd *cobra.Command) (config.Config, error) {
	cfg, err := config.Load(c.getenv)
	if err != nil {
		return cfg, &exitError{code: 2, err: err}
	}
	if f := cmd.Flags().Lookup("addr"); f != nil && f.Changed {
		cfg.Addr = f.Value.String()
	}
	if f := cmd.Flags().Lookup("data-dir"); f != nil && f.Changed {
		cfg.DataDir = f.Value.String()
	}
	if err := cfg.Validate(); err != nil {
		return cfg, &exitError{code: 2, err: err}
	}
	return cfg, nil
}

func (c *cli) logger(cfg config.Config) *slog.Logger {
	var lvl slog.Level
	lvl.UnmarshalText([]byte(cfg.LogLevel))
	return slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: lvl}))
}

func (c *cli) root() *cobra.Command {
	var serve, quick bool
	root := &cobra.Command{
		Use:   "lembas",
		Short: "LLeMbas: a chat client for OpenAI-compatible LLM endpoints",
		Long: `LLeMbas is a chat client for OpenAI-compatible LLM endpoints.

With no arguments it opens the desktop app. With --serve it serves the same
app to browsers at --addr (default ` + config.DefaultAddr + `).

Configuration comes from LEMBAS_* environment variables (see README.md):
` + envHelp(),
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := c.config(cmd)
			if err != nil {
				return err
			}
			if serve {
				if quick {
					return &exitError{code: 2, err: errors.New("--quick opens the desktop app's quick chat; it cannot be used with --serve")}
				}
				return c.runServe(cmd.Context(), cfg)
			}
			return c.runDesktop(cmd.Context(), cfg, quick)
		},
	}
	root.Flags().BoolVar(&serve, "serve", false, "serve the app to browsers over HTTP instead of opening a window")
	root.Flags().BoolVar(&quick, "quick", false, "open quick chat: the window small and on top (in the running app, if there is one)")
	root.Flags().String("addr", config.DefaultAddr, "listen address for --serve (LEMBAS_ADDR)")
	root.PersistentFlags().String("data-dir", "", "data directory (LEMBAS_DATA_DIR; default: the OS user data directory)")
	root.AddCommand(c.infoCmd(), c.secretKeyCmd(), c.backupCmd(), c.versionCmd(), c.createAdminCmd())
	return root
}

func envHelp() string {
	var sb strings.Builder
	for _, v := range config.Vars {
		fmt.Fprintf(&sb, "  %-22s %s\n", v.Name, v.Help)
	}
	return sb.String()
}

func (c *cli) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version and build tags",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(c.stdout, "lembas %s (%s)\n", version, strings.Join(buildTags(), ","))
		},
	}
}

func (c *cli) secretKeyCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "secret-key",
		Short: "Print a fresh encryption key for LEMBAS_SECRET_KEY",
		Long: `Print a fresh Fernet key. Set it as LEMBAS_SECRET_KEY to keep API keys
encrypted with it instead of a key in the OS keychain or the data directory.
Keep it safe: without it, stored API keys cannot be read back.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			k, err := secrets.GenerateKey()
			if err != nil {
				return err
			}
			fmt.Fprintln(c.stdout, k)
			return nil
		},
	}
}

func (c *cli) backupCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "backup FILE",
		Short: "Write a consistent snapshot of the database to FILE",
		Long: `Write a consistent snapshot of the database to FILE with SQLite's VACUUM
INTO. It is safe while the app or server is running. FILE must not exist.
The encryption key is not in the snapshot: keep it (or LEMBAS_SECRET_KEY)
too, or stored API keys cannot be read after a restore.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := c.config(cmd)
			if err != nil {
				return err
			}
			if !core.Exists(cfg.DBPath()) {
				return &exitError{code: 1, err: fmt.Errorf("no database at %s", cfg.DBPath())}
			}
			db, err := store.Open(cmd.Context(), cfg.DBPath())
			if err != nil {
				return err
			}
			defer db.Close()
			if err := db.Backup(cmd.Context(), args[0]); err != nil {
				return err
			}
			fi, _ := os.Stat(args[0])
			fmt.Fprintf(c.stdout, "backed up %s to %s (%s)\n", cfg.DBPath(), args[0], humanBytes(fi.Size()))
			return nil
		},
	}
}

func (c *cli) infoCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "info",
		Short: "Show version, paths, database size, row counts and key location",
		Long: `Show the version, build tags, data directory, database path and size, row
counts and where the encryption key lives. It only reads, so it is safe
beside a running app.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := c.config(cmd)
			if err != nil {
				return err
			}
			w := c.stdout
			fmt.Fprintf(w, "version:     %s\n", version)
			fmt.Fprintf(w, "build tags:  %s\n", strings.Join(buildTags(), ","))
			fmt.Fprintf(w, "data dir:    %s\n", cfg.DataDir)
			fmt.Fprintf(w, "database:    %s", cfg.DBPath())
			if !core.Exists(cfg.DBPath()) {
				fmt.Fprintln(w, " (not created yet)")
				return nil
			}
			db, err := store.Open(cmd.Context(), cfg.DBPath())
			if err != nil {
				return err
			}
			defer db.Close()
			fmt.Fprintf(w, " (%s)\n", humanBytes(db.Size()))
			fmt.Fprintf(w, "key:         %s\n", core.Describe(cmd.Context(), db))
			fmt.Fprintf(w, "key check:   %s\n", core.CheckKey(cmd.Context(), cfg, db, nil))
			if counts, err := db.Counts(cmd.Context()); err != nil {
				fmt.Fprintf(w, "rows:        unavailable (%v)\n", err)
			} else {
				fmt.Fprintln(w, "rows:")
				for _, t := range store.Current.Tables {
					fmt.Fprintf(w, "  %-12s %d\n", t.Name, counts[t.Name])
				}
			}
			fmt.Fprintln(w, "config:")
			for _, kv := range cfg.Redacted() {
				fmt.Fprintf(w, "  %-22s %s\n", kv[0], kv[1])
			}
			return nil
		},
	}
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// buildTags reads the tags the binary was built with from its build info.
func buildTags() []string {
	tags := []string{}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch {
			case s.Key == "-tags" && s.Value != "":
				tags = append(tags, strings.Split(s.Value, ",")...)
			case s.Key == "CGO_ENABLED" && s.Value == "0":
				tags = append(tags, "cgo-off")
			}
		}
	}
	return tags
}

func coreOptions(mode core.Mode, log *slog.Logger) core.Options {
	return core.Options{
		Mode:      mode,
		Version:   version,
		BuildTags: buildTags(),
		Files:     frontend.FS(),
		Log:       log,
	}
}

func openCore(ctx context.Context, cfg config.Config, opt core.Options) (*core.Core, error) {
	c, err := core.Open(ctx, cfg, opt)
	if errors.Is(err, store.ErrLocked) {
		return nil, &exitError{code: 1, err: err}
	}
	if store.IsManual(err) {
		return nil, &exitError{code: 1, err: err}
	}
	return c, err
}
