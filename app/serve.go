package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/llembas/lembas/backend/config"
	"github.com/llembas/lembas/backend/core"
)

// shutdownGrace is how long running requests get to finish on shutdown.
const shutdownGrace = 10 * time.Second

func (c *cli) runServe(ctx context.Context, cfg config.Config) error {
	addr, err := config.SplitAddr(cfg.Addr)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	log := c.logger(cfg)
	opt := coreOptions(core.Serve, log)
	opt.SelfPort = addr.Port
	cr, err := openCore(ctx, cfg, opt)
	if err != nil {
		return err
	}
	defer cr.Close()
	h, err := cr.Handler(false)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("listen on %s: %w", cfg.Addr, err)}
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		// No WriteTimeout: it would cut long event streams and downloads.
		// The handler gives every write a deadline of its own instead
		// (httpapi's stallWriter), which cuts only a reader that stalls.
		MaxHeaderBytes: 64 << 10,
	}
	fmt.Fprintf(c.stdout, "LLeMbas %s is serving at http://%s/ (data in %s)\n", version, ln.Addr(), cfg.DataDir)
	if need, err := cr.Accounts.NeedsFirstUser(ctx); err == nil && need {
		fmt.Fprintln(c.stdout, "No administrator can sign in yet: the first account created in the browser becomes the administrator (or run `lembas create-admin`).")
	}
	if !addr.Loopback() && len(cfg.TrustedProxies) == 0 {
		fmt.Fprintln(c.stdout, "Listening beyond this machine over plain HTTP: passwords cross the network unencrypted. Put a TLS reverse proxy in front (README: \"Running it on a home server\").")
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	// Event streams never end by themselves and Shutdown waits for every
	// active connection, so end them first; browsers reconnect later.
	cr.StopStreams()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	srv.Close()
	log.Info("stopped")
	return nil
}
