package generation

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/events"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/render"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/store/storetest"
)

// benchText is a ~16 KB reply of paragraphs, lists and code, and its
// reasoning.
func benchText() (content, reasoning string) {
	var b, r strings.Builder
	for i := 0; b.Len() < 16<<10; i++ {
		fmt.Fprintf(&b, "## Part %d\n\nThe reply streams as *small* pieces, and the follower gets **frames** of them: sealed blocks and a live tail, number %d.\n\n", i, i)
		fmt.Fprintf(&b, "- first point %d\n- second point with `code()`\n\n```go\nfunc f%d() int {\n\treturn %d\n}\n```\n\n", i, i, i)
		fmt.Fprintf(&r, "Thinking about part %d of the answer. ", i)
	}
	return b.String(), r.String()
}

func pieces(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

// BenchmarkFollowerWire reports wire_bytes_ratio: the JSON bytes of every
// frame a follower receives for a reply (reasoning and text in ~4-byte
// deltas, frames coalesced as in production) over the bytes of the reply's
// final HTML.
func BenchmarkFollowerWire(b *testing.B) {
	content, reasoning := benchText()
	final := render.New().Markdown(content)
	ctx := context.Background()
	db := storetest.Open(b)
	owner, err := db.EnsureOwner(ctx, "owner", "Owner")
	if err != nil {
		b.Fatal(err)
	}
	user := ids.UserID(owner.ID)
	srv := fakellm.New(b)
	client, err := llm.NewClient(llm.Endpoint{BaseURL: srv.URL()}, llm.Options{})
	if err != nil {
		b.Fatal(err)
	}
	bus := events.NewBus()
	gen := New(db, bus, render.New(), slog.New(slog.DiscardHandler), Options{})
	defer gen.Shutdown(ctx)
	var bytes, frames int
	for i := 0; i < b.N; i++ {
		c, _, err := db.CreateChat(ctx, user, store.NewChat{}, store.Message{Role: store.RoleUser, Content: "hi", Status: store.StatusFinal})
		if err != nil {
			b.Fatal(err)
		}
		m, err := db.AddMessage(ctx, user, c.ID, store.Message{Role: store.RoleAssistant, Status: store.StatusStreaming})
		if err != nil {
			b.Fatal(err)
		}
		srv.Enqueue(fakellm.NewStream().Reasoning(pieces(reasoning, 4)...).Content(pieces(content, 4)...).Reply().Every(50 * time.Microsecond))
		sub := bus.Subscribe(int64(user), 1<<16)
		if err := gen.Start(Job{User: user, Chat: c.ID, Message: m.ID, Client: client,
			Request: llm.ChatRequest{Model: "m", Messages: []llm.Message{{Role: "user", Content: "hi"}}}}); err != nil {
			b.Fatal(err)
		}
		if err := gen.Wait(ctx, c.ID); err != nil {
			b.Fatal(err)
		}
		sub.Close()
		bytes, frames = 0, 0
		for ev := range sub.C() {
			if ev.Topic != Topic {
				continue
			}
			j, _ := json.Marshal(ev.Data)
			bytes += len(j)
			frames++
		}
	}
	b.ReportMetric(float64(bytes)/float64(len(final)), "wire_bytes_ratio")
	b.ReportMetric(float64(frames), "frames")
}
