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
	"github.com/llembas/lembas/backend/store"
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
	// As a chat from before versions reads: no leaf, the newest message.
	if _, err := tx.Exec(`UPDATE chats SET leaf_id = NULL WHERE id = ?`, turn.Chat.ID); err != nil {
		e.t.Fatal(err)
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
	// Turns left out start an automatic compaction first; when the
	// summary fails, the newest turns that fit are sent.
	e.llm.Enqueue(fakellm.Status(400, `{"error":{"message":"no summaries today"}}`), fakellm.Stream("Newest answer."))
	e.send(id, "The newest question")
	e.wait(id)
	if n := len(e.compactRequests()); n != 1 {
		t.Fatalf("%d summaries tried, want 1", n)
	}

	turns := e.contents(id, 1) // without the reply just made
	// The context less a quarter kept for the reply (no max_tokens, no
	// system prompt) and 8 for the system turn's markers.
	e.checkNewestSent(id, turns, context-context/4-8, "")
}

// checkNewestSent checks that the last request carried the newest of turns
// (what could be sent, oldest first) that fit budget tokens, by the same
// rule done by hand: bytes/3 + 8 a turn, newest first, starting with a user
// turn (user turns are at even places); then nudge, if any. The reply just
// made must say how many were left out.
func (e *env) checkNewestSent(id ids.ChatID, turns []string, budget int, nudge string) {
	t := e.t
	t.Helper()
	req := e.lastReplyRequest()
	// The system message (the harness) takes its share of the budget.
	if first := req["messages"].([]any)[0].(map[string]any); first["role"] == "system" {
		budget -= (len(first["content"].(string)) + 2) / 3
	}
	want, used := 0, 0
	for i := len(turns) - 1; i >= 0; i-- {
		c := (len(turns[i])+2)/3 + 8
		if used+c > budget {
			break
		}
		used += c
		want++
	}
	if (len(turns)-want)%2 == 1 { // the oldest kept would be a reply without its question
		want--
	}
	if want == 0 || want == len(turns) {
		t.Fatalf("the test keeps %d of %d turns: make the chat longer or the context smaller", want, len(turns))
	}

	var sent []string
	for _, m := range req["messages"].([]any) {
		msg := m.(map[string]any)
		if msg["role"] != "system" {
			sent = append(sent, msg["content"].(string))
		}
	}
	if nudge != "" {
		if len(sent) == 0 || !strings.Contains(sent[len(sent)-1], nudge) {
			t.Fatalf("the request does not end with the nudge %q", nudge)
		}
		sent = sent[:len(sent)-1]
	}
	if len(sent) != want {
		t.Fatalf("%d turns sent, want the newest %d of %d", len(sent), want, len(turns))
	}
	for i, s := range sent {
		if s != turns[len(turns)-want+i] {
			t.Fatalf("sent turn %d is %.20q, want %.20q", i, s, turns[len(turns)-want+i])
		}
	}
	if msgs := req["messages"].([]any); len(msgs) < 2 || msgs[1].(map[string]any)["role"] != "user" {
		t.Errorf("the request's history does not start with a user turn")
	}

	var metrics generation.Metrics
	reply := e.last(id)
	json.Unmarshal(reply.Metrics, &metrics)
	if metrics.OmittedTurns != len(turns)-want {
		t.Errorf("omittedTurns %d, want %d (metrics %s)", metrics.OmittedTurns, len(turns)-want, reply.Metrics)
	}
	frames := e.frames.settledFor(t, reply.ID, reply.Status)
	if f := frames[len(frames)-1]; f.Metrics == nil || f.Metrics.OmittedTurns != len(turns)-want {
		t.Errorf("final frame metrics %+v", f.Metrics)
	}
	if metrics.ContextPct == nil || *metrics.ContextPct > 100 {
		t.Errorf("context %v%%", metrics.ContextPct)
	}
}

// lastReplyRequest is the newest streamed request: a reply's, not an
// automatic title's, which may arrive after it.
func (e *env) lastReplyRequest() map[string]any {
	e.t.Helper()
	reqs := e.llm.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].JSON["stream"] == true {
			return reqs[i].JSON
		}
	}
	e.t.Fatal("no reply was requested")
	return nil
}

// contents returns what could be sent of the chat's path, oldest first,
// leaving out the newest n messages.
func (e *env) contents(id ids.ChatID, leaveOut int) []string {
	e.t.Helper()
	path, err := e.c.DB.ChatPath(context.Background(), e.user, id)
	if err != nil {
		e.t.Fatal(err)
	}
	var turns []string
	for _, m := range path[:len(path)-leaveOut] {
		turns = append(turns, m.Content)
	}
	return turns
}

// Regenerate and Continue of a long chat build their request the way Send
// does: the newest turns that fit, and the count of the rest on the reply.
func TestRegenerateAndContinueSendTheNewestTurnsThatFit(t *testing.T) {
	e := setup(t)
	const old, size, context = 300, 600, 4096
	id := e.longChat(old, size)
	e.setContext(context)

	e.llm.Enqueue(fakellm.NewStream().Content("Regenerated, cut").Finish("length").Reply())
	if _, err := e.c.Chat.Regenerate(t.Context(), e.user, id); err != nil {
		t.Fatal(err)
	}
	e.wait(id)
	if n := len(e.contents(id, 0)); n != old+2 {
		t.Fatalf("%d messages after regenerating, want %d (the reply replaced)", n, old+2)
	}
	e.checkNewestSent(id, e.contents(id, 1), context-context/4-8, "")

	// The partial reply is the newest turn sent, and the nudge has room.
	turns := e.contents(id, 0)
	e.llm.Enqueue(fakellm.Stream(" off."))
	if _, err := e.c.Chat.Continue(t.Context(), e.user, id); err != nil {
		t.Fatal(err)
	}
	e.wait(id)
	if m := e.last(id); m.Content != "Regenerated, cut off." {
		t.Fatalf("continued reply %q", m.Content)
	}
	e.checkNewestSent(id, turns, context-context/4-8-32, "Continue exactly")
}

// A Regenerate whose turn no longer fits the model's context is refused
// before the old reply is deleted.
func TestRegenerateOfATurnTooLargeKeepsTheReply(t *testing.T) {
	e := setup(t)
	e.llm.Enqueue(fakellm.Stream("Keep me."))
	turn := e.send(0, strings.Repeat("word ", 2000))
	e.wait(turn.Chat.ID)
	e.setContext(2048)
	_, err := e.c.Chat.Regenerate(t.Context(), e.user, turn.Chat.ID)
	if apperr.KindOf(err) != apperr.Invalid || !strings.Contains(err.Error(), "too long for the model") {
		t.Fatalf("err = %v", err)
	}
	if got := e.contents(turn.Chat.ID, 0); len(got) != 2 || got[1] != "Keep me." {
		t.Errorf("after the refusal the chat holds %d messages, the last %.20q", len(got), got[len(got)-1])
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

// Regenerate, Continue and Edit build their requests the same way as Send:
// a whole reply through each costs the same in a chat ten times as long
// (they loaded the whole path to find the turn to answer).
func TestReplyMemoryDoesNotGrowWithTheChat(t *testing.T) {
	e := setup(t)
	small := e.longChat(1_000, 200)
	large := e.longChat(10_000, 200)
	e.setContext(4096)
	e.llm.KeepRequests(1)
	db := e.c.DB.Write()
	// Titles are the user's: no automatic title runs beside the replies.
	if _, err := db.Exec(`UPDATE chats SET title_auto = 0`); err != nil {
		t.Fatal(err)
	}
	e.c.Chat.Wait() // the titles of the first exchanges
	newestUser := func(id ids.ChatID) ids.MessageID {
		var m ids.MessageID
		if err := db.QueryRow(`SELECT MAX(id) FROM messages WHERE chat_id = ? AND role = 'user'`, id).Scan(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, op := range []struct {
		name  string
		setup func(ids.ChatID) // before each run, not measured
		run   func(ids.ChatID) error
	}{
		{"Regenerate", nil, func(id ids.ChatID) error {
			_, err := e.c.Chat.Regenerate(t.Context(), e.user, id)
			return err
		}},
		{"Continue", func(id ids.ChatID) {
			if _, err := db.Exec(`UPDATE messages SET status = 'length' WHERE id = (SELECT MAX(id) FROM messages WHERE chat_id = ?)`, id); err != nil {
				t.Fatal(err)
			}
		}, func(id ids.ChatID) error {
			_, err := e.c.Chat.Continue(t.Context(), e.user, id)
			return err
		}},
		{"Edit", nil, func(id ids.ChatID) error {
			_, err := e.c.Chat.Edit(t.Context(), e.user, newestUser(id), "The newest question, edited", nil)
			return err
		}},
	} {
		t.Run(op.name, func(t *testing.T) {
			once := func(id ids.ChatID) (bytes, allocs uint64) {
				if op.setup != nil {
					op.setup(id)
				}
				e.llm.Enqueue(fakellm.Stream("More."))
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				if err := op.run(id); err != nil {
					t.Fatal(err)
				}
				e.wait(id)
				runtime.ReadMemStats(&after)
				if m := e.last(id); m.Status != store.StatusFinal {
					t.Fatalf("reply %s: %s", m.Status, m.Error)
				}
				return after.TotalAlloc - before.TotalAlloc, after.Mallocs - before.Mallocs
			}
			measure := func(id ids.ChatID) (bytes, allocs float64) {
				once(id) // warm up
				const runs = 5
				for range runs {
					b, a := once(id)
					bytes, allocs = bytes+float64(b)/runs, allocs+float64(a)/runs
				}
				return bytes, allocs
			}
			sb, sa := measure(small)
			lb, la := measure(large)
			t.Logf("1,000 old messages: %.0f bytes in %.0f allocations; 10,000: %.0f bytes in %.0f", sb, sa, lb, la)
			if lb/sb > 1.5 || la/sa > 1.5 {
				t.Errorf("10× the history took %.1f× the bytes and %.1f× the allocations", lb/sb, la/sa)
			}
		})
	}
}

// uploadFile stores text as one of the user's unsent uploads, through the
// files service.
func (e *env) uploadFile(name, text string) ids.AttachmentID {
	e.t.Helper()
	a, err := e.c.Files.Upload(context.Background(), e.user, name, strings.NewReader(text))
	if err != nil {
		e.t.Fatal(err)
	}
	return a.ID
}

// rows counts the messages stored in chat, on any branch.
func (e *env) rows(chat ids.ChatID) int {
	e.t.Helper()
	var n int
	if err := e.c.DB.Write().QueryRow(`SELECT COUNT(*) FROM messages WHERE chat_id = ?`, chat).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// A turn whose files cannot fit the model's context is refused before it
// is stored: only its text was checked, and the turn was stored and then
// left without a reply when the request was built.
func TestTurnWhoseFilesOverflowIsRefusedBeforeItIsStored(t *testing.T) {
	e := setup(t)
	e.llm.Enqueue(fakellm.Stream("Short."))
	turn := e.send(0, "Hello")
	e.wait(turn.Chat.ID)
	id := turn.Chat.ID
	e.setContext(2048)
	doc := e.uploadFile("notes.txt", strings.Repeat("a line of the document\n", 1500)) // 34 KB: ~11,500 tokens
	refused := func(what string, err error) {
		t.Helper()
		if apperr.KindOf(err) != apperr.Invalid || !strings.Contains(err.Error(), "too long for the model") ||
			!strings.Contains(err.Error(), "of them its files") {
			t.Errorf("%s: err = %v", what, err)
		}
	}
	_, err := e.c.Chat.Send(t.Context(), e.user, chat.SendInput{ChatID: id, Content: "Summarise this", Attachments: []ids.AttachmentID{doc}})
	refused("send", err)
	if n := e.rows(id); n != 2 {
		t.Errorf("after the refused send the chat has %d messages, want 2", n)
	}
	var nchats int
	if err := e.c.DB.Write().QueryRow(`SELECT COUNT(*) FROM chats`).Scan(&nchats); err != nil {
		t.Fatal(err)
	}
	_, err = e.c.Chat.Send(t.Context(), e.user, chat.SendInput{ModelID: e.model, Content: "Summarise this", Attachments: []ids.AttachmentID{doc}})
	refused("send to a new chat", err)
	var after int
	if err := e.c.DB.Write().QueryRow(`SELECT COUNT(*) FROM chats`).Scan(&after); err != nil || after != nchats {
		t.Errorf("%d chats after a refused first message, want %d (%v)", after, nchats, err)
	}

	// Edit, attaching the document: nothing rewound.
	_, err = e.c.Chat.Edit(t.Context(), e.user, turn.User.ID, "Hello, with notes", []ids.AttachmentID{doc})
	refused("edit", err)
	if got := e.contents(id, 0); len(got) != 2 || got[0] != "Hello" || got[1] != "Short." {
		t.Errorf("after the refused edit the chat holds %q", got)
	}
	if n, err := e.c.DB.CountUnbound(t.Context(), e.user); err != nil || n != 1 {
		t.Errorf("%d unsent uploads after the refusals (%v), want the document still unsent", n, err)
	}

	// A turn that carries the document already (sent while the context
	// was larger): an edit of its text alone is refused too.
	e.setContext(65536)
	e.llm.Enqueue(fakellm.Stream("Read it."))
	withDoc, err := e.c.Chat.Send(t.Context(), e.user, chat.SendInput{ChatID: id, Content: "Summarise this", Attachments: []ids.AttachmentID{doc}})
	if err != nil {
		t.Fatal(err)
	}
	e.wait(id)
	e.setContext(2048)
	_, err = e.c.Chat.Edit(t.Context(), e.user, withDoc.User.ID, "Summarise this briefly", nil)
	refused("edit keeping the files", err)
	if got := e.contents(id, 0); len(got) != 4 || got[2] != "Summarise this" || got[3] != "Read it." {
		t.Errorf("after the refused edit the chat holds %q", got)
	}
}
