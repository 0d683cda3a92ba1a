package agent

import (
	"context"
	"net"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/files"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/sshx"
	"github.com/llembas/lembas/backend/sshx/sshtest"
	"github.com/llembas/lembas/backend/store"
)

func agentChatOn(t *testing.T, db *store.DB, user ids.UserID, p ids.ProfileID, dir string) ids.ChatID {
	t.Helper()
	c, _, err := db.CreateChat(context.Background(), user, store.NewChat{Kind: store.ChatAgent,
		Agent: store.AgentChat{Profile: &p, Dir: dir, Mode: store.ModeManual}}, store.Message{Role: store.RoleUser, Content: "go"})
	if err != nil {
		t.Fatal(err)
	}
	return c.ID
}

// within fails the test if fn has not returned in a minute: a call that
// waited on a host that never answers would hang for the hour its
// timeouts are set to.
func within[T any](t *testing.T, what string, fn func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- fn() }()
	select {
	case v := <-done:
		return v
	case <-time.After(time.Minute):
		t.Fatalf("%s waited on the host", what)
	}
	var zero T
	return zero
}

// TestProjectFilesNeverWaitOnTheHost: `@` reads the cached listing only.
// The host accepts connections and never answers; the listing is asked
// for with nothing cached (ready false, a walk started in the
// background, still hanging) and with a listing cached (its files, at
// once).
func TestProjectFilesNeverWaitOnTheHost(t *testing.T) {
	ctx := context.Background()
	s, db, user := newServiceOpt(t, Options{ConnectTimeout: time.Hour, Index: IndexOptions{Timeout: time.Hour}})

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	})
	port := ln.Addr().(*net.TCPAddr).Port
	p, err := s.CreateProfile(ctx, user, ProfileInput{Name: "silent", Host: "127.0.0.1", Port: port, Username: "sam", Auth: store.AuthKey})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PinSSHHostKey(ctx, user, p.ID, p.PublicKey, "127.0.0.1", port); err != nil {
		t.Fatal(err)
	}
	dir := "/srv/shire"
	chat := agentChatOn(t, db, user, p.ID, dir)

	type answer struct {
		got ProjectFiles
		err error
	}
	ask := func(q string) answer {
		return within(t, "ProjectFiles", func() answer {
			got, err := s.ProjectFiles(ctx, user, chat, q)
			return answer{got, err}
		})
	}
	a := ask("")
	if a.err != nil || a.got.Ready || len(a.got.Files) != 0 || a.got.Files == nil {
		t.Fatalf("nothing cached: %+v %v", a.got, a.err)
	}
	row, _ := db.SSHProfile(ctx, user, p.ID)
	deadline := time.Now().Add(time.Minute)
	for !s.index.walkingNow(row, dir) {
		if time.Now().After(deadline) {
			t.Fatal("no walk was started in the background")
		}
		time.Sleep(20 * time.Millisecond)
	}

	// A listing arrives in the cache (as from an earlier walk) while the
	// walk still hangs on the host.
	s.index.put(row, dir, walk(ctx, newFakeFS("README.md", "cmd/bag/main.go",
		"internal/main_test.go", "docs/Main.txt"), "/p", s.index.opt))
	a = ask("MAIN")
	if a.err != nil || !a.got.Ready {
		t.Fatalf("cached: %+v %v", a.got, a.err)
	}
	want := []string{"docs/Main.txt", "cmd/bag/main.go", "internal/main_test.go"}
	if !slices.Equal(a.got.Files, want) {
		t.Errorf("files matching MAIN: %q, want %q", a.got.Files, want)
	}
	if !s.index.walkingNow(row, dir) {
		t.Error("the hanging walk ended")
	}
	if _, err := s.ProjectFiles(ctx, user+1000, chat, ""); apperr.KindOf(err) != apperr.NotFound {
		t.Errorf("another person's chat: %v", err)
	}
}

// put caches t as p's dir's listing (a walk's result), leaving a running
// walk running.
func (c *indexCache) put(p store.SSHProfile, dir string, t *tree) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := keyOf(p, dir)
	e, ok := c.entries[k]
	if !ok {
		e = &indexEntry{}
		c.entries[k] = e
	}
	e.tree, e.at = t, time.Now()
}

// TestAttachFileOverSFTP: a project file read from a real sshd becomes an
// upload saying where it came from; the listing `@` offers finds it once
// walked; what is not a regular file, or not the caller's chat, is
// refused.
func TestAttachFileOverSFTP(t *testing.T) {
	srv := sshtest.Start(t)
	ctx := context.Background()
	s, db, user := newService(t)
	s.UseFiles(files.New(db, t.TempDir(), nil, files.Limits{}))
	p := readyProfile(t, s, user, srv)
	dir, cl := projectOn(t, s, user, p, srv)
	if r, err := cl.Run(ctx, "cd "+sshx.Quote(dir)+` && mkdir -p src && printf 'package main\n' > src/main.go && printf 'x\n' > '<b>"odd".txt'`, sshx.RunOptions{}); err != nil || r.Exit != 0 {
		t.Fatalf("setup: %+v %v", r, err)
	}
	chat := agentChatOn(t, db, user, p.ID, dir)

	deadline := time.Now().Add(2 * time.Minute)
	var got ProjectFiles
	for {
		var err error
		if got, err = s.ProjectFiles(ctx, user, chat, "main"); err != nil {
			t.Fatal(err)
		}
		if got.Ready || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !slices.Equal(got.Files, []string{"src/main.go"}) {
		t.Fatalf("project files matching main: %+v", got)
	}
	if got, _ := s.ProjectFiles(ctx, user, chat, "odd"); !slices.Equal(got.Files, []string{`<b>"odd".txt`}) {
		t.Errorf("an odd name is listed as it is: %+v", got)
	}

	a, err := s.AttachFile(ctx, user, chat, "src/main.go")
	if err != nil {
		t.Fatal(err)
	}
	wantLabel := srv.User + "@" + srv.Host + ":" + dir
	if a.DisplayName != "main.go" || a.SourcePath != path.Join(dir, "src/main.go") || a.SourceLabel != wantLabel ||
		!strings.Contains(a.Text, "package main") || a.MessageID != nil {
		t.Fatalf("attached: %+v", a)
	}
	if back, err := db.AttachmentByID(ctx, user, a.ID); err != nil || back.SourcePath != a.SourcePath || back.SourceLabel != wantLabel {
		t.Fatalf("stored: %+v %v", back, err)
	}
	if _, err := s.AttachFile(ctx, user, chat, "src"); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("a directory: %v", err)
	}
	if _, err := s.AttachFile(ctx, user, chat, "/dev/zero"); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("a device: %v", err)
	}
	if _, err := s.AttachFile(ctx, user+1000, chat, "src/main.go"); apperr.KindOf(err) != apperr.NotFound {
		t.Errorf("another person's chat: %v", err)
	}
}

// TestNoHostReachedWhenAgentChatsAreOff: with agent chats switched off no
// host is reached, not even for the `@` listing: ProjectFiles is refused
// as AttachFile is (it started a walk over SSH, with the profile's key).
func TestNoHostReachedWhenAgentChatsAreOff(t *testing.T) {
	srv := sshtest.Start(t)
	ctx := context.Background()
	s, db, user := newService(t)
	s.UseFiles(files.New(db, t.TempDir(), nil, files.Limits{}))
	p := readyProfile(t, s, user, srv)
	chat := agentChatOn(t, db, user, p.ID, "/tmp")
	if _, err := s.SetSettings(ctx, SettingsPatch{Enabled: ptr(false)}); err != nil {
		t.Fatal(err)
	}
	row, _ := db.SSHProfile(ctx, user, p.ID)
	if _, err := s.ProjectFiles(ctx, user, chat, ""); apperr.KindOf(err) != apperr.Forbidden {
		t.Errorf("ProjectFiles with agent chats off: %v, want forbidden", err)
	}
	if s.index.walkingNow(row, "/tmp") {
		t.Error("a walk of the host started with agent chats off")
	}
	if _, err := s.AttachFile(ctx, user, chat, "/etc/hostname"); apperr.KindOf(err) != apperr.Forbidden {
		t.Errorf("AttachFile with agent chats off: %v, want forbidden", err)
	}
	// Settings → SSH connections reach no host either.
	if _, err := s.Test(ctx, user, p.ID); apperr.KindOf(err) != apperr.Forbidden {
		t.Errorf("Test with agent chats off: %v, want forbidden", err)
	}
	if _, err := s.Browse(ctx, user, p.ID, ""); apperr.KindOf(err) != apperr.Forbidden {
		t.Errorf("Browse with agent chats off: %v, want forbidden", err)
	}
	if _, err := s.ScanHostKey(ctx, user, p.ID); apperr.KindOf(err) != apperr.Forbidden {
		t.Errorf("ScanHostKey with agent chats off: %v, want forbidden", err)
	}
}
