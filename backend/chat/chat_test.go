package chat_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/config"
	"github.com/llembas/lembas/backend/connections"
	"github.com/llembas/lembas/backend/core"
	"github.com/llembas/lembas/backend/events"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/generation"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/render"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/tools"
	"github.com/llembas/lembas/frontend"
)

type env struct {
	t      testing.TB
	c      *core.Core
	llm    *fakellm.Server
	user   ids.UserID
	model  ids.ModelID
	conn   ids.ConnectionID
	frames *frameLog
}

type frameLog struct {
	mu     sync.Mutex
	frames []generation.Frame
}

// settled waits until the collector has the final frame of the reply that
// just ended (the bus hands frames to the collector's goroutine
// asynchronously), then returns every frame.
func (f *frameLog) settled(t testing.TB) []generation.Frame {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		all := f.all()
		if n := len(all); n > 0 && all[n-1].Status != store.StatusStreaming {
			return all
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the final frame never reached the follower")
	return nil
}

// settledFor waits until the newest frame of message id has the status
// its row was stored with, then returns that message's frames. A test that
// follows more than one reply needs it: settled alone may still see the
// previous reply's final frame, delivered before this reply's first one.
func (f *frameLog) settledFor(t testing.TB, id ids.MessageID, status store.Status) []generation.Frame {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var mine []generation.Frame
		for _, fr := range f.all() {
			if fr.MessageID == id {
				mine = append(mine, fr)
			}
		}
		if n := len(mine); n > 0 && mine[n-1].Status == status {
			return mine
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("the final frame of message %d (%s) never reached the follower", id, status)
	return nil
}

func (f *frameLog) all() []generation.Frame {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]generation.Frame(nil), f.frames...)
}

// testClock is the harness's clock in these tests, so requests do not
// depend on the day they run.
func testClock() time.Time { return time.Date(2026, time.March, 14, 15, 9, 26, 0, time.UTC) }

func setup(t *testing.T) *env { t.Helper(); return setupWeb(t, nil) }

// setupWeb is setup with web as what the web tools run on.
func setupWeb(t testing.TB, web tools.Web) *env {
	t.Helper()
	cfg, _ := config.Load(func(string) (string, bool) { return "", false })
	cfg.DataDir = t.TempDir()
	cfg.NoKeychain = true
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	c, err := core.Open(context.Background(), cfg, core.Options{Mode: core.Serve, Files: frontend.FS(),
		Log:        slog.New(slog.DiscardHandler),
		LLM:        llm.Options{FirstTokenTimeout: 3 * time.Second, StallTimeout: 2 * time.Second},
		Generation: generation.Options{FrameEvery: 5 * time.Millisecond, CheckpointEvery: 20 * time.Millisecond, KeepFinished: time.Second},
		ToolsWeb:   web,
		Now:        testClock,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	e := &env{t: t, c: c, llm: fakellm.New(t), user: ids.UserID(c.Owner.ID), frames: &frameLog{}}
	sub := c.Bus.Subscribe(int64(e.user), 1<<16)
	t.Cleanup(sub.Close)
	go func() {
		for ev := range sub.C() {
			if f, ok := ev.Data.(generation.Frame); ok {
				e.frames.mu.Lock()
				e.frames.frames = append(e.frames.frames, f)
				e.frames.mu.Unlock()
			}
		}
	}()
	key := "sk-test-secret-1234"
	view, err := c.Connections.Create(context.Background(), store.Actor{User: e.user, Admin: true},
		connections.Input{Name: "fake", BaseURL: e.llm.URL(), APIKey: &key})
	if err != nil {
		t.Fatal(err)
	}
	if view.LastError != "" || view.ModelCount != 1 {
		t.Fatalf("connection %+v", view)
	}
	if strings.Contains(view.APIKey, "secret") {
		t.Fatalf("key not masked: %q", view.APIKey)
	}
	e.conn = view.ID
	models, _, err := c.DB.ListModels(context.Background(), e.user, store.ModelFilter{})
	if err != nil || len(models) != 1 {
		t.Fatalf("models %v %v", models, err)
	}
	e.model = models[0].ID
	return e
}

func (e *env) wait(chat ids.ChatID) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.c.Gen.Wait(ctx, chat); err != nil {
		e.t.Fatalf("reply did not finish: %v", err)
	}
	// A first reply starts an automatic title, a request of its own to
	// the fake endpoint: let it finish, or on a busy machine it arrives
	// after the test's next Enqueue and takes that reply.
	e.c.Chat.Wait()
}

func (e *env) last(chat ids.ChatID) store.Message {
	e.t.Helper()
	msgs, _, err := e.c.DB.MessagesPage(context.Background(), e.user, chat, 0, 100)
	if err != nil || len(msgs) == 0 {
		e.t.Fatalf("messages: %v %v", msgs, err)
	}
	return msgs[len(msgs)-1]
}

func (e *env) send(chatID ids.ChatID, text string) chat.Turn {
	e.t.Helper()
	turn, err := e.c.Chat.Send(context.Background(), e.user, chat.SendInput{ChatID: chatID, ModelID: e.model, Content: text})
	if err != nil {
		e.t.Fatal(err)
	}
	return turn
}

func TestSendStreamsAndStoresTheReply(t *testing.T) {
	e := setup(t)
	e.llm.Enqueue(fakellm.NewStream().Reasoning("Thinking ", "hard.").Content("Hello", ", **Frodo**!").Usage(12, 5).Reply().Every(2 * time.Millisecond))
	turn := e.send(0, "Hi there")
	if turn.Chat.ID == 0 || turn.Assistant.Status != store.StatusStreaming {
		t.Fatalf("turn %+v", turn)
	}
	e.wait(turn.Chat.ID)
	m := e.last(turn.Chat.ID)
	if m.Content != "Hello, **Frodo**!" || m.Reasoning != "Thinking hard." || m.Status != store.StatusFinal {
		t.Fatalf("stored %+v", m)
	}
	var metrics generation.Metrics
	json.Unmarshal(m.Metrics, &metrics)
	if metrics.Estimated || metrics.CompletionTokens == nil || *metrics.CompletionTokens != 5 {
		t.Errorf("metrics %s", m.Metrics)
	}
	// The request carried the key and the user's turn, and no reasoning.
	reqs := e.llm.Requests()
	last := reqs[len(reqs)-1]
	if got := last.Header.Get("Authorization"); got != "Bearer sk-test-secret-1234" {
		t.Errorf("Authorization %q", got)
	}
	if _, ok := last.JSON["reasoning_effort"]; ok {
		t.Error("reasoning_effort sent without an effort set")
	}
	// Frames: streaming ones, then one final frame with the whole HTML.
	frames := e.frames.settled(t)
	if len(frames) < 2 {
		t.Fatalf("frames %+v", frames)
	}
	final := frames[len(frames)-1]
	var r generation.Replica
	for _, f := range frames {
		if err := r.Apply(f); err != nil {
			t.Fatal(err)
		}
	}
	if final.Status != store.StatusFinal || !strings.Contains(r.HTML(), "<strong>Frodo</strong>") || final.Content != m.Content {
		t.Errorf("final frame %+v; follower has %q", final, r.HTML())
	}
	reasoning := r.Reasoning()
	if reasoning != "Thinking hard." {
		t.Errorf("reasoning from frames %q", reasoning)
	}

	// Second turn: the history has the first exchange without reasoning.
	e.llm.Enqueue(fakellm.Stream("Again."))
	e.send(turn.Chat.ID, "And again")
	e.wait(turn.Chat.ID)
	second, _ := json.Marshal(e.streamed())
	body := string(second)
	if strings.Contains(body, "Thinking") || !strings.Contains(body, "Hello, **Frodo**!") || !strings.Contains(body, "And again") {
		t.Errorf("second request body %s", body)
	}
}

func TestStopAbortsUpstreamAndKeepsText(t *testing.T) {
	e := setup(t)
	e.llm.Enqueue(fakellm.Stream("partial ", "answer ", "more").StallAfter(3))
	turn := e.send(0, "Tell me")
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(e.liveText(turn.Chat.ID), "answer") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := e.c.Chat.Stop(context.Background(), e.user, turn.Chat.ID); err != nil {
		t.Fatal(err)
	}
	m := e.last(turn.Chat.ID)
	if m.Status != store.StatusStopped || !strings.HasPrefix(m.Content, "partial answer") {
		t.Fatalf("after stop: %+v", m)
	}
	// Continue a stopped reply.
	e.llm.Enqueue(fakellm.Stream(" and the rest."))
	if _, err := e.c.Chat.Continue(context.Background(), e.user, turn.Chat.ID); err != nil {
		t.Fatal(err)
	}
	e.wait(turn.Chat.ID)
	if m := e.last(turn.Chat.ID); m.Content != "partial answer  and the rest." && !strings.HasSuffix(m.Content, "and the rest.") {
		t.Errorf("continued: %q", m.Content)
	}
}

// streamed returns the body of the last streamed chat request (automatic
// titles are separate, non-streamed requests that may come after it).
func (e *env) streamed() map[string]any {
	e.t.Helper()
	reqs := e.llm.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].JSON["stream"] == true {
			return reqs[i].JSON
		}
	}
	e.t.Fatal("no streamed request")
	return nil
}

func (e *env) liveText(chat ids.ChatID) string {
	f, ok := e.c.Gen.Live(e.user, chat)
	if !ok {
		return ""
	}
	var r generation.Replica
	if err := r.Snapshot(f); err != nil {
		e.t.Fatal(err)
	}
	return r.HTML()
}

func TestFailuresKeepThePartialReplyAndSayWhy(t *testing.T) {
	tests := []struct {
		name  string
		reply fakellm.Reply
		want  string
	}{
		{"401", fakellm.Status(http.StatusUnauthorized, ""), "key"},
		{"429", fakellm.Status(http.StatusTooManyRequests, ""), "1"},
		{"500", fakellm.Status(http.StatusInternalServerError, ""), "500"},
		{"context", fakellm.Fixture("error-context-exceeded"), "context"},
		{"reset", fakellm.Stream("kept ", "text ", "lost").ResetAfter(3), ""},
		{"malformed", fakellm.Malformed(), ""},
		{"in-stream error", fakellm.InStreamError("upstream exploded"), "upstream exploded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := setup(t)
			e.llm.Enqueue(tt.reply)
			turn := e.send(0, "Go")
			e.wait(turn.Chat.ID)
			m := e.last(turn.Chat.ID)
			if m.Status != store.StatusError || m.Error == "" || !strings.Contains(strings.ToLower(m.Error), strings.ToLower(tt.want)) {
				t.Fatalf("status %s error %q, want error mentioning %q", m.Status, m.Error, tt.want)
			}
			if tt.name == "reset" && !strings.HasPrefix(m.Content, "kept text") {
				t.Errorf("partial reply lost: %q", m.Content)
			}
			// The app goes on: the next turn works.
			e.llm.Enqueue(fakellm.Stream("fine"))
			e.send(turn.Chat.ID, "again")
			e.wait(turn.Chat.ID)
			if m := e.last(turn.Chat.ID); m.Content != "fine" || m.Status != store.StatusFinal {
				t.Errorf("next turn: %+v", m)
			}
		})
	}
}

// A reply cut by the length limit continues where it ended, keeping the
// reasoning it showed, which the request never carries back.
func TestLengthThenContinue(t *testing.T) {
	e := setup(t)
	e.llm.Enqueue(fakellm.NewStream().Reasoning("Pondering.").Content("cut").Finish("length").Reply())
	turn := e.send(0, "Long please")
	e.wait(turn.Chat.ID)
	if m := e.last(turn.Chat.ID); m.Status != store.StatusLength {
		t.Fatalf("status %s", m.Status)
	}
	e.llm.Enqueue(fakellm.Stream(" off"))
	if _, err := e.c.Chat.Continue(context.Background(), e.user, turn.Chat.ID); err != nil {
		t.Fatal(err)
	}
	e.wait(turn.Chat.ID)
	if m := e.last(turn.Chat.ID); m.Content != "cut off" || m.Reasoning != "Pondering." || m.Status != store.StatusFinal {
		t.Errorf("after continue: %q (reasoning %q) %s", m.Content, m.Reasoning, m.Status)
	}
	body, _ := json.Marshal(e.lastReplyRequest())
	if strings.Contains(string(body), "Pondering") || !strings.Contains(string(body), `"content":"cut"`) {
		t.Errorf("continue request %s", body)
	}
}

// A reply cut before any text (only reasoning arrived) has nothing to
// continue: Continue answers the turn again, and the request never carries
// two user turns in a row, which strict chat templates refuse.
func TestContinueWithNoTextAnswersAgain(t *testing.T) {
	e := setup(t)
	e.llm.Enqueue(fakellm.NewStream().Reasoning("Pondering.").Finish("length").Reply())
	turn := e.send(0, "Long please")
	e.wait(turn.Chat.ID)
	if m := e.last(turn.Chat.ID); m.Status != store.StatusLength || m.Content != "" {
		t.Fatalf("first reply: %q %s", m.Content, m.Status)
	}
	e.llm.Enqueue(fakellm.Stream("A whole answer."))
	if _, err := e.c.Chat.Continue(context.Background(), e.user, turn.Chat.ID); err != nil {
		t.Fatal(err)
	}
	e.wait(turn.Chat.ID)
	var roles []string
	for _, m := range e.lastReplyRequest()["messages"].([]any) {
		roles = append(roles, m.(map[string]any)["role"].(string))
	}
	for i := 1; i < len(roles); i++ {
		if roles[i] == "user" && roles[i-1] == "user" {
			t.Errorf("request roles %v: two user turns in a row", roles)
		}
	}
	msgs, _, _ := e.c.DB.MessagesPage(context.Background(), e.user, turn.Chat.ID, 0, 100)
	if len(msgs) != 2 || msgs[1].Content != "A whole answer." || msgs[1].Reasoning != "" || msgs[1].Status != store.StatusFinal {
		t.Fatalf("after continue: %d messages, last %+v", len(msgs), msgs[len(msgs)-1])
	}
}

func TestRegenerateAndEditReplaceOnThePath(t *testing.T) {
	e := setup(t)
	e.llm.Enqueue(fakellm.Stream("one"))
	turn := e.send(0, "first")
	e.wait(turn.Chat.ID)
	e.llm.Enqueue(fakellm.Stream("two"))
	e.send(turn.Chat.ID, "second")
	e.wait(turn.Chat.ID)

	e.llm.Enqueue(fakellm.Stream("two again"))
	if _, err := e.c.Chat.Regenerate(context.Background(), e.user, turn.Chat.ID); err != nil {
		t.Fatal(err)
	}
	e.wait(turn.Chat.ID)
	msgs, _, _ := e.c.DB.MessagesPage(context.Background(), e.user, turn.Chat.ID, 0, 100)
	if len(msgs) != 4 || msgs[3].Content != "two again" {
		t.Fatalf("after regenerate: %d messages, last %q", len(msgs), msgs[len(msgs)-1].Content)
	}

	e.llm.Enqueue(fakellm.Stream("rewound"))
	if _, err := e.c.Chat.Edit(context.Background(), e.user, msgs[0].ID, "first, edited", nil); err != nil {
		t.Fatal(err)
	}
	e.wait(turn.Chat.ID)
	msgs, _, _ = e.c.DB.MessagesPage(context.Background(), e.user, turn.Chat.ID, 0, 100)
	if len(msgs) != 2 || msgs[0].Content != "first, edited" || msgs[1].Content != "rewound" {
		t.Fatalf("after edit: %+v", msgs)
	}
	// Editing an assistant message is refused.
	if _, err := e.c.Chat.Edit(context.Background(), e.user, msgs[1].ID, "x", nil); err == nil {
		t.Error("edited an assistant message")
	}
}

func TestEffortAndParamsPrecedence(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	temp, effort, maxTok := 0.5, "high", int64(64)
	if _, err := e.c.DB.UpdateModel(ctx, store.Actor{User: e.user, Admin: true}, e.model, store.ModelSettings{
		Enabled: true, Params: store.Params{Temperature: &temp, MaxTokens: &maxTok}, SystemPrompt: "model prompt"}); err != nil {
		t.Fatal(err)
	}
	e.llm.Enqueue(fakellm.Stream("ok"))
	turn := e.send(0, "hi")
	e.wait(turn.Chat.ID)
	chatTemp := 0.9
	if _, err := e.c.DB.UpdateChat(ctx, e.user, turn.Chat.ID, store.ChatPatch{
		Params: &store.Params{Temperature: &chatTemp, ReasoningEffort: &effort}}); err != nil {
		t.Fatal(err)
	}
	e.llm.Enqueue(fakellm.Stream("ok"))
	e.send(turn.Chat.ID, "again")
	e.wait(turn.Chat.ID)
	j := e.streamed()
	if j["temperature"] != 0.9 || j["max_tokens"] != float64(64) || j["reasoning_effort"] != "high" {
		t.Errorf("request params %v", j)
	}
	if kw, _ := j["chat_template_kwargs"].(map[string]any); kw["reasoning_effort"] != "high" {
		t.Errorf("chat_template_kwargs %v", j["chat_template_kwargs"])
	}
	msgs := j["messages"].([]any)
	if first := msgs[0].(map[string]any); first["role"] != "system" || !strings.HasSuffix(first["content"].(string), "\n\nmodel prompt") {
		t.Errorf("system prompt %v", first)
	}
}

func TestShutdownInterruptsAndRestartSaysSo(t *testing.T) {
	e := setup(t)
	e.llm.Enqueue(fakellm.Stream("half ", "way ", "there").StallAfter(3))
	turn := e.send(0, "go")
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(e.liveText(turn.Chat.ID), "way") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := e.c.Gen.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	m := e.last(turn.Chat.ID)
	if m.Status != store.StatusInterrupted || !strings.HasPrefix(m.Content, "half way") {
		t.Fatalf("after shutdown: %+v", m)
	}
}

func TestStreamOptionsRefusalIsRemembered(t *testing.T) {
	e := setup(t)
	e.llm.SetDefault(fakellm.RejectStreamOptions())
	turn := e.send(0, "hi")
	e.wait(turn.Chat.ID)
	if m := e.last(turn.Chat.ID); m.Status != store.StatusFinal {
		t.Fatalf("status %s %s", m.Status, m.Error)
	}
	// Done, which records the refusal, runs after the final frame: wait
	// for it (generously; a loaded machine may take its time).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		c, err := e.c.DB.ConnectionByID(context.Background(), e.user, e.conn)
		if err == nil && c.NoStreamOptions {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("connection %+v %v", c, err)
		}
	}
	n := len(e.llm.Requests())
	e.send(turn.Chat.ID, "again")
	e.wait(turn.Chat.ID)
	reqs := e.llm.Requests()
	for _, r := range reqs[n:] {
		if _, ok := r.JSON["stream_options"]; ok {
			t.Error("stream_options sent again after the endpoint refused it")
		}
	}
}

func TestOtherUsersCannotTouchTheChat(t *testing.T) {
	e := setup(t)
	e.llm.Enqueue(fakellm.Stream("mine"))
	turn := e.send(0, "private")
	e.wait(turn.Chat.ID)
	ctx := context.Background()
	other := e.user + 1000
	if _, err := e.c.Chat.Send(ctx, other, chat.SendInput{ChatID: turn.Chat.ID, Content: "x"}); err == nil {
		t.Error("another user sent into the chat")
	}
	if _, err := e.c.Chat.Regenerate(ctx, other, turn.Chat.ID); err == nil {
		t.Error("another user regenerated")
	}
	if _, err := e.c.Chat.Edit(ctx, other, turn.User.ID, "x", nil); err == nil {
		t.Error("another user edited")
	}
	if _, ok := e.c.Gen.Live(other, turn.Chat.ID); ok {
		t.Error("another user attached to the reply")
	}
	_ = events.Event{}
}

func TestFollowersEndWithTheFinalHTML(t *testing.T) {
	e := setup(t)
	pieces := []string{"# Title\n\n", "Some *prose* ", "here.\n\n", "- one\n", "- two\n\n", "```go\n", "func main() {\n", "\tprintln(1)\n", "}\n", "```\n\n", "| a | b |\n", "|---|---|\n", "| 1 | 2 |\n\n", "Done, $x^2$."}
	e.llm.Enqueue(fakellm.NewStream().Reasoning("Let me ", "think.").Content(pieces...).Reply().Every(15 * time.Millisecond))
	turn := e.send(0, "write")
	// Attach late: wait for a few frames, then take a snapshot.
	deadline := time.Now().Add(5 * time.Second)
	for len(e.frames.all()) < 4 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	snap, ok := e.c.Gen.Live(e.user, turn.Chat.ID)
	if !ok {
		t.Fatal("no live reply")
	}
	e.wait(turn.Chat.ID)
	frames := e.frames.settled(t)

	// Every frame but the final one: the streamed state must already be
	// the final HTML (the final frame's whole render only repairs what
	// streaming cannot know, such as reference links defined later).
	final := frames[len(frames)-1]
	streamed := frames[:len(frames)-1]
	early := &generation.Replica{}
	for _, f := range streamed {
		if err := early.Apply(f); err != nil {
			t.Fatal(err)
		}
	}
	late := &generation.Replica{}
	if err := late.Snapshot(snap); err != nil {
		t.Fatal(err)
	}
	for _, f := range streamed {
		if f.Seq > snap.Seq {
			if err := late.Apply(f); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The whole reply rendered once, as a follower attaching after the
	// end gets it.
	var whole generation.Replica
	done, _ := e.c.Gen.Live(e.user, turn.Chat.ID)
	if err := whole.Snapshot(done); err != nil {
		t.Fatal(err)
	}
	want := whole.HTML()
	for name, f := range map[string]*generation.Replica{"from the start": early, "attached late": late} {
		if f.HTML() != want {
			t.Errorf("%s: follower has\n%s\nwant\n%s", name, f.HTML(), want)
		}
		if f.Reasoning() != "Let me think." {
			t.Errorf("%s: reasoning %q", name, f.Reasoning())
		}
		if err := f.Apply(final); err != nil || f.HTML() != want {
			t.Errorf("%s: after the final frame (%v)\n%s", name, err, f.HTML())
		}
	}
	if !strings.Contains(want, `class="math`) || !strings.Contains(want, "<table>") || !strings.Contains(want, "code-block") {
		t.Errorf("final HTML lacks math, table or code block: %s", want)
	}
}

func TestNewChatStartsWithItsOwnSettings(t *testing.T) {
	e := setup(t)
	temp, effort := 0.3, "low"
	e.llm.Enqueue(fakellm.Stream("ok"))
	turn, err := e.c.Chat.Send(context.Background(), e.user, chat.SendInput{ModelID: e.model, Content: "hi",
		Params: &store.Params{Temperature: &temp, ReasoningEffort: &effort}, SystemPrompt: "Be brief."})
	if err != nil {
		t.Fatal(err)
	}
	e.wait(turn.Chat.ID)
	j := e.streamed()
	if j["temperature"] != 0.3 || j["reasoning_effort"] != "low" {
		t.Errorf("request %v", j)
	}
	if first := j["messages"].([]any)[0].(map[string]any); !strings.HasSuffix(first["content"].(string), "\n\nBe brief.") {
		t.Errorf("system prompt %v", first)
	}
	bad := "extreme"
	if _, err := e.c.Chat.Send(context.Background(), e.user, chat.SendInput{ModelID: e.model, Content: "hi",
		Params: &store.Params{ReasoningEffort: &bad}}); err == nil {
		t.Error("an unknown effort was accepted")
	}
}

func TestConcurrentSendsStartOneReply(t *testing.T) {
	e := setup(t)
	e.llm.Enqueue(fakellm.Stream("first"))
	turn := e.send(0, "start")
	e.wait(turn.Chat.ID)
	e.llm.SetDefault(fakellm.Stream("slow ", "reply").Every(50 * time.Millisecond))
	var wg sync.WaitGroup
	var ok atomic.Int32
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := e.c.Chat.Send(context.Background(), e.user, chat.SendInput{ChatID: turn.Chat.ID, Content: "again"}); err == nil {
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	e.wait(turn.Chat.ID)
	if ok.Load() != 1 {
		t.Errorf("%d concurrent sends succeeded, want 1", ok.Load())
	}
	msgs, _, _ := e.c.DB.MessagesPage(context.Background(), e.user, turn.Chat.ID, 0, 100)
	if len(msgs) != 4 {
		t.Errorf("%d messages, want 4 (two turns, two replies)", len(msgs))
	}
}

func TestRegenerateChecksBeforeDeleting(t *testing.T) {
	e := setup(t)
	e.llm.Enqueue(fakellm.Stream("keep me"))
	turn := e.send(0, "hi")
	e.wait(turn.Chat.ID)
	ctx := context.Background()
	if _, err := e.c.DB.UpdateModel(ctx, store.Actor{User: e.user, Admin: true}, e.model, store.ModelSettings{Enabled: false}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Chat.Regenerate(ctx, e.user, turn.Chat.ID); err == nil {
		t.Fatal("regenerated with a disabled model")
	}
	if _, err := e.c.Chat.Edit(ctx, e.user, turn.User.ID, "changed", nil); err == nil {
		t.Fatal("edited with a disabled model")
	}
	msgs, _, _ := e.c.DB.MessagesPage(ctx, e.user, turn.Chat.ID, 0, 100)
	if len(msgs) != 2 || msgs[0].Content != "hi" || msgs[1].Content != "keep me" {
		t.Errorf("a refused regenerate or edit changed the chat: %+v", msgs)
	}
}

func TestTrashedChatTakesNoReplies(t *testing.T) {
	e := setup(t)
	e.llm.Enqueue(fakellm.NewStream().Content("cut").Finish("length").Reply())
	turn := e.send(0, "hi")
	e.wait(turn.Chat.ID)
	ctx := context.Background()
	e.c.DB.TrashChat(ctx, e.user, turn.Chat.ID)
	if _, err := e.c.Chat.Regenerate(ctx, e.user, turn.Chat.ID); err == nil {
		t.Error("regenerated in a trashed chat")
	}
	if _, err := e.c.Chat.Continue(ctx, e.user, turn.Chat.ID); err == nil {
		t.Error("continued in a trashed chat")
	}
	if _, err := e.c.Chat.Edit(ctx, e.user, turn.User.ID, "x", nil); err == nil {
		t.Error("edited in a trashed chat")
	}
}

// unreadAtFinal is a bus that, when a reply's final frame is published,
// records whether the chat was already marked unread.
type unreadAtFinal struct {
	db   *store.DB
	user ids.UserID
	mu   sync.Mutex
	seen []bool
}

func (u *unreadAtFinal) Publish(ev events.Event) {
	f, ok := ev.Data.(generation.Frame)
	if !ok || f.Status == store.StatusStreaming {
		return
	}
	c, err := u.db.ChatByID(context.Background(), u.user, f.ChatID)
	u.mu.Lock()
	defer u.mu.Unlock()
	u.seen = append(u.seen, err == nil && c.Unread)
}

// TestChatIsUnreadBeforeTheFinalFrame: a reader who sees a reply's final
// frame marks the chat read; the unread mark must already be there, or it
// lands after the reader's MarkRead (issue 10: leaving a chat just after its
// reply finished left it unread).
func TestChatIsUnreadBeforeTheFinalFrame(t *testing.T) {
	e := setup(t)
	bus := &unreadAtFinal{db: e.c.DB, user: e.user}
	gen := generation.New(e.c.DB, bus, render.New(), slog.New(slog.DiscardHandler), generation.Options{})
	t.Cleanup(func() { gen.Shutdown(context.Background()) })
	svc := chat.New(e.c.DB, gen, e.c.Connections, bus, slog.New(slog.DiscardHandler), chat.Options{})
	e.llm.Enqueue(fakellm.Stream("an answer"))
	turn, err := svc.Send(context.Background(), e.user, chat.SendInput{ModelID: e.model, Content: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := gen.Wait(ctx, turn.Chat.ID); err != nil {
		t.Fatal(err)
	}
	// Wait returns at the final frame, before the reply's Done callback,
	// which may still start an automatic title (bg.Add): shut generation
	// down first, as core.Close does, so that svc.Wait waits for that too.
	if err := gen.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	svc.Wait()
	bus.mu.Lock()
	defer bus.mu.Unlock()
	if len(bus.seen) != 1 || !bus.seen[0] {
		t.Errorf("unread when the final frame went out: %v, want [true]", bus.seen)
	}
	if err := e.c.DB.MarkRead(ctx, e.user, turn.Chat.ID); err != nil {
		t.Fatal(err)
	}
	if c, _ := e.c.DB.ChatByID(ctx, e.user, turn.Chat.ID); c.Unread {
		t.Error("still unread after MarkRead")
	}
}

// TestStoppedPartialIsRendered: a reply stopped in the middle of **bold**
// shows bold text, in its final frame as in the stored message's HTML, and
// continuing it appends to the source.
func TestStoppedPartialIsRendered(t *testing.T) {
	e := setup(t)
	e.llm.Enqueue(fakellm.Stream("Here is ", "**bold te", "xt** never").StallAfter(3))
	turn := e.send(0, "Tell me")
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(e.liveText(turn.Chat.ID), "bold te") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := e.c.Chat.Stop(context.Background(), e.user, turn.Chat.ID); err != nil {
		t.Fatal(err)
	}
	e.wait(turn.Chat.ID)
	frames := e.frames.settled(t)
	final := frames[len(frames)-1]
	var r generation.Replica
	for _, f := range frames {
		if err := r.Apply(f); err != nil {
			t.Fatal(err)
		}
	}
	if final.Status != store.StatusStopped || !strings.Contains(r.HTML(), "<strong>bold te</strong>") {
		t.Errorf("final frame %s: %q", final.Status, r.HTML())
	}
	var page struct {
		Messages []struct {
			Status store.Status `json:"status"`
			HTML   string       `json:"html"`
		} `json:"messages"`
	}
	e.call("Chats.Messages", &page, turn.Chat.ID, 0, 50)
	if n := len(page.Messages); n != 2 || !strings.Contains(page.Messages[1].HTML, "<strong>bold te</strong>") {
		t.Errorf("stored reply: %+v", page.Messages)
	}
	e.llm.Enqueue(fakellm.Stream("xt** and more."))
	if _, err := e.c.Chat.Continue(context.Background(), e.user, turn.Chat.ID); err != nil {
		t.Fatal(err)
	}
	e.wait(turn.Chat.ID)
	if m := e.last(turn.Chat.ID); m.Content != "Here is **bold text** and more." {
		t.Errorf("continued: %q", m.Content)
	}
}

// call runs a facade method as the owner, as the frontend would, and
// decodes its result into out.
func (e *env) call(method string, out any, args ...any) {
	e.t.Helper()
	b, _ := json.Marshal(args)
	r := e.c.Dispatcher.Call(context.Background(), api.Caller{UserID: int64(e.user), Admin: true, Owner: true}, method, b)
	if r.Error != nil {
		e.t.Fatalf("%s: %+v", method, r.Error)
	}
	if err := json.Unmarshal(r.Result, out); err != nil {
		e.t.Fatalf("%s: %v", method, err)
	}
}
