package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/generation"
	"github.com/llembas/lembas/backend/ids"
)

// longChat starts a chat and appends n old turns (alternately user and
// assistant, each size bytes) in one transaction, as a long history.
func (e *env) longChat(n, size int) ids.ChatID {
	e.t.Helper()
	e.llm.Enqueue(fakellm.Stream("First answer."))
	turn := e.send(0, "First question")
	e.wait(turn.Chat.ID)
	ctx := context.Background()
	tx, err := e.c.DB.Write().BeginTx(ctx, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	defer tx.Rollback()
	var parent int64
	if err := tx.QueryRow(`SELECT MAX(id) FROM messages WHERE chat_id = ?`, turn.Chat.ID).Scan(&parent); err != nil {
		e.t.Fatal(err)
	}
	for i := range n {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		text := fmt.Sprintf("turn %d ", i)
		text += strings.Repeat("x", size-len(text))
		res, err := tx.Exec(`INSERT INTO messages (chat_id, parent_id, role, content, status, created_at, updated_at)
			VALUES (?, ?, ?, ?, 'final', 1, 1)`, turn.Chat.ID, parent, role, text)
		if err != nil {
			e.t.Fatal(err)
		}
		parent, _ = res.LastInsertId()
	}
	if err := tx.Commit(); err != nil {
		e.t.Fatal(err)
	}
	return turn.Chat.ID
}

// setContext gives the model a known context length.
func (e *env) setContext(n int) {
	e.t.Helper()
	if _, err := e.c.DB.Write().Exec(`UPDATE models SET context_length_override = ? WHERE id = ?`, n, e.model); err != nil {
		e.t.Fatal(err)
	}
}

// A long chat sends only the newest turns that fit the model's context,
// and the reply says how many earlier ones were left out. A 10,000-message
// chat went to 772 % of the context.
func TestLongChatSendsTheNewestTurnsThatFit(t *testing.T) {
	e := setup(t)
	const old, size, context = 300, 600, 4096
	id := e.longChat(old, size)
	e.setContext(context)
	e.llm.Enqueue(fakellm.Stream("Newest answer."))
	e.send(id, "The newest question")
	e.wait(id)

	path, err := e.c.DB.ChatPath(t.Context(), e.user, id)
	if err != nil {
		t.Fatal(err)
	}
	var turns []string // what could be sent, oldest first, without the reply just made
	for _, m := range path[:len(path)-1] {
		turns = append(turns, m.Content)
	}
	// The same rule by hand: bytes/3 + 8 a turn, newest first, within the
	// context less a quarter kept for the reply (no max_tokens, no system
	// prompt) and 8 for the system turn's markers.
	budget := context - context/4 - 8
	want, used := 0, 0
	for i := len(turns) - 1; i >= 0; i-- {
		c := (len(turns[i])+2)/3 + 8
		if used+c > budget {
			break
		}
		used += c
		want++
	}
	if (len(turns)-want)%2 == 1 { // the oldest kept would be a reply without its question (user turns are at even places)
		want--
	}

	reqs := e.llm.Requests()
	var sent []string
	for _, m := range reqs[len(reqs)-1].JSON["messages"].([]any) {
		msg := m.(map[string]any)
		if msg["role"] != "system" {
			sent = append(sent, msg["content"].(string))
		}
	}
	if len(sent) != want {
		t.Fatalf("%d turns sent, want the newest %d of %d", len(sent), want, len(turns))
	}
	for i, s := range sent {
		if s != turns[len(turns)-want+i] {
			t.Fatalf("sent turn %d is %.20q, want %.20q", i, s, turns[len(turns)-want+i])
		}
	}
	if first := reqs[len(reqs)-1].JSON["messages"].([]any)[0].(map[string]any); first["role"] != "user" {
		t.Errorf("the request starts with a %s turn", first["role"])
	}

	var metrics generation.Metrics
	reply := e.last(id)
	json.Unmarshal(reply.Metrics, &metrics)
	if metrics.OmittedTurns != len(turns)-want {
		t.Errorf("omittedTurns %d, want %d (metrics %s)", metrics.OmittedTurns, len(turns)-want, reply.Metrics)
	}
	frames := e.frames.settled(t)
	if f := frames[len(frames)-1]; f.Metrics == nil || f.Metrics.OmittedTurns != len(turns)-want {
		t.Errorf("final frame metrics %+v", f.Metrics)
	}
	if metrics.ContextPct == nil || *metrics.ContextPct > 100 {
		t.Errorf("context %v%%", metrics.ContextPct)
	}
}

// A turn that cannot fit the model's context on its own is refused, before
// it is stored, with the sizes in words.
func TestTurnLargerThanTheContextIsRefused(t *testing.T) {
	e := setup(t)
	e.llm.Enqueue(fakellm.Stream("Short."))
	turn := e.send(0, "Hello")
	e.wait(turn.Chat.ID)
	e.setContext(2048)
	_, err := e.c.Chat.Send(t.Context(), e.user, chat.SendInput{ChatID: turn.Chat.ID, Content: strings.Repeat("word ", 2000)})
	if apperr.KindOf(err) != apperr.Invalid || !strings.Contains(err.Error(), "too long for the model") {
		t.Fatalf("err = %v", err)
	}
	if path, _ := e.c.DB.ChatPath(t.Context(), e.user, turn.Chat.ID); len(path) != 2 {
		t.Errorf("the refused turn was stored: %d messages", len(path))
	}
}

// Building a request reads only what it sends: the memory it takes does
// not grow with the chat (80 turns of 1 MiB took the server to 2.2 GB).
func TestRequestMemoryDoesNotGrowWithTheChat(t *testing.T) {
	e := setup(t)
	small := e.longChat(1_000, 200)
	large := e.longChat(10_000, 200)
	e.setContext(4096)
	measure := func(id ids.ChatID) (bytes, allocs float64) {
		if _, _, err := e.c.Chat.RequestFor(t.Context(), e.user, id); err != nil { // warm up
			t.Fatal(err)
		}
		const runs = 5
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			req, omitted, err := e.c.Chat.RequestFor(t.Context(), e.user, id)
			if err != nil || omitted == 0 || len(req.Messages) == 0 {
				t.Fatalf("request of %d messages, %d omitted: %v", len(req.Messages), omitted, err)
			}
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc-before.TotalAlloc) / runs, float64(after.Mallocs-before.Mallocs) / runs
	}
	sb, sa := measure(small)
	lb, la := measure(large)
	t.Logf("1,000 old messages: %.0f bytes in %.0f allocations; 10,000: %.0f bytes in %.0f", sb, sa, lb, la)
	if lb/sb > 1.5 || la/sa > 1.5 {
		t.Errorf("10× the history took %.1f× the bytes and %.1f× the allocations", lb/sb, la/sa)
	}
}
