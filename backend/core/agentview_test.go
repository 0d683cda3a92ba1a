package core

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/llembas/lembas/backend/api"
)

// A connection's view says whether its key is one LLeMbas made, so a
// reopened connection with a pasted key is not shown as "A key LLeMbas
// makes"; a password connection has no generated key, and a new key made
// for a pasted-key connection is generated again.
func TestProfileViewSaysWhoMadeTheKey(t *testing.T) {
	var opened []string
	c := openTest(t, &opened)
	owner := api.Caller{UserID: c.Owner.ID, Admin: true, Owner: true}
	call := func(method string, out any, args ...any) {
		t.Helper()
		b, _ := json.Marshal(args)
		r := c.Dispatcher.Call(context.Background(), owner, method, b)
		if r.Error != nil {
			t.Fatalf("%s: %+v", method, r.Error)
		}
		if out != nil {
			if err := json.Unmarshal(r.Result, out); err != nil {
				t.Fatal(err)
			}
		}
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		ID        int64
		Name      string
		Auth      string
		Generated *bool
	}
	base := map[string]any{"host": "box.invalid", "port": 22, "username": "me"}
	with := func(m map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range base {
			out[k] = v
		}
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	var made, pasted, pw view
	call("Agent.CreateProfile", &made, with(map[string]any{"name": "made", "auth": "key"}))
	call("Agent.CreateProfile", &pasted, with(map[string]any{"name": "pasted", "auth": "key", "privateKey": string(pem.EncodeToMemory(block))}))
	call("Agent.CreateProfile", &pw, with(map[string]any{"name": "pw", "auth": "password", "password": "hunter2"}))
	want := map[string]bool{"made": true, "pasted": false, "pw": false}
	for _, v := range []view{made, pasted, pw} {
		if v.Generated == nil || *v.Generated != want[v.Name] {
			t.Errorf("CreateProfile %s: generated %v, want %v", v.Name, v.Generated, want[v.Name])
		}
	}
	var list []view
	call("Agent.Profiles", &list)
	if len(list) != 3 {
		t.Fatalf("profiles %+v", list)
	}
	for _, v := range list {
		if v.Generated == nil || *v.Generated != want[v.Name] {
			t.Errorf("Profiles %s: generated %v, want %v", v.Name, v.Generated, want[v.Name])
		}
	}
	var renewed view
	call("Agent.UpdateProfile", &renewed, pasted.ID, map[string]any{"newKey": true})
	if renewed.Generated == nil || !*renewed.Generated {
		t.Errorf("a new key for the pasted-key connection: generated %v", renewed.Generated)
	}
}
