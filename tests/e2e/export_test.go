package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/tests/harness"
)

// downloaded waits for the file name to be complete in dir and returns its
// bytes.
func downloaded(t *testing.T, dir, name string) []byte {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			return b
		}
		time.Sleep(100 * time.Millisecond)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	t.Fatalf("no download %q in %s (found %q)", name, dir, names)
	return nil
}

// TestExportInChromium exports a chat from its header menu as Markdown and
// with /export as JSON, after choosing an older version of its reply: the
// downloaded files hold the chosen path, not the newest version.
func TestExportInChromium(t *testing.T) {
	a := newChatApp(t)
	a.llm.SetDefault(fakellm.Stream("Tea / second breakfast"))
	dir := t.TempDir()
	if _, err := chromedp.Call(a.ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir}); err != nil {
		t.Fatalf("allow downloads: %v", err)
	}

	a.llm.Enqueue(fakellm.Stream("the first answer"))
	a.send("Where is the tea?")
	a.waitJS(lastReply + `.includes('the first answer')`)
	a.waitReplyIdle()
	a.llm.Enqueue(fakellm.Stream("the newer answer"))
	a.clickXPath(`//article[contains(@class,'msg-assistant')][last()]//button[contains(., 'Regenerate')]`)
	a.waitJS(lastReply + `.includes('the newer answer')`)
	a.waitReplyIdle()
	a.click(`.msg-assistant .msg-versions button[aria-label="Previous version"]`)
	a.waitJS(versionsOf("assistant", "1/2"))
	a.waitJS(`document.querySelector('.chat-title-text')?.innerText === 'Tea / second breakfast'`)

	a.click(`.chat-header button[aria-label="Chat actions"]`)
	a.waitJS(`!!document.querySelector('.chat-header [role="menu"]')`)
	// A viewport capture: the full-page shot resizes the window, which
	// closes menus.
	if png, err := chromedp.Call(a.ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{}); err == nil {
		os.WriteFile(filepath.Join(harness.ArtifactDir(t), t.Name()+"-menu.png"), png.Data, 0o644)
	}
	a.clickXPath(`//div[@role='menu']//button[@role='menuitem'][.='Export as Markdown']`)
	name := chat.ExportName("Tea / second breakfast", chat.ExportMarkdown)
	if name != "Tea - second breakfast.md" {
		t.Fatalf("the expected name is %q", name)
	}
	md := string(downloaded(t, dir, name))
	for _, s := range []string{"# Tea / second breakfast\n", "## User\n\nWhere is the tea?", "## Assistant", "the first answer"} {
		if !strings.Contains(md, s) {
			t.Errorf("the Markdown download lacks %q:\n%s", s, md)
		}
	}
	if strings.Contains(md, "the newer answer") {
		t.Errorf("the Markdown download holds the version not chosen:\n%s", md)
	}

	// /export json from the composer: the same chat, as JSON.
	a.click("#composer-input")
	a.typeInBox("/export json")
	a.waitJS(`[...document.querySelectorAll('#composer-menu li')].map((li) => li.innerText).join('|').includes('json')`)
	a.typeInBox(kb.Enter)
	a.waitJS(`document.querySelector('#composer-input').value === ''`)
	var x chat.ExportedChat
	raw := downloaded(t, dir, chat.ExportName("Tea / second breakfast", chat.ExportJSON))
	if err := json.Unmarshal(raw, &x); err != nil {
		t.Fatalf("the JSON download: %v\n%s", err, raw)
	}
	if x.Version != chat.ExportVersion || len(x.Messages) != 2 || x.Messages[1].Content != "the first answer" {
		t.Errorf("the JSON download: %s", raw)
	}
	if a.bool(`[...document.querySelectorAll('.msg-user .msg-text')].some((m) => m.textContent.includes('/export'))`) {
		t.Errorf("/export json was sent as a message")
	}

	// On a phone the menu's button is still on screen beside the model
	// picker.
	a.do(chromedp.EmulateViewport(375, 740))
	a.waitJS(`(() => { const b = document.querySelector('.chat-header button[aria-label="Chat actions"]'); if (!b) return false;
		const r = b.getBoundingClientRect(); return r.width > 0 && r.right <= window.innerWidth && r.left >= 0; })()`)
	a.shot("phone")
}
