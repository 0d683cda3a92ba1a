package chat_test

import (
	"context"
	"fmt"
	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/generation"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// exchanges sends n questions ("q1"…) with their answers ("a1"…), each
// padded to pad bytes, and returns the chat.
func (e *env) exchanges(chatID ids.ChatID, from, n, pad int) ids.ChatID {
	e.t.Helper()
	for i := from; i < from+n; i++ {
		e.llm.Enqueue(fakellm.Stream(fmt.Sprintf("a%d", i) + strings.Repeat(".", pad)))
		turn := e.send(chatID, fmt.Sprintf("q%d", i)+strings.Repeat(".", pad))
		chatID = turn.Chat.ID
		e.wait(chatID)
	}
	return chatID
}

// contents is the role and the first word of each message of a request.
func contents(req map[string]any) []string {
	var out []string
	for _, m := range req["messages"].([]any) {
		mm := m.(map[string]any)
		c, _ := mm["content"].(string)
		out = append(out, mm["role"].(string)+":"+strings.TrimRight(strings.Fields(c + " -")[0], "."))
	}
	return out
}

func (e *env) compactRequests() []map[string]any {
	var out []map[string]any
	for _, r := range e.llm.Requests() {
		if r.JSON != nil && r.JSON["stream"] != true && strings.Contains(fmt.Sprint(r.JSON["messages"]), "Summarise the conversation above") {
			out = append(out, r.JSON)
		}
	}
	return out
}

func hasTurn(list []string, want string) bool {
	for _, s := range list {
		if s == want {
			return true
		}
	}
	return false
}

// Compaction hides the earlier turns from requests behind a summary pair
// (user, assistant), and Undo sends them again.
func TestCompactThenUndo(t *testing.T) {
	e := setup(t)
	chatID := e.exchanges(0, 1, 3, 0)

	e.llm.Enqueue(fakellm.Stream("SUMMARY of q1"))
	var v api.ChatView
	e.call("Chats.Compact", &v, chatID)
	if v.Compact == nil || v.Compact.Summary != "SUMMARY of q1" || v.Context == nil || v.Context.Before == nil {
		t.Fatalf("compact view: %+v %+v", v.Compact, v.Context)
	}
	reqs := e.compactRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d summary requests", len(reqs))
	}
	got := contents(reqs[0])
	if !hasTurn(got, "user:q1") || !hasTurn(got, "assistant:a1") || hasTurn(got, "user:q2") || hasTurn(got, "user:q3") {
		t.Errorf("summary request carries %v, want q1 and a1 only", got)
	}
	path, _ := e.c.DB.ChatPath(context.Background(), e.user, chatID)
	if v.Compact.Through != path[1].ID {
		t.Errorf("through %d, want the first reply %d", v.Compact.Through, path[1].ID)
	}

	e.exchanges(chatID, 4, 1, 0)
	got = contents(e.streamed())
	want := []string{"user:Summarise", "assistant:SUMMARY", "user:q2", "assistant:a2", "user:q3", "assistant:a3", "user:q4"}
	if strings.Join(got[len(got)-len(want):], " ") != strings.Join(want, " ") || hasTurn(got, "user:q1") {
		t.Errorf("after compaction the request is %v, want … %v", got, want)
	}

	e.call("Chats.Uncompact", &v, chatID)
	if v.Compact != nil {
		t.Fatalf("still compacted: %+v", v.Compact)
	}
	e.exchanges(chatID, 5, 1, 0)
	got = contents(e.streamed())
	if !hasTurn(got, "user:q1") || !hasTurn(got, "assistant:a1") || hasTurn(got, "assistant:SUMMARY") {
		t.Errorf("after undo the request is %v, want the full turns", got)
	}
}

// A chat no longer than the two exchanges a compaction keeps has nothing
// to compact.
func TestCompactShortChatIsRefused(t *testing.T) {
	e := setup(t)
	chatID := e.exchanges(0, 1, 2, 0)
	if _, err := e.c.Chat.Compact(context.Background(), e.user, chatID); err == nil {
		t.Fatal("compacted a chat of two exchanges")
	}
}

// A compaction whose message left the chat's path (an edit starts a new
// branch, a version switch) is ignored on read: no summary in the view or
// the request. It is not forgotten: switching back to the version it
// summarised brings it back.
func TestCompactionOffThePathIsIgnored(t *testing.T) {
	e := setup(t)
	chatID := e.exchanges(0, 1, 3, 0)
	e.llm.Enqueue(fakellm.Stream("SUMMARY"))
	var v api.ChatView
	e.call("Chats.Compact", &v, chatID)
	path, _ := e.c.DB.ChatPath(context.Background(), e.user, chatID)

	// Editing the first turn makes a new branch beside the old: the
	// summary's message is on the old one.
	e.llm.Enqueue(fakellm.Stream("a1 again"))
	if _, err := e.c.Chat.Edit(context.Background(), e.user, path[0].ID, "edited q1", nil); err != nil {
		t.Fatal(err)
	}
	e.wait(chatID)
	e.call("Chats.Get", &v, chatID)
	if v.Compact != nil {
		t.Errorf("the view keeps a summary whose message left the path: %+v", v.Compact)
	}
	e.exchanges(chatID, 9, 1, 0)
	if got := contents(e.streamed()); hasTurn(got, "assistant:SUMMARY") || !hasTurn(got, "user:edited") {
		t.Errorf("request carries the summary of turns no longer on the path: %v", got)
	}

	// Back on the original version, the summary stands again for the
	// turns it covers.
	var pv api.PathView
	e.call("Chats.SwitchVersion", &pv, path[0].ID)
	if pv.Chat.Compact == nil || pv.Chat.Compact.Summary != "SUMMARY" || pv.Chat.Compact.Through != path[1].ID {
		t.Fatalf("back on the summarised version, the compaction is %+v", pv.Chat.Compact)
	}
	e.exchanges(chatID, 10, 1, 0)
	got := contents(e.streamed())
	want := []string{"user:Summarise", "assistant:SUMMARY", "user:q2", "assistant:a2", "user:q3", "assistant:a3", "user:q10"}
	if strings.Join(got[len(got)-len(want):], " ") != strings.Join(want, " ") || hasTurn(got, "user:q1") || hasTurn(got, "user:q9") {
		t.Errorf("back on the summarised version the request is %v, want … %v", got, want)
	}
}

// The summary is the model's text: its HTML is sanitised like a reply's.
func TestCompactSummaryIsSanitised(t *testing.T) {
	e := setup(t)
	chatID := e.exchanges(0, 1, 3, 0)
	e.llm.Enqueue(fakellm.Stream("<script>alert(1)</script><img src=x onerror=alert(2)>\n\n**kept**"))
	var v api.ChatView
	e.call("Chats.Compact", &v, chatID)
	if v.Compact == nil {
		t.Fatal("no compaction")
	}
	h := v.Compact.HTML
	if strings.Contains(h, "<script") || strings.Contains(h, "onerror") || !strings.Contains(h, "<strong>kept</strong>") {
		t.Errorf("summary HTML %q", h)
	}
}

// A Send whose request would fill a known window compacts first, and the
// reply says so; an unknown window (0) never compacts.
func TestAutoCompactOnlyNearAKnownWindow(t *testing.T) {
	e := setup(t)
	e.setWindow(0)
	chatID := e.longChat(130, 3000)
	e.exchanges(chatID, 1, 1, 0)
	if n := len(e.compactRequests()); n != 0 {
		t.Fatalf("%d summaries with an unknown window", n)
	}
	var v api.ChatView
	e.call("Chats.Get", &v, chatID)
	if v.Context == nil || v.Context.Limit != 0 || !v.Context.Estimated || v.Context.Used < 130*3000/4 {
		t.Errorf("context %+v", v.Context)
	}

	// 64,000 tokens: the history that fits (all but min(4096, a quarter))
	// is above 90 % of it.
	e.setWindow(64000)
	e.llm.Enqueue(fakellm.Stream("SUMMARY auto"))
	e.exchanges(chatID, 6, 1, 0)
	if n := len(e.compactRequests()); n != 1 {
		t.Fatalf("%d summaries near a known window, want 1", n)
	}
	got := contents(e.streamed())
	if !hasTurn(got, "assistant:SUMMARY") || len(got) > 8 || !hasTurn(got, "user:q6") {
		t.Errorf("request after automatic compaction: %v", got)
	}
	last := e.last(chatID)
	parts := last.Parts()
	if len(parts) == 0 || parts[0].Kind != store.PartNotice || !strings.Contains(parts[0].Text, "summarised") {
		t.Errorf("the reply does not say it compacted first: %+v", parts)
	}
	if !strings.HasPrefix(last.Content, "a6") {
		t.Errorf("reply %q", last.Content)
	}
	// The summary covers the turns the window left out: no marker says
	// they were not sent.
	if strings.Contains(string(last.Metrics), "omittedTurns") {
		t.Errorf("metrics %s count omitted turns the summary covers", last.Metrics)
	}
	e.call("Chats.Get", &v, chatID)
	if v.Context == nil || v.Context.Limit != 64000 || v.Context.Used > 3000 {
		t.Errorf("context after compaction %+v", v.Context)
	}
}

// A small window (an 8k local model) compacts too: its history is cut to
// what fits before the share is measured, so the turns it had to leave
// out are what says it is near the window.
func TestAutoCompactInASmallWindow(t *testing.T) {
	e := setup(t)
	e.setWindow(8000)
	chatID := e.longChat(20, 3000) // about 15,000 tokens
	if n := len(e.compactRequests()); n != 0 {
		t.Fatalf("%d summaries before the window was reached", n)
	}
	e.llm.Enqueue(fakellm.Stream("SUMMARY small"))
	e.exchanges(chatID, 30, 1, 0)
	if n := len(e.compactRequests()); n != 1 {
		t.Fatalf("%d summaries in an 8k window that leaves turns out, want 1", n)
	}
	got := contents(e.streamed())
	if !hasTurn(got, "assistant:SUMMARY") || !hasTurn(got, "user:q30") {
		t.Errorf("request after automatic compaction: %v", got)
	}
	if last := e.last(chatID); strings.Contains(string(last.Metrics), "omittedTurns") {
		t.Errorf("metrics %s count omitted turns the summary covers", last.Metrics)
	}
	// The next message fits after the summary: no second compaction (the
	// turns the summary covers are not "left out").
	e.exchanges(chatID, 31, 1, 0)
	if n := len(e.compactRequests()); n != 1 {
		t.Errorf("%d summaries after a message that fits behind the summary, want 1", n)
	}
}

// An automatic compaction runs in the reply, not in Send: Send answers
// while the summary is still being written, the reply says what it is
// doing, and Stop ends the summary with the reply (nothing is stored).
func TestAutoCompactRunsInTheReply(t *testing.T) {
	e := setup(t)
	e.setWindow(8000)
	chatID := e.longChat(20, 3000)
	e.llm.Enqueue(fakellm.Stream("SUMMARY never finished").StallAfter(1))
	sent := make(chan chat.Turn, 1)
	go func() { sent <- e.send(chatID, "q40") }()
	select {
	case <-sent:
	case <-time.After(60 * time.Second):
		t.Fatal("Send waited for the summary")
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if len(e.compactRequests()) == 1 && slices.ContainsFunc(e.frames.all(), func(f generation.Frame) bool {
			return f.Activity != nil && *f.Activity == "Summarising the earlier turns first…"
		}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the reply never said it was summarising")
		}
	}
	if err := e.c.Chat.Stop(context.Background(), e.user, chatID); err != nil {
		t.Fatal(err)
	}
	e.wait(chatID)
	if last := e.last(chatID); last.Status != store.StatusStopped {
		t.Errorf("the reply after Stop: %s", last.Status)
	}
	if c, err := e.c.Chat.Compaction(context.Background(), e.user, chatID); err != nil || c != nil {
		t.Errorf("a compaction stopped midway left %+v, %v", c, err)
	}
	if n := len(e.llm.Requests()) - len(e.compactRequests()); n == 0 {
		return
	}
	for _, r := range e.llm.Requests() {
		if r.JSON != nil && r.JSON["stream"] == true && strings.Contains(fmt.Sprint(r.JSON["messages"]), "q40") {
			t.Errorf("the reply was asked for after Stop: %v", contents(r.JSON))
		}
	}
}

// setWindow sets the model's context length as the endpoint reported it
// (0: unknown).
func (e *env) setWindow(n int) {
	e.t.Helper()
	if _, err := e.c.DB.Write().Exec(`UPDATE models SET context_length_override = 0, context_length = ?`, n); err != nil {
		e.t.Fatal(err)
	}
}

// The meter counts the last reply's usage when the endpoint gave one (not
// an estimate), and estimates again once a compaction came after it.
func TestContextUsesTheLastReplysUsage(t *testing.T) {
	e := setup(t)
	chatID := e.exchanges(0, 1, 2, 0)
	e.llm.Enqueue(fakellm.NewStream().Content("a3").Usage(1200, 34).Reply())
	e.send(chatID, "q3")
	e.wait(chatID)
	var v api.ChatView
	e.call("Chats.Get", &v, chatID)
	if v.Context == nil || v.Context.Used != 1234 || v.Context.Estimated {
		t.Fatalf("context %+v, want the last reply's 1234 tokens", v.Context)
	}
	e.llm.Enqueue(fakellm.Stream("SUMMARY"))
	e.call("Chats.Compact", &v, chatID)
	if v.Context == nil || !v.Context.Estimated || v.Context.Before == nil || *v.Context.Before != 1234 {
		t.Errorf("context after compaction %+v", v.Context)
	}
}

// After a compaction that shrank the request the meter's figure goes
// down, even where the endpoint's exact count is far below the 4
// characters a token estimate (99 → ~432 was shown): the exact count is
// scaled by what the compaction left.
func TestContextAfterCompactionDoesNotGrow(t *testing.T) {
	e := setup(t)
	chatID := e.exchanges(0, 1, 2, 400)
	e.llm.Enqueue(fakellm.NewStream().Content("a3"+strings.Repeat(".", 400)).Usage(90, 9).Reply())
	e.send(chatID, "q3"+strings.Repeat(".", 400))
	e.wait(chatID)
	e.llm.Enqueue(fakellm.Stream("SUMMARY"))
	var v api.ChatView
	e.call("Chats.Compact", &v, chatID)
	if v.Context == nil || v.Context.Before == nil || *v.Context.Before != 99 || v.Context.BeforeEstimated {
		t.Fatalf("context before compaction %+v, want the exact 99", v.Context)
	}
	if !v.Context.Estimated || v.Context.Used <= 0 || v.Context.Used >= 99 {
		t.Errorf("context after compaction %+v, want an estimate under the 99 before", v.Context)
	}
	var again api.ChatView
	e.call("Chats.Get", &again, chatID)
	if again.Context == nil || again.Context.Used != v.Context.Used {
		t.Errorf("Chats.Get's context %+v, Compact's %+v", again.Context, v.Context)
	}
}

// A second compaction summarises the first summary and the turns after
// it, not the turns the first one covered.
func TestCompactAgainBuildsOnTheSummary(t *testing.T) {
	e := setup(t)
	chatID := e.exchanges(0, 1, 3, 0)
	e.llm.Enqueue(fakellm.Stream("FIRST summary"))
	var v api.ChatView
	e.call("Chats.Compact", &v, chatID)
	e.exchanges(chatID, 4, 2, 0)
	e.llm.Enqueue(fakellm.Stream("SECOND summary"))
	e.call("Chats.Compact", &v, chatID)
	reqs := e.compactRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d summary requests", len(reqs))
	}
	got := contents(reqs[1])
	want := []string{"user:Summarise", "assistant:FIRST", "user:q2", "assistant:a2", "user:q3", "assistant:a3", "user:Summarise"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("second summary request %v, want %v", got, want)
	}
	e.exchanges(chatID, 6, 1, 0)
	got = contents(e.streamed())
	want = []string{"user:Summarise", "assistant:SECOND", "user:q4", "assistant:a4", "user:q5", "assistant:a5", "user:q6"}
	if strings.Join(got[len(got)-len(want):], " ") != strings.Join(want, " ") || hasTurn(got, "assistant:FIRST") {
		t.Errorf("request after the second compaction %v", got)
	}
}

// Compaction waits for no reply: while one is being written it is refused
// as a conflict.
func TestCompactWhileReplyingIsAConflict(t *testing.T) {
	e := setup(t)
	chatID := e.exchanges(0, 1, 3, 0)
	e.llm.Enqueue(fakellm.Stream("slow").FirstByteAfter(time.Second))
	e.send(chatID, "q4")
	_, err := e.c.Chat.Compact(context.Background(), e.user, chatID)
	if apperr.KindOf(err) != apperr.Conflict {
		t.Errorf("compact during a reply: %v, want a conflict", err)
	}
	e.wait(chatID)
}

// A summary the chat should not carry is refused and nothing changes: one
// the model was cut off in (finish reason length: the newest of what it
// summarised is missing), one that runs on past the bound, one taking
// more than a quarter of a known window, and one that failed (an error
// status, an error in the stream). The next request still carries the
// full turns.
func TestCompactRefusesACutOffOrRunawaySummary(t *testing.T) {
	e := setup(t)
	var chatID ids.ChatID
	for _, tc := range []struct {
		name   string
		window int
		reply  fakellm.Reply
	}{
		{"cut off", 0, fakellm.NewStream().Content("SUMMARY of q1 and").Finish("length").Reply()},
		{"runaway", 0, fakellm.Stream("SUMMARY " + strings.Repeat("la ", 30<<10))},
		{"past a quarter of the window", 8000, fakellm.Stream("SUMMARY " + strings.Repeat("la ", 3000))},
		{"endpoint error", 0, fakellm.Status(500, `{"error":{"message":"out of memory"}}`)},
		{"error mid-stream", 0, fakellm.NewStream().Content("SUMMARY of").Error("the model crashed").Reply()},
	} {
		e.setWindow(tc.window)
		chatID = e.exchanges(0, 1, 3, 0)
		e.llm.Enqueue(tc.reply)
		if kind := e.callErr("Chats.Compact", chatID); kind != string(apperr.Unavailable) {
			t.Errorf("%s: Compact gave %q, want unavailable", tc.name, kind)
		}
		var v api.ChatView
		e.call("Chats.Get", &v, chatID)
		if v.Compact != nil {
			t.Errorf("%s: a summary was stored: %.40q", tc.name, v.Compact.Summary)
		}
	}
	e.setWindow(0)
	e.exchanges(chatID, 4, 1, 0)
	if got := contents(e.streamed()); !hasTurn(got, "user:q1") || hasTurn(got, "assistant:SUMMARY") {
		t.Errorf("after refused summaries the request is %v, want the full turns", got)
	}
}

// compactHeld starts a compaction of chatID whose summary the endpoint
// holds back until release is called, and returns once its request has
// arrived; done receives Compact's error.
func (e *env) compactHeld(chatID ids.ChatID, summary string) (release func(), done <-chan error) {
	e.t.Helper()
	gate := make(chan struct{})
	e.llm.Enqueue(fakellm.NewStream().Event(fakellm.Event{Comment: "held", After: gate}).Content(summary).Reply())
	before := len(e.compactRequests())
	out := make(chan error, 1)
	go func() {
		_, err := e.c.Chat.Compact(context.Background(), e.user, chatID)
		out <- err
	}()
	deadline := time.Now().Add(20 * time.Second)
	for len(e.compactRequests()) == before {
		if time.Now().After(deadline) {
			close(gate)
			e.t.Fatal("the summary's request never arrived")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return func() { close(gate) }, out
}

// The chat's lock is not held while a summary is written, so what changed
// meanwhile decides whether it is stored: an Undo pressed then stays
// undone (the summary was built on the summary undone), and a version
// deleted then does not come back through a reused message id (the
// summary of its turns would stand for newer turns that reuse the id).
func TestCompactionRacesAreRefused(t *testing.T) {
	t.Run("a second compaction meanwhile", func(t *testing.T) {
		e := setup(t)
		chatID := e.exchanges(0, 1, 3, 0)
		release, done := e.compactHeld(chatID, "SUMMARY held")
		_, err := e.c.Chat.Compact(context.Background(), e.user, chatID)
		if apperr.KindOf(err) != apperr.Conflict || !strings.Contains(err.Error(), "being written already") {
			t.Errorf("a second compaction meanwhile: %v, want a conflict", err)
		}
		release()
		if err := <-done; err != nil {
			t.Errorf("the first compaction: %v", err)
		}
		if n := len(e.compactRequests()); n != 1 {
			t.Errorf("%d summaries asked for, want 1", n)
		}
	})

	t.Run("undo meanwhile", func(t *testing.T) {
		e := setup(t)
		chatID := e.exchanges(0, 1, 3, 0)
		e.llm.Enqueue(fakellm.Stream("SUMMARY one"))
		var v api.ChatView
		e.call("Chats.Compact", &v, chatID)
		chatID = e.exchanges(chatID, 4, 2, 0)

		release, done := e.compactHeld(chatID, "SUMMARY two")
		e.call("Chats.Uncompact", &v, chatID)
		release()
		if err := <-done; apperr.KindOf(err) != apperr.Conflict {
			t.Errorf("a compaction over an Undo gave %v, want a conflict", err)
		}
		e.call("Chats.Get", &v, chatID)
		if v.Compact != nil {
			t.Errorf("the Undo was overwritten: %.40q", v.Compact.Summary)
		}
	})

	t.Run("deleted version, id reused", func(t *testing.T) {
		e := setup(t)
		chatID := e.exchanges(0, 1, 1, 0)
		// A second version of the first reply, and the chat goes on after it.
		e.llm.Enqueue(fakellm.Stream("a1 again"))
		if _, err := e.c.Chat.Regenerate(context.Background(), e.user, chatID); err != nil {
			t.Fatal(err)
		}
		e.wait(chatID)
		again := e.last(chatID).ID
		chatID = e.exchanges(chatID, 2, 3, 0)

		release, done := e.compactHeld(chatID, "SUMMARY of the deleted branch")
		// Meanwhile the branch is deleted (back to the first reply) and the
		// chat goes on: the new messages take the deleted ones' ids.
		var p api.PathView
		e.call("Chats.DeleteVersion", &p, again)
		chatID = e.exchanges(chatID, 7, 3, 0)
		release()
		err := <-done
		var v api.ChatView
		e.call("Chats.Get", &v, chatID)
		if v.Compact != nil {
			t.Errorf("a summary of a deleted version stands for newer turns (err %v): %.40q through %d", err, v.Compact.Summary, v.Compact.Through)
		}
	})
}
