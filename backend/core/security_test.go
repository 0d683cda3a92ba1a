package core

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/ids"
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

// An endpoint that echoes the request headers in its errors must not show a
// member the connection's key or extra headers, nor get them stored in
// messages.error, the connection's last error or the log.
func TestEchoedSecretsAreHidden(t *testing.T) {
	const key, orgValue = "sk-household-0123456789abcdef", "org-hidden-value-77"
	echo := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" && r.URL.Query().Get("fail") == "" {
			fmt.Fprint(rw, `{"data":[{"id":"echo-model"}]}`)
			return
		}
		b, _ := json.Marshal(r.Header)
		rw.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(rw, `{"error":{"message":%q}}`, "could not serve "+string(b))
	}))
	defer echo.Close()
	w := newWeb(t, webOptions{})
	admin, member := newClient(), newClient()
	w.signUp(admin, "gandalf", "you-shall-not-pass")
	w.call(admin, "Admin.SetSettings", map[string]string{"signUpMode": "open"})
	code, body := w.call(admin, "Connections.Create", map[string]any{"name": "echo", "baseUrl": echo.URL + "/v1",
		"apiKey": key, "headers": map[string]string{"X-Org": orgValue}})
	if code != 200 {
		t.Fatalf("create: %d %s", code, body)
	}
	var conn struct{ ID int64 }
	json.Unmarshal([]byte(body), &conn)
	w.signUp(member, "sam", "po-tay-toes-boiled")
	_, body = w.call(member, "Models.Picker")
	var models []struct{ ID int64 }
	json.Unmarshal([]byte(body), &models)
	if len(models) != 1 {
		t.Fatalf("picker: %s", body)
	}
	code, body = w.call(member, "Chats.Send", map[string]any{"modelId": models[0].ID, "content": "hello"})
	if code != 200 {
		t.Fatalf("send: %d %s", code, body)
	}
	var turn struct{ Chat struct{ ID int64 } }
	json.Unmarshal([]byte(body), &turn)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := w.c.Gen.Wait(ctx, ids.ChatID(turn.Chat.ID)); err != nil {
		t.Fatal(err)
	}
	var stored string
	if err := w.c.DB.Read().QueryRow(`SELECT error FROM messages WHERE chat_id = ? AND role = 'assistant'`, turn.Chat.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stored, "could not serve") {
		t.Errorf("the stored error lost the endpoint's words: %q", stored)
	}
	_, messages := w.call(member, "Chats.Messages", turn.Chat.ID, 0, 50)
	// Test connection, against a model list that fails with the echo.
	_, test := w.call(admin, "Connections.TestDraft", map[string]any{"name": "echo", "baseUrl": echo.URL + "/v1?fail=1",
		"apiKey": key, "headers": map[string]string{"X-Org": orgValue}})
	if !strings.Contains(test, "could not serve") {
		t.Errorf("Test connection lost the endpoint's words: %s", test)
	}
	for what, text := range map[string]string{"messages.error": stored, "Chats.Messages": messages,
		"Connections.TestDraft": test, "log": w.log.String()} {
		for _, secret := range []string{key[:10], key[len(key)-8:], orgValue} {
			if strings.Contains(text, secret) {
				t.Errorf("%s holds %q:\n%s", what, secret, text)
			}
		}
	}
}
