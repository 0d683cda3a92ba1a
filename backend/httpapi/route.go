package httpapi

import (
	"fmt"
	"net/http"
	"runtime/debug"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/apperr"
)

// Native routes are the HTTP routes of their own (sign-in, files, avatars,
// voice, events, the manifest, the frontend's files), as opposed to facade
// methods, which the dispatcher runs under its own recover. Every one is
// registered through handle or handleAs, so that each recovers from a
// panic, finds its caller the same way and answers errors through fail.
// The recover matters most in the desktop app: Wails' asset server calls
// this handler with no recover of its own, so a panic in a route ended the
// whole app (net/http at least keeps a listening server up).

// handle registers a route anyone may reach: sign-in, the manifest, the
// frontend's files.
func (h *handler) handle(pattern string, fn http.HandlerFunc) {
	h.mux.Handle(pattern, h.guard(fn))
}

// handleAs registers a route for a known caller: on the desktop mount the
// owner, on a listening socket the session's user. A request without one
// is answered by fail (401 when signed out) before fn runs.
func (h *handler) handleAs(pattern string, fn func(http.ResponseWriter, *http.Request, api.Caller)) {
	h.handle(pattern, func(w http.ResponseWriter, r *http.Request) {
		caller, err := h.caller(r)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		fn(w, r, caller)
	})
}

// guard runs next under recover. A panic is logged with its stack and, if
// nothing was sent yet, answered as an internal error; once a response has
// begun, a listening server's connection is aborted so the client sees a
// broken response rather than a truncated one that looks whole.
func (h *handler) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &sentWriter{ResponseWriter: w}
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			if p == http.ErrAbortHandler && !h.opt.Desktop {
				panic(p) // net/http's own way to drop a connection
			}
			// Wails' asset server has no recover: there even that one
			// must stop here.
			h.opt.Log.Error("panic in route", "method", r.Method, "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
			if sw.sent {
				if !h.opt.Desktop {
					panic(http.ErrAbortHandler)
				}
				return
			}
			// Headers set for the body that never came would describe the
			// error instead (a Content-Length, a download's file name).
			for _, k := range []string{"Content-Length", "Content-Disposition", "Content-Encoding", "Content-Range", "ETag", "Last-Modified"} {
				w.Header().Del(k)
			}
			h.fail(w, r, apperr.Wrap(apperr.Internal, fmt.Errorf("panic: %v", p), "panic in %s %s", r.Method, r.URL.Path))
		}()
		next.ServeHTTP(sw, r)
	})
}

// fail is the one error writer of the native routes: it logs an internal
// error (the caller only learns that something went wrong, so the log must
// say what) and answers with the error's kind and public message as JSON.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	if apperr.KindOf(err) == apperr.Internal {
		h.opt.Log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	kind, msg := apperr.Public(err)
	writeJSON(w, apperr.HTTPStatus(kind), api.Result{Error: &api.ErrorBody{Kind: kind, Message: msg}})
}

// sentWriter notes whether a response has begun. Unwrap lets
// http.ResponseController reach the real writer (flushes, write deadlines).
type sentWriter struct {
	http.ResponseWriter
	sent bool
}

func (w *sentWriter) WriteHeader(code int) {
	if code >= 200 {
		w.sent = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *sentWriter) Write(b []byte) (int, error) {
	w.sent = true
	return w.ResponseWriter.Write(b)
}

func (w *sentWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
