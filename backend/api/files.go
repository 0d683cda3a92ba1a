package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/audio"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/files"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/settings"
	"github.com/llembas/lembas/backend/store"
)

// AttachmentView is a file as the frontend shows it: a chip, or a
// thumbnail fetched from URL. Name is the user's name for it, to be shown
// as text only.
type AttachmentView struct {
	ID     ids.AttachmentID `json:"id"`
	Kind   string           `json:"kind"`
	Name   string           `json:"name"`
	MIME   string           `json:"mime"`
	Size   int64            `json:"size"`
	Width  int              `json:"width,omitempty"`
	Height int              `json:"height,omitempty"`
	Note   string           `json:"note,omitempty"`
	URL    string           `json:"url"`
	// SourcePath and SourceLabel say where a file chosen with @ came
	// from (shown as text in the chip's title).
	SourcePath  string `json:"sourcePath,omitempty"`
	SourceLabel string `json:"sourceLabel,omitempty"`
}

// AttachmentViewOf returns the view of a stored attachment.
func AttachmentViewOf(a store.Attachment) AttachmentView {
	return AttachmentView{ID: a.ID, Kind: a.Kind, Name: a.DisplayName, MIME: a.MIME, Size: a.Size,
		Width: a.Width, Height: a.Height, Note: a.Note, URL: fmt.Sprintf("/api/files/%d", a.ID),
		SourcePath: a.SourcePath, SourceLabel: a.SourceLabel}
}

func attachmentViews(list []store.Attachment) []AttachmentView {
	if len(list) == 0 {
		return nil
	}
	out := make([]AttachmentView, len(list))
	for i, a := range list {
		out[i] = AttachmentViewOf(a)
	}
	return out
}

// Files is the facade for what the composer needs to know before an
// upload; the bytes go through the HTTP routes (POST /api/files), never
// through the bridge.
type Files struct {
	files   *files.Service // nil: default limits, nothing allowed
	permits Permits
}

// NewFiles returns the Files facade.
func NewFiles(files *files.Service, permits Permits) *Files {
	return &Files{files: files, permits: permits}
}

// FileLimits are the upload limits, whether the caller may attach, and how
// much of their storage quota the caller's files take.
type FileLimits struct {
	files.Limits
	Allowed bool `json:"allowed"`
	// Used is how many bytes the caller's files take (sent or not, and
	// those of chats in the trash); Quota is the most they may (0: no cap).
	Used  int64 `json:"used"`
	Quota int64 `json:"quota"`
}

// Limits returns the upload limits, shown before anything is uploaded.
func (f *Files) Limits(ctx context.Context) (FileLimits, error) {
	if f.files == nil {
		return FileLimits{Limits: files.DefaultLimits()}, nil
	}
	used, quota, err := f.files.Usage(ctx, user(ctx))
	if err != nil {
		return FileLimits{}, err
	}
	return FileLimits{Limits: f.files.Limits(), Allowed: f.permits.Require(ctx, auth.FilesUpload) == nil,
		Used: used, Quota: quota}, nil
}

// FileRoutes implements the HTTP file routes (httpapi.Attachments) over the
// files and audio services, as the resolved caller.
type FileRoutes struct {
	files   *files.Service
	audio   *audio.Service // nil: no voice
	permits Permits
}

// NewFileRoutes returns the file routes.
func NewFileRoutes(files *files.Service, audio *audio.Service, permits Permits) FileRoutes {
	return FileRoutes{files: files, audio: audio, permits: permits}
}

// Upload processes and keeps one upload of the caller.
func (f FileRoutes) Upload(ctx context.Context, c Caller, name string, r io.Reader) (AttachmentView, error) {
	ctx = WithCaller(ctx, c)
	if err := f.permits.Require(ctx, auth.FilesUpload); err != nil {
		return AttachmentView{}, err
	}
	a, err := f.files.Upload(ctx, ids.UserID(c.UserID), name, r)
	if err != nil {
		return AttachmentView{}, err
	}
	return AttachmentViewOf(a), nil
}

// FileContent is one stored file opened for a download.
type FileContent struct {
	View AttachmentView
	// Body is the open file; the caller closes it.
	Body io.ReadSeekCloser
	// ETag names these bytes: a file never changes, but an id may be
	// reused after a delete, so it comes from the random storage name.
	ETag    string
	ModTime time.Time
}

// Open opens one of the caller's files for a download.
func (f FileRoutes) Open(ctx context.Context, c Caller, id int64) (FileContent, error) {
	a, file, err := f.files.Open(ctx, ids.UserID(c.UserID), ids.AttachmentID(id))
	if err != nil {
		return FileContent{}, err
	}
	sum := sha256.Sum256([]byte(a.StorageName))
	return FileContent{View: AttachmentViewOf(a), Body: file, ETag: `"` + hex.EncodeToString(sum[:12]) + `"`,
		ModTime: time.UnixMilli(a.CreatedAt)}, nil
}

// Delete removes one of the caller's unsent uploads.
func (f FileRoutes) Delete(ctx context.Context, c Caller, id int64) error {
	return f.files.Delete(ctx, ids.UserID(c.UserID), ids.AttachmentID(id))
}

// Transcribe turns the caller's recording into text.
func (f FileRoutes) Transcribe(ctx context.Context, c Caller, data []byte, filename, contentType, language string) (string, error) {
	if f.audio == nil {
		return "", noVoice()
	}
	return f.audio.Transcribe(ctx, ids.UserID(c.UserID), data, filename, contentType, language)
}

// Speak reads text aloud for the caller; the caller of Speak closes the
// response body.
func (f FileRoutes) Speak(ctx context.Context, c Caller, text, voice string) (*http.Response, error) {
	if f.audio == nil {
		return nil, noVoice()
	}
	return f.audio.Speak(ctx, ids.UserID(c.UserID), text, voice)
}

// Audio is the facade for voice: what the caller can use, their own
// settings, and the instance's (admins).
type Audio struct {
	audio *audio.Service // nil: no voice
	prefs *settings.Prefs
}

// NewAudio returns the Audio facade.
func NewAudio(audio *audio.Service, prefs *settings.Prefs) *Audio {
	return &Audio{audio: audio, prefs: prefs}
}

func noVoice() error { return apperr.New(apperr.Unavailable, "voice is not available") }

// AudioStatus is what the dictate and read-aloud buttons need.
type AudioStatus struct {
	audio.Status
	// AutoRead reads replies that finish while their chat is open.
	AutoRead bool `json:"autoRead"`
}

// AudioMine is the caller's own voice settings: endpoint overrides (used
// instead of the instance's, through the SSRF-guarded client) and
// preferences.
type AudioMine struct {
	audio.Settings
	AutoRead bool `json:"autoRead"`
}

// AudioMineInput changes the caller's own settings.
type AudioMineInput struct {
	audio.SettingsInput
	AutoRead *bool `json:"autoRead,omitempty"`
}

func (a *Audio) service() (*audio.Service, error) {
	if a.audio == nil {
		return nil, noVoice()
	}
	return a.audio, nil
}

// Status says whether dictation and read-aloud are set up for the caller.
func (a *Audio) Status(ctx context.Context) (AudioStatus, error) {
	s, err := a.service()
	if err != nil {
		return AudioStatus{}, err
	}
	st, err := s.Status(ctx, user(ctx))
	if err != nil {
		return AudioStatus{}, err
	}
	auto, err := a.prefs.AutoRead(ctx, user(ctx))
	if err != nil {
		return AudioStatus{}, err
	}
	return AudioStatus{Status: st, AutoRead: auto}, nil
}

// Voices lists the voices the caller can choose from.
func (a *Audio) Voices(ctx context.Context) ([]string, error) {
	s, err := a.service()
	if err != nil {
		return nil, err
	}
	return s.Voices(ctx, user(ctx))
}

// Mine returns the caller's own settings.
func (a *Audio) Mine(ctx context.Context) (AudioMine, error) {
	s, err := a.service()
	if err != nil {
		return AudioMine{}, err
	}
	u := user(ctx)
	v, err := s.Get(ctx, &u)
	if err != nil {
		return AudioMine{}, err
	}
	auto, err := a.prefs.AutoRead(ctx, u)
	if err != nil {
		return AudioMine{}, err
	}
	return AudioMine{Settings: v, AutoRead: auto}, nil
}

// SetMine changes the caller's own settings.
func (a *Audio) SetMine(ctx context.Context, in AudioMineInput) (AudioMine, error) {
	s, err := a.service()
	if err != nil {
		return AudioMine{}, err
	}
	u := user(ctx)
	if _, err := s.Set(ctx, &u, in.SettingsInput); err != nil {
		return AudioMine{}, err
	}
	if in.AutoRead != nil {
		if err := a.prefs.SetAutoRead(ctx, u, *in.AutoRead); err != nil {
			return AudioMine{}, err
		}
	}
	return a.Mine(ctx)
}

// Settings returns the instance's voice endpoints (admins).
func (a *Audio) Settings(ctx context.Context) (audio.Settings, error) {
	s, err := a.service()
	if err != nil {
		return audio.Settings{}, err
	}
	return s.Get(ctx, nil)
}

// SetSettings changes the instance's voice endpoints (admins). They may be
// on the LAN: an administrator's choice is deliberate.
func (a *Audio) SetSettings(ctx context.Context, in audio.SettingsInput) (audio.Settings, error) {
	s, err := a.service()
	if err != nil {
		return audio.Settings{}, err
	}
	return s.Set(ctx, nil, in)
}
