package agent

import (
	"context"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/files"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// What `@` in an agent chat's composer offers: the project's files from
// the cached listing (never a walk the person waits on), and one of them
// read over SFTP into an attachment.

// ProjectFiles is the answer to an `@` query: paths relative to the
// chat's directory. Ready is false when nothing is cached yet (a walk has
// been started; asking again later finds it).
type ProjectFiles struct {
	Files []string `json:"files"`
	Ready bool     `json:"ready"`
}

// maxProjectFiles bounds what one query returns (the menu shows a few).
const maxProjectFiles = 50

// UseFiles gives the service the attachment storage AttachFile writes
// through (core sets it; without it AttachFile is unavailable).
func (s *Service) UseFiles(f *files.Service) { s.files = f }

// agentChat reads user's agent chat id and its profile.
func (s *Service) agentChat(ctx context.Context, user ids.UserID, id ids.ChatID) (store.Chat, store.SSHProfile, error) {
	c, err := s.db.ChatByID(ctx, user, id)
	if err != nil {
		return c, store.SSHProfile{}, store.Kinded(err, "chat")
	}
	if c.Kind != store.ChatAgent {
		return c, store.SSHProfile{}, apperr.New(apperr.Invalid, "This chat is not an agent chat.")
	}
	if c.Agent.Profile == nil {
		return c, store.SSHProfile{}, errNoProfile
	}
	p, err := s.profile(ctx, user, *c.Agent.Profile)
	if apperr.KindOf(err) == apperr.NotFound {
		return c, p, errNoProfile
	}
	return c, p, err
}

// ProjectFiles lists the files of user's agent chat id whose path holds
// query (case-insensitive), from the cached listing only: it never
// connects and never waits on the host. With nothing cached it starts a
// walk in the background and answers Ready false.
func (s *Service) ProjectFiles(ctx context.Context, user ids.UserID, id ids.ChatID, query string) (ProjectFiles, error) {
	c, p, err := s.agentChat(ctx, user, id)
	if err != nil {
		return ProjectFiles{}, err
	}
	// Agent chats switched off reach no host, not even for a listing (as
	// AttachFile, through Dial).
	if err := s.reachable(ctx); err != nil {
		return ProjectFiles{}, err
	}
	dir := c.Agent.Dir
	if p.Pinned() != "" && s.index.stale(p, dir) {
		s.warm(p, dir)
	}
	t, ok := s.index.get(p, dir)
	if !ok {
		return ProjectFiles{Files: []string{}}, nil
	}
	return ProjectFiles{Files: t.match(query, maxProjectFiles), Ready: true}, nil
}

// match returns up to max file paths under t (relative to its root) that
// hold q, case-insensitively: those whose name holds it first, then the
// shorter paths.
func (t *tree) match(q string, max int) []string {
	q = strings.ToLower(strings.TrimSpace(q))
	type hit struct {
		path string
		name bool
	}
	var hits []hit
	var visit func(n *node, prefix string)
	visit = func(n *node, prefix string) {
		for _, c := range n.children {
			p := c.name
			if prefix != "" {
				p = prefix + "/" + c.name
			}
			if c.dir {
				visit(c, p)
				continue
			}
			low := strings.ToLower(p)
			if q == "" || strings.Contains(low, q) {
				hits = append(hits, hit{p, q == "" || strings.Contains(strings.ToLower(c.name), q)})
			}
		}
	}
	visit(t.root, "")
	slices.SortStableFunc(hits, func(a, b hit) int {
		if a.name != b.name {
			if a.name {
				return -1
			}
			return 1
		}
		if len(a.path) != len(b.path) {
			return len(a.path) - len(b.path)
		}
		return strings.Compare(a.path, b.path)
	})
	out := make([]string, 0, min(len(hits), max))
	for _, h := range hits[:min(len(hits), max)] {
		out = append(out, h.path)
	}
	return out
}

// attachTimeout bounds reading one file for AttachFile.
const attachTimeout = 2 * time.Minute

// AttachFile reads file p (relative to the chat's directory, or
// absolute) of user's agent chat id over SFTP and keeps it as an unsent
// upload, through the upload pipeline (files.Service: the size cap, the
// quota, typing by content), marked with where it came from: the path,
// and "user@host:dir".
func (s *Service) AttachFile(ctx context.Context, user ids.UserID, id ids.ChatID, p string) (store.Attachment, error) {
	if s.files == nil {
		return store.Attachment{}, apperr.New(apperr.Unavailable, "Files cannot be attached here.")
	}
	if p == "" || len(p) > 4096 || !printable(p) {
		return store.Attachment{}, apperr.New(apperr.Invalid, "That is not a file path.")
	}
	ctx, cancel := context.WithTimeout(ctx, attachTimeout)
	defer cancel()
	cl, c, err := s.Dial(ctx, user, id)
	if err != nil {
		return store.Attachment{}, err
	}
	defer cl.Close()
	// The time limit closes the connection, which ends a read that hangs.
	defer context.AfterFunc(ctx, func() { cl.Close() })()
	dir := c.Agent.Dir
	full := path.Clean(p)
	if !path.IsAbs(full) {
		full = path.Join(dir, full)
	}
	fs, err := cl.SFTP()
	if err != nil {
		return store.Attachment{}, err
	}
	defer fs.Close()
	st, err := fs.Stat(full)
	if err != nil {
		return store.Attachment{}, apperr.Wrap(apperr.Invalid, err, "%s cannot be read: %s", full, plainFileError(err))
	}
	if !st.Mode().IsRegular() {
		return store.Attachment{}, apperr.New(apperr.Invalid, "%s is not a regular file.", full)
	}
	if max := s.files.Limits().MaxBytes; st.Size() > max {
		return store.Attachment{}, apperr.New(apperr.Invalid, "%s is too large to attach (%d MB at most).", full, max>>20)
	}
	f, err := fs.Open(full)
	if err != nil {
		return store.Attachment{}, apperr.Wrap(apperr.Invalid, err, "%s cannot be read: %s", full, plainFileError(err))
	}
	defer f.Close()
	row, _ := s.db.SSHProfile(ctx, user, *c.Agent.Profile)
	label := fmt.Sprintf("%s@%s:%s", row.Username, row.Host, dir)
	a, err := s.files.UploadFrom(ctx, user, path.Base(full), io.Reader(f), full, label)
	if err != nil && ctx.Err() != nil {
		return store.Attachment{}, apperr.Wrap(apperr.Unavailable, err, "%s: the host did not finish sending it in time.", full)
	}
	return a, err
}
