package generation

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/events"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/render"
	"github.com/llembas/lembas/backend/secrets"
	"github.com/llembas/lembas/backend/store"
)

// replyEnv is one chat with a streaming assistant row in a real SQLite
// file, and a generation service writing through a writer that fails
// while fail says so.
type replyEnv struct {
	db      *store.DB
	bus     *events.Bus
	gen     *Service
	user    ids.UserID
	chat    ids.ChatID
	msg     ids.MessageID
	client  *llm.Client
	llm     *fakellm.Server
	dir     string
	failed  atomic.Int64 // failed writes of a final row
	written atomic.Int64 // final rows written
}

var errInjected = errors.New("injected: database is locked")

func newReplyEnv(t *testing.T, fail func(e *replyEnv) bool) *replyEnv {
	return newReplyEnvLog(t, fail, slog.New(slog.DiscardHandler))
}

func newReplyEnvLog(t *testing.T, fail func(e *replyEnv) bool, log *slog.Logger) *replyEnv {
	return newReplyEnvOpt(t, fail, log, Options{FrameEvery: 5 * time.Millisecond, CheckpointEvery: 20 * time.Millisecond})
}

func newReplyEnvOpt(t *testing.T, fail func(e *replyEnv) bool, log *slog.Logger, opt Options) *replyEnv {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(dir, "lembas.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Sync(ctx, store.Current, dir); err != nil {
		t.Fatal(err)
	}
	owner, err := db.EnsureOwner(ctx, "owner", "Owner")
	if err != nil {
		t.Fatal(err)
	}
	e := &replyEnv{db: db, user: ids.UserID(owner.ID), llm: fakellm.New(t)}
	c, _, err := db.CreateChat(ctx, e.user, store.NewChat{}, store.Message{Role: store.RoleUser, Content: "hi", Status: store.StatusFinal})
	if err != nil {
		t.Fatal(err)
	}
	e.chat = c.ID
	m, err := db.AddMessage(ctx, e.user, c.ID, store.Message{Role: store.RoleAssistant, Status: store.StatusStreaming})
	if err != nil {
		t.Fatal(err)
	}
	e.msg = m.ID
	if e.client, err = llm.NewClient(llm.Endpoint{BaseURL: e.llm.URL()}, llm.Options{}); err != nil {
		t.Fatal(err)
	}
	e.dir = dir
	e.bus = events.NewBus()
	e.gen = New(db, e.bus, render.New(), log, opt)
	// watch sees every frame, so each write of a final row can check that
	// its final frame has not been sent yet: a follower seeing it reloads
	// the message, which must be final by then.
	watch := e.bus.Subscribe(int64(e.user), 1<<14)
	var watchMu sync.Mutex
	framed := map[ids.MessageID]bool{}
	frameFirst := func(id ids.MessageID) bool {
		watchMu.Lock()
		defer watchMu.Unlock()
		for len(watch.C()) > 0 {
			if f, ok := (<-watch.C()).Data.(Frame); ok && f.Status != StatusStreaming {
				framed[f.MessageID] = true
			}
		}
		return framed[id]
	}
	t.Cleanup(func() {
		if watch.Overflows() > 0 {
			t.Error("the frame watch fell behind")
		}
		watch.Close()
	})
	e.gen.write = func(ctx context.Context, ups []store.MessageUpdate) ([]ids.MessageID, error) {
		final := len(ups) == 1 && ups[0].Status != StatusStreaming
		if final && frameFirst(ups[0].ID) {
			t.Errorf("message %d: the final frame was sent before the final row was written", ups[0].ID)
		}
		if fail != nil && fail(e) {
			if final {
				e.failed.Add(1)
			}
			return nil, errInjected
		}
		gone, err := db.Checkpoint(ctx, ups)
		if err == nil && final {
			e.written.Add(1)
		}
		return gone, err
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := e.gen.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return e
}

func (e *replyEnv) start(t *testing.T, pieces ...string) {
	t.Helper()
	e.llm.Enqueue(fakellm.NewStream().Content(pieces...).Reply())
	if err := e.gen.Start(Job{User: e.user, Chat: e.chat, Message: e.msg, Client: e.client,
		Request: llm.ChatRequest{Model: "m", Messages: []llm.Message{{Role: "user", Content: "hi"}}}}); err != nil {
		t.Fatal(err)
	}
}

// poll waits (generously) until ok holds.
func poll(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !ok(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting until %s", what)
		}
	}
}

func (e *replyEnv) row(t *testing.T) store.Message {
	t.Helper()
	m, err := e.db.MessageByID(context.Background(), e.user, e.msg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A final write that fails a few times is retried until it lands: rows
// stayed "streaming" after their job ended while the browser had been
// sent the final frame.
func TestFinalWriteIsRetriedUntilItLands(t *testing.T) {
	e := newReplyEnv(t, func(e *replyEnv) bool { return e.failed.Load() < 3 })
	e.start(t, "The whole ", "reply, ", "every word.")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.gen.Wait(ctx, e.chat); err != nil {
		t.Fatal(err)
	}
	if n := e.failed.Load(); n != 3 {
		t.Errorf("%d failed final writes, want 3", n)
	}
	m := e.row(t)
	if m.Status != store.StatusFinal || m.Content != "The whole reply, every word." {
		t.Errorf("row is %s with %q", m.Status, m.Content)
	}
	if f, ok := e.gen.Live(e.user, e.chat); !ok || f.Status != store.StatusFinal {
		t.Errorf("final frame %+v %v", f.Status, ok)
	}
}

// A final write still failing when Shutdown begins gets its last chance
// then, and Shutdown waits for it.
func TestFinalWriteGetsALastChanceAtShutdown(t *testing.T) {
	e := newReplyEnv(t, func(e *replyEnv) bool {
		select {
		case <-e.gen.closing:
			return false
		default:
			return true
		}
	})
	e.start(t, "Written ", "at the end.")
	poll(t, "two final writes have failed", func() bool { return e.failed.Load() >= 2 })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.gen.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if e.written.Load() != 1 {
		t.Errorf("%d final rows written", e.written.Load())
	}
	m := e.row(t)
	if m.Status != store.StatusFinal || m.Content != "Written at the end." {
		t.Errorf("row is %s with %q", m.Status, m.Content)
	}
}

// Shutdown beginning while a retry (not the first attempt) is under way,
// which then fails, still leaves the row one attempt made after Shutdown
// began: the retry in flight started before it. It gave up instead, and the
// finished reply stayed "streaming" (TestFinalWriteGetsALastChanceAtShutdown
// met this whenever Shutdown landed during its second attempt).
func TestFinalWriteGetsALastChanceWhenShutdownBeginsDuringARetry(t *testing.T) {
	e := newReplyEnv(t, nil)
	inner := e.gen.write
	var finals atomic.Int64
	shut := make(chan error, 1)
	e.gen.write = func(ctx context.Context, ups []store.MessageUpdate) ([]ids.MessageID, error) {
		if len(ups) != 1 || ups[0].Status == StatusStreaming {
			return inner(ctx, ups)
		}
		switch finals.Add(1) {
		case 1:
			return nil, errInjected
		case 2:
			go func() { shut <- e.gen.Shutdown(context.Background()) }()
			<-e.gen.closing
			return nil, errInjected
		}
		return inner(ctx, ups)
	}
	e.start(t, "Written ", "after all.")
	select {
	case err := <-shut:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Shutdown did not return")
	}
	if n := e.written.Load(); n != 1 {
		t.Errorf("%d final rows written after %d attempts, want 1", n, finals.Load())
	}
	if m := e.row(t); m.Status != store.StatusFinal || m.Content != "Written after all." {
		t.Errorf("row is %s with %q", m.Status, m.Content)
	}
}

// retries counts the final writes the service reports as failed.
type retries struct {
	slog.Handler
	n *atomic.Int64
}

func (r retries) Enabled(context.Context, slog.Level) bool { return true }

func (r retries) Handle(ctx context.Context, rec slog.Record) error {
	if strings.HasPrefix(rec.Message, "write final reply") {
		r.n.Add(1)
	}
	return nil
}

// With the real database locked by another connection (SQLite answers
// "database is locked" after its busy timeout), the final row is written
// once the lock goes.
func TestFinalWriteWaitsOutALockedDatabase(t *testing.T) {
	var failed atomic.Int64
	e := newReplyEnvLog(t, nil, slog.New(retries{Handler: slog.DiscardHandler, n: &failed}))
	locker, err := sql.Open("sqlite", "file:"+filepath.Join(e.dir, "lembas.db")+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close()
	conn, err := locker.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	e.start(t, "Kept ", "through ", "the lock.")
	poll(t, "a final write has failed on the lock", func() bool { return failed.Load() >= 1 })
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := e.gen.Wait(ctx, e.chat); err != nil {
		t.Fatal(err)
	}
	m := e.row(t)
	if m.Status != store.StatusFinal || m.Content != "Kept through the lock." {
		t.Errorf("row is %s with %q", m.Status, m.Content)
	}
}

// job is a one-round reply into chat's message msg through the fake
// endpoint.
func (e *replyEnv) job(chat ids.ChatID, msg ids.MessageID) Job {
	return Job{User: e.user, Chat: chat, Message: msg, Client: e.client,
		Request: llm.ChatRequest{Model: "m", Messages: []llm.Message{{Role: "user", Content: "hi"}}}}
}

// addChat makes another chat of the same person with a streaming
// assistant row.
func (e *replyEnv) addChat(t *testing.T) (ids.ChatID, ids.MessageID) {
	t.Helper()
	ctx := context.Background()
	c, _, err := e.db.CreateChat(ctx, e.user, store.NewChat{}, store.Message{Role: store.RoleUser, Content: "hi", Status: store.StatusFinal})
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.db.AddMessage(ctx, e.user, c.ID, store.Message{Role: store.RoleAssistant, Status: store.StatusStreaming})
	if err != nil {
		t.Fatal(err)
	}
	return c.ID, m.ID
}

func (e *replyEnv) rowOf(t *testing.T, id ids.MessageID) store.Message {
	t.Helper()
	m, err := e.db.MessageByID(context.Background(), e.user, id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// hold makes the stream wait before its i-th piece (counted over the
// builder's Content and Reasoning calls, from 0) until gate is closed.
func hold(r fakellm.Reply, i int, gate <-chan struct{}) fakellm.Reply {
	r.Events[1+i].After = gate // Events[0] is the role chunk
	return r
}

// follower applies a chat's frames the way the frontend does (frames.js,
// through Replica): in seq order, each exactly one after the last, the
// HTML of each text part kept as a sealed region and a live tail.
type follower struct {
	t    *testing.T
	e    *replyEnv
	sub  *events.Sub
	chat ids.ChatID

	r         Replica
	seq       int64
	reasoning string
	status    store.Status
	errText   string
	applied   []Frame
	// rowAtFinal is the message row as read when the final frame came.
	rowAtFinal store.Message
}

// follow subscribes a follower to chat's frames; until it takes a
// snapshot it expects the reply's first frame (seq 1).
func (e *replyEnv) follow(t *testing.T, chat ids.ChatID, queue int) *follower {
	f := &follower{t: t, e: e, sub: e.bus.Subscribe(int64(e.user), queue), chat: chat, status: StatusStreaming}
	t.Cleanup(f.sub.Close)
	return f
}

// snapshot replaces what the follower has with a Live frame.
func (f *follower) snapshot(fr Frame) {
	if err := f.r.Snapshot(fr); err != nil {
		f.t.Error(err)
	}
	f.sync()
}

func (f *follower) sync() {
	f.seq, f.reasoning, f.status, f.errText = f.r.Seq, f.r.Reasoning(), f.r.Status, f.r.Error
}

func (f *follower) final() bool { return f.status != StatusStreaming }

func (f *follower) html() string { return f.r.HTML() }

func (f *follower) apply(fr Frame) {
	t := f.t
	t.Helper()
	if err := f.r.Apply(fr); err != nil {
		t.Fatal(err)
	}
	f.sync()
	f.applied = append(f.applied, fr)
	if f.final() {
		f.rowAtFinal = f.e.rowOf(t, fr.MessageID)
	}
}

// liveHTML is the HTML a Live snapshot shows.
func liveHTML(t *testing.T, fr Frame) string {
	t.Helper()
	var r Replica
	if err := r.Snapshot(fr); err != nil {
		t.Fatal(err)
	}
	return r.HTML()
}

// catchUp applies the queued frames of the follower's chat, skipping the
// ones a snapshot already holds, without waiting for more.
func (f *follower) catchUp() {
	for {
		select {
		case ev, ok := <-f.sub.C():
			if !ok {
				return
			}
			fr, isFrame := ev.Data.(Frame)
			if ev.Topic != Topic || !isFrame || fr.ChatID != f.chat || fr.Seq <= f.seq {
				continue
			}
			f.apply(fr)
		default:
			return
		}
	}
}

// waitFinal applies frames until the final one.
func (f *follower) waitFinal() {
	f.t.Helper()
	poll(f.t, "the follower has the final frame", func() bool { f.catchUp(); return f.final() })
}

// stacks returns the stacks of the goroutines running any of the named
// functions.
func stacks(names ...string) []string {
	buf := make([]byte, 1<<16)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, name := range names {
			if strings.Contains(g, name) {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// The service's own goroutines, and the endpoint's handler waiting to
// send the next piece.
var (
	serviceFuncs = []string{"generation.(*Service).run(", "generation.(*Service).frames(",
		"generation.(*Service).checkpointLoop(", "generation.(*Service).Shutdown.func"}
	handlerWaiting = "fakellm.(*Server).until("
)

// Stop in the middle of a reply aborts the request to the endpoint, keeps
// what arrived, marks the reply stopped, and sends the final frame only
// after the stopped row is written.
func TestStopDuringAReplyKeepsWhatArrived(t *testing.T) {
	e := newReplyEnv(t, nil)
	never := make(chan struct{})
	a := e.follow(t, e.chat, 0)
	e.llm.Enqueue(hold(fakellm.NewStream().Content("Kept ", "so far.", " Never sent.").Reply(), 2, never))
	if err := e.gen.Start(e.job(e.chat, e.msg)); err != nil {
		t.Fatal(err)
	}
	poll(t, "what arrived is framed", func() bool { a.catchUp(); return strings.Contains(a.html(), "so far.") })
	if len(stacks(handlerWaiting)) != 1 {
		t.Fatalf("the endpoint is not holding the rest back:\n%s", strings.Join(stacks(handlerWaiting), "\n\n"))
	}
	if e.gen.Stop(e.user+1, e.chat) {
		t.Error("another person stopped the reply")
	}
	if !e.gen.Stop(e.user, e.chat) {
		t.Fatal("Stop found no reply")
	}
	// Stop returns once the reply has ended; the endpoint sees its client
	// go, the only thing that ends its wait for a gate never opened.
	poll(t, "the endpoint's request is aborted", func() bool { return len(stacks(handlerWaiting)) == 0 })
	if e.gen.Running(e.chat) || e.gen.Stop(e.user, e.chat) {
		t.Error("the reply still runs after Stop")
	}
	m := e.row(t)
	if m.Status != StatusStopped || m.Content != "Kept so far." {
		t.Errorf("row is %s with %q", m.Status, m.Content)
	}
	a.waitFinal()
	if a.status != StatusStopped || a.rowAtFinal.Status != StatusStopped || a.rowAtFinal.Content != "Kept so far." {
		t.Errorf("final frame %s; the row when it came: %s %q", a.status, a.rowAtFinal.Status, a.rowAtFinal.Content)
	}
	if want := render.New().Partial("Kept so far."); a.html() != want {
		t.Errorf("follower shows %q, want %q", a.html(), want)
	}
}

// A follower there from the start and one attaching mid-reply (Live
// snapshot, then the frames after it) show the same reply at every pause
// and at the end, reasoning included.
func TestTwoFollowersSeeTheSameReply(t *testing.T) {
	e := newReplyEnv(t, nil)
	pause1, pause2 := make(chan struct{}), make(chan struct{})
	rep := fakellm.NewStream().
		Reasoning("Weighing ", "the words. ").                       // 0, 1
		Content("# Title\n\n", "Para one ", "continues.\n\n").       // 2, 3, 4
		Content("```go\n", "func main() {\n", "\tprintln(1)\n").     // 5, 6, 7
		Reasoning("Then code. ").                                    // 8
		Content("}\n```\n\n", "Last *words* ", "and a [link](/x)."). // 9, 10, 11
		Reply()
	rep = hold(hold(rep, 5, pause1), 9, pause2)
	a := e.follow(t, e.chat, 0)
	e.llm.Enqueue(rep)
	if err := e.gen.Start(e.job(e.chat, e.msg)); err != nil {
		t.Fatal(err)
	}

	var b *follower
	poll(t, "the first part is framed", func() bool {
		fr, ok := e.gen.Live(e.user, e.chat)
		if !ok || !strings.Contains(liveHTML(t, fr), "continues.") {
			return false
		}
		// Subscribe before the snapshot, so no frame after it is missed.
		b = e.follow(t, e.chat, 0)
		fr, _ = e.gen.Live(e.user, e.chat)
		b.snapshot(fr)
		return true
	})
	close(pause1)

	// Paused inside the open code fence.
	poll(t, "both followers are at the second pause", func() bool {
		a.catchUp()
		b.catchUp()
		fr, _ := e.gen.Live(e.user, e.chat)
		return strings.Contains(a.html(), "println") && strings.HasSuffix(a.reasoning, "Then code. ") &&
			a.seq == fr.Seq && b.seq == fr.Seq
	})
	live, _ := e.gen.Live(e.user, e.chat)
	if a.html() != b.html() || a.html() != liveHTML(t, live) {
		t.Errorf("at the pause the followers differ:\nfrom the start %q\nattached later %q\nsnapshot       %q", a.html(), b.html(), liveHTML(t, live))
	}
	if a.reasoning != "Weighing the words. Then code. " || b.reasoning != a.reasoning {
		t.Errorf("reasoning at the pause: %q and %q", a.reasoning, b.reasoning)
	}
	close(pause2)

	a.waitFinal()
	b.waitFinal()
	m := e.row(t)
	const text = "# Title\n\nPara one continues.\n\n```go\nfunc main() {\n\tprintln(1)\n}\n```\n\nLast *words* and a [link](/x)."
	if m.Status != StatusFinal || m.Content != text || m.Reasoning != "Weighing the words. Then code. " {
		t.Errorf("row is %s with %q, reasoning %q", m.Status, m.Content, m.Reasoning)
	}
	want := render.New().Markdown(text)
	for name, f := range map[string]*follower{"from the start": a, "attached later": b} {
		if f.html() != want || f.reasoning != m.Reasoning || f.status != StatusFinal {
			t.Errorf("%s: %s, reasoning %q, HTML\n%q\nwant\n%q", name, f.status, f.reasoning, f.html(), want)
		}
		if f.rowAtFinal.Status != StatusFinal {
			t.Errorf("%s: the row was %s when the final frame came", name, f.rowAtFinal.Status)
		}
	}
}

// Frames are coalesced: the first goes out at once, later ones at most
// every FrameEvery; so with an hour between frames a reply is exactly its
// first frame and its final one.
func TestFirstFrameAtOnceThenCoalesced(t *testing.T) {
	e := newReplyEnvOpt(t, nil, slog.New(slog.DiscardHandler), Options{FrameEvery: time.Hour, CheckpointEvery: 20 * time.Millisecond})
	rest := make(chan struct{})
	a := e.follow(t, e.chat, 0)
	e.llm.Enqueue(hold(fakellm.NewStream().Content("First", " second", " third.").Reply(), 1, rest))
	if err := e.gen.Start(e.job(e.chat, e.msg)); err != nil {
		t.Fatal(err)
	}
	poll(t, "the first frame arrives while the rest is held back", func() bool { a.catchUp(); return a.seq == 1 })
	if a.html() != "<p>First</p>\n" || a.status != StatusStreaming {
		t.Errorf("first frame: %s %q", a.status, a.html())
	}
	close(rest)
	a.waitFinal()
	if len(a.applied) != 2 {
		t.Errorf("%d frames, want the first and the final", len(a.applied))
	}
	if want := render.New().Markdown("First second third."); a.html() != want {
		t.Errorf("final HTML %q, want %q", a.html(), want)
	}
}

// Every frame is one seq after the last, there are no more frames than
// deltas (plus the final one), and applying them in order gives the reply
// as stored: its text rendered, and its reasoning.
func TestFramesRebuildTheReply(t *testing.T) {
	e := newReplyEnv(t, nil)
	var content, reasoning []string
	b := fakellm.NewStream()
	for i := range 150 {
		r := fmt.Sprintf("step %d; ", i)
		c := fmt.Sprintf("word%d ", i)
		if i%20 == 19 {
			c += "\n\n"
		}
		if i%50 == 10 {
			c += "\n```\ncode ü " + fmt.Sprint(i) + "\n"
		}
		if i%50 == 30 {
			c += "\n```\n\n"
		}
		reasoning, content = append(reasoning, r), append(content, c)
		b.Reasoning(r).Content(c)
	}
	a := e.follow(t, e.chat, 1<<12)
	// The finish chunk waits until the streamed frames have shown all.
	end := make(chan struct{})
	rep := b.Reply()
	rep.Events[len(rep.Events)-2].After = end
	e.llm.Enqueue(rep)
	if err := e.gen.Start(e.job(e.chat, e.msg)); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(content, "")
	poll(t, "the frames have shown all the text", func() bool {
		a.catchUp()
		return strings.Contains(a.html(), "word149") && a.reasoning == strings.Join(reasoning, "")
	})
	if want := render.New().Markdown(text); a.html() != want {
		t.Errorf("the streamed frames do not rebuild the reply:\n%q\nwant\n%q", a.html(), want)
	}
	close(end)
	a.waitFinal()
	m := e.row(t)
	if m.Status != StatusFinal || m.Content != text || m.Reasoning != strings.Join(reasoning, "") {
		t.Fatalf("row is %s with %d bytes, %d of reasoning", m.Status, len(m.Content), len(m.Reasoning))
	}
	if n := len(a.applied); n > 2*150+1 {
		t.Errorf("%d frames for %d deltas", n, 2*150)
	}
	for _, fr := range a.applied[:len(a.applied)-1] {
		if fr.Status != StatusStreaming {
			t.Errorf("frame %d before the last is %s", fr.Seq, fr.Status)
		}
	}
	if a.html() != render.New().Markdown(text) || a.reasoning != m.Reasoning {
		t.Errorf("the frames do not rebuild the reply:\n%q\nwant\n%q", a.html(), render.New().Markdown(text))
	}
}

// A follower that does not read does not hold the reply up: the bus
// replaces the frames it could not queue with a resync, and it catches up
// from Live.
func TestSlowFollowerNeverBlocksTheReply(t *testing.T) {
	e := newReplyEnv(t, nil)
	rest := make(chan struct{})
	slow := e.bus.Subscribe(int64(e.user), 1)
	defer slow.Close()
	a := e.follow(t, e.chat, 0)
	e.llm.Enqueue(hold(fakellm.NewStream().Content("Start. ", "More ", "and more.").Reply(), 1, rest))
	if err := e.gen.Start(e.job(e.chat, e.msg)); err != nil {
		t.Fatal(err)
	}
	poll(t, "the first frame", func() bool { a.catchUp(); return a.seq >= 1 })
	close(rest)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.gen.Wait(ctx, e.chat); err != nil {
		t.Fatal(err)
	}
	if m := e.row(t); m.Status != StatusFinal || m.Content != "Start. More and more." {
		t.Errorf("row is %s with %q", m.Status, m.Content)
	}
	a.waitFinal()
	// What it reads, in order: its queue, then either every frame to the
	// final one or a resync in place of those it lost.
	for done := false; !done; {
		select {
		case ev := <-slow.C():
			f, isFrame := ev.Data.(Frame)
			done = ev.Topic == events.TopicResync || (isFrame && f.Status != StatusStreaming)
		case <-ctx.Done():
			t.Fatal("the slow follower got neither the final frame nor a resync")
		}
	}
	// It catches up: a snapshot.
	back := e.follow(t, e.chat, 0)
	fr, ok := e.gen.Live(e.user, e.chat)
	if !ok {
		t.Fatal("no snapshot after the reply ended")
	}
	back.snapshot(fr)
	if back.html() != a.html() || back.status != StatusFinal || back.seq != a.seq {
		t.Errorf("caught up to %s seq %d %q, want seq %d %q", back.status, back.seq, back.html(), a.seq, a.html())
	}
}

// Shutdown with replies running writes each as interrupted with all that
// arrived, runs their Done, refuses new replies, and leaves no goroutine
// of the service or request to the endpoint behind.
func TestShutdownInterruptsRunningReplies(t *testing.T) {
	e := newReplyEnv(t, nil)
	var mu sync.Mutex
	outcomes := map[ids.MessageID]Outcome{}
	type reply struct {
		chat ids.ChatID
		msg  ids.MessageID
		text string
	}
	var replies []reply
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 3 {
		chat, msg := e.chat, e.msg
		if i > 0 {
			chat, msg = e.addChat(t)
		}
		first := fmt.Sprintf("Reply %d ", i)
		replies = append(replies, reply{chat, msg, first + "arrived."})
		e.llm.Enqueue(fakellm.NewStream().Content(first, "arrived.", " Never sent.").Reply().StallAfter(3))
		j := e.job(chat, msg)
		j.Done = func(_ context.Context, out Outcome) {
			mu.Lock()
			outcomes[out.Message] = out
			mu.Unlock()
		}
		if err := e.gen.Start(j); err != nil {
			t.Fatal(err)
		}
		// One request at a time, so the replies are dequeued in order.
		if err := e.llm.WaitRequests(ctx, i+1); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range replies {
		poll(t, "what was sent has arrived", func() bool {
			fr, _ := e.gen.Live(e.user, r.chat)
			return strings.Contains(liveHTML(t, fr), r.text)
		})
	}
	if err := e.gen.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for _, r := range replies {
		if m := e.rowOf(t, r.msg); m.Status != StatusInterrupted || m.Content != r.text {
			t.Errorf("row %d is %s with %q, want interrupted with %q", r.msg, m.Status, m.Content, r.text)
		}
		if e.gen.Running(r.chat) {
			t.Errorf("chat %d still running", r.chat)
		}
		mu.Lock()
		out, ok := outcomes[r.msg]
		mu.Unlock()
		if !ok || out.Status != StatusInterrupted || out.Content != r.text {
			t.Errorf("Done of %d: %v %+v", r.msg, ok, out)
		}
	}
	c2, m2 := e.addChat(t)
	if err := e.gen.Start(e.job(c2, m2)); apperr.KindOf(err) != apperr.Unavailable {
		t.Errorf("Start after Shutdown: %v", err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		left := stacks(append(serviceFuncs, handlerWaiting, "backend/llm.(*Client)")...)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines left after Shutdown:\n%s", strings.Join(left, "\n\n"))
		}
	}
}

// An endpoint that fails mid-stream ends the reply as an error with what
// arrived kept, and the error stored and sent has the endpoint's key
// hidden.
func TestUpstreamErrorMidStream(t *testing.T) {
	e := newReplyEnv(t, nil)
	const key = "sk-test-0123456789abcdef"
	c, err := llm.NewClient(llm.Endpoint{BaseURL: e.llm.URL(), APIKey: key}, llm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := e.follow(t, e.chat, 0)
	e.llm.Enqueue(fakellm.InStreamError("CUDA error: out of memory; request by " + key))
	j := e.job(e.chat, e.msg)
	j.Client = c
	if err := e.gen.Start(j); err != nil {
		t.Fatal(err)
	}
	a.waitFinal()
	m := e.row(t)
	if m.Status != StatusError || m.Content != "Partial answer" {
		t.Errorf("row is %s with %q", m.Status, m.Content)
	}
	if !strings.Contains(m.Error, "out of memory") || strings.Contains(m.Error, key) || !strings.Contains(m.Error, secrets.Hidden) {
		t.Errorf("stored error %q", m.Error)
	}
	if a.status != StatusError || a.errText != m.Error || a.rowAtFinal.Status != StatusError {
		t.Errorf("final frame %s %q; row when it came %s", a.status, a.errText, a.rowAtFinal.Status)
	}
	if fr, _ := e.gen.Live(e.user, e.chat); fr.Error != m.Error {
		t.Errorf("snapshot error %q", fr.Error)
	}
}

// panicOnce is a bus whose first streaming frame panics, as a broken
// transport might.
type panicOnce struct {
	events.Publisher
	n atomic.Int64
}

func (p *panicOnce) Publish(ev events.Event) {
	if f, ok := ev.Data.(Frame); ok && f.Status == StatusStreaming && p.n.Add(1) == 1 {
		panic("injected: a follower's transport failed")
	}
	p.Publisher.Publish(ev)
}

// A panic while sending a frame stops the frames, not the reply: it used
// to leave the reply's lock held, so the next delta waited forever and the
// reply never ended (nor did Live or Shutdown).
func TestPanicInAFrameDoesNotStallTheReply(t *testing.T) {
	e := newReplyEnv(t, nil)
	p := &panicOnce{Publisher: e.bus}
	e.gen.bus = p
	rest := make(chan struct{})
	a := e.follow(t, e.chat, 0)
	e.llm.Enqueue(hold(fakellm.NewStream().Content("Start. ", "More ", "and more.").Reply(), 1, rest))
	if err := e.gen.Start(e.job(e.chat, e.msg)); err != nil {
		t.Fatal(err)
	}
	poll(t, "the first frame has failed", func() bool { return p.n.Load() >= 1 })
	close(rest)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.gen.Wait(ctx, e.chat); err != nil {
		t.Fatalf("the reply did not end: %v", err)
	}
	if m := e.row(t); m.Status != StatusFinal || m.Content != "Start. More and more." {
		t.Errorf("row is %s with %q", m.Status, m.Content)
	}
	// The frame that failed leaves a gap in seq, which sends a follower to
	// Live (frames.js); the final frame still comes.
	var final Frame
	for ev := range a.sub.C() {
		if f := ev.Data.(Frame); f.Status != StatusStreaming {
			final = f
			break
		}
	}
	live, _ := e.gen.Live(e.user, e.chat)
	if want := render.New().Markdown("Start. More and more."); liveHTML(t, live) != want || final.Status != StatusFinal || final.Content != "Start. More and more." {
		t.Errorf("final frame %s %q, snapshot %q, want %q", final.Status, final.Content, liveHTML(t, live), want)
	}
}

// panicFinal fails to send a reply's final frame, as a broken follower's
// transport would.
type panicFinal struct{ events.Publisher }

func (p panicFinal) Publish(ev events.Event) {
	if f, ok := ev.Data.(Frame); ok && f.Status != StatusStreaming {
		panic("injected: the final frame's transport failed")
	}
	p.Publisher.Publish(ev)
}

// A panic while sending the final frame used to escape finish (which runs
// in run's deferred recover) and end the process. Now the row is final,
// Done runs, Wait returns and Live answers the finished reply.
func TestPanicInTheFinalFrameEndsOnlyTheFrame(t *testing.T) {
	e := newReplyEnv(t, nil)
	e.gen.bus = panicFinal{e.bus}
	e.llm.Enqueue(fakellm.Stream("All ", "done."))
	done := make(chan Outcome, 1)
	job := e.job(e.chat, e.msg)
	job.Done = func(_ context.Context, o Outcome) { done <- o }
	if err := e.gen.Start(job); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.gen.Wait(ctx, e.chat); err != nil {
		t.Fatalf("the reply did not end: %v", err)
	}
	select {
	case o := <-done:
		if o.Status != StatusFinal {
			t.Errorf("Done got %s", o.Status)
		}
	case <-ctx.Done():
		t.Fatal("Done never ran")
	}
	if m := e.row(t); m.Status != StatusFinal || m.Content != "All done." {
		t.Errorf("row is %s with %q", m.Status, m.Content)
	}
	if live, ok := e.gen.Live(e.user, e.chat); !ok || live.Status != StatusFinal {
		t.Errorf("Live answers %v %s, want the final reply", ok, live.Status)
	}
}

// TestCheckpointsAreAQuarterSecondApart pins the default interval that
// bounds what a crash loses of a streaming reply (issue 3: at most 250 ms;
// BenchmarkKillMidReply in tests/cli measures it against a real kill).
func TestCheckpointsAreAQuarterSecondApart(t *testing.T) {
	e := newReplyEnvOpt(t, nil, slog.New(slog.DiscardHandler), Options{})
	if got := e.gen.opt.CheckpointEvery; got <= 0 || got > 250*time.Millisecond {
		t.Errorf("checkpoints every %v, want at most 250ms", got)
	}
}
