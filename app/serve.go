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
	// Until accounts exist every browser acts as the owner, so nothing but
	// this machine may connect.
	if !addr.Loopback() {
		return &exitError{code: 2, err: fmt.Errorf("--addr %s: serving beyond this machine needs accounts, which this version does not have yet; use 127.0.0.1 or localhost", cfg.Addr)}
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
		// No WriteTimeout: it would cut long event streams. The SSE writer
		// sets a deadline per write instead.
		MaxHeaderBytes: 64 << 10,
	}
	fmt.Fprintf(c.stdout, "LLeMbas %s is serving at http://%s/ (data in %s)\n", version, ln.Addr(), cfg.DataDir)
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
