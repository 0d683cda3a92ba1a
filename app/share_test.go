package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/config"
	"github.com/llembas/lembas/backend/core"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/frontend"
)

func openDesktopCore(t *testing.T, dir string, sh *sharer) *core.Core {
	t.Helper()
	cfg, _ := config.Load(func(string) (string, bool) { return "", false })
	cfg.DataDir = dir
	cfg.NoKeychain = true
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	cr, err := core.Open(context.Background(), cfg, core.Options{Mode: core.Desktop, Files: frontend.FS(),
		Log: slog.New(slog.DiscardHandler), Sharer: sh,
		Password: auth.Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}})
	if err != nil {
		t.Fatal(err)
	}
	sh.attach(cr)
	return cr
}

func TestShareOnTheNetworkFromTheDesktop(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sh := newSharer(slog.New(slog.DiscardHandler), "127.0.0.1:8484")
	sh.addr = "127.0.0.1:0" // a free port; the LAN address in real use
	cr := openDesktopCore(t, dir, sh)
	owner := cr.OwnerCaller()
	call := func(c api.Caller, method string) api.Result { return cr.Dispatcher.Call(ctx, c, method, nil) }

	// No password yet: sharing asks for one and does not start.
	var st api.ShareStatus
	json.Unmarshal(call(owner, "Sharing.Status").Result, &st)
	if !st.Available || st.On || !st.NeedsPassword {
		t.Fatalf("status before a password: %+v", st)
	}
	if r := call(owner, "Sharing.Start"); r.Error == nil || r.Error.Kind != apperr.Invalid {
		t.Fatalf("start without a password: %+v", r)
	}
	if err := cr.Accounts.ChangePassword(ctx, ids.UserID(cr.Owner.ID), "", "owner-shares-at-last", ""); err != nil {
		t.Fatal(err)
	}
	r := call(owner, "Sharing.Start")
	if r.Error != nil {
		t.Fatal(r.Error)
	}
	json.Unmarshal(r.Result, &st)
	if !st.On || len(st.Addresses) == 0 {
		t.Fatalf("status after start: %+v", st)
	}
	base := "http://" + sh.ln.Addr().String()

	// Other devices must sign in; the owner can, with the new password.
	jar, _ := cookiejar.New(nil)
	phone := &http.Client{Jar: jar}
	if resp, err := phone.Post(base+"/api/Chats.List", "application/json", strings.NewReader("[]")); err != nil || resp.StatusCode != 401 {
		t.Fatalf("signed out on the LAN: %v %v", resp, err)
	}
	body, _ := json.Marshal(map[string]string{"username": cr.Owner.Username, "password": "owner-shares-at-last"})
	if resp, err := phone.Post(base+"/api/auth/login", "application/json", bytes.NewReader(body)); err != nil || resp.StatusCode != 200 {
		t.Fatalf("owner login on the LAN: %v %v", resp, err)
	}
	resp, err := phone.Post(base+"/api/Sharing.Stop", "application/json", strings.NewReader("[]"))
	if err != nil || resp.StatusCode != 403 {
		t.Fatalf("a browser switched sharing off: %v %v", resp, err)
	}
	if resp, err := phone.Post(base+"/api/Chats.List", "application/json", strings.NewReader("[]")); err != nil || resp.StatusCode != 200 {
		t.Fatalf("owner's call on the LAN: %v %v", resp, err)
	}

	// Stop closes the port and remembers it; on again, it comes back at
	// the next start.
	if r := call(owner, "Sharing.Stop"); r.Error != nil {
		t.Fatal(r.Error)
	}
	if _, err := http.Get(base + "/api/auth/state"); err == nil {
		t.Error("still answering after Stop")
	}
	call(owner, "Sharing.Start")
	sh.close()
	cr.Close()

	sh2 := newSharer(slog.New(slog.DiscardHandler), "127.0.0.1:8484")
	sh2.addr = "127.0.0.1:0"
	cr2 := openDesktopCore(t, dir, sh2)
	defer cr2.Close()
	defer sh2.close()
	sh2.resume(ctx)
	if st := sh2.Status(ctx); !st.On {
		t.Errorf("sharing did not come back on: %+v", st)
	}
}

func TestMachineNamesAndURLs(t *testing.T) {
	for _, n := range machineNames() {
		if n != strings.ToLower(n) || strings.HasSuffix(n, ".") {
			t.Errorf("machine name %q", n)
		}
	}
	if s := newSharer(slog.New(slog.DiscardHandler), "127.0.0.1:9000"); s.addr != "0.0.0.0:9000" {
		t.Errorf("listen address %q, want the configured port on every interface", s.addr)
	}
}
