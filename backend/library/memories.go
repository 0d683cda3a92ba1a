package library

import (
	"context"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// Caps of memories. Every memory is injected whole into every request the
// person makes (unless memory is off), so they cost tokens on each turn and
// crowd the window of a small model: each is a short fact, and their total
// is bounded (2,000 characters is about 500 tokens). Past a cap a memory
// is refused, with what to do, rather than an old one dropped silently.
const (
	MaxMemory       = 200  // characters of one memory
	MaxMemoryTotal  = 2000 // characters of all of a person's memories
	MaxMemoryCount  = 50   // memories a person keeps
	memoryOffPref   = "memory_off"
	memoryFromModel = "model"
	memoryByPerson  = "person"
)

// Memories lists user's memories, oldest first.
func (s *Service) Memories(ctx context.Context, user ids.UserID) ([]store.Memory, error) {
	return s.db.Memories(ctx, user)
}

// AddMemory stores a memory of user's; source is "person" or "model". One
// over the length cap or past the total cap is refused with a message that
// says so. The same text again (in any letter case) is not stored twice:
// the memory already there is returned.
func (s *Service) AddMemory(ctx context.Context, user ids.UserID, text, source string) (store.Memory, error) {
	if source != memoryFromModel && source != memoryByPerson {
		return store.Memory{}, apperr.New(apperr.Invalid, "A memory comes from the person or the model, not %q.", source)
	}
	text, err := memoryText(text)
	if err != nil {
		return store.Memory{}, err
	}
	m, err := s.db.AddMemory(ctx, user, text, source, func(have []store.Memory) (*store.Memory, error) {
		for i := range have {
			if strings.EqualFold(have[i].Text, text) {
				return &have[i], nil
			}
		}
		if len(have) >= MaxMemoryCount {
			return nil, apperr.New(apperr.Invalid, "You already have %d memories, the most there can be; forget one to make room.", len(have))
		}
		return nil, fitsTotal(have, text)
	})
	if err == nil {
		s.changed(user, nil, "memory", int64(m.ID))
	}
	return m, store.Kinded(err, "memory")
}

// UpdateMemory changes the text of a memory of user's.
func (s *Service) UpdateMemory(ctx context.Context, user ids.UserID, id ids.MemoryID, text string) (store.Memory, error) {
	text, err := memoryText(text)
	if err != nil {
		return store.Memory{}, err
	}
	m, err := s.db.UpdateMemory(ctx, user, id, text, func(others []store.Memory) error {
		for _, o := range others {
			if strings.EqualFold(o.Text, text) {
				return apperr.New(apperr.Invalid, "You already have this memory.")
			}
		}
		return fitsTotal(others, text)
	})
	if err == nil {
		s.changed(user, nil, "memory", int64(id))
	}
	return m, store.Kinded(err, "memory")
}

// DeleteMemory forgets a memory of user's.
func (s *Service) DeleteMemory(ctx context.Context, user ids.UserID, id ids.MemoryID) error {
	if err := s.db.DeleteMemory(ctx, user, id); err != nil {
		return store.Kinded(err, "memory")
	}
	s.changed(user, nil, "memory", int64(id))
	return nil
}

// MemoryOn reports whether user's memories reach their replies (on
// unless they turned it off).
func (s *Service) MemoryOn(ctx context.Context, user ids.UserID) (bool, error) {
	prefs, err := s.db.Prefs(ctx, int64(user))
	if err != nil {
		return false, err
	}
	return prefs[memoryOffPref] != "1", nil
}

// SetMemoryOn turns user's memory on or off; off, memories are kept but
// not injected, and the memory tools are not offered.
func (s *Service) SetMemoryOn(ctx context.Context, user ids.UserID, on bool) error {
	v := "1"
	if on {
		v = "0"
	}
	if err := s.db.SetPref(ctx, int64(user), memoryOffPref, v); err != nil {
		return err
	}
	s.changed(user, nil, "memory", 0)
	return nil
}

// memoryText is text as a memory: one line (it is injected as an item of a
// list), spaces collapsed, within MaxMemory.
func memoryText(text string) (string, error) {
	if !utf8.ValidString(text) {
		return "", apperr.New(apperr.Invalid, "The memory is not valid text.")
	}
	text = strings.Join(strings.Fields(text), " ")
	if text == "" {
		return "", apperr.New(apperr.Invalid, "A memory needs some text.")
	}
	if n := utf8.RuneCountInString(text); n > MaxMemory {
		return "", apperr.New(apperr.Invalid, "Memories are at most %d characters; this one has %d. Shorten it.", MaxMemory, n)
	}
	return text, nil
}

// fitsTotal refuses text when, added to have, the memories would pass
// MaxMemoryTotal.
func fitsTotal(have []store.Memory, text string) error {
	used := 0
	for _, m := range have {
		used += utf8.RuneCountInString(m.Text)
	}
	if used+utf8.RuneCountInString(text) > MaxMemoryTotal {
		return apperr.New(apperr.Invalid, "Your memories already take %s of %s characters; forget one to make room.", thousands(used), thousands(MaxMemoryTotal))
	}
	return nil
}

// thousands writes n with a comma between thousands: 1,950.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
