package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/apperr"
)

// MaxAvatar bounds an uploaded avatar image.
const MaxAvatar = 2 << 20

func pathID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, apperr.New(apperr.Invalid, "bad id")
	}
	return id, nil
}

// avatarTarget resolves the caller and the model id of an avatar request,
// answering the error itself when either fails.
func (h *handler) avatarTarget(w http.ResponseWriter, r *http.Request) (api.Caller, int64, bool) {
	caller, err := h.caller(r)
	if err != nil {
		writeError(w, err)
		return api.Caller{}, 0, false
	}
	id, err := pathID(r)
	if err != nil {
		writeError(w, err)
		return api.Caller{}, 0, false
	}
	return caller, id, true
}

func (h *handler) getAvatar(w http.ResponseWriter, r *http.Request) {
	caller, id, ok := h.avatarTarget(w, r)
	if !ok {
		return
	}
	data, ctype, err := h.opt.Avatars.Avatar(r.Context(), caller, id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", ctype)
	// Revalidated every time, like files: which avatars one may see
	// depends on who is signed in, and the next person on this browser
	// must not get a restricted model's avatar from the cache.
	sum := sha256.Sum256(data)
	w.Header().Set("Cache-Control", "private, no-cache")
	w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:12])+`"`)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
}

func (h *handler) setAvatar(w http.ResponseWriter, r *http.Request) {
	caller, id, ok := h.avatarTarget(w, r)
	if !ok {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxAvatar+64<<10)
	f, _, err := r.FormFile("file")
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, apperr.New(apperr.Invalid, "the image is too large (the limit is %d MiB)", MaxAvatar>>20))
			return
		}
		writeError(w, apperr.New(apperr.Invalid, "send the image as the form field \"file\""))
		return
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxAvatar+1))
	if err != nil {
		writeError(w, apperr.Wrap(apperr.Invalid, err, "could not read the image"))
		return
	}
	if len(data) > MaxAvatar {
		writeError(w, apperr.New(apperr.Invalid, "the image is too large (the limit is %d MiB)", MaxAvatar>>20))
		return
	}
	if err := h.opt.Avatars.SetAvatar(r.Context(), caller, id, data); err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

func (h *handler) deleteAvatar(w http.ResponseWriter, r *http.Request) {
	caller, id, ok := h.avatarTarget(w, r)
	if !ok {
		return
	}
	if err := h.opt.Avatars.DeleteAvatar(r.Context(), caller, id); err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

// fail answers with err, logging it first when it is internal: the caller
// only sees that something went wrong, so the log must say what.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	if apperr.KindOf(err) == apperr.Internal {
		h.opt.Log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeError(w, err)
}
