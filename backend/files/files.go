// Package files keeps attachments: it runs an upload through attach.Process,
// writes the bytes to <data dir>/files/<storage name> (mode 0600, directory
// 0700, a random name from attach.StorageName: a user's file name never
// becomes a path) and records the row in the store. Every read takes the
// caller's user id and the store's queries check ownership.
//
// Files leave with their rows: an unsent upload deleted by its owner or
// swept after UploadKeep, and a sent one when its message is deleted
// (emptying the trash, a rewind) through store.DB.OnFilesReleased. Files
// whose row is gone without that hook running (a crash between the commit
// and the removal, a deleted user) are found by the orphan sweep.
package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/attach"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// UploadKeep is how long an upload that was never sent is kept.
const UploadKeep = 24 * time.Hour

// Limits are what the composer shows before anything is uploaded.
type Limits struct {
	// MaxBytes is the largest file accepted.
	MaxBytes int64 `json:"maxBytes"`
	// MaxFiles is the most attachments one message may carry.
	MaxFiles int `json:"maxFiles"`
	// MaxPending is the most uploads a user may hold unsent.
	MaxPending int `json:"maxPending"`
	// Accept is for the file picker's accept attribute (a hint: the bytes
	// decide).
	Accept string `json:"accept"`
	// Kinds says in words what can be attached.
	Kinds string `json:"kinds"`
}

// DefaultLimits are the limits of a Service whose options leave them zero.
func DefaultLimits() Limits {
	return Limits{
		MaxBytes:   attach.DefaultLimits().MaxBytes,
		MaxFiles:   10,
		MaxPending: 40,
		Accept:     "image/png,image/jpeg,image/gif,image/webp,application/pdf,text/*,.txt,.md,.csv,.json,.log,.go,.py,.js,.ts,.c,.h,.cpp,.rs,.java,.sh,.yaml,.yml,.toml,.xml,.html,.css,.sql",
		Kinds:      attach.Supported,
	}
}

// Service stores and serves attachments.
type Service struct {
	db     *store.DB
	dir    string
	log    *slog.Logger
	limits Limits
	proc   attach.Limits
	// budget bounds the memory of uploads being decoded, shared fairly
	// between users: decoding an image or a PDF can take a few hundred
	// MB, and uploads side by side would add up. Text takes none of it.
	budget *budget
	// plain bounds, apart from budget, the uploads that are read whole into
	// memory but not decoded (text, and files refused once read): each
	// holds up to MaxBytes, and without a bound any number ran at once.
	// Apart, so that text still never waits behind images.
	plain *budget
	// process is attach.Process (a seam for tests, which hold an upload
	// while it holds the budget).
	process func(ctx context.Context, name string, r io.Reader, lim attach.Limits) (attach.Result, error)
}

// DecodeBudget is how many of the costliest images (attach.MaxCost) the
// decoding budget holds at once; smaller ones share it by their cost, and
// the rest wait their turn (or give up with their request). One user holds
// at most half of it, so another's image never waits behind theirs alone.
const DecodeBudget = 2

// PlainBudget is how many uploads of MaxBytes that are read but not decoded
// are held in memory at once (each takes its size); one that fits in its
// first attach.PeekSize bytes is too small to count and never waits. One
// user holds at most half of it.
const PlainBudget = 4

// collectAfter is the cost from which an upload's garbage is collected at
// once.
const collectAfter = 64 << 20

// New returns the service for files under dataDir/files. A zero field of
// lim takes its default.
func New(db *store.DB, dataDir string, log *slog.Logger, lim Limits) *Service {
	d := DefaultLimits()
	if lim.MaxBytes <= 0 {
		lim.MaxBytes = d.MaxBytes
	}
	if lim.MaxFiles <= 0 {
		lim.MaxFiles = d.MaxFiles
	}
	if lim.MaxPending <= 0 {
		lim.MaxPending = d.MaxPending
	}
	if lim.Accept == "" {
		lim.Accept = d.Accept
	}
	if lim.Kinds == "" {
		lim.Kinds = d.Kinds
	}
	proc := attach.Limits{MaxBytes: lim.MaxBytes}
	decode, plain := DecodeBudget*attach.MaxCost(proc), PlainBudget*lim.MaxBytes
	return &Service{db: db, dir: filepath.Join(dataDir, "files"), log: log, limits: lim, proc: proc,
		budget: newBudget(decode, decode/2), plain: newBudget(plain, plain/2), process: attach.Process}
}

// Limits returns the limits.
func (s *Service) Limits() Limits { return s.limits }

// Dir is where the files are.
func (s *Service) Dir() string { return s.dir }

func (s *Service) path(name string) (string, error) {
	if !attach.ValidStorageName(name) {
		return "", fmt.Errorf("storage name %q is not one of ours", name)
	}
	return filepath.Join(s.dir, name), nil
}

// SettingQuotaMB is the instance setting that caps how much each user's
// files may take, in MB (2^20 bytes); absent or 0: no cap.
const SettingQuotaMB = "files_quota_mb"

// Quota is how many bytes each user's files may take; 0 for no cap.
func (s *Service) Quota(ctx context.Context) int64 {
	v, _, _ := s.db.Setting(ctx, SettingQuotaMB)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return n << 20
}

// Usage is how many bytes user's files take (sent or not, the trash's
// included) and the quota (0: none).
func (s *Service) Usage(ctx context.Context, user ids.UserID) (used, quota int64, err error) {
	used, err = s.db.AttachmentBytes(ctx, user)
	return used, s.Quota(ctx), err
}

func quotaError(used, quota, more int64) error {
	msg := fmt.Sprintf("your files take %s of the %s this server allows each person", mb(used), mb(quota))
	if more > 0 {
		msg += fmt.Sprintf(", and this one is %s", mb(more))
	}
	return apperr.New(apperr.Invalid, "%s; delete chats with files, or knowledge base documents, you no longer need, and empty the trash, to make room", msg)
}

// mb writes n bytes in MB with one decimal below 10 MB.
func mb(n int64) string {
	if n < 10<<20 {
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MB"
	}
	return strconv.FormatInt((n+(1<<19))>>20, 10) + " MB"
}

// Upload processes one file and keeps it as an unsent upload of user. name
// is the user's file name, only ever shown.
func (s *Service) Upload(ctx context.Context, user ids.UserID, name string, r io.Reader) (store.Attachment, error) {
	return s.UploadFrom(ctx, user, name, r, "", "")
}

// UploadFrom is Upload of a file that came from somewhere the chip and
// the model are told of: sourcePath and sourceLabel (a project file's
// path and "user@host:dir").
func (s *Service) UploadFrom(ctx context.Context, user ids.UserID, name string, r io.Reader, sourcePath, sourceLabel string) (store.Attachment, error) {
	n, err := s.db.CountUnbound(ctx, user)
	if err != nil {
		return store.Attachment{}, err
	}
	if n >= s.limits.MaxPending {
		return store.Attachment{}, apperr.New(apperr.Conflict,
			"you have %d files waiting to be sent; send or remove some first", n)
	}
	t, err := s.Take(ctx, user, name, r, Intake{Limits: s.proc})
	if err != nil {
		return store.Attachment{}, err
	}
	res := t.Result
	return s.add(ctx, user, store.Attachment{Kind: string(res.Kind), MIME: res.MIME,
		DisplayName: attach.DisplayName(name), StorageName: t.StorageName, Size: t.Size,
		Text: res.Text, Note: res.Note, Width: res.Width, Height: res.Height,
		SourcePath: sourcePath, SourceLabel: sourceLabel}, t.Quota)
}

// add records a stored file as an unsent upload of user, within the
// pending limit and quota, removing the file when it is refused.
func (s *Service) add(ctx context.Context, user ids.UserID, a store.Attachment, quota int64) (store.Attachment, error) {
	out, err := s.db.AddAttachmentWithin(ctx, user, a, s.limits.MaxPending, quota)
	if err != nil {
		s.Remove([]string{a.StorageName})
		if errors.Is(err, store.ErrQuota) {
			return store.Attachment{}, s.QuotaRefusal(ctx, user, a.Size)
		}
		if errors.Is(err, store.ErrConflict) {
			return store.Attachment{}, apperr.Wrap(apperr.Conflict, err,
				"you have %d files waiting to be sent; send or remove some first", s.limits.MaxPending)
		}
		return store.Attachment{}, err
	}
	return out, nil
}

// QuotaRefusal is the refusal of a file of more bytes that would take
// user past the quota.
func (s *Service) QuotaRefusal(ctx context.Context, user ids.UserID, more int64) error {
	used, _ := s.db.AttachmentBytes(ctx, user)
	return quotaError(used, s.Quota(ctx), more)
}

// Intake is how one kind of upload goes through Take.
type Intake struct {
	// Limits are the processing limits (attach.Process): an attachment's,
	// or a library document's, which keeps more text.
	Limits attach.Limits
	// Check, if set, sees the upload's first bytes (attach.PeekSize of
	// them, or all) once it is received and may refuse it before anything
	// is decoded.
	Check func(prefix []byte) error
	// Accept, if set, sees the processed upload and may refuse it before
	// its file is written.
	Accept func(res *attach.Result) error
}

// Taken is an upload received, processed and written under StorageName.
// Result.Data is dropped once written (Size is its length): the caller
// records a row for the file, or removes it.
type Taken struct {
	Result      attach.Result
	StorageName string
	Size        int64
	// Quota is the quota in force (0: none), for the exact check in the
	// transaction that records the row.
	Quota int64
}

// Take is the upload pipeline every stored file goes through, attachments
// and library documents alike: a user already at the quota is refused
// before anything is decoded; the upload is received whole, then waits for
// its share of the decoding budget, is processed by attach.Process (typed
// by its bytes) and written under a new storage name.
func (s *Service) Take(ctx context.Context, user ids.UserID, name string, r io.Reader, in Intake) (Taken, error) {
	// A user already at the quota is told before anything is decoded; the
	// exact check is made with the processed size, in the insert's
	// transaction.
	quota := s.Quota(ctx)
	if quota > 0 {
		used, err := s.db.AttachmentBytes(ctx, user)
		if err != nil {
			return Taken{}, err
		}
		if used >= quota {
			return Taken{}, quotaError(used, quota, 0)
		}
	}
	proc := in.Limits
	if proc.MaxBytes <= 0 || proc.MaxBytes > s.limits.MaxBytes {
		proc.MaxBytes = s.limits.MaxBytes
	}
	// The whole upload is received before any budget is taken: a client
	// that sends a costly header and then trickles its bytes would
	// otherwise hold the budget, and everyone's uploads, until the server's
	// read timeout.
	f, size, err := s.receive(r)
	if f != nil {
		defer func() {
			f.Close()
			os.Remove(f.Name())
		}()
	}
	if err != nil {
		return Taken{}, err
	}
	if size > proc.MaxBytes {
		return Taken{}, attach.TooLarge(name, proc)
	}
	// What decoding will take is read from the upload's first bytes;
	// text never waits behind images.
	prefix := make([]byte, min(size, attach.PeekSize))
	if _, err := f.ReadAt(prefix, 0); err != nil {
		return Taken{}, fmt.Errorf("read upload: %w", err)
	}
	if in.Check != nil {
		if err := in.Check(prefix); err != nil {
			return Taken{}, err
		}
	}
	release := func() {}
	b, cost := s.budget, attach.Cost(prefix, proc)
	if cost == 0 && size > attach.PeekSize {
		// Not decoded, but longer than its first bytes: it is read
		// whole into memory all the same.
		b, cost = s.plain, size
	}
	if cost > 0 {
		if release, err = b.acquire(ctx, user, cost); err != nil {
			return Taken{}, err
		}
	}
	res, err := s.process(ctx, name, io.NewSectionReader(f, 0, size), proc)
	if cost >= collectAfter {
		// The decoded pixels are garbage now. Collected before their
		// bytes go to the next upload, the process stays near the budget;
		// left to the collector, the heap would first grow to twice what
		// was live (four worst-case images: 660 MB peak RSS, not 350).
		runtime.GC()
	}
	release()
	if err != nil {
		return Taken{}, err
	}
	if in.Accept != nil {
		if err := in.Accept(&res); err != nil {
			return Taken{}, err
		}
	}
	stored := attach.StorageName()
	if err := s.write(stored, res.Data); err != nil {
		return Taken{}, err
	}
	t := Taken{Result: res, StorageName: stored, Size: int64(len(res.Data)), Quota: quota}
	t.Result.Data = nil
	return t, nil
}

// Copy stores a copy of the stored file from (a storage name the caller
// has checked the user may read) as a new unsent upload a of user, within
// the pending limit and the quota: a library document attached to a
// message, which must not change when the document does.
func (s *Service) Copy(ctx context.Context, user ids.UserID, from string, a store.Attachment) (store.Attachment, error) {
	n, err := s.db.CountUnbound(ctx, user)
	if err != nil {
		return store.Attachment{}, err
	}
	if n >= s.limits.MaxPending {
		return store.Attachment{}, apperr.New(apperr.Conflict,
			"you have %d files waiting to be sent; send or remove some first", n)
	}
	src, err := s.path(from)
	if err != nil {
		return store.Attachment{}, err
	}
	in, err := os.Open(src)
	if errors.Is(err, os.ErrNotExist) {
		return store.Attachment{}, apperr.Wrap(apperr.NotFound, err, "the file is missing from the data directory")
	}
	if err != nil {
		return store.Attachment{}, fmt.Errorf("copy file: %w", err)
	}
	defer in.Close()
	a.StorageName = attach.StorageName()
	size, err := s.writeFrom(a.StorageName, in)
	if err != nil {
		return store.Attachment{}, err
	}
	a.Size = size
	return s.add(ctx, user, a, s.Quota(ctx))
}

// receive copies an upload, up to one byte past MaxBytes, into a temporary
// file in the files directory (0600, named like write's, so the sweep
// removes one a crash left). The caller closes and removes the file, which
// is returned even with an error.
func (s *Service) receive(r io.Reader) (*os.File, int64, error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return nil, 0, fmt.Errorf("create files directory: %w", err)
	}
	f, err := os.CreateTemp(s.dir, ".upload-*")
	if err != nil {
		return nil, 0, fmt.Errorf("receive upload: %w", err)
	}
	if err := f.Chmod(0o600); err != nil {
		return f, 0, fmt.Errorf("receive upload: %w", err)
	}
	n, err := io.Copy(f, io.LimitReader(r, s.limits.MaxBytes+1))
	if err != nil {
		return f, n, fmt.Errorf("read upload: %w", err)
	}
	return f, n, nil
}

// write stores data under name: to a temporary file first, then renamed,
// so a half-written file never has a storage name.
func (s *Service) write(name string, data []byte) error {
	_, err := s.writeFrom(name, bytes.NewReader(data))
	return err
}

// writeFrom stores what r holds under name, as write does, and returns its
// size.
func (s *Service) writeFrom(name string, r io.Reader) (int64, error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return 0, fmt.Errorf("create files directory: %w", err)
	}
	p, err := s.path(name)
	if err != nil {
		return 0, err
	}
	tmp, err := os.CreateTemp(s.dir, ".upload-*")
	if err != nil {
		return 0, fmt.Errorf("store file: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return 0, fmt.Errorf("store file: %w", err)
	}
	n, err := io.Copy(tmp, r)
	if err != nil {
		tmp.Close()
		return 0, fmt.Errorf("store file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return 0, fmt.Errorf("store file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return 0, fmt.Errorf("store file: %w", err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return 0, fmt.Errorf("store file: %w", err)
	}
	return n, nil
}

// Get returns one of user's attachments (sent or not) and its bytes.
func (s *Service) Get(ctx context.Context, user ids.UserID, id ids.AttachmentID) (store.Attachment, []byte, error) {
	a, err := s.db.AttachmentByID(ctx, user, id)
	if err != nil {
		return store.Attachment{}, nil, store.Kinded(err, "file")
	}
	data, err := s.Read(a.StorageName)
	if err != nil {
		return store.Attachment{}, nil, err
	}
	return a, data, nil
}

// Open returns one of user's files, opened for reading, to be streamed
// rather than read into memory (a download of a large file by many slow
// readers must not cost its size in memory each). The caller closes it.
func (s *Service) Open(ctx context.Context, user ids.UserID, id ids.AttachmentID) (store.Attachment, *os.File, error) {
	a, err := s.db.AttachmentByID(ctx, user, id)
	if err != nil {
		return store.Attachment{}, nil, store.Kinded(err, "file")
	}
	p, err := s.path(a.StorageName)
	if err != nil {
		return store.Attachment{}, nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return store.Attachment{}, nil, apperr.Wrap(apperr.NotFound, err, "the file is missing from the data directory")
	}
	if err != nil {
		return store.Attachment{}, nil, err
	}
	return a, f, nil
}

// OpenStored opens a stored file by storage name for reading. The caller
// has checked the user may read it, and closes it.
func (s *Service) OpenStored(name string) (*os.File, error) {
	p, err := s.path(name)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, apperr.Wrap(apperr.NotFound, err, "the file is missing from the data directory")
	}
	return f, err
}

// Read returns a stored file's bytes. The caller has checked ownership.
func (s *Service) Read(name string) ([]byte, error) {
	p, err := s.path(name)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, apperr.Wrap(apperr.NotFound, err, "the file is missing from the data directory")
	}
	return data, err
}

// Delete removes one of user's unsent uploads.
func (s *Service) Delete(ctx context.Context, user ids.UserID, id ids.AttachmentID) error {
	name, err := s.db.DeleteUnbound(ctx, user, id)
	if errors.Is(err, store.ErrConflict) {
		return apperr.Wrap(apperr.Conflict, err, "this file was sent; it goes when its chat is deleted")
	}
	if err != nil {
		return store.Kinded(err, "file")
	}
	s.Remove([]string{name})
	return nil
}

// Remove deletes stored files by storage name (the store's release hook).
// A name that is not one of ours is ignored, as is a file already gone.
func (s *Service) Remove(names []string) {
	for _, n := range names {
		p, err := s.path(n)
		if err != nil {
			s.log.Warn("not removing a file with a foreign name", "name", n)
			continue
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.log.Warn("remove attachment file", "name", n, "err", err)
		}
	}
}

// Sweep deletes uploads never sent within UploadKeep, and files that no
// row refers to (older than an hour, so an upload being written is safe).
// It returns how many files went.
func (s *Service) Sweep(ctx context.Context, now time.Time) (int, error) {
	names, err := s.db.DeleteStaleUploads(ctx, now.Add(-UploadKeep).UnixMilli())
	if err != nil {
		return 0, err
	}
	s.Remove(names)
	n := len(names)
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, os.ErrNotExist) {
		return n, nil
	}
	if err != nil {
		return n, fmt.Errorf("read files directory: %w", err)
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || e.IsDir() || now.Sub(info.ModTime()) < time.Hour {
			continue
		}
		name := e.Name()
		if strings.HasPrefix(name, ".upload-") {
			os.Remove(filepath.Join(s.dir, name)) // left by a crash mid-write
			continue
		}
		if !attach.ValidStorageName(name) {
			continue
		}
		known, err := s.db.StorageNameKnown(ctx, name)
		if err != nil {
			return n, err
		}
		if !known {
			s.Remove([]string{name})
			n++
		}
	}
	return n, nil
}
