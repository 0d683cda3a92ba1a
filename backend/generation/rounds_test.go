package generation

import (
	"context"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/render"
	"github.com/llembas/lembas/backend/store"
)

// rounds is a test producer: each round runs the function of its number.
type rounds []func(ctx context.Context, out *Output) (Round, error)

func (r rounds) Round(ctx context.Context, out *Output) (Round, error) {
	return r[out.Round()](ctx, out)
}

var _ Producer = rounds(nil)

// toolRound is a first round as the tool loop will run it: some text, a
// tool call and its result, and a request for another round.
func toolRound(ctx context.Context, out *Output) (Round, error) {
	if err := out.Delta("Looking it up.", "Need the weather."); err != nil {
		return Round{}, err
	}
	if err := out.Add(store.Part{Kind: store.PartToolCall, Name: "weather", CallID: "c1", Text: `{"city":"Bree"}`}); err != nil {
		return Round{}, err
	}
	if err := out.Add(store.Part{Kind: store.PartToolResult, CallID: "c1", Text: "<b>rain</b> & wind"}); err != nil {
		return Round{}, err
	}
	return Round{More: true}, nil
}

// Two rounds make one reply: every kind of part reaches the row and, through
// frames, a follower there from the start and one attaching between the
// rounds, in order.
func TestTwoRoundsMakeOneReply(t *testing.T) {
	e := newReplyEnv(t, nil)
	gate := make(chan struct{})
	e.llm.Enqueue(hold(fakellm.NewStream().Content("It rains ", "in **Bree**.").Reply(), 1, gate))
	second := ChatRound{Client: e.client, Request: llm.ChatRequest{Model: "m", Messages: []llm.Message{{Role: "user", Content: "hi"}}}}
	j := e.job(e.chat, e.msg)
	j.Producer = rounds{toolRound, func(ctx context.Context, out *Output) (Round, error) {
		r, err := second.Round(ctx, out)
		if err != nil {
			return r, err
		}
		if err := out.Add(store.Part{Kind: store.PartNotice, Text: "Checked <once>."}); err != nil {
			return r, err
		}
		if err := out.Add(store.Part{Kind: store.PartPause, Text: "Go on?"}); err != nil {
			return r, err
		}
		return r, out.Delta(" Take a cloak.", "")
	}}
	a := e.follow(t, e.chat, 0)
	if err := e.gen.Start(j); err != nil {
		t.Fatal(err)
	}
	var b *follower
	poll(t, "the second round is under way", func() bool {
		fr, ok := e.gen.Live(e.user, e.chat)
		if !ok || !strings.Contains(liveHTML(t, fr), "It rains") {
			return false
		}
		b = e.follow(t, e.chat, 0)
		fr, _ = e.gen.Live(e.user, e.chat)
		b.snapshot(fr)
		return true
	})
	close(gate)
	a.waitFinal()
	b.waitFinal()

	want := []store.Part{
		{Kind: store.PartReasoning, Text: "Need the weather."},
		{Kind: store.PartText, Text: "Looking it up."},
		{Kind: store.PartToolCall, Name: "weather", CallID: "c1", Text: `{"city":"Bree"}`},
		{Kind: store.PartToolResult, CallID: "c1", Text: "<b>rain</b> & wind"},
		{Kind: store.PartText, Text: "It rains in **Bree**."},
		{Kind: store.PartNotice, Text: "Checked <once>."},
		{Kind: store.PartPause, Text: "Go on?"},
		{Kind: store.PartText, Text: " Take a cloak."},
	}
	m := e.row(t)
	if got := m.Parts(); m.Status != StatusFinal || !reflect.DeepEqual(got, want) {
		t.Fatalf("row is %s with parts\n%+v\nwant\n%+v", m.Status, got, want)
	}
	r := render.New()
	for name, f := range map[string]*follower{"from the start": a, "attached between rounds": b} {
		if len(f.r.Parts) != len(want) {
			t.Fatalf("%s: %d parts, want %d", name, len(f.r.Parts), len(want))
		}
		for i, p := range f.r.Parts {
			w := want[i]
			got := p.Text
			if w.Kind == store.PartText {
				got, w.Text = p.HTML(), r.Markdown(w.Text)
			}
			if p.Kind != w.Kind || got != w.Text || p.Name != w.Name || p.CallID != w.CallID {
				t.Errorf("%s: part %d is %s %q %q %q, want %s %q %q %q", name, i, p.Kind, got, p.Name, p.CallID, w.Kind, w.Text, w.Name, w.CallID)
			}
		}
		// Copy's text: the texts a round, notice or pause stands
		// between are paragraphs of their own, not glued together.
		if want := "Looking it up.\n\nIt rains in **Bree**.\n\n Take a cloak."; f.r.Content != want {
			t.Errorf("%s: final frame's content %q, want %q", name, f.r.Content, want)
		}
	}
	// The parts closed mid-reply were closed by an op, before the end.
	if !a.r.Parts[0].Closed || !a.r.Parts[1].Closed || !a.r.Parts[2].Closed {
		t.Errorf("closed parts: %+v", a.r.Parts)
	}
}

// Stop during the second round ends the reply stopped, with the first
// round's parts and what the second had sent kept, and the endpoint's
// request aborted.
func TestStopInTheSecondRound(t *testing.T) {
	e := newReplyEnv(t, nil)
	never := make(chan struct{})
	e.llm.Enqueue(hold(fakellm.NewStream().Content("So far", " and never this.").Reply(), 1, never))
	second := ChatRound{Client: e.client, Request: llm.ChatRequest{Model: "m", Messages: []llm.Message{{Role: "user", Content: "hi"}}}}
	var ran atomic.Int64
	j := e.job(e.chat, e.msg)
	j.Producer = rounds{toolRound, func(ctx context.Context, out *Output) (Round, error) {
		ran.Add(1)
		r, err := second.Round(ctx, out)
		r.More = true // asks for more; the stop must still end it
		return r, err
	}, func(ctx context.Context, out *Output) (Round, error) {
		t.Error("a third round ran after Stop")
		return Round{}, nil
	}}
	a := e.follow(t, e.chat, 0)
	if err := e.gen.Start(j); err != nil {
		t.Fatal(err)
	}
	poll(t, "the second round's text is framed", func() bool { a.catchUp(); return strings.Contains(a.html(), "So far") })
	if !e.gen.Stop(e.user, e.chat) {
		t.Fatal("Stop found no reply")
	}
	poll(t, "the endpoint's request is aborted", func() bool { return len(stacks(handlerWaiting)) == 0 })
	a.waitFinal()
	m := e.row(t)
	parts := m.Parts()
	if m.Status != StatusStopped || len(parts) != 5 || parts[4].Text != "So far" || parts[2].Kind != store.PartToolCall || ran.Load() != 1 {
		t.Errorf("row is %s with parts %+v (second round ran %d times)", m.Status, parts, ran.Load())
	}
	if a.status != StatusStopped || a.rowAtFinal.Status != StatusStopped {
		t.Errorf("follower %s; row when the final frame came %s", a.status, a.rowAtFinal.Status)
	}
	if want := render.New().Partial("So far"); a.r.Parts[4].HTML() != want {
		t.Errorf("follower's last part %q, want %q", a.r.Parts[4].HTML(), want)
	}
}

// Shutdown during the second round writes the reply interrupted with both
// rounds' parts.
func TestShutdownInTheSecondRound(t *testing.T) {
	e := newReplyEnv(t, nil)
	e.llm.Enqueue(fakellm.NewStream().Content("Half", " never.").Reply().StallAfter(2))
	second := ChatRound{Client: e.client, Request: llm.ChatRequest{Model: "m", Messages: []llm.Message{{Role: "user", Content: "hi"}}}}
	j := e.job(e.chat, e.msg)
	j.Producer = rounds{toolRound, second.Round}
	if err := e.gen.Start(j); err != nil {
		t.Fatal(err)
	}
	poll(t, "the second round has begun", func() bool {
		fr, _ := e.gen.Live(e.user, e.chat)
		return strings.Contains(liveHTML(t, fr), "Half")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.gen.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	m := e.row(t)
	if p := m.Parts(); m.Status != StatusInterrupted || len(p) != 5 || p[4].Text != "Half" || m.Content != "Looking it up.Half" {
		t.Errorf("row is %s with %q, parts %+v", m.Status, m.Content, p)
	}
}

// A checkpoint in the middle of a round stores the parts so far: a crash
// then keeps them.
func TestCheckpointKeepsThePartsSoFar(t *testing.T) {
	e := newReplyEnv(t, nil)
	never := make(chan struct{})
	e.llm.Enqueue(hold(fakellm.NewStream().Content("Mid", " never.").Reply(), 1, never))
	second := ChatRound{Client: e.client, Request: llm.ChatRequest{Model: "m", Messages: []llm.Message{{Role: "user", Content: "hi"}}}}
	j := e.job(e.chat, e.msg)
	j.Producer = rounds{toolRound, second.Round}
	if err := e.gen.Start(j); err != nil {
		t.Fatal(err)
	}
	poll(t, "a checkpoint has the second round's text", func() bool {
		m := e.row(t)
		p := m.Parts()
		return m.Status == StatusStreaming && len(p) == 5 && p[4].Text == "Mid" && p[3].Kind == store.PartToolResult
	})
	e.gen.Stop(e.user, e.chat)
}

// The job carries its caller's permissions into the producer: a step
// decides what it may do where it acts.
func TestProducerSeesTheCallersPermissions(t *testing.T) {
	e := newReplyEnv(t, nil)
	type seen struct{ create, upload, admin bool }
	got := make(chan seen, 1)
	j := e.job(e.chat, e.msg)
	j.Caller = auth.Caller{User: e.user, Perms: auth.NewSet(false, auth.ChatCreate)}
	j.Producer = rounds{func(ctx context.Context, out *Output) (Round, error) {
		c := out.Caller()
		got <- seen{c.Perms.Has(auth.ChatCreate), c.Perms.Has(auth.FilesUpload), c.Perms.Admin()}
		return Round{}, out.Delta("Done.", "")
	}}
	if err := e.gen.Start(j); err != nil {
		t.Fatal(err)
	}
	if s := <-got; !s.create || s.upload || s.admin {
		t.Errorf("inside the producer: chat.create %v, files.upload %v, admin %v; want true, false, false", s.create, s.upload, s.admin)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.gen.Wait(ctx, e.chat); err != nil {
		t.Fatal(err)
	}
}
