package api

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/agent"
	"github.com/llembas/lembas/backend/secrets"
	"github.com/llembas/lembas/backend/store/storetest"
)

type agentLedger struct{ rec *secrets.Record }

func (l *agentLedger) KeyRecord(context.Context) (secrets.Record, bool, error) {
	if l.rec == nil {
		return secrets.Record{}, false, nil
	}
	return *l.rec, true, nil
}
func (l *agentLedger) SetKeyRecord(_ context.Context, r secrets.Record) error { l.rec = &r; return nil }
func (l *agentLedger) HasEncrypted(context.Context) (bool, error)             { return false, nil }

// A credential never comes back: not in a view, not in an error, not in
// the log a refused call writes (which carries the whole error chain).
func TestAgentCredentialsReachNoLogOrView(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	keeper, err := secrets.Resolve(ctx, secrets.Options{DataDir: t.TempDir(), NoKeychain: true}, &agentLedger{})
	if err != nil {
		t.Fatal(err)
	}
	svc := agent.New(db, func() (*secrets.Keeper, error) { return keeper, nil }, nil, agent.Options{})
	t.Cleanup(svc.Close)
	user, _ := storetest.OwnerWithModel(t, db)

	var logged bytes.Buffer
	d := NewDispatcher(slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug})))
	d.Register("Agent", NewAgent(svc, Permits{}), Table["Agent"])
	as := Caller{UserID: int64(user), Admin: true, Via: "test"}
	var answers []string
	call := func(method string, args ...any) json.RawMessage {
		b, _ := json.Marshal(args)
		r := d.Call(ctx, as, method, b)
		if r.Error != nil {
			answers = append(answers, r.Error.Message)
		}
		answers = append(answers, string(r.Result))
		return r.Result
	}

	secretsSent := []string{"pw-Secret-0001", "KeyType-Secret-0002", "KeyBody-Secret-0003", "pw-Secret-0004", "KeyType-Secret-0005"}
	var p agent.Profile
	json.Unmarshal(call("Agent.CreateProfile", map[string]any{"name": "box", "host": "127.0.0.1", "port": 1, "username": "u",
		"auth": "password", "password": secretsSent[0]}), &p)
	if p.ID == 0 {
		t.Fatalf("create: %v", answers)
	}
	call("Agent.CreateProfile", map[string]any{"name": "k", "host": "h", "username": "u", "auth": "key",
		"privateKey": "-----BEGIN " + secretsSent[1] + "-----\nAAAA\n-----END " + secretsSent[1] + "-----\n"})
	call("Agent.CreateProfile", map[string]any{"name": "k", "host": "h", "username": "u", "auth": "key",
		"privateKey": "-----BEGIN OPENSSH PRIVATE KEY-----\n" + secretsSent[2] + "\n-----END OPENSSH PRIVATE KEY-----\n"})
	call("Agent.UpdateProfile", p.ID, map[string]any{"password": secretsSent[3] + "\n"})
	call("Agent.UpdateProfile", p.ID, map[string]any{"privateKey": "-----BEGIN " + secretsSent[4] + "-----\nAAAA\n-----END " + secretsSent[4] + "-----\n"})
	call("Agent.Profiles")
	call("Agent.Test", p.ID)
	call("Agent.ScanHostKey", p.ID)

	seen := logged.String() + strings.Join(answers, "\n")
	for _, s := range secretsSent {
		if strings.Contains(seen, s) {
			t.Errorf("%s came back:\n%s", s, seen)
		}
	}
}
