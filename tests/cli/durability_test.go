package cli

import (
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/llembas/lembas/tests/harness"
)

// slowEndpoint streams numbered words every 10 ms and counts what it has
// flushed, so the test knows exactly how much had reached the server when
// it was killed.
func slowEndpoint(t *testing.T, sent *atomic.Int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			fmt.Fprint(w, `{"object":"list","data":[{"id":"slow-model","object":"model"}]}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for i := 1; i <= 3000; i++ {
			chunk := fmt.Sprintf(`{"choices":[{"index":0,"delta":{"content":"w%04d "},"finish_reason":null}]}`, i)
			if _, err := fmt.Fprintf(w, "data: %s\n\n", chunk); err != nil {
				return
			}
			if rc.Flush() != nil {
				return
			}
			sent.Store(int64(i))
			select {
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	return srv
}

// TestKillDuringReplyLosesAtMostAQuarterSecond kills the server with
// SIGKILL while a reply streams, restarts it, and checks the database:
// intact, the reply marked interrupted, and at most 250 ms of it missing.
func TestKillDuringReplyLosesAtMostAQuarterSecond(t *testing.T) {
	bin := server(t)
	dataDir := t.TempDir()
	var sent atomic.Int64
	ep := slowEndpoint(t, &sent)

	p, base := harness.Serve(t, bin, dataDir)
	var conn struct{ ID int64 }
	harness.API(t, base, "Connections.Create", &conn, map[string]any{"name": "slow", "baseUrl": ep.URL + "/v1"})
	var models []struct{ ID int64 }
	harness.API(t, base, "Models.Picker", &models)
	if len(models) != 1 {
		t.Fatalf("models %v", models)
	}
	var turn struct {
		Chat      struct{ ID int64 }
		Assistant struct{ ID int64 }
	}
	harness.API(t, base, "Chats.Send", &turn, map[string]any{"modelId": models[0].ID, "content": "count for me"})

	time.Sleep(1500 * time.Millisecond)
	p.Cmd.Process.Signal(syscall.SIGKILL)
	p.Wait(t, 10*time.Second)
	atKill := sent.Load()
	if atKill < 50 {
		t.Fatalf("only %d chunks streamed before the kill", atKill)
	}

	_, base = harness.Serve(t, bin, dataDir)
	var page struct {
		Messages []struct {
			ID      int64
			Role    string
			Content string
			Status  string
		}
	}
	harness.API(t, base, "Chats.Messages", &page, turn.Chat.ID, 0, 10)
	if len(page.Messages) != 2 {
		t.Fatalf("messages after restart: %+v", page.Messages)
	}
	reply := page.Messages[1]
	if reply.Status != "interrupted" {
		t.Errorf("status %q, want interrupted", reply.Status)
	}
	words := regexp.MustCompile(`w(\d{4})`).FindAllStringSubmatch(reply.Content, -1)
	if len(words) == 0 {
		t.Fatal("nothing of the reply was saved")
	}
	for i, w := range words {
		if n, _ := strconv.Atoi(w[1]); n != i+1 {
			t.Fatalf("saved reply has a gap at word %d: %q", i+1, reply.Content)
		}
	}
	saved := int64(len(words))
	lostMs := (atKill - saved) * 10
	t.Logf("chunks sent before the kill: %d, saved: %d, lost: ~%d ms", atKill, saved, lostMs)
	if lostMs > 250 {
		t.Errorf("lost ~%d ms of the reply, want at most 250", lostMs)
	}

	// The interrupted reply can be continued.
	var cont struct{ ID int64 }
	harness.API(t, base, "Chats.Continue", &cont, turn.Chat.ID)
	if cont.ID != reply.ID {
		t.Errorf("continue made message %d, want %d", cont.ID, reply.ID)
	}
	harness.API(t, base, "Chats.Stop", nil, turn.Chat.ID)

	db, err := sql.Open("sqlite", filepath.Join(dataDir, "lembas.db")+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var res string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Errorf("integrity_check: %q %v", res, err)
	}
}
