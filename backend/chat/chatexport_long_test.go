package chat_test

import (
	"bytes"
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"

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

// TestExportLongChat exports 20,000 messages of 1 KB: every turn is
// written, in order. How much memory that takes is measured by
// BenchmarkExportLongChat, not asserted here (a heap figure depends on
// the collector and on whatever else the test binary runs).
func TestExportLongChat(t *testing.T) {
	if testing.Short() {
		t.Skip("a 20 MB chat")
	}
	e := setup(t)
	id := e.longExportChat(20000, 1024)
	x, err := e.c.Chat.Export(context.Background(), e.user, id, chat.ExportMarkdown)
	if err != nil {
		t.Fatal(err)
	}
	var w countWriter
	if err := x.Write(context.Background(), &w); err != nil {
		t.Fatal(err)
	}
	if w.n < 20000*1024 || w.turns != 20000+2 || w.last != 20000 {
		t.Fatalf("wrote %d bytes, %d turns, the last numbered %d; want every one of 20,000 (and the first exchange)", w.n, w.turns, w.last)
	}
}

// countWriter counts the bytes and the turns written, and the number
// that ends the last turn seen (longExportChat's content ends in its own).
type countWriter struct {
	n           int64
	turns, last int
	tail        []byte
}

func (c *countWriter) Write(b []byte) (int, error) {
	c.n += int64(len(b))
	c.tail = append(c.tail, b...)
	for {
		k := bytes.IndexByte(c.tail, '\n')
		if k < 0 {
			break
		}
		line := string(c.tail[:k])
		c.tail = c.tail[k+1:]
		if strings.HasPrefix(line, "## ") {
			c.turns++
		}
		if strings.HasPrefix(line, "xxxxxxxx") {
			if v, err := strconv.Atoi(strings.TrimLeft(line, "x")); err == nil {
				c.last = v
			}
		}
	}
	return len(b), nil
}

// BenchmarkExportLongChat writes a 20,000-message chat (20 MB) and
// reports how far the heap in use rose above where it started, sampled
// every 2 MB written: a few hundred KB when the path is read a batch at
// a time, tens of MB when it is read whole.
func BenchmarkExportLongChat(b *testing.B) {
	e := setupWeb(b, nil)
	id := e.longExportChat(20000, 1024)
	var peak int64
	for b.Loop() {
		x, err := e.c.Chat.Export(context.Background(), e.user, id, chat.ExportMarkdown)
		if err != nil {
			b.Fatal(err)
		}
		before := heapInUse()
		w := &peakWriter{}
		if err := x.Write(context.Background(), w); err != nil {
			b.Fatal(err)
		}
		peak = max(peak, int64(w.peak)-int64(before))
	}
	b.ReportMetric(float64(peak)/1024, "heap-rise-KB")
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
