package core

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/sshx/sshtest"
)

// BenchmarkTerminalFlood: one chat's shell runs `yes` for 10 s, watched by
// a viewer that reads as fast as it can and one that never reads (a tab
// gone to sleep), while another chat's viewer types a key every 20 ms. The
// server's (this process's) peak RSS during the flood, its growth over the
// idle baseline, and the typing viewer's keystroke-to-echo p50 and p99,
// all through the real handler's WebSockets to a real sshd on loopback.
func BenchmarkTerminalFlood(b *testing.B) {
	srv := sshtest.Start(b)
	ptyOrSkip(b, srv)
	for b.Loop() {
		floodOnce(b, srv)
	}
}

func floodOnce(b *testing.B, srv *sshtest.Server) {
	w := newTermWorld(b, 0, sshDialer(b, srv))
	flood, typing := w.chat, mkAgentChat(b, w.c, ids.UserID(w.c.Owner.ID))
	dial := func(chat ids.ChatID) *websocket.Conn {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		h := http.Header{"Origin": {w.srv.URL}, "Cookie": {w.ownerCk.String()}}
		u := strings.Replace(w.srv.URL, "http://", "ws://", 1) + fmt.Sprintf("/api/terminal/%d?cols=120&rows=40", chat)
		conn, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: h})
		if err != nil {
			b.Fatal(err)
		}
		conn.SetReadLimit(1 << 20)
		return conn
	}
	waitFor := func(conn *websocket.Conn, want string) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var got bytes.Buffer
		for !strings.Contains(got.String(), want) {
			_, p, err := conn.Read(ctx)
			if err != nil {
				b.Fatalf("waiting for %q: %v", want, err)
			}
			got.Write(p)
		}
	}
	reader, sleeper, typist := dial(flood), dial(flood), dial(typing)
	defer reader.CloseNow()
	defer sleeper.CloseNow()
	defer typist.CloseNow()
	waitFor(reader, "\x1b]133;B\x07")
	waitFor(typist, "\x1b]133;B\x07")
	base := rssMB()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var read, dropped int64
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // the reading viewer of the flood
		defer wg.Done()
		for {
			typ, p, err := reader.Read(ctx)
			if err != nil {
				return
			}
			if typ == websocket.MessageText {
				if bytes.Contains(p, []byte(`"closed"`)) {
					dropped++
				}
				continue
			}
			read += int64(len(p))
		}
	}()
	peak := base
	go func() {
		defer wg.Done()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				peak = max(peak, rssMB())
			}
		}
	}()
	reader.Write(ctx, websocket.MessageBinary, []byte("yes\r"))

	// Typing: a key, its echo, 20 ms, the next; the line is cleared now
	// and then (Ctrl-U), unmeasured.
	var lat []float64
	echoes := make(chan time.Time, 1)
	var want byte
	var mu sync.Mutex
	go func() {
		for {
			_, p, err := typist.Read(ctx)
			if err != nil {
				return
			}
			mu.Lock()
			k := want
			mu.Unlock()
			if k != 0 && bytes.IndexByte(p, k) >= 0 {
				select {
				case echoes <- time.Now():
				default:
				}
			}
		}
	}()
	end := time.Now().Add(10 * time.Second)
	for i := 0; time.Now().Before(end); i++ {
		if i%40 == 39 {
			mu.Lock()
			want = 0
			mu.Unlock()
			typist.Write(ctx, websocket.MessageBinary, []byte{0x15})
			time.Sleep(50 * time.Millisecond)
			continue
		}
		k := byte('a' + i%26)
		mu.Lock()
		want = k
		mu.Unlock()
		sent := time.Now()
		typist.Write(ctx, websocket.MessageBinary, []byte{k})
		select {
		case at := <-echoes:
			lat = append(lat, float64(at.Sub(sent).Microseconds())/1000)
		case <-time.After(5 * time.Second):
			lat = append(lat, 5000)
		}
		time.Sleep(20 * time.Millisecond)
	}
	reader.Write(ctx, websocket.MessageBinary, []byte{0x03}) // Ctrl-C
	cancel()
	wg.Wait()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	b.ReportMetric(peak, "rss_mb")
	b.ReportMetric(peak-base, "rss_growth_mb")
	b.ReportMetric(pct(0.50), "echo_p50_ms")
	b.ReportMetric(pct(0.99), "echo_p99_ms")
	b.ReportMetric(float64(read)/10/1e6, "flood_MB/s")
	b.ReportMetric(float64(dropped), "reader_dropped")
}

// rssMB is this process's resident set (VmRSS), in MB.
func rssMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}
