package chat_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/ids"
)

// longExportChat appends n messages of size bytes to a new chat, in two
// SQL statements (rows, then each made a child of the one before).
func (e *env) longExportChat(n, size int) ids.ChatID {
	e.t.Helper()
	e.llm.Enqueue(fakellm.Stream("first"))
	id := e.send(0, "start").Chat.ID
	e.wait(id)
	_, err := e.c.DB.Write().Exec(`
		WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?)
		INSERT INTO messages (chat_id, parent_id, role, content, status, created_at, updated_at)
		SELECT ?, NULL, CASE i % 2 WHEN 1 THEN 'user' ELSE 'assistant' END, ? || i, 'final', 1, 1 FROM seq`,
		n, id, strings.Repeat("x", size))
	if err != nil {
		e.t.Fatal(err)
	}
	// Chain them: each new message's parent is the one before it.
	if _, err := e.c.DB.Write().Exec(`UPDATE messages SET parent_id = id - 1 WHERE chat_id = ? AND parent_id IS NULL AND id > (SELECT MIN(id) FROM messages WHERE chat_id = ?)`, id, id); err != nil {
		e.t.Fatal(err)
	}
	return id
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestExportLongChatStreams exports 20,000 messages of 1 KB and checks
// the heap grew by far less than the 20 MB written, sampled while the
// export is being written.
func TestExportLongChatStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("a 20 MB chat")
	}
	e := setup(t)
	id := e.longExportChat(20000, 1024)
	x, err := e.c.Chat.Export(context.Background(), e.user, id, chat.ExportMarkdown)
	if err != nil {
		t.Fatal(err)
	}
	before := heapInUse()
	w := &peakWriter{}
	start := time.Now()
	if err := x.Write(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start) // logged only: the machine may be loaded
	grew := int64(w.peak) - int64(before)
	t.Logf("wrote %d bytes in %v (with a GC every 2 MB); heap in use grew by at most %d KB while writing", w.n, took.Round(time.Millisecond), grew/1024)
	if w.n < 20000*1024 {
		t.Fatalf("wrote only %d bytes", w.n)
	}
	if grew > int64(w.n)/4 {
		t.Errorf("the heap grew by %d bytes while writing %d: the export is held in memory", grew, w.n)
	}
}

// peakWriter samples the heap in use every 2 MB written.
type peakWriter struct {
	n, next int64
	peak    uint64
}

func (p *peakWriter) Write(b []byte) (int, error) {
	p.n += int64(len(b))
	if p.n >= p.next {
		p.next = p.n + 2<<20
		p.peak = max(p.peak, heapInUse())
	}
	return len(b), nil
}
