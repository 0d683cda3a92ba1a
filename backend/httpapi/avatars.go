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

// targetID reads the {id} of a route, answering the error itself when it is
// not one.
func (h *handler) targetID(w http.ResponseWriter, r *http.Request) (int64, bool) {
	id, err := pathID(r)
	if err != nil {
		h.fail(w, r, err)
		return 0, false
	}
	return id, true
}

func (h *handler) getAvatar(w http.ResponseWriter, r *http.Request, caller api.Caller) {
	id, ok := h.targetID(w, r)
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

func (h *handler) setAvatar(w http.ResponseWriter, r *http.Request, caller api.Caller) {
	id, ok := h.targetID(w, r)
	if !ok {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxAvatar+64<<10)
	f, _, err := r.FormFile("file")
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			h.fail(w, r, apperr.New(apperr.Invalid, "the image is too large (the limit is %d MiB)", MaxAvatar>>20))
			return
		}
		h.fail(w, r, apperr.New(apperr.Invalid, "send the image as the form field \"file\""))
		return
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxAvatar+1))
	if err != nil {
		h.fail(w, r, apperr.Wrap(apperr.Invalid, err, "could not read the image"))
		return
	}
	if len(data) > MaxAvatar {
		h.fail(w, r, apperr.New(apperr.Invalid, "the image is too large (the limit is %d MiB)", MaxAvatar>>20))
		return
	}
	if err := h.opt.Avatars.SetAvatar(r.Context(), caller, id, data); err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

func (h *handler) deleteAvatar(w http.ResponseWriter, r *http.Request, caller api.Caller) {
	id, ok := h.targetID(w, r)
	if !ok {
		return
	}
	if err := h.opt.Avatars.DeleteAvatar(r.Context(), caller, id); err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}
