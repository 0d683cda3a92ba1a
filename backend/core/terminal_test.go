package core

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/llembas/lembas/backend/agent"
	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/sshx"
	"github.com/llembas/lembas/backend/sshx/sshtest"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/terminal"
	"github.com/llembas/lembas/frontend"
)

// echoDialer starts shells that print back what is typed (a PTY's echo),
// after the announcement the real command prints first.
type echoDialer struct{}

func (echoDialer) Dial(ctx context.Context, user ids.UserID, chat ids.ChatID) (terminal.Conn, ids.ProfileID, error) {
	return echoConn{}, 1, nil
}

type echoConn struct{}

func (echoConn) Shell(ctx context.Context, command string, cols, rows int) (terminal.PTY, error) {
	pr, pw := io.Pipe()
	go pw.Write([]byte("\x1b]133;L;other\x07$ "))
	return &echoPTY{pr: pr, pw: pw}, nil
}
func (echoConn) Close() error { return nil }

type echoPTY struct {
	pr *io.PipeReader
	pw *io.PipeWriter
}

func (p *echoPTY) Read(b []byte) (int, error)  { return p.pr.Read(b) }
func (p *echoPTY) Write(b []byte) (int, error) { return p.pw.Write(b) }
func (p *echoPTY) Resize(int, int) error       { return nil }
func (p *echoPTY) Close() error                { p.pr.Close(); return p.pw.Close() }

// termWorld is a serving instance whose terminals echo, with an agent chat
// of the owner's and a member, B, who may use agent chats.
type termWorld struct {
	c       *Core
	srv     *httptest.Server
	chat    ids.ChatID
	ownerCk *http.Cookie
	bCk     *http.Cookie
}

func newTermWorld(t testing.TB, readTimeout time.Duration, dialer ...terminal.Dialer) *termWorld {
	t.Helper()
	var d terminal.Dialer = echoDialer{}
	if len(dialer) > 0 {
		d = dialer[0]
	}
	c, err := Open(context.Background(), testConfig(t, false), Options{Mode: Serve, Version: "test", Files: frontend.FS(),
		Log: slog.New(slog.DiscardHandler), TerminalDialer: d, WriteTimeout: readTimeout,
		Password: auth.Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	h, err := c.Handler(false)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	// As app/serve.go: a read timeout the socket must outlive.
	srv.Config.ReadTimeout = readTimeout
	srv.Start()
	t.Cleanup(srv.Close)
	w := &termWorld{c: c, srv: srv, ownerCk: ownerCookie(t, c)}
	w.chat = mkAgentChat(t, c, ids.UserID(c.Owner.ID))

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
	token, _, err := c.Sessions.Create(ctx, ids.UserID(b.ID), auth.Client{})
	if err != nil {
		t.Fatal(err)
	}
	w.bCk = &http.Cookie{Name: w.ownerCk.Name, Value: token}
	return w
}

// mkAgentChat makes an agent chat of user's on a profile of theirs.
func mkAgentChat(t testing.TB, c *Core, user ids.UserID) ids.ChatID {
	t.Helper()
	ctx := context.Background()
	res, err := c.DB.Write().ExecContext(ctx, `INSERT INTO ssh_profiles (user_id, name, host, port, username, auth, secret_enc, public_key, created_at, updated_at)
		VALUES (?, 'box', '127.0.0.1', 22, 'me', 'key', '', '', 0, 0)`, user)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := res.LastInsertId()
	p := ids.ProfileID(id)
	ch, _, err := c.DB.CreateChat(ctx, user, store.NewChat{Title: "agent", Kind: store.ChatAgent,
		Agent: store.AgentChat{Profile: &p, Dir: "/tmp", Mode: store.ModeManual}},
		store.Message{Role: store.RoleUser, Content: "hi", Status: store.StatusFinal})
	if err != nil {
		t.Fatal(err)
	}
	return ch.ID
}

func (w *termWorld) dial(t *testing.T, chat ids.ChatID, origin string, ck *http.Cookie) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	if ck != nil {
		h.Set("Cookie", ck.String())
	}
	u := strings.Replace(w.srv.URL, "http://", "ws://", 1) + fmt.Sprintf("/api/terminal/%d?cols=100&rows=30", chat)
	return websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: h})
}

// readText reads until a text frame of type typ, returning it and the
// terminal bytes before it.
func readText(t *testing.T, conn *websocket.Conn, typ string) (map[string]any, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got strings.Builder
	for {
		mt, b, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("waiting for %q: %v (bytes %q)", typ, err, got.String())
		}
		if mt == websocket.MessageBinary {
			got.Write(b)
			continue
		}
		var m map[string]any
		json.Unmarshal(b, &m)
		if m["type"] == typ {
			return m, got.String()
		}
	}
}

func readBytes(t *testing.T, conn *websocket.Conn, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var got strings.Builder
	for !strings.Contains(got.String(), want) {
		mt, b, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("waiting for %q: %v (got %q)", want, err, got.String())
		}
		if mt == websocket.MessageBinary {
			got.Write(b)
		}
	}
}

func TestTerminalSocketEchoesAndOutlivesTimeouts(t *testing.T) {
	w := newTermWorld(t, time.Second)
	conn, _, err := w.dial(t, w.chat, w.srv.URL, w.ownerCk)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	ready, _ := readText(t, conn, "ready")
	if ready["marks"] != false || ready["cols"] != 100.0 || ready["rows"] != 30.0 {
		t.Errorf("ready %v: want marks false (an unmarked shell), 100×30", ready)
	}
	readBytes(t, conn, "$ ")
	ctx := context.Background()
	if err := conn.Write(ctx, websocket.MessageBinary, []byte("echo hi\r")); err != nil {
		t.Fatal(err)
	}
	readBytes(t, conn, "echo hi\r")
	// Past the server's read timeout and the handler's write timeout, the
	// socket still works: neither deadline stayed on the hijacked
	// connection.
	time.Sleep(2500 * time.Millisecond)
	if err := conn.Write(ctx, websocket.MessageBinary, []byte("later\r")); err != nil {
		t.Fatal(err)
	}
	readBytes(t, conn, "later\r")

	// A second socket shares the shell and starts with its scrollback.
	other, _, err := w.dial(t, w.chat, w.srv.URL, w.ownerCk)
	if err != nil {
		t.Fatal(err)
	}
	defer other.CloseNow()
	readText(t, other, "ready")
	readBytes(t, other, "echo hi\rlater\r")

	// Trashing the chat ends its shell: both are told.
	call := w.c.Dispatcher.Call(ctx, w.c.OwnerCaller(), "Chats.Trash", fmt.Appendf(nil, "[%d]", w.chat))
	if call.Error != nil {
		t.Fatal(call.Error)
	}
	for _, c := range []*websocket.Conn{conn, other} {
		if m, _ := readText(t, c, "closed"); m["reason"] != terminal.ReasonChat {
			t.Errorf("closed %v, want reason chat", m)
		}
	}
	if w.c.Terminal.Running(w.chat) {
		t.Error("the trashed chat's shell still runs")
	}
	// And a trashed chat's terminal does not open.
	if _, resp, err := w.dial(t, w.chat, w.srv.URL, w.ownerCk); err == nil || resp == nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("trashed chat: %v %v, want 404", resp, err)
	}
}

// The socket opens only from this server's own pages, signed in, with
// agent.use, in one's own agent chat.
func TestTerminalSocketRefusals(t *testing.T) {
	w := newTermWorld(t, 0)
	plain := mkPlainChat(t, w.c)
	for _, tc := range []struct {
		name   string
		chat   ids.ChatID
		origin string
		ck     *http.Cookie
		status int
	}{
		{"no Origin", w.chat, "", w.ownerCk, http.StatusForbidden},
		{"a foreign Origin", w.chat, "http://evil.example", w.ownerCk, http.StatusForbidden},
		{"another scheme", w.chat, strings.Replace(w.srv.URL, "http:", "https:", 1), w.ownerCk, http.StatusForbidden},
		{"another port", w.chat, w.srv.URL + "1", w.ownerCk, http.StatusForbidden},
		{"signed out", w.chat, w.srv.URL, nil, http.StatusUnauthorized},
		{"another person's chat", w.chat, w.srv.URL, w.bCk, http.StatusNotFound},
		{"no such chat", w.chat + 1000, w.srv.URL, w.ownerCk, http.StatusNotFound},
		{"a chat that is not an agent chat", plain, w.srv.URL, w.ownerCk, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, resp, err := w.dial(t, tc.chat, tc.origin, tc.ck)
			if err == nil {
				conn.CloseNow()
				t.Fatal("the socket opened")
			}
			if resp == nil || resp.StatusCode != tc.status {
				t.Fatalf("got %v, want %d", resp, tc.status)
			}
		})
	}
	if w.c.Terminal.Running(w.chat) {
		t.Error("a refused socket started a shell")
	}
	// Without agent.use: forbidden, even in one's own agent chat.
	ctx := context.Background()
	u, err := w.c.Accounts.Create(ctx, auth.SignUpRequest{Username: "cee", Password: "a-long-enough-password"}, false)
	if err != nil {
		t.Fatal(err)
	}
	chat := mkAgentChat(t, w.c, ids.UserID(u.ID))
	token, _, _ := w.c.Sessions.Create(ctx, ids.UserID(u.ID), auth.Client{})
	if _, resp, err := w.dial(t, chat, w.srv.URL, &http.Cookie{Name: w.ownerCk.Name, Value: token}); err == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("without agent.use: %v %v, want 403", resp, err)
	}
}

func mkPlainChat(t *testing.T, c *Core) ids.ChatID {
	ch, _, err := c.DB.CreateChat(context.Background(), ids.UserID(c.Owner.ID), store.NewChat{Title: "plain"},
		store.Message{Role: store.RoleUser, Content: "hi", Status: store.StatusFinal})
	if err != nil {
		t.Fatal(err)
	}
	return ch.ID
}

// The desktop window's terminal: calls in, events out, to the owner.
func TestTerminalFacadeOnTheDesktop(t *testing.T) {
	w := newTermWorld(t, 0)
	sub := w.c.Bus.Subscribe(w.c.Owner.ID, 0)
	defer sub.Close()
	ctx := context.Background()
	desk := w.c.OwnerCaller()
	call := func(method string, args ...any) api.Result {
		b, _ := json.Marshal(args)
		return w.c.Dispatcher.Call(ctx, desk, method, b)
	}
	r := call("Terminal.Open", w.chat, 90, 20)
	if r.Error != nil {
		t.Fatal(r.Error)
	}
	var opened api.TerminalOpened
	json.Unmarshal(r.Result, &opened)
	next := func() api.TerminalEvent {
		t.Helper()
		for {
			select {
			case ev := <-sub.C():
				if ev.Topic == api.TopicTerminal {
					return ev.Data.(api.TerminalEvent)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("no terminal event")
			}
		}
	}
	if ev := next(); ev.Viewer != opened.Viewer || ev.Type != "ready" || ev.Marks == nil || *ev.Marks || ev.Cols != 90 {
		t.Fatalf("first event %+v, want ready for %s", ev, opened.Viewer)
	}
	if r := call("Terminal.Input", opened.Viewer, []byte("typed\r")); r.Error != nil {
		t.Fatal(r.Error)
	}
	var got strings.Builder
	for !strings.Contains(got.String(), "typed\r") {
		got.Write(next().Data)
	}
	if r := call("Terminal.Resize", opened.Viewer, 80, 24); r.Error != nil {
		t.Fatal(r.Error)
	}
	if r := call("Terminal.Close", opened.Viewer); r.Error != nil {
		t.Fatal(r.Error)
	}
	if r := call("Terminal.Input", opened.Viewer, []byte("x")); r.Error == nil || r.Error.Kind != "not_found" {
		t.Fatalf("input after close: %+v", r)
	}
	if !w.c.Terminal.Running(w.chat) {
		t.Error("closing the panel ended the shell")
	}
	// A browser's caller (a session) may not use these calls.
	browser := desk
	browser.Session = "abc"
	b, _ := json.Marshal([]any{w.chat, 80, 24})
	if r := w.c.Dispatcher.Call(ctx, browser, "Terminal.Open", b); r.Error == nil || r.Error.Kind != "forbidden" {
		t.Fatalf("Terminal.Open from a browser: %+v", r)
	}
}

// ptyOrSkip skips a test that needs a PTY from srv where sshd does not
// run as root (it must chown the PTY to the tty group, which fails where
// /dev/pts is mounted without gid=5), unless CI=true.
func ptyOrSkip(t testing.TB, srv *sshtest.Server) {
	t.Helper()
	if srv.Password == "" && os.Getenv("CI") != "true" {
		t.Skip("sshd not run as root may not open a PTY")
	}
}

// sshDialer dials a real sshd with a key it authorizes, its host key pinned.
func sshDialer(t testing.TB, srv *sshtest.Server) terminal.Dialer {
	key, authorized, err := sshx.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	srv.AuthorizeKey(authorized)
	pinned := srv.HostKey()
	return terminal.DialFunc(func(ctx context.Context, user ids.UserID, chat ids.ChatID) (terminal.Conn, ids.ProfileID, error) {
		c, err := sshx.Dial(ctx, sshx.Target{Host: srv.Host, Port: srv.Port, User: srv.User}, sshx.Auth{PrivateKey: key}, pinned)
		if err != nil {
			return nil, 0, err
		}
		return terminal.SSH(c), 1, nil
	})
}

// The whole way: a browser's WebSocket through the real handler to a shell
// on a real OpenSSH server, typing and reading back.
func TestTerminalSocketOnARealShell(t *testing.T) {
	srv := sshtest.Start(t)
	ptyOrSkip(t, srv)
	w := newTermWorld(t, 0, sshDialer(t, srv))
	conn, _, err := w.dial(t, w.chat, w.srv.URL, w.ownerCk)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	if ready, _ := readText(t, conn, "ready"); ready["marks"] != true {
		t.Errorf("ready %v: want marks (bash)", ready)
	}
	readBytes(t, conn, "\x1b]133;B\x07")
	if err := conn.Write(context.Background(), websocket.MessageBinary, []byte("echo h\"\"i\r")); err != nil {
		t.Fatal(err)
	}
	readBytes(t, conn, "\ahi\r\n") // after the C mark: the echo of h""i is not it
	// LastCommand, as the page asks for it.
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := w.c.Dispatcher.Call(context.Background(), w.c.OwnerCaller(), "Terminal.LastCommand", fmt.Appendf(nil, "[%d]", w.chat))
		if r.Error != nil {
			t.Fatal(r.Error)
		}
		var lc terminal.LastCommand
		json.Unmarshal(r.Result, &lc)
		if lc.Command != "" {
			if want := (terminal.LastCommand{Command: `echo h""i`, Output: "hi", Exit: 0, Marks: true}); lc != want {
				t.Fatalf("last command %+v, want %+v", lc, want)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no last command")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The real wiring: the chat's SSH profile dials the shell (agent.Dial);
// forgetting the profile's host key ends the shell (OnProfileChanged →
// EndProfile), and opening again says why it cannot, as an error frame.
func TestTerminalOnTheChatsProfile(t *testing.T) {
	srv := sshtest.Start(t)
	ptyOrSkip(t, srv)
	c, err := Open(context.Background(), testConfig(t, false), Options{Mode: Serve, Version: "test", Files: frontend.FS(),
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	h, err := c.Handler(false)
	if err != nil {
		t.Fatal(err)
	}
	w := &termWorld{c: c, srv: httptest.NewServer(h), ownerCk: ownerCookie(t, c)}
	t.Cleanup(w.srv.Close)
	ctx := context.Background()
	owner := ids.UserID(c.Owner.ID)
	p, err := c.Agent.CreateProfile(ctx, owner, agent.ProfileInput{Name: "box", Host: srv.Host, Port: srv.Port, Username: srv.User, Auth: store.AuthKey})
	if err != nil {
		t.Fatal(err)
	}
	srv.AuthorizeKey(p.PublicKey)
	sc, err := c.Agent.ScanHostKey(ctx, owner, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Agent.AcceptHostKey(ctx, owner, p.ID, sc.Fingerprint); err != nil {
		t.Fatal(err)
	}
	ch, _, err := c.DB.CreateChat(ctx, owner, store.NewChat{Title: "agent", Kind: store.ChatAgent,
		Agent: store.AgentChat{Profile: &p.ID, Dir: "/tmp", Mode: store.ModeManual}},
		store.Message{Role: store.RoleUser, Content: "hi", Status: store.StatusFinal})
	if err != nil {
		t.Fatal(err)
	}
	conn, _, err := w.dial(t, ch.ID, w.srv.URL, w.ownerCk)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	if ready, _ := readText(t, conn, "ready"); ready["marks"] != true {
		t.Fatalf("ready %v", ready)
	}
	readBytes(t, conn, "\x1b]133;B\x07")
	conn.Write(ctx, websocket.MessageBinary, []byte("echo on-the-box\r"))
	readBytes(t, conn, "\x07on-the-box\r\n")

	if _, err := c.Agent.ForgetHostKey(ctx, owner, p.ID); err != nil {
		t.Fatal(err)
	}
	if m, _ := readText(t, conn, "closed"); m["reason"] != terminal.ReasonProfile {
		t.Fatalf("closed %v, want reason profile", m)
	}
	again, _, err := w.dial(t, ch.ID, w.srv.URL, w.ownerCk)
	if err != nil {
		t.Fatal(err)
	}
	defer again.CloseNow()
	if m, _ := readText(t, again, "error"); !strings.Contains(fmt.Sprint(m["message"]), "host key") {
		t.Fatalf("error %v, want the host key's message", m)
	}
}
