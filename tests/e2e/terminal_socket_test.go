package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/sshx/sshtest"
	"github.com/llembas/lembas/tests/harness"
)

// terminalJS opens the terminal socket of chat from the page, as the panel
// does, types input once the prompt is there (its OSC 133;B mark), and
// resolves to JSON {ready, text} once the text contains want, or to
// {closed, text} if the socket closes first.
const terminalJS = `new Promise((resolve) => {
  const ws = new WebSocket(location.origin.replace(/^http/, 'ws') + '/api/terminal/%d?cols=90&rows=20');
  ws.binaryType = 'arraybuffer';
  const dec = new TextDecoder();
  let text = '', ready = null, sent = false;
  ws.onmessage = (e) => {
    if (typeof e.data === 'string') { const m = JSON.parse(e.data); if (m.type === 'ready') ready = m; return; }
    text += dec.decode(e.data, {stream: true});
    if (!sent && text.includes('\x1b]133;B\x07')) { sent = true; ws.send(new TextEncoder().encode(%s)); }
    if (text.includes(%s)) { ws.close(); resolve(JSON.stringify({ready, text})); }
  };
  ws.onclose = (e) => resolve(JSON.stringify({closed: e.code, text}));
})`

// A real Chromium opens a chat's terminal through the real server, to a
// shell on a real sshd: the page's CSP lets it connect, the browser's
// Origin and its SameSite=Lax session cookie are what the route requires,
// typing echoes, and a reload finds the same shell with its scrollback.
func TestTerminalSocketFromChromium(t *testing.T) {
	harness.Require(t, "chromium")
	sshd := sshtest.Start(t)
	if sshd.Password == "" && os.Getenv("CI") != "true" {
		t.Skip("sshd not run as root may not open a PTY")
	}
	bin := harness.Build(t, "", "CGO_ENABLED=0")
	_, base := harness.Serve(t, bin, t.TempDir())

	// A profile on the sshd, its key authorized and host key accepted.
	var prof struct {
		ID        int64  `json:"id"`
		PublicKey string `json:"publicKey"`
	}
	harness.API(t, base, "Agent.CreateProfile", &prof, map[string]any{"name": "box", "host": sshd.Host, "port": sshd.Port,
		"username": sshd.User, "auth": "key"})
	sshd.AuthorizeKey(prof.PublicKey)
	var scan struct {
		Fingerprint string `json:"fingerprint"`
	}
	harness.API(t, base, "Agent.ScanHostKey", &scan, prof.ID)
	harness.API(t, base, "Agent.AcceptHostKey", nil, prof.ID, scan.Fingerprint)

	// An agent chat on it (its first reply, from the fake endpoint, runs
	// no command).
	llm := fakellm.New(t)
	llm.Enqueue(fakellm.Stream("Ready."))
	harness.API(t, base, "Connections.Create", nil, map[string]any{"name": "Fake", "baseUrl": llm.URL()})
	var models []struct {
		ID int64 `json:"id"`
	}
	harness.API(t, base, "Models.Picker", &models)
	if len(models) == 0 {
		t.Fatal("no model")
	}
	var turn struct {
		Chat struct {
			ID int64 `json:"id"`
		} `json:"chat"`
	}
	harness.API(t, base, "Chats.Send", &turn, map[string]any{"modelId": models[0].ID, "content": "hello",
		"agent": map[string]any{"profile": prof.ID, "dir": "/tmp", "mode": "manual"}})
	chat := turn.Chat.ID

	ctx := harness.Browser(t)
	harness.BrowserAdmin(t, ctx, base)
	p := newTab(t, ctx, "terminal")
	p.do(chromedp.EmulateViewport(1280, 800), chromedp.Navigate(base+"/"))
	p.waitJS(`!!document.querySelector('#composer-input')`)

	got := p.await(fmt.Sprintf(terminalJS, chat, jsLiteral("echo from-chrom\"\"ium\r"), jsLiteral("\x07from-chromium\r\n")))
	var first struct {
		Ready map[string]any `json:"ready"`
	}
	json.Unmarshal([]byte(got), &first)
	if r := first.Ready; r == nil || r["marks"] != true || r["cols"] != 90.0 || r["rows"] != 20.0 {
		t.Fatalf("first socket: %s", got)
	}
	// A reload is a new viewer of the same shell: the scrollback first.
	p.do(chromedp.Reload())
	p.waitJS(`!!document.querySelector('#composer-input')`)
	got = p.await(fmt.Sprintf(terminalJS, chat, jsLiteral("echo again\r"), jsLiteral("\x07again\r\n")))
	if !strings.Contains(got, "from-chromium") {
		t.Fatalf("after a reload, no scrollback of the same shell: %s", got)
	}
}

// jsLiteral is s as a JavaScript string literal (JSON: Go's %q writes \a, which JavaScript reads as "a").
func jsLiteral(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
