package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/events"
)

func (h *handler) events(w http.ResponseWriter, r *http.Request, caller api.Caller) {
	rc := http.NewResponseController(w)
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	sub := h.opt.Bus.Subscribe(caller.UserID, 0)
	defer sub.Close()
	// Streams are long-lived and a browser shares one between its tabs:
	// their opening and end, with why it ended, say how many are open.
	why := "left"
	h.opt.Log.Debug("event stream open", "user", caller.UserID)
	defer func() { h.opt.Log.Debug("event stream closed", "user", caller.UserID, "why", why) }()

	write := func(s string) error {
		if err := rc.SetWriteDeadline(time.Now().Add(h.opt.WriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		if _, err := io.WriteString(w, s); err != nil {
			return err
		}
		if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		return nil
	}
	w.WriteHeader(http.StatusOK)
	// hello names the user whose events follow. A page relays one stream to
	// all its tabs (js/core/events-worker.js) and drops a stream that turns out
	// to be someone else's: the cookie it reconnects with may belong to
	// another person since.
	if err := write(fmt.Sprintf("retry: 3000\n: connected\nevent: hello\ndata: {\"user\":%d}\n\n", caller.UserID)); err != nil {
		return
	}
	tick := time.NewTicker(h.opt.Heartbeat)
	defer tick.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-h.opt.Stop:
			why = "shutdown"
			return
		case <-tick.C:
			// A session revoked or a user disabled since the stream began
			// stops receiving events within one heartbeat.
			if _, err := h.caller(r); err != nil {
				// Only a session that is gone signs the page out; a
				// database hiccup just ends the stream, and the browser
				// reconnects.
				if apperr.KindOf(err) == apperr.Unauthorized {
					why = "signed-out"
					write("event: signed-out\ndata: {}\n\n")
				} else {
					why = "session check failed"
					h.opt.Log.Warn("event stream: session check failed", "err", err)
				}
				return
			}
			if write(": ping\n\n") != nil {
				return
			}
		case ev, ok := <-sub.C():
			if !ok {
				// Closed under us (the bus is not shared with anyone who
				// would, today): end the stream; EventSource reconnects
				// and the frontend reloads what it shows. A follower that
				// falls behind is not closed: it gets a resync in place of
				// the topic's lost events (events.Sub).
				why = "closed"
				return
			}
			if ev.Topic == api.TopicTerminal {
				continue // the desktop window's; a browser has its WebSocket
			}
			frame, err := Frame(events.Envelope{Topic: ev.Topic, Data: ev.Data})
			if err != nil {
				h.opt.Log.Error("encode event", "topic", ev.Topic, "err", err)
				continue
			}
			if write(frame) != nil {
				return
			}
		}
	}
}

// Frame encodes v as one SSE message. Every line of the payload gets its own
// "data:" prefix: a raw newline inside one data line would end the event
// early (the first code block a model writes would truncate it).
func Frame(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		fmt.Fprintf(&sb, "data: %s\n", line)
	}
	sb.WriteString("\n")
	return sb.String(), nil
}
