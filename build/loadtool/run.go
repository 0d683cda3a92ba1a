package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// run is one whole measurement with a fresh server and endpoint.
func run(ctx context.Context, cfg config) (res result, err error) {
	dataDir, err := os.MkdirTemp("", "lembas-load-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dataDir)

	// Until the window starts, streams may run as long as the run may.
	ep, err := startEndpoint(cfg.rate, cfg.para, time.Now().Add(60*time.Second+cfg.duration+cfg.grace))
	if err != nil {
		return res, err
	}
	defer ep.close()

	srv, err := startServer(ctx, cfg.bin, dataDir)
	if err != nil {
		return res, err
	}
	stopped := false
	defer func() {
		if !stopped {
			srv.kill()
		}
		if err != nil && cfg.verbose {
			fmt.Fprintf(os.Stderr, "server log:\n%s\n", srv.log)
		}
	}()
	pid := strconv.Itoa(srv.cmd.Process.Pid)

	// Every client signs in as the first (administrator) account; the
	// followers share its session like tabs of one browser.
	jar, _ := cookiejar.New(nil)
	a := &api{base: srv.base, hc: &http.Client{Timeout: 30 * time.Second, Jar: jar, Transport: &http.Transport{
		Proxy: nil, MaxIdleConnsPerHost: cfg.replies + 8}}}
	if err = a.signUp(ctx, "load", "load-tool-password"); err != nil {
		return res, err
	}
	var conn struct {
		ID        int64  `json:"id"`
		LastError string `json:"lastError"`
	}
	if err = a.call(ctx, "Connections.Create", &conn, map[string]any{"name": "load", "baseUrl": ep.url}); err != nil {
		return res, err
	}
	if conn.LastError != "" {
		return res, fmt.Errorf("the connection to the fake endpoint failed: %s", conn.LastError)
	}
	var models []struct {
		ID int64 `json:"id"`
	}
	if err = a.call(ctx, "Models.Picker", &models); err != nil {
		return res, err
	}
	if len(models) != 1 {
		return res, fmt.Errorf("Models.Picker: %d models, want 1", len(models))
	}

	// Followers, connected before the first reply starts.
	var measuring atomic.Bool
	fctx, stopFollowers := context.WithCancel(ctx)
	defer stopFollowers()
	fs := make([]*follower, cfg.followers)
	ready := make(chan error, cfg.followers)
	var fwg sync.WaitGroup
	for k := range fs {
		fs[k] = &follower{k: int64(k), n: int64(cfg.followers), base: srv.base, measuring: &measuring,
			chats: map[int64]int{}, hc: &http.Client{Jar: jar, Transport: &http.Transport{Proxy: nil}}}
		fwg.Add(1)
		go func() { defer fwg.Done(); fs[k].run(fctx, ready) }()
	}
	for range fs {
		select {
		case err = <-ready:
			if err != nil {
				return res, err
			}
		case <-time.After(10 * time.Second):
			return res, errors.New("followers did not connect within 10 s")
		}
	}

	// The window: from just before the sends to -duration later.
	cpu0, err := cpuTime(pid)
	if err != nil {
		return res, err
	}
	self0, _ := cpuTime("self")
	t0 := time.Now()
	ep.stopAt.Store(t0.Add(cfg.duration + cfg.grace).UnixNano())
	measuring.Store(true)
	ep.count.Store(true)

	chats := make([]int64, cfg.replies)
	errs := make([]error, cfg.replies)
	var swg sync.WaitGroup
	for i := range chats {
		swg.Add(1)
		go func() {
			defer swg.Done()
			var turn struct {
				Chat struct {
					ID int64 `json:"id"`
				} `json:"chat"`
			}
			errs[i] = a.call(ctx, "Chats.Send", &turn, map[string]any{"modelId": models[0].ID,
				"content": fmt.Sprintf("Reply %d: stream tokens, please.", i+1)})
			chats[i] = turn.Chat.ID
		}()
	}
	swg.Wait()
	if err = errors.Join(errs...); err != nil {
		return res, err
	}
	select {
	case <-time.After(time.Until(t0.Add(cfg.duration))):
	case <-ctx.Done():
		return res, ctx.Err()
	}
	measuring.Store(false)
	ep.count.Store(false)
	res.window = time.Since(t0)
	cpu1, err := cpuTime(pid)
	if err != nil {
		return res, err
	}
	self1, _ := cpuTime("self")
	res.cpuPct = 100 * float64(cpu1-cpu0) / float64(res.window)
	res.selfCPUPct = 100 * float64(self1-self0) / float64(res.window)
	res.tokens = ep.tokens.Load()

	// Stop every reply, then the followers, then the server.
	sctx, cancel := context.WithTimeout(ctx, cfg.grace+10*time.Second)
	defer cancel()
	for i, id := range chats {
		swg.Add(1)
		go func() {
			defer swg.Done()
			errs[i] = a.call(sctx, "Chats.Stop", nil, id)
		}()
	}
	swg.Wait()
	if err = errors.Join(errs...); err != nil {
		return res, err
	}
	stopFollowers()
	fwg.Wait()
	stopped = true
	if err = srv.stop(15 * time.Second); err != nil {
		return res, err
	}

	perChat := map[int64]int{}
	for _, f := range fs {
		res.lags = append(res.lags, f.lags...)
		res.untimed += f.untimed
		res.drops += f.drops
		for id, n := range f.chats {
			perChat[id] += n
		}
	}
	for _, id := range chats {
		if perChat[id] == 0 {
			res.silent++
		}
	}
	res.frames = len(res.lags)
	slices.Sort(res.lags)
	if res.frames == 0 {
		return res, errors.New("no frame was measured")
	}
	return res, nil
}

// follower is one event stream, measuring the chats whose id ≡ k (mod n).
type follower struct {
	k, n      int64
	base      string
	hc        *http.Client
	measuring *atomic.Bool

	lags    []time.Duration
	untimed int
	drops   int
	chats   map[int64]int // measured frames per chat
}

// run follows the event stream until ctx ends, reconnecting if the server
// drops it (it drops followers that fall behind). The first connection's
// outcome goes to ready.
func (f *follower) run(ctx context.Context, ready chan<- error) {
	first := true
	for ctx.Err() == nil {
		err := f.follow(ctx, func() {
			if first {
				first = false
				ready <- nil
			}
		})
		if ctx.Err() != nil {
			return
		}
		if first {
			first = false
			ready <- fmt.Errorf("follower %d: %v", f.k, err)
			return
		}
		f.drops++
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

var (
	genPrefix    = []byte(`data: {"topic":"gen","data":{"chatId":`)
	resyncPrefix = []byte(`data: {"topic":"resync"`)
)

func (f *follower) follow(ctx context.Context, connected func()) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.base+"/api/events", nil)
	if err != nil {
		return err
	}
	resp, err := f.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /api/events: %s", resp.Status)
	}
	br := bufio.NewReaderSize(resp.Body, 256<<10)
	var long []byte
	for {
		line, err := br.ReadSlice('\n')
		at := time.Now()
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil {
			return err
		}
		switch {
		case bytes.HasPrefix(line, []byte(": connected")):
			connected()
		case bytes.HasPrefix(line, genPrefix):
			f.frame(line, at)
		case bytes.HasPrefix(line, resyncPrefix):
			f.drops++
		}
	}
}

// frame measures one `gen` line if its chat is this follower's.
func (f *follower) frame(line []byte, at time.Time) {
	if !f.measuring.Load() {
		return
	}
	rest := line[len(genPrefix):]
	end := bytes.IndexByte(rest, ',')
	if end < 0 {
		return
	}
	chat, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	if err != nil || chat%f.n != f.k {
		return
	}
	var env struct {
		Data struct {
			// Parts are the frame's operations on the reply's parts; a
			// text part's HTML is in seal, tail and full.
			Parts []struct {
				Seal []string `json:"seal"`
				Tail string   `json:"tail"`
				Full string   `json:"full"`
			} `json:"parts"`
			Status string `json:"status"`
		} `json:"data"`
	}
	if json.Unmarshal(line[len("data: "):], &env) != nil || env.Data.Status != "streaming" {
		return
	}
	var ts int64
	for _, p := range env.Data.Parts {
		for _, s := range p.Seal {
			ts = newestStamp(s, ts)
		}
		ts = newestStamp(p.Tail, ts)
		ts = newestStamp(p.Full, ts)
	}
	if ts == 0 {
		f.untimed++
		return
	}
	f.lags = append(f.lags, time.Duration(at.UnixNano()-ts))
	f.chats[chat]++
}

// newestStamp returns the largest of best and every "t" + 19-digit stamp in s.
func newestStamp(s string, best int64) int64 {
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], 't')
		if j < 0 {
			break
		}
		i += j + 1
		if i+19 > len(s) {
			break
		}
		var v int64
		n := 0
		for ; n < 19; n++ {
			c := s[i+n]
			if c < '0' || c > '9' {
				break
			}
			v = v*10 + int64(c-'0')
		}
		if n == 19 && (i+19 == len(s) || s[i+19] < '0' || s[i+19] > '9') {
			best = max(best, v)
			i += 19
		}
	}
	return best
}
