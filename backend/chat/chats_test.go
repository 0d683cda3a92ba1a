package chat_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/store"
)

// Trashing a chat is the service's rule, whoever calls it: the running
// reply stops, the chat leaves the list, followers hear of it, and Restore
// brings it back.
func TestTrashStopsTheReplyAndTellsFollowers(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	sub := e.c.Bus.Subscribe(int64(e.user), 1<<10)
	t.Cleanup(sub.Close)
	e.llm.Enqueue(fakellm.Stream("partial ", "answer ", "more").StallAfter(3))
	turn := e.send(0, "Tell me")
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(e.liveText(turn.Chat.ID), "answer") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := e.c.Chat.Trash(ctx, e.user, turn.Chat.ID); err != nil {
		t.Fatal(err)
	}
	e.wait(turn.Chat.ID)
	if m := e.last(turn.Chat.ID); m.Status != store.StatusStopped {
		t.Errorf("the reply of a trashed chat is %s, want stopped", m.Status)
	}
	list, err := e.c.Chat.List(ctx, e.user)
	if err != nil || len(list) != 0 {
		t.Errorf("list after trash: %v %v", list, err)
	}
	if _, err := e.c.Chat.Send(ctx, e.user, chat.SendInput{ChatID: turn.Chat.ID, Content: "again"}); apperr.KindOf(err) != apperr.Conflict {
		t.Errorf("send to a trashed chat: %v", err)
	}
	if err := e.c.Chat.Restore(ctx, e.user, turn.Chat.ID); err != nil {
		t.Fatal(err)
	}
	if list, _ := e.c.Chat.List(ctx, e.user); len(list) != 1 || list[0].Streaming {
		t.Errorf("list after restore: %+v", list)
	}
	want := map[string]bool{"trashed": true, "restored": true}
	for deadline := time.Now().Add(10 * time.Second); len(want) > 0 && time.Now().Before(deadline); {
		select {
		case ev := <-sub.C():
			if c, ok := ev.Data.(chat.ChatEvent); ok && c.ChatID == turn.Chat.ID {
				delete(want, c.Change)
			}
		case <-time.After(100 * time.Millisecond):
		}
	}
	if len(want) > 0 {
		t.Errorf("followers never heard %v", want)
	}
}

// Update checks what it is given before it writes anything.
func TestUpdateRefusesBadTitlesEffortsAndModels(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	turn := e.send(0, "Hello")
	e.wait(turn.Chat.ID)
	long, bad, missing := strings.Repeat("t", 201), "extreme", e.model+100
	for _, tc := range []struct {
		name string
		p    chat.Patch
		kind apperr.Kind
	}{
		{"long title", chat.Patch{Title: &long}, apperr.Invalid},
		{"unknown effort", chat.Patch{Params: &store.Params{ReasoningEffort: &bad}}, apperr.Invalid},
		{"unknown model", chat.Patch{Model: &missing}, apperr.NotFound},
	} {
		if _, err := e.c.Chat.Update(ctx, e.user, turn.Chat.ID, tc.p); apperr.KindOf(err) != tc.kind {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.kind)
		}
	}
	title := "  A title  "
	ch, err := e.c.Chat.Update(ctx, e.user, turn.Chat.ID, chat.Patch{Title: &title})
	if err != nil || ch.Title != "A title" {
		t.Errorf("title %q %v", ch.Title, err)
	}
}
