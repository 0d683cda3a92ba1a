package generation

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/render"
	"github.com/llembas/lembas/backend/store"
)

// Producer runs a reply's rounds against the endpoint. The job calls Round
// once, then again for as long as the round before asks for more, all into
// the same reply; the tool loop is a producer whose round ends with a tool
// call and asks for another with its result. Stop, shutdown and the size
// limit cancel ctx (and fail Output's methods) in whichever round is
// running.
type Producer interface {
	Round(ctx context.Context, out *Output) (Round, error)
}

// Round is how one round ended.
type Round struct {
	// More asks for another round in the same reply.
	More bool
	// Result is the endpoint's answer; the last round's finish reason and
	// usage are the reply's.
	llm.Result
}

// MaxRounds bounds the rounds of one reply: a producer that always asks
// for more ends with the reply cut off by length.
const MaxRounds = 64

// ChatRound is the producer of a plain reply: one request, whose text and
// reasoning stream into the reply, and no further round.
type ChatRound struct {
	Client  Streamer
	Request llm.ChatRequest
}

// Round streams one Client.Chat into out.
func (p ChatRound) Round(ctx context.Context, out *Output) (Round, error) {
	res, err := p.Client.Chat(ctx, p.Request, func(d llm.Delta) error {
		return out.Delta(d.Content, d.Reasoning)
	})
	return Round{Result: res}, err
}

// Output is a producer's handle on the reply it writes.
type Output struct {
	g     *gen
	round int
}

// Caller is who the reply acts for, with their permissions as resolved
// when the reply was asked for.
func (o *Output) Caller() auth.Caller { return o.g.job.Caller }

// Round is the number of the round running, from 0.
func (o *Output) Round() int { return o.round }

// Delta appends model text and reasoning to the reply: text to its current
// text part and reasoning to its current reasoning part, each opened when
// there is none (at the start, or after a part of another kind). It fails
// once the reply has reached MaxReply.
func (o *Output) Delta(text, reasoning string) error {
	g := o.g
	g.mu.Lock()
	if g.firstTok == 0 && (text != "" || reasoning != "") {
		g.firstTok = time.Since(g.start)
	}
	if reasoning != "" {
		g.current(store.PartReasoning).text.WriteString(reasoning)
	}
	if text != "" {
		p := g.current(store.PartText)
		p.text.WriteString(text)
		p.live.Write(text)
	}
	return g.grew(len(text) + len(reasoning))
}

// Add appends a whole part of another kind than text or reasoning (a tool
// call, its result, a pause, a notice). It closes the current text and
// reasoning parts: what the model writes next opens new ones after it.
func (o *Output) Add(p store.Part) error {
	if p.Kind == store.PartText || p.Kind == store.PartReasoning {
		return errors.New("generation: text and reasoning are added with Delta")
	}
	g := o.g
	g.mu.Lock()
	g.closeCurrent()
	np := &part{kind: p.Kind, name: p.Name, callID: p.CallID, failed: p.Error, closed: true}
	np.text.WriteString(p.Text)
	g.parts = append(g.parts, np)
	if g.firstTok == 0 {
		g.firstTok = time.Since(g.start)
	}
	return g.grew(len(p.Text))
}

// SetActivity sets the reply's activity line: what it is doing while
// nothing streams ("Searching the web for …"), plain text; "" clears it.
// Followers get it in the next frame and in Live snapshots; the reply's
// end clears it.
func (o *Output) SetActivity(text string) {
	g := o.g
	g.mu.Lock()
	if g.activity == text {
		g.mu.Unlock()
		return
	}
	g.activity = text
	g.activityChanged = true
	g.mu.Unlock()
	g.wake()
}

// grew ends a change of n bytes made under g.mu: it marks the reply for
// the next checkpoint, unlocks, and wakes the frames, or reports that the
// reply has passed MaxReply.
func (g *gen) grew(n int) error {
	g.size += n
	g.dirty = true
	tooLong := g.size > MaxReply
	g.mu.Unlock()
	if tooLong {
		return errTooLong
	}
	g.wake()
	return nil
}

// Retarget replaces the request the reply's metrics measure (its size
// when the endpoint reports no usage) and the count of earlier turns it
// left out: a producer that built its request again after the reply
// started (a compaction first) says what it sends instead.
func (o *Output) Retarget(req llm.ChatRequest, omitted int) {
	g := o.g
	g.mu.Lock()
	g.job.Request, g.job.OmittedTurns = req, omitted
	g.mu.Unlock()
}

// Parts returns the reply's parts so far (a producer's next request is
// built from them).
func (o *Output) Parts() []store.Part {
	o.g.mu.Lock()
	defer o.g.mu.Unlock()
	return o.g.storedParts()
}

// part is one part of a reply being produced.
type part struct {
	kind         store.PartKind
	name, callID string
	failed       bool // a tool result that is a failure (store.Part.Error)
	// text grows by appending: rebuilding a string per delta would copy
	// the whole part each time (quadratic in its length). Text parts
	// hold Markdown, the others plain text.
	text strings.Builder
	from int            // text[:from] was in the message before this reply (Continue)
	live *render.Stream // text parts: the HTML followers have
	sent int            // other parts: text[:sent] has been framed
	// closed: nothing more is added; closeSent: followers were told.
	closed, closeSent bool
}

// current returns the part that text or reasoning goes to, opening one at
// the end when there is none. g.mu held.
func (g *gen) current(kind store.PartKind) *part {
	i := &g.curText
	if kind == store.PartReasoning {
		i = &g.curReason
	}
	if *i < 0 {
		p := &part{kind: kind}
		if kind == store.PartText {
			p.live = g.rnd.NewStream()
		}
		g.parts = append(g.parts, p)
		*i = len(g.parts) - 1
	}
	return g.parts[*i]
}

// closeCurrent closes the current text and reasoning parts. g.mu held.
func (g *gen) closeCurrent() {
	for _, i := range []*int{&g.curText, &g.curReason} {
		if *i >= 0 {
			g.parts[*i].closed = true
			*i = -1
		}
	}
}

// storedParts is the reply as the store keeps it. g.mu held.
func (g *gen) storedParts() []store.Part {
	out := make([]store.Part, len(g.parts))
	for i, p := range g.parts {
		out[i] = store.Part{Kind: p.kind, Text: p.text.String(), Name: p.name, CallID: p.callID, Error: p.failed}
	}
	return out
}

// wake tells the frame goroutine that something changed.
func (g *gen) wake() { g.feed.Wake() }
