package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/attach"
	"github.com/llembas/lembas/backend/audio"
)

// Attachments is the file and voice store as the HTTP routes need it;
// caller is the resolved caller, and implementations check ownership and
// permissions.
type Attachments interface {
	Upload(ctx context.Context, caller api.Caller, name string, r io.Reader) (api.AttachmentView, error)
	Open(ctx context.Context, caller api.Caller, id int64) (api.FileContent, error)
	Delete(ctx context.Context, caller api.Caller, id int64) error
	Transcribe(ctx context.Context, caller api.Caller, audio []byte, filename, contentType, language string) (string, error)
	Speak(ctx context.Context, caller api.Caller, text, voice string) (*http.Response, error)
}

var _ Attachments = api.FileRoutes{}

// MaxUpload bounds the body of one upload (the file and the form around
// it); the files service has its own, smaller or equal, limit.
const MaxUpload = 32<<20 + 64<<10

// inlineImages are the stored types shown inline: only what attach.Process
// writes for images (re-encoded PNG and JPEG), never anything else.
var inlineImages = map[string]bool{"image/png": true, "image/jpeg": true}

func (h *handler) registerFiles() {
	h.handleAs("POST /api/files", h.upload)
	h.handleAs("POST /api/files/dropped/{token}", h.uploadDropped)
	h.handleAs("GET /api/files/{id}", h.getFile)
	h.handleAs("DELETE /api/files/{id}", h.deleteFile)
	h.handleAs("POST /api/audio/transcribe", h.transcribe)
	h.handleAs("POST /api/audio/speech", h.speech)
}

// filePart finds the multipart field "file" and returns it, read in
// memory as the caller consumes it: the multipart reader never spills to
// a temporary file, unlike ParseMultipartForm. Other fields before it are
// collected into fields.
func filePart(r *http.Request, fields map[string]string) (*multipart.Part, error) {
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, apperr.New(apperr.Invalid, "send the file as multipart/form-data in the field \"file\"")
	}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return nil, apperr.New(apperr.Invalid, "send the file in the form field \"file\"")
		}
		if err != nil {
			return nil, tooLargeOr(err, apperr.Wrap(apperr.Invalid, err, "the upload could not be read"))
		}
		if p.FormName() == "file" {
			return p, nil
		}
		if fields != nil && len(fields) < 8 {
			b, _ := io.ReadAll(io.LimitReader(p, 256))
			fields[p.FormName()] = string(b)
		}
		p.Close()
	}
}

func tooLargeOr(err, otherwise error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return apperr.New(apperr.Invalid, "the upload is larger than the %d MB limit", tooBig.Limit>>20)
	}
	return otherwise
}

func (h *handler) upload(w http.ResponseWriter, r *http.Request, caller api.Caller) {
	r.Body = http.MaxBytesReader(w, r.Body, MaxUpload)
	part, err := filePart(r, nil)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	defer part.Close()
	// The name is the user's, for display only; Upload cleans it and never
	// uses it as a path.
	v, err := h.opt.Attachments.Upload(r.Context(), caller, part.FileName(), part)
	if err != nil {
		h.fail(w, r, tooLargeOr(err, err))
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// uploadDropped stores a file dropped onto the desktop window, named by
// the token the window was given for it (package drops): the page never
// sends a path, and a token is only good on the desktop mount, once.
func (h *handler) uploadDropped(w http.ResponseWriter, r *http.Request, caller api.Caller) {
	if h.opt.Drops == nil || !api.AtTheDesktop(caller) {
		h.fail(w, r, apperr.New(apperr.NotFound, "dropped files are only taken in the desktop window"))
		return
	}
	path, ok := h.opt.Drops.Take(r.PathValue("token"))
	if !ok {
		h.fail(w, r, apperr.New(apperr.NotFound, "that dropped file is no longer waiting; drop it again"))
		return
	}
	// Checked again on the opened file: the path may have changed since
	// the drop, and reading a FIFO or a device might never end.
	f, err := openRegular(path)
	if err != nil {
		h.fail(w, r, apperr.New(apperr.Invalid, "the dropped file could not be read"))
		return
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		h.fail(w, r, apperr.New(apperr.Invalid, "the dropped file is not a regular file any more"))
		return
	}
	v, err := h.opt.Attachments.Upload(r.Context(), caller, filepath.Base(path), io.LimitReader(f, MaxUpload))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// contentDisposition names a file for the browser: an ASCII fallback and
// the UTF-8 name (RFC 6266, RFC 8187), from a name already cleaned by
// attach.DisplayName.
func contentDisposition(kind, name string) string {
	name = attach.DisplayName(name)
	ascii := strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' || r == '%' || r == ';' {
			return '_'
		}
		return r
	}, name)
	return kind + `; filename="` + ascii + `"; filename*=UTF-8''` + strings.ReplaceAll(url.PathEscape(name), "'", "%27")
}

func (h *handler) getFile(w http.ResponseWriter, r *http.Request, caller api.Caller) {
	h.download(w, r, caller, h.opt.Attachments.Open, true)
}

// download serves the file open returns for the route's id: an
// attachment's (inline when it is an image we re-encoded) or a document's
// (always a download).
func (h *handler) download(w http.ResponseWriter, r *http.Request, caller api.Caller,
	open func(ctx context.Context, caller api.Caller, id int64) (api.FileContent, error), inline bool) {
	id, ok := h.targetID(w, r)
	if !ok {
		return
	}
	// Each download holds a file open and a goroutine for as long as the
	// reader takes; one person's many slow readers must not hold them all.
	release, ok := h.downloads.acquire(r.Context(), caller.UserID)
	if !ok {
		w.Header().Set("Retry-After", "5")
		h.fail(w, r, apperr.New(apperr.RateLimited, "too many downloads at once; wait for some to finish and try again"))
		return
	}
	defer release()
	f, err := open(r.Context(), caller, id)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	defer f.Body.Close()
	serveDownload(w, r, f, inline)
}

// serveDownload writes a stored file with the headers every download
// carries; inline lets our re-encoded images show in the page.
func serveDownload(w http.ResponseWriter, r *http.Request, f api.FileContent, inline bool) {
	hd := w.Header()
	// The type is the stored one, decided from the bytes at upload, never
	// from the name. Only our re-encoded images are shown inline; every
	// other file (an uploaded .html among them, stored as text/plain) is a
	// download, and nosniff stops the browser guessing otherwise.
	ctype := f.View.MIME
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	disp := "attachment"
	if inline && inlineImages[ctype] {
		disp = "inline"
	}
	hd.Set("Content-Type", ctype)
	hd.Set("Content-Disposition", contentDisposition(disp, f.View.Name))
	hd.Set("X-Content-Type-Options", "nosniff")
	// A file is never a document of this origin: no script, no plugins,
	// even if some browser were to render it.
	hd.Set("Content-Security-Policy", "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox")
	// Kept, but asked about every time: after a sign-out another person
	// on the same browser must not get this file from its cache. The
	// question is cheap (304 by ETag), and asked with their own cookie.
	hd.Set("Cache-Control", "private, no-cache")
	hd.Set("ETag", f.ETag)
	// Streamed from the file, with Range and conditional requests: memory
	// does not grow with the file's size or the number of readers, and
	// the write deadline (stallWriter) cuts a reader that stops reading.
	http.ServeContent(w, r, "", f.ModTime, f.Body)
}

func (h *handler) deleteFile(w http.ResponseWriter, r *http.Request, caller api.Caller) {
	id, ok := h.targetID(w, r)
	if !ok {
		return
	}
	if err := h.opt.Attachments.Delete(r.Context(), caller, id); err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

// transcribe takes a recording (multipart field "file", optional
// "language") and answers {"text": …}. The audio is read into memory,
// capped, and passed on; it is never written to disk.
func (h *handler) transcribe(w http.ResponseWriter, r *http.Request, caller api.Caller) {
	r.Body = http.MaxBytesReader(w, r.Body, audio.MaxAudioBytes+64<<10)
	fields := map[string]string{}
	part, err := filePart(r, fields)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	defer part.Close()
	data, err := io.ReadAll(io.LimitReader(part, audio.MaxAudioBytes+1))
	if err != nil {
		h.fail(w, r, tooLargeOr(err, apperr.Wrap(apperr.Invalid, err, "the recording could not be read")))
		return
	}
	if len(data) > audio.MaxAudioBytes {
		h.fail(w, r, apperr.New(apperr.Invalid, "the recording is larger than the %d MB limit", audio.MaxAudioBytes>>20))
		return
	}
	ctype := part.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ctype); err != nil || !(strings.HasPrefix(mt, "audio/") || strings.HasPrefix(mt, "video/webm") || mt == "application/octet-stream") {
		ctype = "application/octet-stream"
	}
	name := attach.DisplayName(part.FileName())
	text, err := h.opt.Attachments.Transcribe(r.Context(), caller, data, name, ctype, strings.TrimSpace(fields["language"]))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"text": text})
}

// speech takes {"text", "voice"?} and streams the audio back as it comes.
func (h *handler) speech(w http.ResponseWriter, r *http.Request, caller api.Caller) {
	var in struct {
		Text  string `json:"text"`
		Voice string `json:"voice"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
	if err := dec.Decode(&in); err != nil {
		h.fail(w, r, tooLargeOr(err, apperr.New(apperr.Invalid, "send {\"text\": …} as JSON")))
		return
	}
	resp, err := h.opt.Attachments.Speak(r.Context(), caller, in.Text, in.Voice)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	defer resp.Body.Close()
	hd := w.Header()
	hd.Set("Content-Type", resp.Header.Get("Content-Type"))
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			_ = rc.Flush() // ErrNotSupported on some writers: fine
		}
		if err != nil {
			return
		}
	}
}

// downloadLimit bounds how many downloads each user has running at once. A
// request over the limit waits a moment for a slot (a chat full of images
// asks for them all at once over HTTP/2), then is refused.
type downloadLimit struct {
	max  int
	wait time.Duration
	mu   sync.Mutex
	busy map[int64]chan struct{}
}

func newDownloadLimit(max int, wait time.Duration) *downloadLimit {
	return &downloadLimit{max: max, wait: wait, busy: map[int64]chan struct{}{}}
}

// acquire takes a slot of user's, and returns its release.
func (l *downloadLimit) acquire(ctx context.Context, user int64) (release func(), ok bool) {
	l.mu.Lock()
	sem := l.busy[user]
	if sem == nil {
		sem = make(chan struct{}, l.max)
		l.busy[user] = sem
	}
	l.mu.Unlock()
	release = func() { <-sem }
	select {
	case sem <- struct{}{}:
		return release, true
	default:
	}
	t := time.NewTimer(l.wait)
	defer t.Stop()
	select {
	case sem <- struct{}{}:
		return release, true
	case <-t.C:
	case <-ctx.Done():
	}
	return nil, false
}
