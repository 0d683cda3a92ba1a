package core

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// ttftRepliesPerOp is how many replies one benchmark operation measures,
// so that even a single operation gives well over 200 samples.
const ttftRepliesPerOp = 250

// BenchmarkAddedTTFT measures the time to first token the server adds: from
// the moment a fake endpoint has flushed the first content chunk of a reply
// to the moment a follower reading /api/events over loopback HTTP receives
// the first `gen` frame of that reply. The instance runs in-process with the
// default generation options (first frame at once, later ones coalesced).
//
// One operation is ttftRepliesPerOp replies, one after the other in the same
// chat (each sent with Chats.Send once the previous one has ended); ns/op is
// reported per reply (Send → final frame), and p50_ms/p99_ms are over every
// reply measured (the "samples" column says how many).
func BenchmarkAddedTTFT(b *testing.B) {
	c := openBench(b)
	h, err := c.Handler(false)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(signedIn(h, ownerCookie(b, c)))
	defer srv.Close()
	defer c.StopStreams()

	ep := newTTFTEndpoint()
	defer ep.close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	frames := followGen(b, ctx, srv.URL)

	client := &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 4}}
	post := func(method string, out any, args ...any) {
		body, _ := json.Marshal(args)
		resp, err := client.Post(srv.URL+"/api/"+method, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%s: %d %s", method, resp.StatusCode, raw)
		}
		if out != nil {
			if err := json.Unmarshal(raw, out); err != nil {
				b.Fatalf("%s: %v (%s)", method, err, raw)
			}
		}
	}
	post("Connections.Create", nil, map[string]any{"name": "ttft", "baseUrl": ep.srv.URL + "/v1"})
	var models []struct{ ID int64 }
	post("Models.Picker", &models)
	if len(models) != 1 {
		b.Fatalf("models: %+v", models)
	}

	var chatID int64
	// reply sends one message and returns the added time to first token.
	reply := func() time.Duration {
		in := map[string]any{"content": "ping"}
		if chatID == 0 {
			in["modelId"] = models[0].ID
		} else {
			in["chatId"] = chatID
		}
		var turn struct {
			Chat      struct{ ID int64 }
			Assistant struct{ ID int64 }
		}
		post("Chats.Send", &turn, in)
		chatID = turn.Chat.ID
		var flushed time.Time
		select {
		case flushed = <-ep.flushed:
		case <-time.After(10 * time.Second):
			b.Fatal("the endpoint got no streaming request")
		}
		var first time.Time
		timeout := time.After(10 * time.Second)
		for {
			select {
			case f, ok := <-frames:
				if !ok {
					b.Fatal("the event stream ended")
				}
				if f.MessageID != turn.Assistant.ID {
					continue // a late frame of an earlier reply cannot happen, but be sure
				}
				if first.IsZero() {
					first = f.at
					ep.release <- struct{}{} // let the endpoint finish the reply
				}
				if f.Status != "streaming" {
					return first.Sub(flushed)
				}
			case <-timeout:
				b.Fatalf("no final frame for message %d", turn.Assistant.ID)
			}
		}
	}

	// Warm up: the chat, its automatic title, pooled connections.
	for range 5 {
		reply()
	}
	time.Sleep(100 * time.Millisecond)

	var samples []time.Duration
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	start := time.Now()
	for b.Loop() {
		for range ttftRepliesPerOp {
			samples = append(samples, reply())
		}
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&m1)
	slices.Sort(samples)
	ms := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(samples)))) - 1
		return float64(samples[max(i, 0)]) / float64(time.Millisecond)
	}
	n := float64(len(samples))
	b.ReportMetric(float64(elapsed.Nanoseconds())/n, "ns/op")
	b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/n, "B/op")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/n, "allocs/op")
	b.ReportMetric(ms(0.50), "p50_ms")
	b.ReportMetric(ms(0.99), "p99_ms")
	b.ReportMetric(float64(len(samples)), "samples")
}

// ttftEndpoint is an OpenAI-compatible endpoint that reports the instant
// it flushed the first content chunk of each streamed reply and holds the
// rest until released (so the first frame carries exactly that chunk).
type ttftEndpoint struct {
	srv     *httptest.Server
	flushed chan time.Time
	release chan struct{}
}

func newTTFTEndpoint() *ttftEndpoint {
	ep := &ttftEndpoint{flushed: make(chan time.Time, 1), release: make(chan struct{}, 1)}
	chunk := func(content, finish string) string {
		fr := "null"
		if finish != "" {
			fr = `"` + finish + `"`
		}
		return fmt.Sprintf(`data: {"choices":[{"index":0,"delta":{"content":%q},"finish_reason":%s}]}`+"\n\n", content, fr)
	}
	ep.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			fmt.Fprint(w, `{"object":"list","data":[{"id":"ttft-model","object":"model"}]}`)
			return
		}
		var req struct{ Stream bool }
		json.NewDecoder(r.Body).Decode(&req)
		if !req.Stream { // the automatic title
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"Ping"},"finish_reason":"stop"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		io.WriteString(w, chunk("x", ""))
		if rc.Flush() != nil {
			return
		}
		ep.flushed <- time.Now()
		select {
		case <-ep.release:
		case <-r.Context().Done():
			return
		case <-time.After(5 * time.Second):
		}
		io.WriteString(w, chunk("y", ""))
		io.WriteString(w, chunk("z", "stop"))
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	return ep
}

func (ep *ttftEndpoint) close() {
	ep.srv.CloseClientConnections()
	ep.srv.Close()
}

// genFrame is what the benchmark needs of a `gen` frame, and when it came.
type genFrame struct {
	at        time.Time
	ChatID    int64  `json:"chatId"`
	MessageID int64  `json:"messageId"`
	Status    string `json:"status"`
}

// followGen opens one event stream and delivers its `gen` frames, stamped
// with the instant their line was read, until ctx ends.
func followGen(b *testing.B, ctx context.Context, base string) <-chan genFrame {
	b.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/events", nil)
	hc := &http.Client{Transport: &http.Transport{Proxy: nil}}
	resp, err := hc.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("events: %s", resp.Status)
	}
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		if strings.TrimSpace(line) == ": connected" {
			break
		}
	}
	out := make(chan genFrame, 4096)
	prefix := []byte(`data: {"topic":"gen","data":`)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		for {
			line, err := br.ReadSlice('\n')
			at := time.Now()
			if err != nil {
				return
			}
			if !bytes.HasPrefix(line, prefix) {
				continue
			}
			var env struct{ Data genFrame }
			if json.Unmarshal(line[len("data: "):], &env) != nil {
				continue
			}
			env.Data.at = at
			select {
			case out <- env.Data:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}
