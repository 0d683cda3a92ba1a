package drops

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestShelf(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(file, []byte("second breakfast"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := New()
	clock := time.Unix(1_800_000_000, 0)
	s.now = func() time.Time { return clock }

	got := s.Offer([]string{file, dir, filepath.Join(dir, "gone.txt"), ""})
	if len(got) != 3 {
		t.Fatalf("offers: %+v", got)
	}
	if got[0].Token == "" || got[0].Name != "notes.txt" || got[0].Size != 16 || got[0].Error != "" {
		t.Errorf("file offer: %+v", got[0])
	}
	for _, o := range got[1:] {
		if o.Token != "" || o.Error == "" {
			t.Errorf("a folder or a missing file was shelved: %+v", o)
		}
	}

	if _, ok := s.Take("not-a-token"); ok {
		t.Error("an unknown token was honoured")
	}
	if p, ok := s.Take(got[0].Token); !ok || p != file {
		t.Fatalf("take: %q %v", p, ok)
	}
	if _, ok := s.Take(got[0].Token); ok {
		t.Error("a token was honoured twice")
	}

	late := s.Offer([]string{file})[0]
	clock = clock.Add(TTL + time.Second)
	if _, ok := s.Take(late.Token); ok {
		t.Error("an expired token was honoured")
	}
}

func TestShelfIsBounded(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a.txt")
	os.WriteFile(file, []byte("a"), 0o600)
	s := New()
	first := s.Offer([]string{file})[0].Token
	for i := 0; i < maxShelved; i++ {
		s.Offer([]string{file})
	}
	if len(s.items) > maxShelved {
		t.Errorf("%d offers shelved, bound %d", len(s.items), maxShelved)
	}
	if _, ok := s.Take(first); ok {
		t.Error("the oldest offer was kept past the bound")
	}
}

func TestOfferRefusesRelativeAndTooMany(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.txt")
	os.WriteFile(file, []byte("a"), 0o600)
	s := New()
	if o := s.Offer([]string{"a.txt"})[0]; o.Token != "" {
		t.Errorf("a relative path was shelved: %+v", o)
	}
	paths := make([]string, MaxPerDrop+3)
	for i := range paths {
		paths[i] = file
	}
	got := s.Offer(paths)
	for i, o := range got {
		if (o.Token != "") != (i < MaxPerDrop) {
			t.Fatalf("offer %d of %d: %+v", i, len(got), o)
		}
	}
	if _, ok := s.Take(got[0].Token); !ok {
		t.Error("a big drop pushed its own first file off the shelf")
	}
}
