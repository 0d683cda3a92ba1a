package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// endpoint is a fake OpenAI-compatible server on loopback. A streamed reply
// sends one token every 1/rate seconds (on a fixed schedule; a late token is
// sent at once, never merged), each token being " t<unix ns at sending> ",
// with a blank line after every para tokens. It ends a reply when the
// client goes away or at the stop time, whichever is first.
type endpoint struct {
	rate   float64
	para   int
	srv    *http.Server
	url    string
	stopAt atomic.Int64 // unix ns after which streams finish by themselves
	count  atomic.Bool  // count tokens (the measurement window)
	tokens atomic.Int64
}

func startEndpoint(rate float64, para int, stopAt time.Time) (*endpoint, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	e := &endpoint{rate: rate, para: para, url: "http://" + ln.Addr().String() + "/v1"}
	e.stopAt.Store(stopAt.UnixNano())
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"load-model","object":"model","owned_by":"loadtool"}]}`)
	})
	mux.HandleFunc("POST /v1/chat/completions", e.chat)
	e.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go e.srv.Serve(ln)
	return e, nil
}

func (e *endpoint) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if e.srv.Shutdown(ctx) != nil {
		e.srv.Close()
	}
}

func (e *endpoint) chat(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Stream bool `json:"stream"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 8<<20)).Decode(&req); err != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	if !req.Stream { // the automatic title after a chat's first reply
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Load test"},"finish_reason":"stop"}]}`)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	rc := http.NewResponseController(w)
	interval := time.Duration(float64(time.Second) / e.rate)
	start := time.Now()
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	buf := make([]byte, 0, 256)
	for i := 0; ; i++ {
		if d := time.Until(start.Add(time.Duration(i) * interval)); d > 0 {
			timer.Reset(d)
			select {
			case <-r.Context().Done():
				return
			case <-timer.C:
			}
		}
		now := time.Now()
		if now.UnixNano() >= e.stopAt.Load() {
			break
		}
		buf = append(buf[:0], `data: {"choices":[{"index":0,"delta":{"content":" t`...)
		buf = strconv.AppendInt(buf, now.UnixNano(), 10)
		buf = append(buf, ' ')
		if e.para > 0 && (i+1)%e.para == 0 {
			buf = append(buf, `\n\n`...)
		}
		buf = append(buf, `"},"finish_reason":null}]}`+"\n\n"...)
		if _, err := w.Write(buf); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
		if e.count.Load() {
			e.tokens.Add(1)
		}
	}
	fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n"+"data: [DONE]\n\n")
	rc.Flush()
}
