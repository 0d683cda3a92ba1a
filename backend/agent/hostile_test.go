package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/sshx"
	"github.com/llembas/lembas/backend/sshx/sshtest"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/tools"
)

// These tests attack the agent's tools as a hostile model (or a file it
// read) would.

// projectOn makes a fresh project directory on srv's home for p, removed
// after the test, and returns it with a connection to run setup on.
func projectOn(t *testing.T, s *Service, user ids.UserID, p Profile, srv *sshtest.Server) (string, *sshx.Client) {
	t.Helper()
	ctx := context.Background()
	row, _ := s.db.SSHProfile(ctx, user, p.ID)
	cl, err := s.connect(ctx, row)
	if err != nil {
		t.Fatal(err)
	}
	dir := path.Join(srv.Home, fmt.Sprintf("hostile-%d", time.Now().UnixNano()))
	if r, err := cl.Run(ctx, "mkdir -p "+sshx.Quote(dir), sshx.RunOptions{}); err != nil || r.Exit != 0 {
		t.Fatalf("mkdir: %+v %v", r, err)
	}
	t.Cleanup(func() { cl.Run(context.Background(), "rm -rf "+sshx.Quote(dir), sshx.RunOptions{}); cl.Close() })
	return dir, cl
}

// callWithin runs a call and fails the test if it has not returned
// within a minute (a call that hangs holds its reply until Stop).
func callWithin(t *testing.T, tl tools.Tool, args any) tools.Result {
	t.Helper()
	b, _ := json.Marshal(args)
	done := make(chan tools.Result, 1)
	go func() { done <- tl.Run(context.Background(), tools.Call{Name: tl.Name, Arguments: b}) }()
	select {
	case r := <-done:
		return r
	case <-time.After(time.Minute):
		t.Fatalf("%s %s did not return within a minute", tl.Name, b)
	}
	return tools.Result{}
}

// file_read of a pipe, a device or a file the host never finishes
// sending does not hold the reply: only regular files are read.
func TestFileReadRefusesPipesAndDevices(t *testing.T) {
	srv := sshtest.Start(t)
	ctx := context.Background()
	s, _, user := newService(t)
	p := readyProfile(t, s, user, srv)
	dir, cl := projectOn(t, s, user, p, srv)
	if r, err := cl.Run(ctx, "mkfifo pipe", sshx.RunOptions{Dir: dir}); err != nil || r.Exit != 0 {
		t.Fatalf("mkfifo: %+v %v", r, err)
	}
	tl := agentTools(t, s, user, p.ID, dir, store.ModeAuto)
	for _, f := range []string{"pipe", "/dev/zero", "/dev/urandom"} {
		r := callWithin(t, tl[NameFileRead], map[string]any{"path": f})
		if !r.Failed || !strings.Contains(r.Text, "not a regular file") {
			t.Errorf("file_read %s: %.200q", f, r.Text)
		}
	}
}
