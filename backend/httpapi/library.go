package httpapi

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/apperr"
)

// Documents is the library's document store as the HTTP routes need it;
// caller is the resolved caller, and implementations check the permission
// and who can see or change the base.
type Documents interface {
	Ingest(ctx context.Context, caller api.Caller, base int64, name string, r io.Reader) (api.DocumentView, error)
	OpenDocument(ctx context.Context, caller api.Caller, id int64) (api.FileContent, error)
}

var _ Documents = api.LibraryRoutes{}

// uploadDocument files one upload into a knowledge base: multipart with
// the field "base" (the base's id) before the field "file".
func (h *handler) uploadDocument(w http.ResponseWriter, r *http.Request, caller api.Caller) {
	r.Body = http.MaxBytesReader(w, r.Body, MaxUpload)
	fields := map[string]string{}
	part, err := filePart(r, fields)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	defer part.Close()
	base, err := strconv.ParseInt(strings.TrimSpace(fields["base"]), 10, 64)
	if err != nil || base <= 0 {
		h.fail(w, r, apperr.New(apperr.Invalid, "send the knowledge base's id in the form field \"base\", before \"file\""))
		return
	}
	// The name is the user's, for display only.
	v, err := h.opt.Documents.Ingest(r.Context(), caller, base, part.FileName(), part)
	if err != nil {
		h.fail(w, r, tooLargeOr(err, err))
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// getDocument downloads a document's original file, always as an
// attachment, to anyone who can see its base.
func (h *handler) getDocument(w http.ResponseWriter, r *http.Request, caller api.Caller) {
	h.download(w, r, caller, h.opt.Documents.OpenDocument, false)
}
