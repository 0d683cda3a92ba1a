package core

import (
	"encoding/json"
	"encoding/pem"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/fakellm"
)

// A manager who cannot read a stored key must not be able to loosen the TLS
// trust under it on the same origin (certificate checks off, or a CA of
// their own), which would let them read it off the wire.
func TestConnectionSecretsKeepTheirTLSTrust(t *testing.T) {
	w := newWeb(t, webOptions{})
	llm := fakellm.New(t)
	tlsSrv := httptest.NewTLSServer(nil)
	defer tlsSrv.Close()
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}))
	c := newClient()
	w.signUp(c, "gandalf", "you-shall-not-pass")
	code, body := w.call(c, "Connections.Create", map[string]any{"name": "keyed", "baseUrl": llm.URL(), "apiKey": "sk-stays-safe-1234"})
	if code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}
	var conn struct{ ID int64 }
	json.Unmarshal([]byte(body), &conn)
	update := func(in map[string]any) (int, string) {
		in["name"], in["baseUrl"] = "keyed", llm.URL()
		return w.call(c, "Connections.Update", conn.ID, in)
	}
	refused := func(what string, in map[string]any) {
		t.Helper()
		if code, body := update(in); code != 400 || !strings.Contains(body, "certificates are trusted") {
			t.Errorf("%s with the key kept: %d %s, want 400", what, code, body)
		}
	}
	allowed := func(what string, in map[string]any) {
		t.Helper()
		if code, body := update(in); code != 200 {
			t.Errorf("%s: %d %s, want 200", what, code, body)
		}
	}
	refused("turning certificate checks off", map[string]any{"insecureTLS": true})
	refused("adding a CA", map[string]any{"caPem": caPEM})
	allowed("adding a CA with the key typed again", map[string]any{"caPem": caPEM, "apiKey": "sk-stays-safe-1234"})
	allowed("keeping the same CA", map[string]any{"caPem": caPEM})
	allowed("keeping the stored CA (absent)", map[string]any{})
	allowed("removing the CA", map[string]any{"caPem": ""})
	allowed("turning checks off while clearing the key", map[string]any{"insecureTLS": true, "apiKey": ""})
	allowed("turning checks back on", map[string]any{})
}
