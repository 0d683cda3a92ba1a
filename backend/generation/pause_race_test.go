package generation

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/store"
)

// An answer the person was told was taken is never lost: one that lands
// as the deadline passes counts (the pause returns it), rather than the
// card saying "No answer in time" after Answer said yes.
func TestAnswerAtTheDeadlineIsNeverLost(t *testing.T) {
	e := newReplyEnv(t, nil)
	const pauses = 600
	var answered, accepted atomic.Int64
	done := make(chan struct{})
	j := e.job(e.chat, e.msg)
	j.Producer = rounds{func(ctx context.Context, out *Output) (Round, error) {
		defer close(done)
		for range pauses {
			_, err := out.Pause(ctx, Ask{Kind: AskWait}, time.Millisecond)
			switch {
			case err == nil:
				answered.Add(1)
			case !errors.Is(err, ErrNoAnswer):
				return Round{}, err
			}
		}
		return Round{}, out.Delta("Done.", "")
	}}
	if err := e.gen.Start(j); err != nil {
		t.Fatal(err)
	}
	// Answer every card seen. (Whether an answer lands in the moment
	// the deadline passes is luck; the assertion holds whatever the timing.)
	go func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if ask, ok := e.gen.Asking(e.user, e.chat); ok {
				// Around the deadline: before it, at it, after it.
				time.Sleep(time.Duration(rand.IntN(1500)) * time.Microsecond)
				if e.gen.Answer(e.user, e.msg, Answer{ID: ask.ID}) == nil {
					accepted.Add(1)
				}
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("the pauses did not end")
	}
	t.Logf("accepted %d, answered %d of %d", accepted.Load(), answered.Load(), pauses)
	if a, n := accepted.Load(), answered.Load(); a != n {
		t.Errorf("Answer took %d answers, the pauses returned %d", a, n)
	}
}

// A reply paused while the server shuts down ends (its pause says
// Stopped); it does not hold Shutdown until its card's deadline.
func TestShutdownWhilePaused(t *testing.T) {
	e := newReplyEnv(t, nil)
	got := make(chan error, 1)
	var answer Answer
	j := e.job(e.chat, e.msg)
	j.Producer = rounds{pauseRound(twoItems(), time.Hour, got, &answer)}
	if err := e.gen.Start(j); err != nil {
		t.Fatal(err)
	}
	e.waitAsk(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := e.gen.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err == nil {
		t.Fatal("the pause ended without an error")
	}
	m := e.row(t)
	if m.Status == store.StatusStreaming {
		t.Fatalf("the row is still streaming")
	}
	if p := m.Parts()[1]; !strings.HasSuffix(p.Text, "\n"+OutcomeStopped) {
		t.Errorf("pause part %q", p.Text)
	}
}

// Stop and Answer at once, again and again (run with -race): each reply
// ends — stopped, or answered and finished — with its card gone, and a
// second answer is refused.
func TestStopRacingAnswer(t *testing.T) {
	e := newReplyEnv(t, nil)
	for range 30 {
		chat, msg := e.addChat(t)
		got := make(chan error, 1)
		var answer Answer
		j := e.job(chat, msg)
		j.Producer = rounds{pauseRound(twoItems(), time.Hour, got, &answer)}
		if err := e.gen.Start(j); err != nil {
			t.Fatal(err)
		}
		var ask Ask
		poll(t, "the card", func() bool {
			var ok bool
			ask, ok = e.gen.Asking(e.user, chat)
			return ok
		})
		answered := make(chan error, 1)
		go func() { answered <- e.gen.Answer(e.user, msg, Answer{ID: ask.ID}) }()
		e.gen.Stop(e.user, chat)
		aerr := <-answered
		perr := <-got
		if aerr != nil && perr == nil {
			t.Fatalf("the pause returned an answer Answer refused (%v)", aerr)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		e.gen.Wait(ctx, chat)
		cancel()
		if _, ok := e.gen.Asking(e.user, chat); ok {
			t.Fatal("a card outlived its reply")
		}
		if err := e.gen.Answer(e.user, msg, Answer{ID: ask.ID}); err == nil {
			t.Fatal("a second answer was taken")
		}
		if m := e.rowOf(t, msg); m.Status == store.StatusStreaming {
			t.Fatal("the reply is still streaming")
		}
	}
}

// An answer's text is bounded and must be text: a huge one or invalid
// UTF-8 is refused and the card still waits for a proper answer.
func TestAnswerTextIsBounded(t *testing.T) {
	e := newReplyEnv(t, nil)
	got := make(chan error, 1)
	var answer Answer
	j := e.job(e.chat, e.msg)
	j.Producer = rounds{pauseRound(twoItems(), time.Hour, got, &answer)}
	if err := e.gen.Start(j); err != nil {
		t.Fatal(err)
	}
	ask := e.waitAsk(t)
	for name, text := range map[string]string{
		"huge":    strings.Repeat("x", MaxReplyText+1),
		"invalid": "\xff\xfe",
	} {
		err := e.gen.Answer(e.user, e.msg, Answer{ID: ask.ID, Items: map[string]Reply{"c1.q0": {Text: text}}})
		if apperr.KindOf(err) != apperr.Invalid {
			t.Errorf("%s: %v, want invalid", name, err)
		}
	}
	if err := e.gen.Answer(e.user, e.msg, Answer{ID: ask.ID, Items: map[string]Reply{"c1.q0": {Text: strings.Repeat("y", MaxReplyText)}}}); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if n := len(answer.Items["c1.q0"].Text); n != MaxReplyText {
		t.Errorf("the answer's text is %d bytes", n)
	}
}
