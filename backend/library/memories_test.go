package library

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/apperr"
)

func TestMemoryCaps(t *testing.T) {
	w := newItemsWorld(t)
	ctx := context.Background()

	_, err := w.lib.AddMemory(ctx, w.ann, strings.Repeat("é", 243), "person")
	wantMessage(t, err, apperr.Invalid, "Memories are at most 200 characters; this one has 243. Shorten it.")
	for _, blank := range []string{"", "   ", "\n\t"} {
		_, err := w.lib.AddMemory(ctx, w.ann, blank, "model")
		wantKind(t, err, apperr.Invalid)
	}
	_, err = w.lib.AddMemory(ctx, w.ann, "likes tea", "someone")
	wantKind(t, err, apperr.Invalid)

	// Nine memories of 195 characters and one of 195 take 1,950.
	for i := range 10 {
		text := string(rune('a'+i)) + strings.Repeat(".", 194)
		if _, err := w.lib.AddMemory(ctx, w.ann, text, "person"); err != nil {
			t.Fatalf("memory %d: %v", i, err)
		}
	}
	_, err = w.lib.AddMemory(ctx, w.ann, strings.Repeat("z", 51), "model")
	wantMessage(t, err, apperr.Invalid, "Your memories already take 1,950 of 2,000 characters; forget one to make room.")
	// One that fits exactly is kept.
	if _, err := w.lib.AddMemory(ctx, w.ann, strings.Repeat("z", 50), "model"); err != nil {
		t.Fatal(err)
	}
	// Changing one past the total is refused the same way.
	have, err := w.lib.Memories(ctx, w.ann)
	if err != nil || len(have) != 11 {
		t.Fatalf("memories %d, %v", len(have), err)
	}
	_, err = w.lib.UpdateMemory(ctx, w.ann, have[0].ID, strings.Repeat("y", 196))
	wantMessage(t, err, apperr.Invalid, "Your memories already take 1,805 of 2,000 characters; forget one to make room.")
	// Forgetting one makes room.
	if err := w.lib.DeleteMemory(ctx, w.ann, have[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.lib.AddMemory(ctx, w.ann, strings.Repeat("x", 150), "person"); err != nil {
		t.Fatal(err)
	}
	// Caps are per person.
	if _, err := w.lib.AddMemory(ctx, w.bob, strings.Repeat("x", 200), "person"); err != nil {
		t.Fatal(err)
	}
}

func TestMemoryCount(t *testing.T) {
	w := newItemsWorld(t)
	ctx := context.Background()
	for i := range MaxMemoryCount {
		if _, err := w.lib.AddMemory(ctx, w.ann, "fact "+strconv.Itoa(i), "model"); err != nil {
			t.Fatal(err)
		}
	}
	_, err := w.lib.AddMemory(ctx, w.ann, "one more", "model")
	wantMessage(t, err, apperr.Invalid, "You already have 50 memories, the most there can be; forget one to make room.")
}

func TestMemoryDuplicateAndPrivacy(t *testing.T) {
	w := newItemsWorld(t)
	ctx := context.Background()
	m, err := w.lib.AddMemory(ctx, w.ann, "  Prefers   metric units ", "person")
	if err != nil {
		t.Fatal(err)
	}
	if m.Text != "Prefers metric units" || m.Source != "person" {
		t.Fatalf("stored %+v", m)
	}
	again, err := w.lib.AddMemory(ctx, w.ann, "prefers METRIC units", "model")
	if err != nil || again.ID != m.ID || again.Text != m.Text {
		t.Fatalf("again %+v, %v", again, err)
	}
	if have, _ := w.lib.Memories(ctx, w.ann); len(have) != 1 {
		t.Fatalf("stored twice: %+v", have)
	}
	other, err := w.lib.AddMemory(ctx, w.ann, "Has a cat", "model")
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.lib.UpdateMemory(ctx, w.ann, other.ID, "PREFERS metric units")
	wantKind(t, err, apperr.Invalid)

	// Another person, administrator or not, neither sees nor changes it.
	for _, who := range []struct {
		name string
		lib  func() error
	}{
		{"admin update", func() error { _, err := w.lib.UpdateMemory(ctx, w.admin, m.ID, "x"); return err }},
		{"admin delete", func() error { return w.lib.DeleteMemory(ctx, w.admin, m.ID) }},
		{"bob update", func() error { _, err := w.lib.UpdateMemory(ctx, w.bob, m.ID, "x"); return err }},
	} {
		t.Run(who.name, func(t *testing.T) { wantMessage(t, who.lib(), apperr.NotFound, "memory not found") })
	}
	if have, _ := w.lib.Memories(ctx, w.admin); len(have) != 0 {
		t.Fatalf("admin lists %+v", have)
	}
}

func TestMemoryOn(t *testing.T) {
	w := newItemsWorld(t)
	ctx := context.Background()
	on, err := w.lib.MemoryOn(ctx, w.ann)
	if err != nil || !on {
		t.Fatalf("new person: on %v, %v", on, err)
	}
	if err := w.lib.SetMemoryOn(ctx, w.ann, false); err != nil {
		t.Fatal(err)
	}
	if on, _ := w.lib.MemoryOn(ctx, w.ann); on {
		t.Fatal("still on")
	}
	if on, _ := w.lib.MemoryOn(ctx, w.bob); !on {
		t.Fatal("bob's turned off too")
	}
	if err := w.lib.SetMemoryOn(ctx, w.ann, true); err != nil {
		t.Fatal(err)
	}
	if on, _ := w.lib.MemoryOn(ctx, w.ann); !on {
		t.Fatal("not back on")
	}
}
