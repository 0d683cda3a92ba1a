package chat_test

import (
	"context"
	"fmt"
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
