package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/secrets"
	"github.com/llembas/lembas/backend/sshx"
	"github.com/llembas/lembas/backend/sshx/sshtest"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/store/storetest"
	"github.com/llembas/lembas/backend/tools"
)

// These tests run against a real OpenSSH sshd on loopback (sshtest): only
// the model is missing.

type memLedger struct{ rec *secrets.Record }

func (l *memLedger) KeyRecord(context.Context) (secrets.Record, bool, error) {
	if l.rec == nil {
		return secrets.Record{}, false, nil
	}
	return *l.rec, true, nil
}
func (l *memLedger) SetKeyRecord(_ context.Context, r secrets.Record) error { l.rec = &r; return nil }
func (l *memLedger) HasEncrypted(context.Context) (bool, error)             { return false, nil }

func newService(t *testing.T) (*Service, *store.DB, ids.UserID) {
	t.Helper()
	return newServiceOpt(t, Options{})
}

func newServiceOpt(t *testing.T, opt Options) (*Service, *store.DB, ids.UserID) {
	t.Helper()
	db := storetest.Open(t)
	keeper, err := secrets.Resolve(context.Background(), secrets.Options{DataDir: t.TempDir(), NoKeychain: true}, &memLedger{})
	if err != nil {
		t.Fatal(err)
	}
	s := New(db, func() (*secrets.Keeper, error) { return keeper, nil }, nil, opt)
	t.Cleanup(s.Close)
	user, _ := storetest.OwnerWithModel(t, db)
	return s, db, user
}

// changes records OnProfileChanged's calls.
type changes struct {
	mu  sync.Mutex
	ids []ids.ProfileID
}

func (c *changes) record(id ids.ProfileID) { c.mu.Lock(); c.ids = append(c.ids, id); c.mu.Unlock() }
func (c *changes) count() int              { c.mu.Lock(); defer c.mu.Unlock(); return len(c.ids) }

// readyProfile is a key profile of user on srv, its key authorized and
// its host key accepted.
func readyProfile(t *testing.T, s *Service, user ids.UserID, srv *sshtest.Server) Profile {
	t.Helper()
	ctx := context.Background()
	p, err := s.CreateProfile(ctx, user, ProfileInput{Name: "test box", Host: srv.Host, Port: srv.Port, Username: srv.User, Auth: store.AuthKey})
	if err != nil {
		t.Fatal(err)
	}
	srv.AuthorizeKey(p.PublicKey)
	sc, err := s.ScanHostKey(ctx, user, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p, err = s.AcceptHostKey(ctx, user, p.ID, sc.Fingerprint); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestProfileKeyHostKeyAndTest(t *testing.T) {
	srv := sshtest.Start(t)
	ctx := context.Background()
	s, db, user := newService(t)
	var ch changes
	s.OnProfileChanged(ch.record)

	p, err := s.CreateProfile(ctx, user, ProfileInput{Name: "box", Host: srv.Host, Port: srv.Port, Username: srv.User, Auth: store.AuthKey})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.PublicKey, "ssh-ed25519 ") || !p.HasSecret || p.HostKey != nil {
		t.Fatalf("a new key profile: %+v", p)
	}
	row, _ := db.SSHProfile(ctx, user, p.ID)
	if strings.Contains(row.SecretEnc, "PRIVATE KEY") || row.SecretEnc == "" {
		t.Fatal("the private key is not stored encrypted")
	}
	b, _ := json.Marshal(p)
	if strings.Contains(string(b), "PRIVATE") || strings.Contains(string(b), row.SecretEnc) {
		t.Fatalf("the profile's view shows its secret: %s", b)
	}

	// Nothing accepted: no connection, and it says why.
	if r, err := s.Test(ctx, user, p.ID); err != nil || r.OK || !strings.Contains(r.Message, "has not been accepted") {
		t.Fatalf("test before accepting the host key: %+v %v", r, err)
	}
	srv.AuthorizeKey(p.PublicKey)
	sc, err := s.ScanHostKey(ctx, user, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := sshx.Fingerprint(srv.HostKey())
	if sc.Status != "new" || sc.Fingerprint != want || sc.Pinned != "" {
		t.Fatalf("first scan: %+v, want fingerprint %s", sc, want)
	}
	if _, err := s.AcceptHostKey(ctx, user, p.ID, "SHA256:not-what-was-scanned"); apperr.KindOf(err) != apperr.Invalid {
		t.Fatalf("accepting another fingerprint than the scanned one: %v", err)
	}
	if p, err = s.AcceptHostKey(ctx, user, p.ID, sc.Fingerprint); err != nil || p.HostKey == nil || p.HostKey.Fingerprint != want {
		t.Fatalf("accept: %+v %v", p, err)
	}
	// The scan is used once.
	if _, err := s.AcceptHostKey(ctx, user, p.ID, sc.Fingerprint); apperr.KindOf(err) != apperr.Invalid {
		t.Fatalf("accepting a scan twice: %v", err)
	}
	r, err := s.Test(ctx, user, p.ID)
	if err != nil || !r.OK || !strings.HasPrefix(r.Message, "Connected: Linux") {
		t.Fatalf("test: %+v %v\n%s", r, err, srv.Log())
	}
	if sc, _ = s.ScanHostKey(ctx, user, p.ID); sc.Status != "same" || sc.Pinned != want {
		t.Fatalf("second scan: %+v", sc)
	}
	if ch.count() != 0 {
		t.Fatalf("OnProfileChanged called %d times before anything changed", ch.count())
	}

	// Browse: the login directory, directories first.
	br, err := s.Browse(ctx, user, p.ID, "")
	if err != nil || br.Dir != srv.Home || br.Parent != path.Dir(srv.Home) {
		t.Fatalf("browse home: %+v %v (home %s)", br, err, srv.Home)
	}
	if br, err = s.Browse(ctx, user, p.ID, "/"); err != nil || br.Parent != "" || !slices.ContainsFunc(br.Items, func(e BrowseEntry) bool { return e.Name == "etc" && e.Dir }) {
		t.Fatalf("browse /: %+v %v", br, err)
	}
	for i := 1; i < len(br.Items); i++ {
		if !br.Items[i-1].Dir && br.Items[i].Dir {
			t.Fatalf("browse /: a file before a directory: %+v", br.Items)
		}
	}
	if _, err := s.Browse(ctx, user, p.ID, "/no/such/dir"); apperr.KindOf(err) != apperr.Invalid {
		t.Fatalf("browse a missing directory: %v", err)
	}

	// A changed host key refuses to connect, and says so.
	old := want
	srv.RotateHostKey()
	if r, err := s.Test(ctx, user, p.ID); err != nil || r.OK || !strings.Contains(r.Message, "has changed") {
		t.Fatalf("test after the host key changed: %+v %v", r, err)
	}
	sc, err = s.ScanHostKey(ctx, user, p.ID)
	if err != nil || sc.Status != "changed" || sc.Pinned != old || sc.Fingerprint == old {
		t.Fatalf("scan of a changed key: %+v %v", sc, err)
	}
	if _, err := s.AcceptHostKey(ctx, user, p.ID, sc.Fingerprint); err != nil {
		t.Fatal(err)
	}
	if ch.count() != 1 {
		t.Fatalf("accepting a different key: OnProfileChanged called %d times, want 1", ch.count())
	}
	if r, _ := s.Test(ctx, user, p.ID); !r.OK {
		t.Fatalf("test after accepting the new key: %+v", r)
	}

	// Renaming keeps the pin; moving forgets it and ends what was open.
	if p, err = s.UpdateProfile(ctx, user, p.ID, ProfilePatch{Name: ptr("renamed")}); err != nil || p.HostKey == nil || ch.count() != 1 {
		t.Fatalf("rename: %+v %v (changes %d)", p, err, ch.count())
	}
	if p, err = s.UpdateProfile(ctx, user, p.ID, ProfilePatch{Port: ptr(srv.Port + 1)}); err != nil || p.HostKey != nil || ch.count() != 2 {
		t.Fatalf("move: %+v %v (changes %d)", p, err, ch.count())
	}
	// A new key: the old public key no longer signs in.
	if p, err = s.UpdateProfile(ctx, user, p.ID, ProfilePatch{Port: ptr(srv.Port), NewKey: true}); err != nil || ch.count() != 3 {
		t.Fatalf("new key: %+v %v", p, err)
	}
	sc, _ = s.ScanHostKey(ctx, user, p.ID)
	if _, err := s.AcceptHostKey(ctx, user, p.ID, sc.Fingerprint); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Test(ctx, user, p.ID); r.OK || !strings.Contains(r.Message, "refused") {
		t.Fatalf("a key not in authorized_keys: %+v", r)
	}
	if p, err = s.ForgetHostKey(ctx, user, p.ID); err != nil || p.HostKey != nil || ch.count() != 4 {
		t.Fatalf("forget: %+v %v", p, err)
	}
	if err := s.DeleteProfile(ctx, user, p.ID); err != nil || ch.count() != 5 {
		t.Fatalf("delete: %v (changes %d)", err, ch.count())
	}
	if _, err := s.Test(ctx, user, p.ID); apperr.KindOf(err) != apperr.NotFound {
		t.Fatalf("test of a deleted profile: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

func TestImportedKeyAndPasswordProfiles(t *testing.T) {
	srv := sshtest.Start(t)
	ctx := context.Background()
	s, _, user := newService(t)

	priv, pub, err := sshx.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.CreateProfile(ctx, user, ProfileInput{Name: "imported", Host: srv.Host, Port: srv.Port, Username: srv.User, Auth: store.AuthKey,
		PrivateKey: strings.ReplaceAll(string(priv), "\n", "\r\n")})
	if err != nil || !sameKey(p.PublicKey, pub) {
		t.Fatalf("import: %+v %v, want public key %s", p, err, pub)
	}
	if _, err := s.CreateProfile(ctx, user, ProfileInput{Name: "bad", Host: srv.Host, Username: "u", Auth: store.AuthKey, PrivateKey: "not a key"}); apperr.KindOf(err) != apperr.Invalid {
		t.Fatalf("a key that is not one: %v", err)
	}
	srv.AuthorizeKey(pub)
	sc, _ := s.ScanHostKey(ctx, user, p.ID)
	s.AcceptHostKey(ctx, user, p.ID, sc.Fingerprint)
	if r, _ := s.Test(ctx, user, p.ID); !r.OK {
		t.Fatalf("imported key: %+v", r)
	}

	if srv.Password == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("the test server has no password user (CI=true never skips)")
		}
		t.Skip("the test server has no password user (not root)")
	}
	pw, err := s.CreateProfile(ctx, user, ProfileInput{Name: "pw", Host: srv.Host, Port: srv.Port, Username: srv.User, Auth: store.AuthPassword, Password: srv.Password})
	if err != nil || pw.PublicKey != "" || !pw.HasSecret {
		t.Fatalf("password profile: %+v %v", pw, err)
	}
	sc, _ = s.ScanHostKey(ctx, user, pw.ID)
	s.AcceptHostKey(ctx, user, pw.ID, sc.Fingerprint)
	if r, _ := s.Test(ctx, user, pw.ID); !r.OK {
		t.Fatalf("password: %+v", r)
	}
	if _, err := s.UpdateProfile(ctx, user, pw.ID, ProfilePatch{Password: ptr("wrong-" + srv.Password)}); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Test(ctx, user, pw.ID); r.OK || !strings.Contains(r.Message, "refused") {
		t.Fatalf("a wrong password: %+v", r)
	}
	// A key sent to a password profile turns it into a key profile.
	if pw, err = s.UpdateProfile(ctx, user, pw.ID, ProfilePatch{PrivateKey: ptr(string(priv))}); err != nil || pw.Auth != store.AuthKey || !sameKey(pw.PublicKey, pub) {
		t.Fatalf("a key for a password profile: %+v %v", pw, err)
	}
	if r, _ := s.Test(ctx, user, pw.ID); !r.OK {
		t.Fatalf("the password profile turned key: %+v", r)
	}
}

func TestProfileValidation(t *testing.T) {
	ctx := context.Background()
	s, _, user := newService(t)
	for _, in := range []ProfileInput{
		{Name: "", Host: "h", Username: "u", Auth: store.AuthPassword, Password: "p"},
		{Name: "n", Host: "-oProxyCommand=x", Username: "u", Auth: store.AuthPassword, Password: "p"},
		{Name: "n", Host: "a host", Username: "u", Auth: store.AuthPassword, Password: "p"},
		{Name: "n", Host: "h:22", Username: "u", Auth: store.AuthPassword, Password: "p"},
		{Name: "n", Host: "h", Port: 70000, Username: "u", Auth: store.AuthPassword, Password: "p"},
		{Name: "n", Host: "h", Username: "-l", Auth: store.AuthPassword, Password: "p"},
		{Name: "n", Host: "h", Username: "a b", Auth: store.AuthPassword, Password: "p"},
		{Name: "n", Host: "h", Username: "u", Auth: store.AuthPassword},
		{Name: "n", Host: "h", Username: "u", Auth: "agent"},
	} {
		if _, err := s.CreateProfile(ctx, user, in); apperr.KindOf(err) != apperr.Invalid {
			t.Errorf("%+v: %v, want invalid", in, err)
		}
	}
	p, err := s.CreateProfile(ctx, user, ProfileInput{Name: "v6", Host: "[::1]", Username: "u", Auth: store.AuthPassword, Password: "p"})
	if err != nil || p.Host != "::1" || p.Port != 22 {
		t.Fatalf("[::1] with no port: %+v %v", p, err)
	}
	for i := 1; i < MaxProfiles; i++ {
		if _, err := s.CreateProfile(ctx, user, ProfileInput{Name: fmt.Sprint(i), Host: "h", Username: "u", Auth: store.AuthPassword, Password: "p"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.CreateProfile(ctx, user, ProfileInput{Name: "one more", Host: "h", Username: "u", Auth: store.AuthPassword, Password: "p"}); apperr.KindOf(err) != apperr.Invalid {
		t.Fatalf("profile %d: %v", MaxProfiles+1, err)
	}
}

// agentTools returns the agent tools a reply in an agent chat on p, in
// dir and mode, is offered.
func agentTools(t *testing.T, s *Service, user ids.UserID, p ids.ProfileID, dir string, mode store.AgentMode) map[string]tools.Tool {
	t.Helper()
	c := store.Chat{Kind: store.ChatAgent, Agent: store.AgentChat{Profile: &p, Dir: dir, Mode: mode}}
	list, _, err := s.Sources()[0].Tools(context.Background(), auth.Caller{User: user, Perms: auth.NewSet(false, auth.AgentUse)}, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]tools.Tool{}
	for _, tl := range list {
		out[tl.Name] = tl
	}
	return out
}

func call(t *testing.T, tl tools.Tool, args any, approved bool) tools.Result {
	t.Helper()
	b, _ := json.Marshal(args)
	return tl.Run(context.Background(), tools.Call{Name: tl.Name, Arguments: b, Approved: approved})
}

func TestAgentToolsOnAHost(t *testing.T) {
	srv := sshtest.Start(t)
	ctx := context.Background()
	s, _, user := newService(t)
	if _, err := s.SetSettings(ctx, SettingsPatch{OutputCapKB: ptr(4), CommandTimeoutSec: ptr(5)}); err != nil {
		t.Fatal(err)
	}
	p := readyProfile(t, s, user, srv)
	// A project directory with a space and a quote in its name.
	dir := path.Join(srv.Home, fmt.Sprintf("lembas agent's test %d", time.Now().UnixNano()))
	cl, _, err := s.Dial(ctx, user, 0)
	if err == nil {
		t.Fatal("Dial of no chat succeeded")
	}
	row, _ := s.db.SSHProfile(ctx, user, p.ID)
	if cl, err = s.connect(ctx, row); err != nil {
		t.Fatal(err)
	}
	if r, err := cl.Run(ctx, "mkdir -p "+sshx.Quote(dir), sshx.RunOptions{}); err != nil || r.Exit != 0 {
		t.Fatalf("mkdir: %+v %v", r, err)
	}
	t.Cleanup(func() { cl.Run(context.Background(), "rm -rf "+sshx.Quote(dir), sshx.RunOptions{}); cl.Close() })

	tl := agentTools(t, s, user, p.ID, dir, store.ModeAuto)
	if _, ok := tl[NamePlanSubmit]; ok || len(tl) != 5 {
		t.Fatalf("tools in Auto mode: %v", slices.Collect(func(yield func(string) bool) {
			for k := range tl {
				yield(k)
			}
		}))
	}
	name := `it's "quoted" $HOME.txt`
	file := path.Join("sub dir", name)
	content := "first line\nsecond `line` $(echo no)\n"
	r := call(t, tl[NameFileWrite], map[string]any{"path": file, "content": content}, false)
	if !r.Failed || !strings.Contains(r.Text, "does not exist") || !strings.Contains(r.Text, "mkdir -p") {
		t.Fatalf("file_write into a missing directory: %+v", r)
	}
	if r = call(t, tl[NameShellRun], map[string]any{"command": "mkdir 'sub dir' && echo made"}, false); r.Failed || !strings.Contains(r.Text, "Exit status 0") || !strings.Contains(r.Text, "made") {
		t.Fatalf("shell_run mkdir: %+v", r)
	}
	if r = call(t, tl[NameFileWrite], map[string]any{"path": file, "content": content}, false); r.Failed || !strings.HasPrefix(r.Text, "Created") {
		t.Fatalf("file_write: %+v", r)
	}
	if r = call(t, tl[NameFileWrite], map[string]any{"path": file, "content": content}, false); r.Failed || !strings.HasPrefix(r.Text, "Replaced") {
		t.Fatalf("file_write again: %+v", r)
	}
	if r = call(t, tl[NameFileRead], map[string]any{"path": file}, false); r.Failed || r.Text != content {
		t.Fatalf("file_read: %+v", r)
	}
	if r = call(t, tl[NameFileRead], map[string]any{"path": path.Join(dir, file), "offset": 2, "limit": 5}, false); r.Failed || !strings.HasPrefix(r.Text, "second `line`") || !strings.Contains(r.Text, "Lines 2–2 of 2") {
		t.Fatalf("file_read by absolute path from line 2: %+v", r)
	}
	if r = call(t, tl[NameFileList], map[string]any{}, false); r.Failed || !strings.Contains(r.Text, "sub dir/") {
		t.Fatalf("file_list: %+v", r)
	}
	if r = call(t, tl[NameFileList], map[string]any{"path": "sub dir"}, false); r.Failed || !strings.Contains(r.Text, name+" (") {
		t.Fatalf("file_list sub dir: %+v", r)
	}
	// A command in a cwd with a space: pwd says where it ran, and the
	// file written over SFTP is there.
	r = call(t, tl[NameShellRun], map[string]any{"command": "pwd; cat ./*.txt", "cwd": "sub dir"}, false)
	if r.Failed || !strings.Contains(r.Text, path.Join(dir, "sub dir")+"\n") || !strings.Contains(r.Text, "$(echo no)") {
		t.Fatalf("shell_run in a cwd with a space: %+v", r)
	}
	// Each command is a fresh shell.
	if r = call(t, tl[NameShellRun], map[string]any{"command": "cd /tmp; export X=1"}, false); r.Failed {
		t.Fatalf("%+v", r)
	}
	if r = call(t, tl[NameShellRun], map[string]any{"command": "pwd; echo X=$X"}, false); !strings.Contains(r.Text, dir+"\n") || !strings.Contains(r.Text, "X=\n") {
		t.Fatalf("the second command saw the first's shell: %+v", r)
	}
	if r = call(t, tl[NameShellRun], map[string]any{"command": "exit 3"}, false); !strings.Contains(r.Text, "Exit status 3") {
		t.Fatalf("exit 3: %+v", r)
	}
	if r = call(t, tl[NameShellRun], map[string]any{"command": "head -c 10000 /dev/zero | tr '\\0' a; printf '\\033[31mred'"}, false); !strings.Contains(r.Text, "cut at 4 KB") || !strings.Contains(r.Text, "5912 more bytes") {
		t.Fatalf("output past the cap: %.300s", r.Text)
	}
	if r = call(t, tl[NameShellRun], map[string]any{"command": "printf '\\033[31mred\\033[0m\\r\\n'"}, false); !strings.Contains(r.Text, "Output:\nred\n") {
		t.Fatalf("terminal escapes: %q", r.Text)
	}
	if r = call(t, tl[NameShellRun], map[string]any{"command": "echo started; sleep 60"}, false); !strings.Contains(r.Text, "stopped after 5s") || !strings.Contains(r.Text, "started") {
		t.Fatalf("a command past its time limit: %+v", r)
	}
	if r = call(t, tl[NameFileRead], map[string]any{"path": "no such file"}, false); !r.Failed || !strings.Contains(r.Text, "no such file or directory") {
		t.Fatalf("file_read of a missing file: %+v", r)
	}

	// Manual mode: each runner refuses what was not approved, and runs
	// what was.
	man := agentTools(t, s, user, p.ID, dir, store.ModeManual)
	for _, name := range []string{NameShellRun, NameFileRead, NameFileWrite, NameFileList} {
		r := call(t, man[name], map[string]any{"command": "touch unapproved", "path": "unapproved", "content": "x"}, false)
		if !r.Failed || !strings.Contains(r.Text, "not approved") {
			t.Errorf("%s unapproved in Manual mode: %+v", name, r)
		}
	}
	if r = call(t, tl[NameFileList], map[string]any{}, false); strings.Contains(r.Text, "unapproved") {
		t.Fatalf("an unapproved call ran: %s", r.Text)
	}
	if r = call(t, man[NameShellRun], map[string]any{"command": "echo approved"}, true); r.Failed || !strings.Contains(r.Text, "approved") {
		t.Fatalf("approved in Manual mode: %+v", r)
	}
	// Plan mode: even an approved write is refused; plan_submit is there.
	plan := agentTools(t, s, user, p.ID, dir, store.ModePlan)
	if r = call(t, plan[NameFileWrite], map[string]any{"path": "planned", "content": "x"}, true); !r.Failed || !strings.Contains(r.Text, "Plan mode") {
		t.Fatalf("an approved write in Plan mode: %+v", r)
	}
	if r = call(t, plan[NamePlanSubmit], map[string]any{"plan": "1. Do it."}, false); r.Failed {
		t.Fatalf("plan_submit: %+v", r)
	}

	// Reply: the harness's agent part, and the listing warmed in the
	// background for a later reply.
	c := store.Chat{Kind: store.ChatAgent, Agent: store.AgentChat{Profile: &p.ID, Dir: dir, Mode: store.ModeEdit}}
	caller := auth.Caller{User: user, Perms: auth.NewSet(false, auth.AgentUse)}
	var listing string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline) && listing == ""; time.Sleep(50 * time.Millisecond) {
		rep, err := s.Reply(ctx, caller, c)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Harness.Host != fmt.Sprintf("%s@%s:%d", srv.User, srv.Host, srv.Port) || rep.Harness.Dir != dir ||
			!strings.HasPrefix(rep.Harness.Mode, "Edit.") || rep.Policy.(Policy).Mode != store.ModeEdit || rep.Harness.Rewound != "" {
			t.Fatalf("reply: %+v", rep)
		}
		listing = rep.Harness.Listing
	}
	if !strings.Contains(listing, "sub dir/\n  "+name) {
		t.Fatalf("the warmed listing: %q", listing)
	}
}

// Dial connects for the user's own agent chat only.
func TestDial(t *testing.T) {
	srv := sshtest.Start(t)
	ctx := context.Background()
	s, db, user := newService(t)
	p := readyProfile(t, s, user, srv)
	chat, _, err := db.CreateChat(ctx, user, store.NewChat{Kind: store.ChatAgent, Agent: store.AgentChat{Profile: &p.ID, Dir: srv.Home, Mode: store.ModeManual}},
		store.Message{Role: store.RoleUser, Content: "go"})
	if err != nil {
		t.Fatal(err)
	}
	cl, got, err := s.Dial(ctx, user, chat.ID)
	if err != nil || got.ID != chat.ID {
		t.Fatalf("dial: %v", err)
	}
	if r, err := cl.Run(ctx, "echo hi", sshx.RunOptions{}); err != nil || string(r.Output) != "hi\n" {
		t.Fatalf("run: %+v %v", r, err)
	}
	cl.Close()
	if _, _, err := s.Dial(ctx, user+1000, chat.ID); apperr.KindOf(err) != apperr.NotFound {
		t.Fatalf("another person's chat: %v", err)
	}
	s.SetSettings(ctx, SettingsPatch{Enabled: ptr(false)})
	if _, _, err := s.Dial(ctx, user, chat.ID); apperr.KindOf(err) != apperr.Forbidden {
		t.Fatalf("agent chats off: %v", err)
	}
}
