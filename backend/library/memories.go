package library

import (
	"context"

	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// Memories lists user's memories, oldest first.
func (s *Service) Memories(ctx context.Context, user ids.UserID) ([]store.Memory, error) {
	return nil, errTodo
}

// AddMemory stores a memory of user's; source is "person" or "model". One
// over the length cap or past the total cap is refused with a message that
// says so.
func (s *Service) AddMemory(ctx context.Context, user ids.UserID, text, source string) (store.Memory, error) {
	return store.Memory{}, errTodo
}

// UpdateMemory changes the text of a memory of user's.
func (s *Service) UpdateMemory(ctx context.Context, user ids.UserID, id ids.MemoryID, text string) (store.Memory, error) {
	return store.Memory{}, errTodo
}

// DeleteMemory forgets a memory of user's.
func (s *Service) DeleteMemory(ctx context.Context, user ids.UserID, id ids.MemoryID) error {
	return errTodo
}

// MemoryOn reports whether user's memories reach their replies (on
// unless they turned it off).
func (s *Service) MemoryOn(ctx context.Context, user ids.UserID) (bool, error) {
	return false, errTodo
}

// SetMemoryOn turns user's memory on or off; off, memories are kept but
// not injected, and the memory tools are not offered.
func (s *Service) SetMemoryOn(ctx context.Context, user ids.UserID, on bool) error {
	return errTodo
}
