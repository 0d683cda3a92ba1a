package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/store/storetest"
	"github.com/llembas/lembas/backend/tools"
)

// A small model sends something close to the schema: every near form a
// model has sent reads as the questions it meant.
func TestQuestionsReadsNearSchema(t *testing.T) {
	for _, tc := range []struct {
		args string
		want []tools.Question
	}{
		{`{"questions":[{"question":"Which port?","options":["80","8080"]},{"question":"Keep the logs?"},{"question":"Name?","options":[]}]}`,
			[]tools.Question{{Key: "q1", Text: "Which port?", Options: []string{"80", "8080"}}, {Key: "q2", Text: "Keep the logs?"}, {Key: "q3", Text: "Name?"}}},
		{`{"question":"Which port?","options":["80"]}`, []tools.Question{{Key: "q1", Text: "Which port?", Options: []string{"80"}}}},
		{`{"questions":["Which port?","Keep the logs?"]}`, []tools.Question{{Key: "q1", Text: "Which port?"}, {Key: "q2", Text: "Keep the logs?"}}},
		{`{"questions":"Which port?"}`, []tools.Question{{Key: "q1", Text: "Which port?"}}},
		{`{"questions":[{"text":"Which port?","choices":[80,{"label":"8080"}]}]}`, []tools.Question{{Key: "q1", Text: "Which port?", Options: []string{"80", "8080"}}}},
		{`{"question":{"prompt":"Which port?"}}`, []tools.Question{{Key: "q1", Text: "Which port?"}}},
	} {
		got, err := Questions(json.RawMessage(tc.args))
		if err != nil {
			t.Errorf("%s: %v", tc.args, err)
			continue
		}
		a, _ := json.Marshal(got)
		b, _ := json.Marshal(tc.want)
		if string(a) != string(b) {
			t.Errorf("%s:\n got %s\nwant %s", tc.args, a, b)
		}
	}
	for _, bad := range []string{`{}`, `[]`, `{"questions":[]}`, `{"questions":[{"options":["a"]}]}`, `not json`} {
		if _, err := Questions(json.RawMessage(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// ask_user's result quotes each question beside its answer, all at once.
func TestAskUserAnswers(t *testing.T) {
	b := &binding{s: &Service{}, mode: store.ModeManual}
	var ask tools.Tool
	for _, tl := range b.s.defs(b, store.ModeManual) {
		if tl.Name == NameAskUser {
			ask = tl
		}
	}
	args := json.RawMessage(`{"questions":["Which port?","Keep the logs?","Name?"]}`)
	r := ask.Run(context.Background(), tools.Call{Arguments: args, Answers: map[string]string{"q1": "8080", "q3": "web"}})
	want := "Question: Which port?\nAnswer: 8080\n\nQuestion: Keep the logs?\nAnswer: (no answer)\n\nQuestion: Name?\nAnswer: web"
	if r.Failed || r.Text != want {
		t.Errorf("ask_user:\n%s\nwant:\n%s", r.Text, want)
	}
	if r := ask.Run(context.Background(), tools.Call{Arguments: args}); !r.Failed {
		t.Errorf("no answers: %+v", r)
	}
}

func TestResolveAndReadLines(t *testing.T) {
	b := &binding{dir: "/srv/my app"}
	for in, want := range map[string]string{"": "/srv/my app", ".": "/srv/my app", "a b/c.txt": "/srv/my app/a b/c.txt",
		"../x": "/srv/x", "/etc/hosts": "/etc/hosts", "~": ".", "~/notes.md": "notes.md", "/a/../b": "/b"} {
		if got := b.resolve(in); got != want {
			t.Errorf("resolve(%q) = %q, want %q", in, got, want)
		}
	}
	data := []byte("one\ntwo\nthree\n")
	if r := readLines("f", data, int64(len(data)), 0, 0, 1<<10); r.Text != "one\ntwo\nthree\n" {
		t.Errorf("whole: %q", r.Text)
	}
	if r := readLines("f", data, int64(len(data)), 2, 1, 1<<10); r.Text != "two\n\n[Lines 2–2 of 3. Read on with offset 3.]" {
		t.Errorf("a window: %q", r.Text)
	}
	if r := readLines("f", data, int64(len(data)), 9, 0, 1<<10); !r.Failed {
		t.Errorf("past the end: %+v", r)
	}
	if r := readLines("f", []byte("a\x00b"), 3, 0, 0, 1<<10); !r.Failed || !strings.Contains(r.Text, "binary") {
		t.Errorf("binary: %+v", r)
	}
	long := []byte(strings.Repeat("x", 100) + "\n" + strings.Repeat("y", 100) + "\n")
	if r := readLines("f", long, int64(len(long)), 0, 0, 150); !strings.HasPrefix(r.Text, strings.Repeat("x", 100)+"\n\n[Lines 1–1 of 2. Read on with offset 2.]") {
		t.Errorf("the output cap: %q", r.Text)
	}
}

func TestSettingsBoundsAndClamp(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	s := New(db, nil, nil, Options{})
	st, err := s.Settings(ctx)
	if err != nil || st != (Settings{Enabled: true, MaxRounds: 24, CommandTimeoutSec: 120, OutputCapKB: 64, ApprovalTimeoutSec: 600}) {
		t.Fatalf("defaults: %+v %v", st, err)
	}
	for _, p := range []SettingsPatch{{MaxRounds: ptr(0)}, {MaxRounds: ptr(65)}, {CommandTimeoutSec: ptr(4)}, {OutputCapKB: ptr(2000)}, {ApprovalTimeoutSec: ptr(30)}} {
		if _, err := s.SetSettings(ctx, p); err == nil {
			t.Errorf("%+v accepted", p)
		}
	}
	if st, _ = s.SetSettings(ctx, SettingsPatch{Enabled: ptr(false), MaxRounds: ptr(64)}); st.Enabled || st.MaxRounds != 64 {
		t.Errorf("set: %+v", st)
	}
	// A stored approval time under a minute reads as a minute: a pause
	// must not end at once.
	db.SetSetting(ctx, SettingApprovalTime, "0")
	if st, _ = s.Settings(ctx); st.ApprovalTimeoutSec != MinApprovalTime {
		t.Errorf("approval time 0 reads as %d", st.ApprovalTimeoutSec)
	}
}

// The agent's tools and Reply are for an agent chat on the caller's own
// profile, for holders of agent.use, while agent chats are on.
func TestOfferedOnlyInTheCallersAgentChats(t *testing.T) {
	ctx := context.Background()
	s, db, user := newService(t)
	p, err := s.CreateProfile(ctx, user, ProfileInput{Name: "box", Host: "box.lan", Username: "me", Auth: store.AuthPassword, Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	other := user + 1
	if _, err := db.Write().Exec(`INSERT INTO users (id, username, created_at) VALUES (?, 'other', 0)`, other); err != nil {
		t.Fatal(err)
	}
	agentChat := store.Chat{Kind: store.ChatAgent, Agent: store.AgentChat{Profile: &p.ID, Dir: "/srv", Mode: store.ModeEdit}}
	holder := auth.Caller{User: user, Perms: auth.NewSet(false, auth.AgentUse)}
	offered := func(caller auth.Caller, c store.Chat) int {
		list, _, err := s.Sources()[0].Tools(ctx, caller, c, nil)
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}
	if n := offered(holder, agentChat); n != 5 {
		t.Fatalf("an agent chat in Edit mode offers %d tools", n)
	}
	if n := offered(holder, store.Chat{Kind: store.ChatPlain}); n != 0 {
		t.Errorf("a plain chat is offered %d agent tools", n)
	}
	if n := offered(auth.Caller{User: user, Perms: auth.NewSet(false)}, agentChat); n != 0 {
		t.Errorf("without agent.use: %d tools", n)
	}
	if n := offered(auth.Caller{User: other, Perms: auth.NewSet(true)}, agentChat); n != 0 {
		t.Errorf("an administrator is offered tools on another person's profile: %d", n)
	}
	rep, err := s.Reply(ctx, holder, agentChat)
	if err != nil || rep.Harness.Host != "me@box.lan:22" || rep.Harness.Rewound != "" || rep.Harness.Listing != "" || rep.MaxRounds != DefaultMaxRounds {
		t.Fatalf("reply: %+v %v", rep, err)
	}
	rewound := agentChat
	at := int64(1796188478696)
	rewound.Agent.RewoundAt = &at
	if rep, _ = s.Reply(ctx, holder, rewound); rep.Harness.Rewound != "2 December 2026 at 05:14 UTC" {
		t.Errorf("rewound: %q", rep.Harness.Rewound)
	}
	if _, err := s.Reply(ctx, auth.Caller{User: other, Perms: auth.NewSet(true)}, agentChat); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("Reply on another person's profile: %v", err)
	}
	if err := s.CheckNew(ctx, auth.Caller{User: other, Perms: auth.NewSet(true)}, agentChat.Agent); apperr.KindOf(err) != apperr.NotFound {
		t.Errorf("CheckNew with another person's profile: %v", err)
	}
	for _, a := range []store.AgentChat{{Profile: &p.ID, Dir: "srv", Mode: store.ModeEdit}, {Profile: &p.ID, Dir: "/srv", Mode: "yolo"}, {Dir: "/srv", Mode: store.ModeEdit}} {
		if err := s.CheckNew(ctx, holder, a); apperr.KindOf(err) != apperr.Invalid {
			t.Errorf("CheckNew %+v: %v", a, err)
		}
	}
	s.SetSettings(ctx, SettingsPatch{Enabled: ptr(false)})
	if n := offered(holder, agentChat); n != 0 {
		t.Errorf("agent chats off: %d tools", n)
	}
	if _, err := s.Reply(ctx, holder, agentChat); apperr.KindOf(err) != apperr.Forbidden {
		t.Errorf("Reply with agent chats off: %v", err)
	}
	if err := s.CheckNew(ctx, holder, agentChat.Agent); apperr.KindOf(err) != apperr.Forbidden {
		t.Errorf("CheckNew with agent chats off: %v", err)
	}
}
