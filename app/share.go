package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/core"
	"github.com/llembas/lembas/backend/ids"
)

// sharePref is the owner's preference that sharing was on, so that it comes
// back on at the next start.
const sharePref = "sharing"

// sharer is "Share on this network": the desktop app serving the household
// server on the LAN from its own process (it already holds the lock), with
// sign-in like `lembas --serve`. The owner signs in from other devices with
// their username and a password chosen the first time.
type sharer struct {
	log  *slog.Logger
	addr string // listen address, e.g. 0.0.0.0:8484

	mu  sync.Mutex
	cr  *core.Core
	srv *http.Server
	ln  net.Listener
	// onChange is told after every start and stop (the tray's checkbox).
	onChange func(on bool)
}

// newSharer returns a sharer listening on all interfaces at the port of
// cfgAddr (LEMBAS_ADDR's port, 8484 by default) once started.
func newSharer(log *slog.Logger, cfgAddr string) *sharer {
	port := "8484"
	if _, p, err := net.SplitHostPort(cfgAddr); err == nil && p != "" && p != "0" {
		port = p
	}
	return &sharer{log: log, addr: net.JoinHostPort("0.0.0.0", port)}
}

var _ api.Sharer = (*sharer)(nil)

// attach gives the sharer its instance (after core.Open, which needs the
// sharer first to hand it to the facades).
func (s *sharer) attach(cr *core.Core) {
	s.mu.Lock()
	s.cr = cr
	s.mu.Unlock()
}

func (s *sharer) needsPassword(ctx context.Context) bool {
	h, err := s.cr.DB.PasswordHash(ctx, ids.UserID(s.cr.Owner.ID))
	return err != nil || h == ""
}

// Status reports whether the app is shared and where.
func (s *sharer) Status(ctx context.Context) api.ShareStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status(ctx)
}

func (s *sharer) status(ctx context.Context) api.ShareStatus {
	st := api.ShareStatus{Available: s.cr != nil, Addresses: []string{}}
	if s.cr == nil {
		st.Reason = "The app is still starting."
		return st
	}
	st.NeedsPassword = s.needsPassword(ctx)
	if s.ln != nil {
		st.On = true
		st.Addresses = lanURLs(s.ln.Addr())
	}
	return st
}

// Start listens on the LAN. It refuses while the owner has no password:
// nobody could sign in, and nobody must get in without one.
func (s *sharer) Start(ctx context.Context) (api.ShareStatus, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cr == nil {
		return s.status(ctx), apperr.New(apperr.Unavailable, "The app is still starting; try again in a moment.")
	}
	if s.ln != nil {
		return s.status(ctx), nil
	}
	if s.needsPassword(ctx) {
		return s.status(ctx), apperr.New(apperr.Invalid, "Choose a password for signing in from other devices first.")
	}
	h, err := s.cr.Handler(false, machineNames()...)
	if err != nil {
		return s.status(ctx), err
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return s.status(ctx), apperr.New(apperr.Unavailable, "Port %s is in use by another program; set LEMBAS_ADDR to another port and restart.", portOf(s.addr))
		}
		return s.status(ctx), apperr.Wrap(apperr.Unavailable, err, "Could not listen on %s.", s.addr)
	}
	s.ln = ln
	s.srv = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	srv := s.srv
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("sharing stopped", "err", err)
		}
	}()
	s.cr.DB.SetPref(ctx, s.cr.Owner.ID, sharePref, "on")
	s.log.Info("sharing on the local network", "addr", ln.Addr().String())
	if s.onChange != nil {
		go s.onChange(true)
	}
	return s.status(ctx), nil
}

// Stop closes the listener. Open event streams end; browsers reconnect
// once sharing is back.
func (s *sharer) Stop(ctx context.Context) (api.ShareStatus, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked(ctx)
	if s.cr != nil {
		s.cr.DB.SetPref(ctx, s.cr.Owner.ID, sharePref, "off")
	}
	if s.onChange != nil {
		go s.onChange(false)
	}
	return s.status(ctx), nil
}

func (s *sharer) stopLocked(ctx context.Context) {
	if s.srv == nil {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(sctx); err != nil {
		s.srv.Close() // event streams never end by themselves
	}
	s.srv, s.ln = nil, nil
	s.log.Info("sharing stopped")
}

// close stops sharing at exit without changing the preference.
func (s *sharer) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked(context.Background())
}

// resume turns sharing back on at start when it was on when the app last
// ran. A failure (the port taken) is logged; the owner sees it in Settings.
func (s *sharer) resume(ctx context.Context) {
	prefs, err := s.cr.DB.Prefs(ctx, s.cr.Owner.ID)
	if err != nil || prefs[sharePref] != "on" {
		return
	}
	if _, err := s.Start(ctx); err != nil {
		s.log.Warn("could not share on the local network again", "err", err)
	}
}

func portOf(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// machineNames are the names other devices may use for this machine: its
// host name and the mDNS .local name. The Host allowlist accepts them.
func machineNames() []string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return nil
	}
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if strings.HasSuffix(h, ".local") {
		return []string{h}
	}
	return []string{h, h + ".local"}
}

// lanURLs lists URLs for the listener: one per non-loopback address of an
// interface that is up (IPv4 first), then the machine's .local name.
func lanURLs(a net.Addr) []string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return []string{"http://" + a.String() + "/"}
	}
	port := strconv.Itoa(tcp.Port)
	var v4, v6 []string
	ifaces, _ := net.Interfaces()
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, ad := range addrs {
			ipn, ok := ad.(*net.IPNet)
			if !ok || !ipn.IP.IsGlobalUnicast() {
				continue
			}
			if ip4 := ipn.IP.To4(); ip4 != nil {
				v4 = append(v4, fmt.Sprintf("http://%s:%s/", ip4, port))
			} else {
				v6 = append(v6, fmt.Sprintf("http://[%s]:%s/", ipn.IP, port))
			}
		}
	}
	sort.Strings(v4)
	sort.Strings(v6)
	out := append(v4, v6...)
	if names := machineNames(); len(names) > 0 {
		out = append(out, "http://"+names[len(names)-1]+":"+port+"/")
	}
	if len(out) == 0 {
		out = []string{"http://" + net.JoinHostPort(tcp.IP.String(), port) + "/"}
	}
	return out
}
