package generation

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/events"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/render"
	"github.com/llembas/lembas/backend/store"
)

// replyEnv is one chat with a streaming assistant row in a real SQLite
// file, and a generation service writing through a writer that fails
// while fail says so.
type replyEnv struct {
	db      *store.DB
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
	e.gen = New(db, events.NewBus(), render.New(), log,
		Options{FrameEvery: 5 * time.Millisecond, CheckpointEvery: 20 * time.Millisecond})
	e.gen.write = func(ctx context.Context, ups []store.MessageUpdate) ([]ids.MessageID, error) {
		final := len(ups) == 1 && ups[0].Status != StatusStreaming
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
	t.Cleanup(func() { e.gen.Shutdown(context.Background()) })
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
