package library

import (
	"context"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// How many items of each kind one person may own. The files quota bounds
// documents' bytes, and the length caps bound one item; without a count a
// loop of creations (a script, or a model calling notes_write in a chat
// that never ends) fills the disk with rows, FTS entries and tiny files.
// Each is far above what a household member writes by hand.
const (
	MaxBases     = 200
	MaxDocuments = 5000 // across all of a person's bases
	MaxNotes     = 1000 // at most 256 MiB at MaxNoteBody each
	MaxSkills    = 200
)

// room refuses a new item of the kind that counted picks when user
// already owns max of them; what names the kind in the message (plural)
// and free how to make room. A check before the write, not inside its
// transaction: requests at the same moment can pass it together, which
// overshoots by a handful, not by a disk.
func (s *Service) room(ctx context.Context, user ids.UserID, counted func(store.LibraryCounts) int, max int, what, free string) error {
	c, err := s.db.OwnedCounts(ctx, user)
	if err != nil {
		return err
	}
	if n := counted(c); n >= max {
		return apperr.New(apperr.Invalid, "You already have %s %s, the most there can be; %s to make room.", thousands(n), what, free)
	}
	return nil
}
