package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/terminal"
)

// Terminals opens terminal viewers for the WebSocket route; caller is the
// resolved caller, and implementations check agent.use and that the chat
// is the caller's agent chat (another person's is not found).
type Terminals interface {
	Check(ctx context.Context, caller api.Caller, chat int64) error
	Attach(ctx context.Context, caller api.Caller, chat int64, cols, rows int) (*terminal.Viewer, error)
}

var _ Terminals = api.TerminalRoutes{}

// terminalReadLimit is the largest frame a page may send (a paste).
const terminalReadLimit = 1 << 20

// terminalControl is a text frame from the page.
type terminalControl struct {
	Type string `json:"type"`
	Cols int    `json:"cols"`
	Rows int    `json:"rows"`
}

// terminalSocket is GET /api/terminal/{chat}?cols=N&rows=N: a WebSocket to
// the chat's shell. A script that got into the page could open it, and
// what it opens is a shell on somebody's machine, so the Origin header is
// required (not merely checked when present) and must be this server's own
// scheme and host; the session cookie is SameSite=Lax, so a foreign page's
// handshake carries none. Binary frames are terminal bytes both ways, never
// decoded here; text frames are JSON: {type: "resize"} from the page,
// {type: "ready" | "closed" | "error"} to it.
func (h *handler) terminalSocket(w http.ResponseWriter, r *http.Request, caller api.Caller) {
	if err := h.sameOrigin(r); err != nil {
		h.opt.Log.Warn("terminal socket refused", "why", err, "origin", r.Header.Get("Origin"), "host", r.Host)
		h.fail(w, r, err)
		return
	}
	chat, err := strconv.ParseInt(r.PathValue("chat"), 10, 64)
	if err != nil || chat <= 0 {
		h.fail(w, r, apperr.New(apperr.NotFound, "no such chat"))
		return
	}
	cols, _ := strconv.Atoi(r.URL.Query().Get("cols"))
	rows, _ := strconv.Atoi(r.URL.Query().Get("rows"))
	// What refuses the caller is an HTTP status, before the upgrade; what
	// fails in starting the shell (a host key not accepted, a host down)
	// is an "error" message the panel can show.
	if err := h.opt.Terminals.Check(r.Context(), caller, chat); err != nil {
		h.fail(w, r, err)
		return
	}
	// The connection outlives the request: net/http clears the deadlines
	// its ReadTimeout and the stall writer set when Accept hijacks it (a
	// test holds a socket past both).
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		InsecureSkipVerify: true, // the Origin was checked above, and more strictly
		CompressionMode:    websocket.CompressionDisabled,
	})
	if err != nil {
		h.opt.Log.Debug("terminal socket: upgrade failed", "err", err)
		return
	}
	defer conn.CloseNow()
	conn.SetReadLimit(terminalReadLimit)

	// The request's context ends with the hijack; the socket has its own.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	v, err := h.opt.Terminals.Attach(ctx, caller, chat, cols, rows)
	if err != nil {
		if apperr.KindOf(err) == apperr.Internal {
			h.opt.Log.Error("terminal attach failed", "chat", chat, "err", err)
		}
		_, msg := apperr.Public(err)
		writeControl(ctx, conn, map[string]string{"type": "error", "message": msg}, h.opt.WriteTimeout)
		conn.Close(websocket.StatusNormalClosure, "")
		return
	}
	defer v.Close()
	h.opt.Log.Debug("terminal socket open", "user", caller.UserID, "chat", chat)

	// Reader: input and sizes from the page. It ends the socket when the
	// page goes.
	go func() {
		defer cancel()
		for {
			typ, data, err := conn.Read(ctx)
			if err != nil {
				return
			}
			switch typ {
			case websocket.MessageBinary:
				if v.Input(data) != nil {
					return
				}
			case websocket.MessageText:
				var c terminalControl
				if json.Unmarshal(data, &c) == nil && c.Type == "resize" {
					v.Resize(c.Cols, c.Rows)
				}
			}
		}
	}()
	// Every heartbeat (as the event stream): the caller's check again —
	// a revoked session, a disabled account, agent.use taken away, the
	// chat trashed or agent chats turned off loses the terminal within
	// one — and a ping (which keeps proxies from timing an idle shell out
	// and finds a page that went away).
	go func() {
		t := time.NewTicker(h.opt.Heartbeat)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if err := h.stillAllowed(r.WithContext(ctx), chat); err != nil {
				h.opt.Log.Info("terminal socket ended", "user", caller.UserID, "chat", chat, "why", err)
				writeControl(ctx, conn, map[string]string{"type": "closed", "reason": terminal.ReasonRefused}, h.opt.WriteTimeout)
				conn.Close(websocket.StatusPolicyViolation, "not allowed any more")
				cancel()
				return
			}
			pctx, pcancel := context.WithTimeout(ctx, h.opt.WriteTimeout)
			err := conn.Ping(pctx)
			pcancel()
			if err != nil {
				cancel()
				return
			}
		}
	}()
	// Writer: what the viewer receives. A write that stalls for the write
	// timeout ends the socket (the viewer's queue has dropped it by then).
	for {
		m, err := v.Next(ctx)
		if err != nil {
			return
		}
		if m.Data != nil {
			wctx, wcancel := context.WithTimeout(ctx, h.opt.WriteTimeout)
			err = conn.Write(wctx, websocket.MessageBinary, m.Data)
			wcancel()
			if err != nil {
				return
			}
			continue
		}
		switch m.Type {
		case "ready":
			err = writeControl(ctx, conn, map[string]any{"type": "ready", "marks": m.Marks, "cols": m.Cols, "rows": m.Rows}, h.opt.WriteTimeout)
		case "closed":
			writeControl(ctx, conn, map[string]string{"type": "closed", "reason": m.Reason}, h.opt.WriteTimeout)
			conn.Close(websocket.StatusNormalClosure, m.Reason)
			return
		}
		if err != nil {
			return
		}
	}
}

// stillAllowed checks an open socket's caller again: the session (a
// revoked one, a disabled account), then what opening asked (agent.use,
// the caller's own agent chat, not trashed, agent chats on). Only a
// refusal counts; a database hiccup leaves the socket open.
func (h *handler) stillAllowed(r *http.Request, chat int64) error {
	caller, err := h.caller(r)
	if err == nil {
		err = h.opt.Terminals.Check(r.Context(), caller, chat)
	}
	switch apperr.KindOf(err) {
	case apperr.Unauthorized, apperr.Forbidden, apperr.NotFound:
		return err
	}
	if err != nil {
		h.opt.Log.Warn("terminal socket: check failed", "chat", chat, "err", err)
	}
	return nil
}

func writeControl(ctx context.Context, conn *websocket.Conn, v any, timeout time.Duration) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return conn.Write(wctx, websocket.MessageText, b)
}

// sameOrigin requires an Origin header equal to this request's own scheme
// and host (as the browser reached us: TLS directly or through a trusted
// proxy that says so). An absent Origin is refused too: every browser
// sends one on a WebSocket handshake, so only something else leaves it out.
func (h *handler) sameOrigin(r *http.Request) error {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return apperr.New(apperr.Forbidden, "a terminal needs the Origin header")
	}
	u, err := url.Parse(origin)
	if err != nil {
		return apperr.New(apperr.Forbidden, "a terminal needs this server's own origin")
	}
	scheme := "http"
	if h.secure(r) {
		scheme = "https"
	}
	if !strings.EqualFold(u.Scheme, scheme) || !strings.EqualFold(u.Host, r.Host) || u.Path != "" && u.Path != "/" || u.User != nil {
		return apperr.New(apperr.Forbidden, "a terminal opens only from this server's own pages")
	}
	return nil
}
