package generation

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// A pause is a reply waiting for the person: to approve calls, to answer
// the model's questions, or just to be told to go on. It pauses a round,
// not a call (one card for everything the round asks), and is one
// primitive for the three (Output.Pause, Service.Answer). A paused reply
// is not done, so a reload re-attaches to its card (Live); nothing but
// its parts is stored while it waits, so a restart abandons the question
// with the reply, as it abandons every reply in flight.

// AskKind is what a pause asks of the person.
type AskKind string

// The kinds of pause.
const (
	// AskApprove: calls wait to be allowed (the card may also hold
	// questions).
	AskApprove AskKind = "approve"
	// AskQuestions: the model asked questions.
	AskQuestions AskKind = "questions"
	// AskWait: the reply waits until the person says to go on.
	AskWait AskKind = "wait"
)

// ItemKind is what one item of a card asks.
type ItemKind string

// The kinds of item.
const (
	ItemApprove  ItemKind = "approve"
	ItemQuestion ItemKind = "question"
)

// Ask is the card a paused reply shows (docs/API.md, frames' ask). Every
// text is plain text, shown escaped.
type Ask struct {
	// ID names this pause: an answer must carry it, so an answer to a
	// card that is gone (answered in another tab, timed out) is refused
	// rather than taken for the next one. Pause sets it.
	ID    string    `json:"id"`
	Kind  AskKind   `json:"kind"`
	Items []AskItem `json:"items"`
	// Deadline is when the pause gives up (unix milliseconds). Pause sets
	// it.
	Deadline int64 `json:"deadline"`
}

// AskItem is one item of a card: a call to approve or a question.
type AskItem struct {
	// Key is unique in the card; the answer's items are keyed by it.
	Key    string   `json:"key"`
	CallID string   `json:"callId,omitempty"`
	Tool   string   `json:"tool,omitempty"`
	Kind   ItemKind `json:"kind"`
	Text   string   `json:"text"`
	// Options are choices offered beside a free answer (questions).
	Options []string `json:"options,omitempty"`
}

// Answer is the person's answer to a card: ID is the card's, Items its
// items' replies by key. An approve item without a reply is declined; a
// question without one is answered with nothing.
type Answer struct {
	ID    string           `json:"id"`
	Items map[string]Reply `json:"items"`
}

// Reply is the answer to one item: Approve for a call, Text the answer to
// a question or a note beside a decision.
type Reply struct {
	Approve bool   `json:"approve"`
	Text    string `json:"text"`
}

// MaxReplyText bounds the text of one reply in an answer.
const MaxReplyText = 16 << 10

// ErrNoAnswer is Pause's error when the deadline passed with no answer.
var ErrNoAnswer = errors.New("no answer in time")

// The last line of a pause part: how it ended.
const (
	OutcomeApproved = "Approved"
	OutcomeDeclined = "Declined"
	OutcomeAnswered = "Answered"
	OutcomeTimeout  = "No answer in time"
	OutcomeStopped  = "Stopped"
)

// AskState is a frame's ask: a frame carries one whenever the pending ask
// changed, and a Live snapshot always does; Ask nil is sent as null (the
// card is gone), which a follower must apply too — a card that outlived
// its answer is a button one could press twice.
type AskState struct{ Ask *Ask }

// MarshalJSON writes the ask, or null.
func (s AskState) MarshalJSON() ([]byte, error) { return json.Marshal(s.Ask) }

// Pause shows ask as the reply's card and waits, for at most timeout, for
// the person's Answer (Service.Answer), Stop (the reply's ctx: its cause
// is returned) or the deadline (ErrNoAnswer). It adds a pause part saying
// what it waits for, to which its last line says how it ended. Only one
// pause at a time.
func (o *Output) Pause(ctx context.Context, ask Ask, timeout time.Duration) (Answer, error) {
	if timeout <= 0 {
		return Answer{}, errors.New("generation: a pause needs a timeout")
	}
	g := o.g
	ask.ID = newAskID()
	ask.Deadline = time.Now().Add(timeout).UnixMilli()
	ask.Items = slices.Clone(ask.Items)
	answers := make(chan Answer, 1)

	g.mu.Lock()
	if g.ask != nil {
		g.mu.Unlock()
		return Answer{}, errors.New("generation: the reply is already paused")
	}
	g.closeCurrent()
	p := &part{kind: store.PartPause}
	p.text.WriteString(waitingFor(ask))
	g.parts = append(g.parts, p)
	g.ask, g.answers, g.askChanged, g.asked = &ask, answers, true, true
	if g.firstTok == 0 {
		g.firstTok = time.Since(g.start)
	}
	started := time.Now()
	if err := g.grew(p.text.Len()); err != nil {
		o.endPause(p, started, OutcomeStopped)
		return Answer{}, err
	}

	t := time.NewTimer(timeout)
	defer t.Stop()
	var a Answer
	var err error
	select {
	case a = <-answers:
	case <-ctx.Done():
		err = context.Cause(ctx)
	case <-t.C:
		err = ErrNoAnswer
	}
	// The card goes under the lock, so no answer is taken after this;
	// one Answer took at the deadline's very moment (before the card
	// went) counts: the person was told it was.
	g.mu.Lock()
	g.ask, g.answers, g.askChanged = nil, nil, true
	if errors.Is(err, ErrNoAnswer) {
		select {
		case a = <-answers:
			err = nil
		default:
		}
	}
	g.mu.Unlock()
	outcome := OutcomeStopped
	switch {
	case err == nil:
		outcome = answered(ask, a)
	case errors.Is(err, ErrNoAnswer):
		outcome = OutcomeTimeout
	}
	if grow := o.endPause(p, started, outcome); err == nil {
		err = grow
	}
	return a, err
}

// endPause writes how the pause ended as its part's last line, closes the
// part and takes the card away.
func (o *Output) endPause(p *part, started time.Time, outcome string) error {
	g := o.g
	g.mu.Lock()
	p.text.WriteString("\n" + outcome)
	p.closed = true
	g.ask, g.answers, g.askChanged = nil, nil, true
	g.paused += time.Since(started)
	return g.grew(len(outcome) + 1)
}

// Answer answers the pending card of user's reply message. A reply that
// is not running (or not user's) is not found; an answer whose id is not
// the pending card's (answered already, timed out, or never asked) is a
// conflict.
func (s *Service) Answer(user ids.UserID, message ids.MessageID, a Answer) error {
	s.mu.Lock()
	var g *gen
	for _, x := range s.byChat {
		if x.job.Message == message {
			g = x
		}
	}
	s.mu.Unlock()
	if g == nil || g.job.User != user {
		return apperr.New(apperr.NotFound, "That reply is not running.")
	}
	g.mu.Lock()
	if g.ask == nil || a.ID != g.ask.ID || g.feed.Finished() {
		g.mu.Unlock()
		return apperr.New(apperr.Conflict, "This question was already answered.")
	}
	for k, r := range a.Items {
		if !slices.ContainsFunc(g.ask.Items, func(it AskItem) bool { return it.Key == k }) {
			g.mu.Unlock()
			return apperr.New(apperr.Invalid, "The answer names an item the question does not have.")
		}
		if len(r.Text) > MaxReplyText || !utf8.ValidString(r.Text) {
			g.mu.Unlock()
			return apperr.New(apperr.Invalid, "An answer is too long or not valid text (at most %d KiB).", MaxReplyText>>10)
		}
	}
	items := make(map[string]Reply, len(a.Items))
	for k, r := range a.Items {
		items[k] = r
	}
	g.answers <- Answer{ID: a.ID, Items: items} // buffered: one answer per card
	g.ask, g.askChanged = nil, true
	g.mu.Unlock()
	g.wake()
	return nil
}

// Asking returns the card user's running reply in chat waits on, if any.
func (s *Service) Asking(user ids.UserID, chat ids.ChatID) (Ask, bool) {
	s.mu.Lock()
	g, ok := s.byChat[chat]
	s.mu.Unlock()
	if !ok || g.job.User != user {
		return Ask{}, false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ask == nil {
		return Ask{}, false
	}
	return g.askCopy(), true
}

// askCopy is the pending ask, copied for a frame. g.mu held, g.ask set.
func (g *gen) askCopy() Ask {
	a := *g.ask
	a.Items = slices.Clone(a.Items)
	return a
}

// askState is the pending ask as a frame carries it. g.mu held.
func (g *gen) askState() *AskState {
	if g.ask == nil {
		return &AskState{}
	}
	a := g.askCopy()
	return &AskState{Ask: &a}
}

// waitingFor is the first lines of a pause part: what the card asks, one
// line per item (cut short: the card has them whole).
func waitingFor(a Ask) string {
	var approve, questions int
	for _, it := range a.Items {
		if it.Kind == ItemApprove {
			approve++
		} else {
			questions++
		}
	}
	var b strings.Builder
	switch {
	case approve > 0 && questions > 0:
		fmt.Fprintf(&b, "Asked to approve %s and to answer %s:", count(approve, "call"), count(questions, "question"))
	case approve > 0:
		fmt.Fprintf(&b, "Asked to approve %s:", count(approve, "call"))
	case questions > 0:
		fmt.Fprintf(&b, "Asked %s:", count(questions, "question"))
	default:
		b.WriteString("Waiting for you.")
	}
	for _, it := range a.Items {
		line, _, _ := strings.Cut(it.Text, "\n")
		if it.Kind == ItemApprove && it.Tool != "" && !strings.HasPrefix(line, it.Tool) {
			line = it.Tool + ": " + line
		}
		b.WriteString("\n- " + clip(line, 200))
	}
	return b.String()
}

// answered is how an answered card ended: the approvals' verdict, or
// Answered for a card of questions only.
func answered(ask Ask, a Answer) string {
	var yes, no int
	for _, it := range ask.Items {
		if it.Kind != ItemApprove {
			continue
		}
		if a.Items[it.Key].Approve {
			yes++
		} else {
			no++
		}
	}
	switch {
	case yes+no == 0:
		return OutcomeAnswered
	case no == 0:
		return OutcomeApproved
	case yes == 0:
		return OutcomeDeclined
	}
	return fmt.Sprintf("%s %d, declined %d", OutcomeApproved, yes, no)
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// clip cuts s to at most n runes, with an ellipsis when cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func newAskID() string {
	b := make([]byte, 12)
	rand.Read(b) // never fails (crypto/rand since Go 1.24)
	return hex.EncodeToString(b)
}
