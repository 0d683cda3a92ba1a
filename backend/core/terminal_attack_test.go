package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/config"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/frontend"
)

// quickTermWorld is newTermWorld with a short heartbeat, at which an open
// socket checks its caller again; member is B's id, group the group that
// gives B agent.use, bToken B's session token.
func quickTermWorld(t *testing.T, tune ...func(*config.Config)) (w *termWorld, member ids.UserID, group int64, bToken string) {
	t.Helper()
	cfg := testConfig(t, false)
	for _, f := range tune {
		f(&cfg)
	}
	c, err := Open(context.Background(), cfg, Options{Mode: Serve, Version: "test", Files: frontend.FS(),
		Log: slog.New(slog.DiscardHandler), TerminalDialer: echoDialer{}, Heartbeat: 100 * time.Millisecond,
		Password: auth.Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	h, err := c.Handler(false)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	w = &termWorld{c: c, srv: srv, ownerCk: ownerCookie(t, c)}
	ctx := context.Background()
	b, err := c.Accounts.Create(ctx, auth.SignUpRequest{Username: "bee", Password: "a-long-enough-password"}, false)
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.DB.CreateGroup(ctx, "agents", []string{string(auth.AgentUse)})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.DB.SetGroupMembers(ctx, g.ID, []ids.UserID{ids.UserID(b.ID)}); err != nil {
		t.Fatal(err)
	}
	bToken, _, err = c.Sessions.Create(ctx, ids.UserID(b.ID), auth.Client{})
	if err != nil {
		t.Fatal(err)
	}
	w.bCk = &http.Cookie{Name: w.ownerCk.Name, Value: bToken}
	w.chat = mkAgentChat(t, c, ids.UserID(b.ID))
	return w, ids.UserID(b.ID), g.ID, bToken
}

// waitEnded reads conn until the server ends it (a "closed" frame or the
// close itself), failing after a generous deadline.
func waitEnded(t *testing.T, conn *websocket.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		_, _, err := conn.Read(ctx)
		if err == nil {
			continue
		}
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			t.Fatal("the socket is still open")
		}
		return
	}
}

// An open terminal is checked again while it stays open: a person who
// loses agent.use, is signed out or disabled, loses the shell's socket
// too — not only the next one they would open.
func TestTerminalSocketEndsWhenTheCallerMayNoLonger(t *testing.T) {
	for _, tc := range []struct {
		name   string
		revoke func(t *testing.T, w *termWorld, member ids.UserID, group int64, token string)
	}{
		{"agent.use taken away", func(t *testing.T, w *termWorld, member ids.UserID, group int64, token string) {
			if err := w.c.DB.SetGroupMembers(context.Background(), group, nil); err != nil {
				t.Fatal(err)
			}
		}},
		{"session revoked", func(t *testing.T, w *termWorld, member ids.UserID, group int64, token string) {
			if err := w.c.Sessions.Revoke(context.Background(), token); err != nil {
				t.Fatal(err)
			}
		}},
		{"account disabled", func(t *testing.T, w *termWorld, member ids.UserID, group int64, token string) {
			if err := w.c.DB.SetStatus(context.Background(), member, "disabled"); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, member, group, token := quickTermWorld(t)
			conn, _, err := w.dial(t, w.chat, w.srv.URL, w.bCk)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.CloseNow()
			readText(t, conn, "ready")
			// Several heartbeats pass with the socket open and allowed.
			time.Sleep(500 * time.Millisecond)
			if err := conn.Write(context.Background(), websocket.MessageBinary, []byte("still\r")); err != nil {
				t.Fatal(err)
			}
			readBytes(t, conn, "still\r")
			tc.revoke(t, w, member, group, token)
			waitEnded(t, conn)
		})
	}
}

// Sockets that close leave nothing running: after twenty opened and
// closed (some by the page, some ended by the server), the goroutines
// are back to what one shell needs.
func TestTerminalSocketsLeaveNoGoroutines(t *testing.T) {
	w, _, _, _ := quickTermWorld(t)
	open := func() *websocket.Conn {
		conn, _, err := w.dial(t, w.chat, w.srv.URL, w.bCk)
		if err != nil {
			t.Fatal(err)
		}
		readText(t, conn, "ready")
		return conn
	}
	settle := func(limit int) int {
		deadline := time.Now().Add(30 * time.Second)
		n := runtime.NumGoroutine()
		for n > limit && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			n = runtime.NumGoroutine()
		}
		return n
	}
	open().Close(websocket.StatusNormalClosure, "")
	time.Sleep(200 * time.Millisecond)
	base := runtime.NumGoroutine()
	for i := range 20 {
		c := open()
		if i%2 == 0 {
			c.Close(websocket.StatusNormalClosure, "")
		} else {
			c.CloseNow()
		}
	}
	if n := settle(base); n > base {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines, %d before the sockets:\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
}

// Behind a reverse proxy the page's Origin is https: the socket opens when
// the proxy is trusted and says so (X-Forwarded-Proto), never because the
// request itself claims it; an Origin of "null" (a sandboxed frame, a
// file) or with a user name is refused.
func TestTerminalSocketOriginBehindAProxy(t *testing.T) {
	dial := func(w *termWorld, origin, proto string) int {
		h := http.Header{}
		h.Set("Origin", origin)
		h.Set("Cookie", w.bCk.String())
		if proto != "" {
			h.Set("X-Forwarded-Proto", proto)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		u := strings.Replace(w.srv.URL, "http://", "ws://", 1) + fmt.Sprintf("/api/terminal/%d", w.chat)
		conn, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: h})
		if err == nil {
			conn.CloseNow()
			return http.StatusSwitchingProtocols
		}
		if resp == nil {
			t.Fatal(err)
		}
		return resp.StatusCode
	}
	direct, _, _, _ := quickTermWorld(t)
	https := strings.Replace(direct.srv.URL, "http:", "https:", 1)
	for _, tc := range []struct {
		name, origin, proto string
		want                int
	}{
		{"null", "null", "", http.StatusForbidden},
		{"with a user name", strings.Replace(direct.srv.URL, "http://", "http://me@", 1), "", http.StatusForbidden},
		{"https claimed by an untrusted peer", https, "https", http.StatusForbidden},
		{"its own", direct.srv.URL, "", http.StatusSwitchingProtocols},
	} {
		if got := dial(direct, tc.origin, tc.proto); got != tc.want {
			t.Errorf("direct, %s: %d, want %d", tc.name, got, tc.want)
		}
	}
	proxied, _, _, _ := quickTermWorld(t, func(c *config.Config) {
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	})
	https = strings.Replace(proxied.srv.URL, "http:", "https:", 1)
	for _, tc := range []struct {
		name, origin, proto string
		want                int
	}{
		{"https, said by the proxy", https, "https", http.StatusSwitchingProtocols},
		{"http, the proxy saying https", proxied.srv.URL, "https", http.StatusForbidden},
		{"https, the proxy saying nothing", https, "", http.StatusForbidden},
	} {
		if got := dial(proxied, tc.origin, tc.proto); got != tc.want {
			t.Errorf("proxied, %s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// A shell left running behind a closed panel is ended by the reaper once
// its person loses agent.use, not only after the idle time.
func TestReaperEndsShellsOfThoseWithoutAgentUse(t *testing.T) {
	w, _, group, _ := quickTermWorld(t)
	conn, _, err := w.dial(t, w.chat, w.srv.URL, w.bCk)
	if err != nil {
		t.Fatal(err)
	}
	readText(t, conn, "ready")
	conn.Close(websocket.StatusNormalClosure, "")
	ctx := context.Background()
	if w.c.Terminal.Reap(ctx); !w.c.Terminal.Running(w.chat) {
		t.Fatal("the reaper ended a shell its person may keep")
	}
	if err := w.c.DB.SetGroupMembers(ctx, group, nil); err != nil {
		t.Fatal(err)
	}
	w.c.Terminal.Reap(ctx)
	if w.c.Terminal.Running(w.chat) {
		t.Error("the shell of someone without agent.use still runs after the reaper")
	}
}
