package store

import (
	"errors"

	"github.com/llembas/lembas/backend/apperr"
)

// Kinded maps the store's sentinel errors to application error kinds, for
// callers that answer a person: what names the thing ("chat", "model").
// Other errors pass through unchanged (they stay internal).
func Kinded(err error, what string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNotFound):
		return apperr.Wrap(apperr.NotFound, err, "%s not found", what)
	case errors.Is(err, ErrForbidden):
		return apperr.Wrap(apperr.Forbidden, err, "you may not change this %s", what)
	case errors.Is(err, ErrConflict):
		return apperr.Wrap(apperr.Conflict, err, "this %s changed meanwhile; try again", what)
	}
	return err
}
