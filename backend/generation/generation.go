// Package generation runs replies as background tasks. A reply belongs to
// the backend, not to a window: closing the window, reloading the page or
// switching chats never stops it. Followers (the desktop window, browser
// tabs) receive frames through the event bus and can attach mid-reply with a
// snapshot. Every 200 ms one writer commits every dirty reply in a single
// transaction, so a crash loses at most that much.
package generation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/events"
	"github.com/llembas/lembas/backend/follow"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/render"
	"github.com/llembas/lembas/backend/store"
)

// Statuses a reply goes through; they are the store's message statuses.
const (
	StatusStreaming   = store.StatusStreaming
	StatusFinal       = store.StatusFinal
	StatusStopped     = store.StatusStopped
	StatusError       = store.StatusError
	StatusLength      = store.StatusLength
	StatusInterrupted = store.StatusInterrupted
)

// Streamer is the part of the LLM client a reply needs.
type Streamer interface {
	Chat(ctx context.Context, req llm.ChatRequest, fn func(llm.Delta) error) (llm.Result, error)
}

// Job describes one reply to produce into an existing assistant message row.
type Job struct {
	User    ids.UserID
	Chat    ids.ChatID
	Message ids.MessageID
	// Caller is who the reply acts for and what they may do, resolved
	// when the call that started it came in: a step checks it where it
	// acts (Output.Caller).
	Caller auth.Caller
	// Producer runs the reply's rounds; nil is one ChatRound of Client
	// and Request.
	Producer Producer
	Client   Streamer
	// Request is what the first round sends; its messages are also the
	// prompt's size when the endpoint reports no usage.
	Request llm.ChatRequest
	// Prefix is the parts already in the message (Continue appends to
	// its last text and reasoning parts).
	Prefix        []store.Part
	ContextLength int
	// OmittedTurns is how many earlier turns of the chat did not fit the
	// request (shown above the reply, from its metrics).
	OmittedTurns int
	// Done runs after the final row is written (with the chat marked
	// unread) and the last frame sent, with the reply's final state
	// (titles, notifications).
	Done func(ctx context.Context, out Outcome)
}

// Outcome is how a reply ended.
type Outcome struct {
	User         ids.UserID
	Chat         ids.ChatID
	Message      ids.MessageID
	Status       store.Status
	Content      string
	Error        string
	FinishReason string
	// StreamOptionsRejected: remember on the connection.
	StreamOptionsRejected bool
}

// Metrics are shown under a reply.
type Metrics struct {
	TTFTMs           *int64   `json:"ttftMs,omitempty"`
	TokensPerSec     *float64 `json:"tokensPerSec,omitempty"`
	PromptTokens     *int     `json:"promptTokens,omitempty"`
	CompletionTokens *int     `json:"completionTokens,omitempty"`
	Estimated        bool     `json:"estimated"`
	ContextPct       *float64 `json:"contextPct,omitempty"`
	// OmittedTurns is how many earlier turns were not sent with the
	// request because they did not fit the model's context.
	OmittedTurns int `json:"omittedTurns,omitempty"`
}

// Frame is one update of a reply for followers (docs/API.md, topic "gen"):
// operations on the reply's parts, applied in order, after the frame one
// seq before it.
type Frame struct {
	ChatID    ids.ChatID    `json:"chatId"`
	MessageID ids.MessageID `json:"messageId"`
	Seq       int64         `json:"seq"`
	Parts     []PartOp      `json:"parts,omitempty"`
	Status    store.Status  `json:"status"`
	Error     string        `json:"error,omitempty"`
	Metrics   *Metrics      `json:"metrics,omitempty"`
	// Activity, when present, replaces the reply's activity line (what it
	// is doing while nothing streams, plain text); "" clears it, and so
	// does the final frame.
	Activity *string `json:"activity,omitempty"`
	// Ask, when present, replaces the reply's pending card (Output.Pause):
	// a frame carries it whenever it changed, null included (the card is
	// gone), a Live snapshot always, and the final frame null when the
	// reply ever asked.
	Ask *AskState `json:"ask,omitempty"`
	// Content is the reply's Markdown source (its text parts), on a final
	// frame only: with the final HTML and metrics it is all the
	// transcript needs (Copy), so a follower does not read the message
	// again.
	Content string `json:"content,omitempty"`
}

// PartOp is one operation on part I of a reply. Parts are opened in order,
// each by the first op that names it; a Live snapshot opens every part
// again.
type PartOp struct {
	I int `json:"i"`
	// Open begins part I with this kind, Name and CallID (tool calls).
	Open   store.PartKind `json:"open,omitempty"`
	Name   string         `json:"name,omitempty"`
	CallID string         `json:"callId,omitempty"`
	// Error marks a failed tool result (with Open).
	Error bool `json:"error,omitempty"`
	// A text part's HTML: render.Frame's reset, full, seal, tail and op,
	// applied as it documents.
	render.Frame
	// Text is plain text appended to any other kind of part (reasoning, a
	// tool call's arguments, a result, a pause, a notice): never HTML.
	Text string `json:"text,omitempty"`
	// Close ends the part: nothing more is added to it.
	Close bool `json:"close,omitempty"`
}

// Topic is the bus topic of frames.
const Topic = "gen"

// Options tune a Service; zero values mean the defaults.
type Options struct {
	// FrameEvery coalesces frames: the first goes out at once, later ones at
	// most this often (40 ms: smooth to read, cheap to render).
	FrameEvery time.Duration
	// CheckpointEvery is how often dirty replies are written (200 ms).
	CheckpointEvery time.Duration
	// KeepFinished is how long a finished reply stays attachable, so a
	// follower arriving at the last moment still gets the final frame.
	KeepFinished time.Duration
}

// Service owns every running reply.
type Service struct {
	db  *store.DB
	bus events.Publisher
	rnd *render.Renderer
	log *slog.Logger
	opt Options

	// write commits rows: the store's Checkpoint (tests put a failing
	// writer in front of it).
	write func(ctx context.Context, ups []store.MessageUpdate) ([]ids.MessageID, error)

	mu      sync.Mutex
	byChat  map[ids.ChatID]*gen
	closed  bool
	closing chan struct{} // closed when Shutdown begins: final writes get one last try
	wg      sync.WaitGroup

	stopLoop context.CancelFunc
	loopDone chan struct{}
}

// New returns a service and starts its checkpoint writer. Call Shutdown to
// stop it.
func New(db *store.DB, bus events.Publisher, rnd *render.Renderer, log *slog.Logger, opt Options) *Service {
	if opt.FrameEvery == 0 {
		opt.FrameEvery = 40 * time.Millisecond
	}
	if opt.CheckpointEvery == 0 {
		opt.CheckpointEvery = 200 * time.Millisecond
	}
	if opt.KeepFinished == 0 {
		opt.KeepFinished = 30 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Service{db: db, bus: bus, rnd: rnd, log: log, opt: opt, byChat: map[ids.ChatID]*gen{},
		write: db.Checkpoint, closing: make(chan struct{}), stopLoop: cancel, loopDone: make(chan struct{})}
	go s.checkpointLoop(ctx)
	return s
}

// errStopped and errShutdown are the causes a reply is cancelled with.
var (
	errStopped  = errors.New("stopped by the reader")
	errShutdown = errors.New("the server is shutting down")
)

// gen is one running (or recently finished) reply.
type gen struct {
	job    Job
	rnd    *render.Renderer
	ctx    context.Context
	cancel context.CancelCauseFunc
	start  time.Time

	mu sync.Mutex
	// parts is the reply so far, in order. curText and curReason are the
	// parts text and reasoning go to (-1: none; the next delta opens one).
	parts     []*part
	curText   int
	curReason int
	opened    int // parts[:opened] have been opened to followers
	size      int // bytes of text in every part (MaxReply)
	firstTok  time.Duration
	status    store.Status
	errText   string
	metrics   Metrics
	dirty     bool
	// activity is the line shown while a step runs (Output.SetActivity);
	// activityChanged: the next frame carries it.
	activity        string
	activityChanged bool
	// ask is the card the reply waits on (Output.Pause; nil: none) and
	// answers where Service.Answer delivers its answer; askChanged: the
	// next frame carries it; asked: the reply paused at least once.
	ask               *Ask
	answers           chan Answer
	askChanged, asked bool
	// paused is the time spent waiting on the person, which is not
	// generation time (tokens per second).
	paused time.Duration

	// feed numbers, coalesces and publishes the reply's frames; it is
	// guarded by mu with the rest, and its Done is the reply's end.
	feed *follow.Feed[Frame]
	// settled is closed once the reply's Done callback has returned (or
	// panicked): what the callback starts (a chat's automatic title) has
	// been started by then.
	settled chan struct{}
}

// Start begins a reply. It refuses (conflict) when the chat already has one
// running: one reply per chat at a time.
func (s *Service) Start(job Job) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return apperr.New(apperr.Unavailable, "the server is shutting down")
	}
	if g, ok := s.byChat[job.Chat]; ok && !g.isFinished() {
		return apperr.New(apperr.Conflict, "a reply is already being written in this chat; stop it first")
	}
	if job.Producer == nil {
		job.Producer = ChatRound{Client: job.Client, Request: job.Request}
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	g := &gen{
		job: job, rnd: s.rnd, ctx: ctx, cancel: cancel, start: time.Now(),
		curText: -1, curReason: -1,
		status: StatusStreaming, settled: make(chan struct{}),
	}
	user := int64(job.User)
	g.feed = follow.New(&g.mu, s.opt.FrameEvery, follow.Source[Frame](g), func(f Frame) {
		// Publish does not block: a slow follower is dropped, not waited
		// for (it runs under the reply's lock).
		s.bus.Publish(events.Event{Topic: Topic, UserID: user, Data: f})
	})
	// Continue: the reply's parts so far, its last text and reasoning
	// parts open again unless a part of another kind came after them.
	for _, sp := range job.Prefix {
		p := &part{kind: sp.Kind, name: sp.Name, callID: sp.CallID, failed: sp.Error}
		p.text.WriteString(sp.Text)
		p.from = len(sp.Text)
		switch sp.Kind {
		case store.PartText:
			p.live = s.rnd.NewStream()
			p.live.Write(sp.Text)
			g.curText = len(g.parts)
		case store.PartReasoning:
			g.curReason = len(g.parts)
		default:
			p.closed = true
			g.closeCurrent()
		}
		g.parts = append(g.parts, p)
		g.size += len(sp.Text)
	}
	for i, p := range g.parts {
		switch {
		case p.kind == store.PartText && i != g.curText:
			p.live.Finish()
			p.closed = true
		case p.kind == store.PartReasoning && i != g.curReason:
			p.closed = true
		}
	}
	s.byChat[job.Chat] = g
	s.wg.Add(2)
	go s.run(g)
	go s.frames(g)
	return nil
}

func (g *gen) isFinished() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.feed.Finished()
}

// Stop aborts the chat's running reply: the upstream request is cancelled
// (so the endpoint stops working), what arrived is kept, and the reply is
// marked stopped. It reports whether there was one.
func (s *Service) Stop(user ids.UserID, chat ids.ChatID) bool {
	s.mu.Lock()
	g, ok := s.byChat[chat]
	s.mu.Unlock()
	if !ok || g.job.User != user || g.isFinished() {
		return false
	}
	g.cancel(errStopped)
	<-g.feed.Done()
	return true
}

// Running reports whether the chat has a reply being written.
func (s *Service) Running(chat ids.ChatID) bool {
	s.mu.Lock()
	g, ok := s.byChat[chat]
	s.mu.Unlock()
	return ok && !g.isFinished()
}

// Wait blocks until the chat's current reply (if any) has finished and its
// Done callback has returned, so what the callback starts (an automatic
// title) has started. Tests use it to know a reply is over.
func (s *Service) Wait(ctx context.Context, chat ids.ChatID) error {
	s.mu.Lock()
	g, ok := s.byChat[chat]
	s.mu.Unlock()
	if !ok {
		return nil
	}
	select {
	case <-g.settled:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Live returns a snapshot of the chat's reply for a follower attaching
// mid-reply (or just after it ended), or false if there is none.
func (s *Service) Live(user ids.UserID, chat ids.ChatID) (Frame, bool) {
	s.mu.Lock()
	g, ok := s.byChat[chat]
	s.mu.Unlock()
	if !ok || g.job.User != user {
		return Frame{}, false
	}
	return g.feed.Live(), true
}

// Snapshot is the reply as followers have been sent it up to frame seq
// (follow.Source), so frames after it apply on top; text not yet framed
// arrives with the next one. g.mu held.
func (g *gen) Snapshot(seq int64) Frame {
	m := g.metrics
	f := Frame{ChatID: g.job.Chat, MessageID: g.job.Message, Seq: seq,
		Parts: g.snapshotParts(), Status: StatusStreaming, Metrics: &m}
	if g.activity != "" {
		f.Activity = ptr(g.activity)
	}
	f.Ask = g.askState()
	return f
}

// snapshotParts opens every part followers have been sent, with all of it they
// have. g.mu held.
func (g *gen) snapshotParts() []PartOp {
	ops := make([]PartOp, 0, g.opened)
	for i, p := range g.parts[:g.opened] {
		op := PartOp{I: i, Open: p.kind, Name: p.name, CallID: p.callID, Error: p.failed, Close: p.closeSent}
		if p.kind == store.PartText {
			op.Frame = p.live.Snapshot()
		} else {
			op.Text = p.text.String()[:p.sent]
		}
		ops = append(ops, op)
	}
	return ops
}

func ptr[T any](v T) *T { return &v }

// MaxReply bounds a reply's text (content and reasoning together). An
// endpoint that never stops would otherwise grow it without end; the reply
// is ended as cut off by length.
const MaxReply = 8 << 20

var errTooLong = errors.New("the reply reached the size limit")

var errTooManyRounds = errors.New("the reply reached the limit of rounds")

// run runs the job's producer, round after round, until one asks for no
// more, fails or is cancelled.
func (s *Service) run(g *gen) {
	defer s.wg.Done()
	defer close(g.settled) // after finish, whatever it did
	var res llm.Result
	var err error
	defer func() {
		// A panic while parsing or rendering model output must end this
		// reply, not the process.
		if p := recover(); p != nil {
			s.log.Error("panic in reply", "chat", g.job.Chat, "panic", p, "stack", string(debug.Stack()))
			err = apperr.New(apperr.Internal, "the reply failed unexpectedly")
		}
		s.finish(g, res, err)
	}()
	for n := 0; ; n++ {
		if n == MaxRounds {
			err = errTooManyRounds
			return
		}
		var r Round
		r, err = g.job.Producer.Round(g.ctx, &Output{g: g, round: n})
		res = r.Result
		if err == nil && r.More && g.ctx.Err() != nil {
			err = context.Cause(g.ctx)
		}
		if err != nil || !r.More {
			return
		}
	}
}

// frames sends coalesced frames to followers until the reply finishes: the
// first at once, later ones at most every FrameEvery (follow.Feed.Run). A
// panic while rendering a frame ends the frames, not the reply: the feed
// leaves the reply's lock free, so the reply, the checkpoint writer (which
// holds the service's lock while it waits for the reply's) and with it
// every other reply go on.
func (s *Service) frames(g *gen) {
	defer s.wg.Done()
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic rendering a reply; followers get its final frame only", "chat", g.job.Chat, "panic", p, "stack", string(debug.Stack()))
		}
	}()
	g.feed.Run()
}

// Next builds frame seq of everything since the last one, or reports that
// nothing changed (follow.Source). g.mu held.
func (g *gen) Next(seq int64) (Frame, bool) {
	ops := g.partOps(false)
	if len(ops) == 0 && !g.activityChanged && !g.askChanged {
		return Frame{}, false
	}
	g.updateMetrics(nil)
	m := g.metrics
	f := Frame{ChatID: g.job.Chat, MessageID: g.job.Message, Seq: seq, Status: StatusStreaming, Parts: ops, Metrics: &m}
	if g.activityChanged {
		f.Activity, g.activityChanged = ptr(g.activity), false
	}
	if g.askChanged {
		f.Ask, g.askChanged = g.askState(), false
	}
	return f, true
}

// partOps returns the operations that bring followers up to date: parts
// opened, text framed, parts closed. With end, every text part is
// rendered whole for the last time (partial: the reply ended early, so
// markup its last text part left open is closed). g.mu held.
func (g *gen) partOps(end bool, partial ...bool) []PartOp {
	var ops []PartOp
	lastText := -1
	for i, p := range g.parts {
		if p.kind == store.PartText {
			lastText = i
		}
	}
	for i, p := range g.parts {
		op := PartOp{I: i}
		opening := i >= g.opened
		if opening {
			op.Open, op.Name, op.CallID, op.Error = p.kind, p.name, p.callID, p.failed
		}
		if p.kind == store.PartText {
			switch {
			case end || p.closed:
				// Finish renders the whole part once more and returns
				// what differs from the frames sent (nothing, after a
				// part was finished: then a new follower needs it all).
				if i == lastText && len(partial) > 0 && partial[0] {
					op.Frame = p.live.FinishPartial()
				} else {
					op.Frame = p.live.Finish()
				}
				if opening && op.Frame.Empty() {
					op.Frame = p.live.Snapshot()
				}
			default:
				op.Frame = p.live.Frame()
			}
		} else if t := p.text.String(); len(t) > p.sent {
			op.Text = t[p.sent:]
			p.sent = len(t)
		}
		// At the end the status closes every part; only a part closed
		// mid-reply is closed by an op.
		if p.closed && !p.closeSent {
			op.Close, p.closeSent = true, true
		}
		if opening || op.Close || op.Text != "" || !op.Frame.Empty() {
			ops = append(ops, op)
		}
	}
	g.opened = len(g.parts)
	return ops
}

// updateMetrics fills the metrics from usage when the endpoint reported it,
// else from the chars/4 estimate of what this reply added. g.mu held.
func (g *gen) updateMetrics(u *llm.Usage) {
	m := Metrics{OmittedTurns: g.job.OmittedTurns}
	if g.firstTok > 0 {
		m.TTFTMs = ptr(g.firstTok.Milliseconds())
	}
	var completion, prompt int
	for _, p := range g.parts {
		completion += llm.Estimate(p.text.String()[p.from:])
	}
	m.Estimated = true
	if u != nil && u.CompletionTokens > 0 {
		completion, prompt, m.Estimated = u.CompletionTokens, u.PromptTokens, false
	} else {
		for _, msg := range g.job.Request.Messages {
			prompt += llm.Estimate(msg.Content)
		}
	}
	m.CompletionTokens = ptr(completion)
	if prompt > 0 {
		m.PromptTokens = ptr(prompt)
	}
	if g.firstTok > 0 {
		if gen := time.Since(g.start) - g.firstTok - g.paused; gen > 100*time.Millisecond && completion > 1 {
			m.TokensPerSec = ptr(float64(completion) / gen.Seconds())
		}
	}
	if g.job.ContextLength > 0 && prompt+completion > 0 {
		m.ContextPct = ptr(100 * float64(prompt+completion) / float64(g.job.ContextLength))
	}
	g.metrics = m
}

// finalFrame runs the feed's Finish under a recover of its own: finish
// runs in run's deferred recover, so a panic here would end the process.
func (s *Service) finalFrame(g *gen, build func(seq int64) (sent, kept Frame)) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic sending a reply's final frame", "chat", g.job.Chat, "panic", p, "stack", string(debug.Stack()))
		}
	}()
	g.feed.Finish(build)
}

// finish decides the reply's status, writes the final row (and the chat's
// unread mark), then sends the final frame — in that order: a follower that
// sees the final frame may reload the message from the database, which must
// already be final, and may mark the chat read, which must come after.
func (s *Service) finish(g *gen, res llm.Result, err error) {
	g.mu.Lock()
	status := StatusFinal
	switch {
	case errors.Is(err, errTooLong), errors.Is(err, errTooManyRounds):
		status = StatusLength
	case err == nil && res.FinishReason == "length":
		status = StatusLength
	case err == nil:
	case errors.Is(context.Cause(g.ctx), errStopped):
		status = StatusStopped
	case errors.Is(context.Cause(g.ctx), errShutdown):
		status = StatusInterrupted
	default:
		status = StatusError
		_, g.errText = apperr.Public(err)
		if apperr.KindOf(err) == apperr.Internal {
			s.log.Error("reply failed", "chat", g.job.Chat, "message", g.job.Message, "err", err)
		}
	}
	g.status = status
	g.activity, g.activityChanged = "", false
	asked := g.asked
	g.ask, g.askChanged = nil, false
	// Every text part rendered whole once more; the final frame carries
	// only what differs from the frames sent. One that ended early has
	// the markup it left open closed.
	ops := g.partOps(true, status != StatusFinal)
	g.updateMetrics(res.Usage)
	m := g.metrics
	metrics, _ := json.Marshal(m)
	parts := g.storedParts()
	content := store.ReplyText(parts)
	// The chat becomes unread with the final row, before the final frame:
	// a follower that sees the frame and marks the chat read cannot be
	// overtaken by the mark (issue 10: leaving just after a reply ended
	// left it unread).
	upd := store.MessageUpdate{ID: g.job.Message, Parts: parts,
		Status: status, Error: g.errText, Metrics: metrics, MarkUnread: true}
	g.dirty = false
	g.mu.Unlock()

	s.writeFinal(upd)

	// The final frame is one seq after the last; Live answers kept, the
	// whole reply, from now on. A panic while sending it (a follower's
	// transport) must not end the process nor skip Done: the row is
	// written, and followers that miss the frame resync from Live.
	s.finalFrame(g, func(seq int64) (sent, kept Frame) {
		sent = Frame{ChatID: g.job.Chat, MessageID: g.job.Message, Seq: seq, Parts: ops,
			Status: status, Error: g.errText, Metrics: &m, Content: content}
		if asked {
			sent.Ask = &AskState{}
		}
		for _, p := range g.parts {
			p.closed, p.closeSent = true, true
		}
		kept = sent
		kept.Parts = g.snapshotParts()
		return sent, kept
	})

	if g.job.Done != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		g.job.Done(ctx, Outcome{User: g.job.User, Chat: g.job.Chat, Message: g.job.Message, Status: status,
			Content: content, Error: g.errText, FinishReason: res.FinishReason, StreamOptionsRejected: res.StreamOptionsRejected})
	}
	// Keep the finished reply attachable for a while, then forget it
	// unless a newer reply in the same chat has replaced it.
	time.AfterFunc(s.opt.KeepFinished, func() {
		s.mu.Lock()
		if s.byChat[g.job.Chat] == g {
			delete(s.byChat, g.job.Chat)
		}
		s.mu.Unlock()
	})
}

// Backoff between attempts at writing a final row: from finalRetryFirst,
// doubling up to finalRetryMax.
const (
	finalRetryFirst = 50 * time.Millisecond
	finalRetryMax   = 5 * time.Second
)

// writeFinal writes a reply's final row, retrying with backoff until it
// lands: a busy or briefly failing database must not leave a finished
// reply "streaming" (and its text lost to the next start's
// InterruptStreaming) while the follower has been told it is final. Once
// Shutdown has begun it makes one last attempt, begun after it (the one
// under way when it began may have started long before), and gives up.
func (s *Service) writeFinal(upd store.MessageUpdate) {
	wait := finalRetryFirst
	for attempt := 1; ; attempt++ {
		last := false
		select {
		case <-s.closing:
			last = true
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := s.write(ctx, []store.MessageUpdate{upd})
		cancel()
		if err == nil {
			if attempt > 1 {
				s.log.Info("final reply written", "message", upd.ID, "attempts", attempt)
			}
			return
		}
		if last {
			s.log.Error("write final reply: giving up at shutdown", "message", upd.ID, "attempts", attempt, "err", err)
			return
		}
		select {
		case <-s.closing:
			// Shutdown began during this attempt: one more, at once.
		default:
			s.log.Warn("write final reply; retrying", "message", upd.ID, "attempt", attempt, "err", err)
			select {
			case <-time.After(wait):
			case <-s.closing:
			}
		}
		wait = min(2*wait, finalRetryMax)
	}
}

// checkpointLoop writes every dirty reply in one transaction per tick.
func (s *Service) checkpointLoop(ctx context.Context) {
	defer close(s.loopDone)
	t := time.NewTicker(s.opt.CheckpointEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.checkpoint()
	}
}

func (s *Service) checkpoint() {
	s.mu.Lock()
	var batch []store.MessageUpdate
	for _, g := range s.byChat {
		g.mu.Lock()
		if g.dirty && !g.feed.Finished() {
			g.updateMetrics(nil)
			metrics, _ := json.Marshal(g.metrics)
			batch = append(batch, store.MessageUpdate{ID: g.job.Message, Parts: g.storedParts(),
				Status: StatusStreaming, Metrics: metrics})
			g.dirty = false
		}
		g.mu.Unlock()
	}
	s.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	gone, err := s.write(ctx, batch)
	if err != nil {
		s.log.Error("checkpoint replies", "count", len(batch), "err", err)
		// Write them again at the next tick.
		s.mu.Lock()
		for _, g := range s.byChat {
			g.mu.Lock()
			if !g.feed.Finished() && g.status == StatusStreaming {
				g.dirty = true
			}
			g.mu.Unlock()
		}
		s.mu.Unlock()
		return
	}
	// A reply whose row is no longer streaming was deleted by a rewind (or
	// ended elsewhere): stop producing it.
	for _, id := range gone {
		s.mu.Lock()
		for _, g := range s.byChat {
			if g.job.Message == id {
				g.cancel(errStopped)
			}
		}
		s.mu.Unlock()
	}
}

// Shutdown stops accepting replies, interrupts the running ones (they are
// written as interrupted, so they can be continued after a restart) and
// waits for them to be written, or for ctx.
func (s *Service) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if !s.closed {
		close(s.closing)
	}
	s.closed = true
	var running []*gen
	for _, g := range s.byChat {
		running = append(running, g)
	}
	s.mu.Unlock()
	for _, g := range running {
		g.cancel(errShutdown)
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("replies still running at shutdown: %w", ctx.Err())
	}
	s.stopLoop()
	<-s.loopDone
	return err
}
