package httpapi

import (
	"context"
	"net/http"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/apperr"
)

// Exports prepares chat exports for the download route; implementations
// read only the caller's own chats.
type Exports interface {
	ExportChat(ctx context.Context, caller api.Caller, id int64, format string) (api.ChatExport, error)
}

var _ Exports = api.ExportRoutes{}

// exportChat downloads one of the caller's chats (GET
// /api/chats/{id}/export?format=markdown|json), always as an attachment
// named from its title. It is streamed as it is read, so a very long chat
// costs no more memory than a short one; it holds one of the person's
// download slots while it lasts.
func (h *handler) exportChat(w http.ResponseWriter, r *http.Request, caller api.Caller) {
	id, ok := h.targetID(w, r)
	if !ok {
		return
	}
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "markdown"
	}
	release, ok := h.downloads.acquire(r.Context(), caller.UserID)
	if !ok {
		w.Header().Set("Retry-After", "5")
		h.fail(w, r, apperr.New(apperr.RateLimited, "too many downloads at once; wait for some to finish and try again"))
		return
	}
	defer release()
	x, err := h.opt.Exports.ExportChat(r.Context(), caller, id, format)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", x.MIME)
	hd.Set("Content-Disposition", contentDisposition("attachment", x.Name))
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	// A chat changes; an export is made afresh every time.
	hd.Set("Cache-Control", "private, no-store")
	w.WriteHeader(http.StatusOK)
	if err := x.Write(r.Context(), w); err != nil {
		// The status is sent: the reader gets a cut file.
		h.opt.Log.Warn("chat export cut short", "chat", id, "err", err)
		panic(http.ErrAbortHandler)
	}
}
