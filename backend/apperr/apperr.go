// Package apperr is the one application error type. Services return it (or wrap
// it) to say what kind of failure happened; the dispatcher maps the kind once to
// an HTTP status and once to what the frontend sees.
package apperr

import (
	"errors"
	"fmt"
	"net/http"
)

// Kind says what sort of failure an error is. Callers branch on it; the message
// is for people.
type Kind string

// The kinds a caller can see. Anything unclassified is Internal, and its message
// is never shown to the caller (it may carry paths or SQL).
const (
	Invalid      Kind = "invalid"
	NotFound     Kind = "not_found"
	Forbidden    Kind = "forbidden"
	Unauthorized Kind = "unauthorized"
	Conflict     Kind = "conflict"
	RateLimited  Kind = "rate_limited"
	Unavailable  Kind = "unavailable"
	Internal     Kind = "internal"
)

// Error is an application error: a kind, a message safe to show, and an
// optional cause kept for logs.
type Error struct {
	Kind    Kind
	Message string
	Err     error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// New returns an error of the given kind with a message built like fmt.Sprintf.
func New(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an error of the given kind whose cause is err. The cause is
// logged but not shown to callers.
func Wrap(kind Kind, err error, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...), Err: err}
}

// KindOf reports the kind of err: the kind of the first *Error in its chain,
// or Internal.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}

// Public returns the kind and the message that may be shown to a caller.
// Internal errors get a fixed message so that paths and SQL never leak.
func Public(err error) (Kind, string) {
	var e *Error
	if errors.As(err, &e) && e.Kind != Internal {
		return e.Kind, e.Message
	}
	return Internal, "Something went wrong on the server; the details are in its log."
}

// HTTPStatus maps a kind to the status the HTTP API answers with.
func HTTPStatus(k Kind) int {
	switch k {
	case Invalid:
		return http.StatusBadRequest
	case RateLimited:
		return http.StatusTooManyRequests
	case NotFound:
		return http.StatusNotFound
	case Forbidden:
		return http.StatusForbidden
	case Unauthorized:
		return http.StatusUnauthorized
	case Conflict:
		return http.StatusConflict
	case Unavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}
