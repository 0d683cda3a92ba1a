package generation

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/store"
)

// pauseRound is a round that shows ask and waits, then writes what came
// back as text; got receives Pause's answer and error.
func pauseRound(ask Ask, timeout time.Duration, got chan<- error, answer *Answer, gate ...chan struct{}) func(ctx context.Context, out *Output) (Round, error) {
	return func(ctx context.Context, out *Output) (Round, error) {
		if err := out.Delta("Before.", ""); err != nil {
			return Round{}, err
		}
		a, err := out.Pause(ctx, ask, timeout)
		*answer = a
		got <- err
		if err != nil && !errors.Is(err, ErrNoAnswer) {
			return Round{}, err
		}
		for _, c := range gate {
			<-c
		}
		return Round{}, out.Delta(" After.", "")
	}
}

func twoItems() Ask {
	return Ask{Kind: AskApprove, Items: []AskItem{
		{Key: "c0", CallID: "call_1", Tool: "shell_run", Kind: ItemApprove, Text: "shell_run: make <test>\nin /srv"},
		{Key: "c1.q0", CallID: "call_2", Tool: "ask_user", Kind: ItemQuestion, Text: "Which branch?", Options: []string{"main", "dev"}},
	}}
}

// waitAsk polls until Live shows a card and returns it.
func (e *replyEnv) waitAsk(t *testing.T) Ask {
	t.Helper()
	var ask Ask
	poll(t, "the reply shows its card", func() bool {
		fr, ok := e.gen.Live(e.user, e.chat)
		if !ok || fr.Ask == nil || fr.Ask.Ask == nil {
			return false
		}
		ask = *fr.Ask.Ask
		return true
	})
	return ask
}

// A paused reply shows its card to a follower there from the start and to
// one attaching mid-pause (Live), outlives several checkpoints still
// streaming, takes one answer from its owner (never another's, never a
// stale id, never twice), hands it to the round, and its card becomes null
// in the frames; the pause part says what it asked and how it ended.
func TestPauseAnswered(t *testing.T) {
	e := newReplyEnv(t, nil)
	got := make(chan error, 1)
	var answer Answer
	j := e.job(e.chat, e.msg)
	gate := make(chan struct{})
	j.Producer = rounds{pauseRound(twoItems(), time.Hour, got, &answer, gate)}
	a := e.follow(t, e.chat, 0)
	if err := e.gen.Start(j); err != nil {
		t.Fatal(err)
	}
	ask := e.waitAsk(t)
	if ask.ID == "" || ask.Kind != AskApprove || len(ask.Items) != 2 || ask.Items[1].Options[1] != "dev" {
		t.Fatalf("ask %+v", ask)
	}
	if d := time.Until(time.UnixMilli(ask.Deadline)); d < 50*time.Minute || d > time.Hour {
		t.Errorf("deadline in %v, want about an hour", d)
	}
	// A reload finds the card: a follower attaching now.
	b := e.follow(t, e.chat, 0)
	fr, _ := e.gen.Live(e.user, e.chat)
	b.snapshot(fr)
	if b.r.Ask == nil || b.r.Ask.ID != ask.ID {
		t.Fatalf("the snapshot's card %+v", b.r.Ask)
	}
	// Still streaming after many checkpoints, with the pause stored.
	time.Sleep(10 * e.gen.opt.CheckpointEvery)
	poll(t, "the pause part is checkpointed", func() bool {
		m := e.row(t)
		return m.Status == store.StatusStreaming && strings.Contains(kindsOf(m.Parts()), "pause")
	})
	if !e.gen.Running(e.chat) {
		t.Fatal("a paused reply is not running")
	}

	yes := Answer{ID: ask.ID, Items: map[string]Reply{"c0": {Approve: true}, "c1.q0": {Text: "dev"}}}
	for _, tc := range []struct {
		name string
		err  error
		kind apperr.Kind
	}{
		{"another person", e.gen.Answer(e.user+1, e.msg, yes), apperr.NotFound},
		{"another message", e.gen.Answer(e.user, e.msg+100, yes), apperr.NotFound},
		{"a stale id", e.gen.Answer(e.user, e.msg, Answer{ID: "0123", Items: yes.Items}), apperr.Conflict},
		{"an unknown item", e.gen.Answer(e.user, e.msg, Answer{ID: ask.ID, Items: map[string]Reply{"c9": {Approve: true}}}), apperr.Invalid},
	} {
		if apperr.KindOf(tc.err) != tc.kind {
			t.Errorf("%s: %v, want %s", tc.name, tc.err, tc.kind)
		}
	}
	if err := e.gen.Answer(e.user, e.msg, yes); err != nil {
		t.Fatal(err)
	}
	if err := e.gen.Answer(e.user, e.msg, yes); apperr.KindOf(err) != apperr.Conflict || !strings.Contains(err.Error(), "already answered") {
		t.Errorf("a second answer: %v", err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if !answer.Items["c0"].Approve || answer.Items["c1.q0"].Text != "dev" {
		t.Errorf("the round got %+v", answer)
	}
	// The card goes away while the reply goes on, not only with the
	// final frame.
	poll(t, "the follower's card is gone", func() bool { a.catchUp(); return a.r.Ask == nil })
	if a.final() {
		t.Fatal("the reply ended before its round was let go")
	}
	close(gate)
	a.waitFinal()
	b.waitFinal()
	m := e.row(t)
	if m.Status != store.StatusFinal || m.Content != "Before. After." {
		t.Fatalf("row %s %q", m.Status, m.Content)
	}
	parts := m.Parts()
	if kindsOf(parts) != "text,pause,text" {
		t.Fatalf("parts %s", kindsOf(parts))
	}
	want := "Asked to approve 1 call and to answer 1 question:\n- shell_run: make <test>\n- Which branch?\n" + OutcomeApproved
	if parts[1].Text != want {
		t.Errorf("pause part %q, want %q", parts[1].Text, want)
	}
	for _, f := range []*follower{a, b} {
		if f.r.Ask != nil {
			t.Errorf("a follower still shows the card %+v", f.r.Ask)
		}
		if f.r.Parts[1].Text != want {
			t.Errorf("a follower's pause part %q", f.r.Parts[1].Text)
		}
	}
}

// Stop resolves a pause: the reply ends stopped at once, its pause part
// saying so.
func TestStopWhilePaused(t *testing.T) {
	e := newReplyEnv(t, nil)
	got := make(chan error, 1)
	var answer Answer
	j := e.job(e.chat, e.msg)
	j.Producer = rounds{pauseRound(twoItems(), time.Hour, got, &answer)}
	if err := e.gen.Start(j); err != nil {
		t.Fatal(err)
	}
	ask := e.waitAsk(t)
	if !e.gen.Stop(e.user, e.chat) {
		t.Fatal("Stop found no reply")
	}
	if err := <-got; err == nil {
		t.Fatal("the pause ended without an error")
	}
	m := e.row(t)
	if m.Status != store.StatusStopped {
		t.Fatalf("status %s", m.Status)
	}
	if p := m.Parts()[1]; !strings.HasSuffix(p.Text, "\n"+OutcomeStopped) {
		t.Errorf("pause part %q", p.Text)
	}
	if err := e.gen.Answer(e.user, e.msg, Answer{ID: ask.ID}); err == nil {
		t.Error("a stopped reply's card took an answer")
	}
	if fr, _ := e.gen.Live(e.user, e.chat); fr.Ask == nil || fr.Ask.Ask != nil {
		t.Errorf("the final snapshot's card %+v", fr.Ask)
	}
}

// Past its deadline a pause returns ErrNoAnswer, and a card of questions
// only ends "Answered" when answered.
func TestPauseTimesOut(t *testing.T) {
	e := newReplyEnv(t, nil)
	got := make(chan error, 1)
	var answer Answer
	j := e.job(e.chat, e.msg)
	j.Producer = rounds{pauseRound(Ask{Kind: AskWait}, 50*time.Millisecond, got, &answer)}
	if err := e.gen.Start(j); err != nil {
		t.Fatal(err)
	}
	if err := <-got; !errors.Is(err, ErrNoAnswer) {
		t.Fatalf("pause: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e.gen.Wait(ctx, e.chat)
	if p := e.row(t).Parts()[1]; p.Text != "Waiting for you.\n"+OutcomeTimeout {
		t.Errorf("pause part %q", p.Text)
	}
}

// A frame's card is null when it goes, not absent: absent leaves it shown.
func TestAskNullIsSent(t *testing.T) {
	b, _ := json.Marshal(Frame{Ask: &AskState{}})
	if !strings.Contains(string(b), `"ask":null`) {
		t.Errorf("%s", b)
	}
	b, _ = json.Marshal(Frame{})
	if strings.Contains(string(b), `"ask"`) {
		t.Errorf("%s", b)
	}
}

func kindsOf(parts []store.Part) string {
	var b []string
	for _, p := range parts {
		b = append(b, string(p.Kind))
	}
	return strings.Join(b, ",")
}
