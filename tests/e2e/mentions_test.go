package e2e

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/sshx/sshtest"
	"github.com/llembas/lembas/tests/harness"
)

// TestMentionsInChromium: in an agent chat on a real sshd, `@` offers the
// project's files (from the cached listing) and the library's documents;
// choosing one keeps @name in the sentence and attaches the contents as a
// chip whose title says where it came from; the model's request carries
// each file in a tag with its path and source. A hostile file name shows
// as text.
func TestMentionsInChromium(t *testing.T) {
	sshd := sshtest.Start(t)
	a := serveChatApp(t)
	a.llm.SetDefault(fakellm.Func(func(r fakellm.Request) fakellm.Reply {
		if strings.Contains(string(r.Body), "You write titles") {
			return fakellm.Stream("Mentions")
		}
		return fakellm.Stream("Read them.")
	}))
	a.open(t, "")

	// The project on the host: a file to refer to, and one with a hostile name.
	const hostileName = `<img src=x onerror="window.__pwned=1">.go`
	dir := filepath.Join(sshd.Home, fmt.Sprintf("mentions-%d", time.Now().UnixNano()))
	if err := os.MkdirAll(filepath.Join(dir, "cmd"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.WriteFile(filepath.Join(dir, "cmd", "shire.go"), []byte("package main // the shire\n"), 0o644)
	os.WriteFile(filepath.Join(dir, hostileName), []byte("package x\n"), 0o644)

	// The SSH connection, through the API.
	var p struct {
		ID        int64
		PublicKey string
	}
	harness.API(t, a.base, "Agent.CreateProfile", &p, map[string]any{"name": "box", "host": sshd.Host, "port": sshd.Port,
		"username": sshd.User, "auth": "key"})
	sshd.AuthorizeKey(p.PublicKey)
	var scan struct{ Fingerprint string }
	harness.API(t, a.base, "Agent.ScanHostKey", &scan, p.ID)
	harness.API(t, a.base, "Agent.AcceptHostKey", nil, p.ID, scan.Fingerprint)

	// A library document.
	var b struct{ ID int64 }
	harness.API(t, a.base, "Library.CreateBase", &b, map[string]any{"name": "Recipes", "description": ""})
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("base", fmt.Sprint(b.ID))
	fw, _ := mw.CreateFormFile("file", "scones.md")
	fw.Write([]byte("Scones want cold butter.\n"))
	mw.Close()
	resp, err := harness.AdminClient(t, a.base).Post(a.base+"/api/library/documents", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("upload: %d", resp.StatusCode)
	}

	// An agent chat on the project.
	var models []struct{ ID int64 }
	harness.API(t, a.base, "Models.Picker", &models)
	if len(models) == 0 {
		t.Fatal("no models")
	}
	var turn struct{ Chat struct{ ID int64 } }
	harness.API(t, a.base, "Chats.Send", &turn, map[string]any{"content": "hello", "modelId": models[0].ID,
		"agent": map[string]any{"profile": p.ID, "dir": dir, "mode": "manual"}})
	a.do(chromedp.Navigate(fmt.Sprintf("%s/#/chat/%d", a.base, turn.Chat.ID)), chromedp.Reload())
	a.waitJS(`!!document.querySelector('#composer-input') && !!document.querySelector('.msg-assistant')`)
	a.waitReplyIdle()

	menuHas := func(label string) string {
		return `[...document.querySelectorAll('#composer-menu .composer-menu-item .composer-menu-label')].some((e) => e.textContent === ` + jsString(label) + `)`
	}
	choose := func(label string) {
		a.js(`(() => { const li = [...document.querySelectorAll('#composer-menu .composer-menu-item')].find((e) => e.querySelector('.composer-menu-label').textContent === ` + jsString(label) + `); li.dispatchEvent(new PointerEvent('pointerdown', { bubbles: true, cancelable: true })); return true; })()`)
	}
	typeIn := func(text string) {
		a.do(chromedp.SendKeys(chromedp.CSS("#composer-input"), text))
	}

	t.Run("@ offers the project's files once listed", func(t *testing.T) {
		a.t = t
		a.click(`#composer-input`)
		// The listing is walked in the background; typing again asks again.
		deadline := time.Now().Add(90 * time.Second)
		for {
			typeIn("fix @shi")
			if a.within(5*time.Second, menuHas("shire.go")) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the menu never offered shire.go: %s", a.str(`document.querySelector('#composer-menu')?.innerText || 'no menu'`))
			}
			a.js(`(() => { const el = document.querySelector('#composer-input'); el.value = ''; el.dispatchEvent(new Event('input', { bubbles: true })); return true; })()`)
		}
		a.shot("mentions-menu")
		if l := a.str(`document.querySelector('#composer-menu').getAttribute('aria-label')`); l != "References" {
			t.Errorf("the @ menu is called %q, not References", l)
		}
		choose("shire.go")
		a.waitJS(`document.querySelector('#composer-input').value === 'fix @shire.go '`)
		a.waitJS(`[...document.querySelectorAll('.composer .attach-chip')].some((c) => c.title.includes('cmd/shire.go') && c.title.includes(` + jsString(sshd.User+"@") + `))`)
	})

	t.Run("@ offers library documents", func(t *testing.T) {
		a.t = t
		typeIn("and @scon")
		a.waitJS(menuHas("scones.md"))
		choose("scones.md")
		a.waitJS(`document.querySelector('#composer-input').value === 'fix @shire.go and @scones.md '`)
		a.waitJS(`[...document.querySelectorAll('.composer .attach-chip')].some((c) => c.title.includes('scones.md') && c.title.includes('Recipes'))`)
		a.shot("mentions-chips")
	})

	t.Run("a hostile name is text", func(t *testing.T) {
		a.t = t
		typeIn("@img")
		a.waitJS(menuHas(hostileName))
		if a.bool(`!!document.querySelector('#composer-menu img') || !!window.__pwned`) {
			t.Fatal("a file name became markup")
		}
		a.keys(kb.Escape)
		a.js(`(() => { const el = document.querySelector('#composer-input'); const v = el.value.replace(/@img$/, ''); el.value = v; el.dispatchEvent(new Event('input', { bubbles: true })); return true; })()`)
	})

	t.Run("the request carries where each came from", func(t *testing.T) {
		a.t = t
		n := len(a.llm.Requests())
		a.click(`#composer-button`)
		pollUntil(t, "the reply's request", func() bool {
			for _, r := range a.llm.Requests()[n:] {
				if strings.Contains(string(r.Body), "the shire") {
					return true
				}
			}
			return false
		})
		var got string
		for _, r := range a.llm.Requests()[n:] {
			if strings.Contains(string(r.Body), "the shire") {
				got = string(r.Body)
			}
		}
		wantFile := fmt.Sprintf(`\u003cdocument name=\"shire.go\" path=\"%s\" source=\"%s@%s:%s\"\u003e`, filepath.Join(dir, "cmd", "shire.go"), sshd.User, sshd.Host, dir)
		wantDoc := `\u003cdocument name=\"scones.md\" path=\"scones.md\" source=\"Recipes\"\u003e`
		for _, want := range []string{wantFile, wantDoc} {
			if !strings.Contains(got, want) && !strings.Contains(got, strings.NewReplacer(`\u003c`, "<", `\u003e`, ">").Replace(want)) {
				t.Errorf("the request lacks %s:\n%.2000s", want, got)
			}
		}
	})
}

// TestMentionNeedsUploadInChromium: `@` attaches a file, so a member who
// may not upload is told so in the menu at once, instead of being offered
// documents whose chip the server then refuses.
func TestMentionNeedsUploadInChromium(t *testing.T) {
	a := serveChatApp(t)
	harness.API(t, a.base, "Connections.Create", nil, map[string]any{"name": "Fake", "baseUrl": a.llm.URL()})
	harness.API(t, a.base, "Admin.SetBaseline", nil, []string{"chat.create", "library.use"})
	harness.API(t, a.base, "Admin.CreateUser", nil, map[string]any{"username": "pippin", "displayName": "Pippin", "password": "second-breakfast"})
	ctx := harness.Browser(t)
	harness.BrowserLogin(t, ctx, a.base, "pippin", "second-breakfast")
	p := &chatApp{tab: newTab(t, ctx, "member"), base: a.base, llm: a.llm}
	p.do(chromedp.EmulateViewport(1280, 800), chromedp.Navigate(a.base+"/"))
	p.waitJS(`!!document.querySelector('#composer-input')`)
	p.click("#composer-input")
	p.typeInBox("@")
	p.waitJS(`(document.querySelector('#composer-menu')?.innerText || '').includes('Attaching files is not allowed for your account')`)
}
