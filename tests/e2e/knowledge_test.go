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

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/tests/harness"
)

// The household's papers: a Markdown document whose sentence only the
// knowledge search can bring to the model.
const (
	libraryDocName = "house-notes.md"
	libraryDocText = "# House notes\n\nThe spare key hides under the blue flowerpot by the kitchen door.\n"
	libraryFact    = "blue flowerpot"
)

// TestLibraryKnowledgeInChromium: a knowledge base made and filled in the
// Library's Knowledge tab (upload by the picker, search), checked for
// overflow in both themes and on a phone; then a chat whose model calls
// knowledge_search shows the search step and the answer, and the request
// after the call carried the document's text in the tool result; the
// chat's knowledge scope is set from the composer; a document attached
// from the library is a chip, is sent, and the message keeps it after the
// document is deleted.
func TestLibraryKnowledgeInChromium(t *testing.T) {
	a := serveChatApp(t)
	a.llm.SetDefault(fakellm.Func(func(r fakellm.Request) fakellm.Reply {
		body := string(r.Body)
		switch {
		case strings.Contains(body, "You write titles"):
			return fakellm.Stream("The spare key")
		case strings.Contains(body, `"role":"tool"`):
			return fakellm.Stream("It is under the blue flowerpot, says your house notes.")
		case strings.Contains(body, "Where is the spare key?"):
			return fakellm.NewStream().Content("Let me look. ").
				ToolCall(0, "call_1", "knowledge_search", `{"query":"spare key"}`).Finish("tool_calls").Reply()
		}
		return fakellm.Stream("Read it.")
	}))
	a.open(t, "")
	var models []struct{ ID int64 }
	harness.API(t, a.base, "Models.Picker", &models)
	if len(models) == 0 {
		t.Fatal("no models")
	}
	harness.API(t, a.base, "Models.Update", nil, models[0].ID, map[string]any{"capabilities": map[string]any{"tools": true}})

	doc := filepath.Join(t.TempDir(), libraryDocName)
	if err := os.WriteFile(doc, []byte(libraryDocText), 0o600); err != nil {
		t.Fatal(err)
	}

	t.Run("a base in the Knowledge tab", func(t *testing.T) {
		a.t = t
		a.do(chromedp.Navigate(a.base + "/#/library/knowledge"))
		a.waitJS(`!!document.querySelector('#kb-create')`)
		a.click(`#kb-create`)
		a.waitJS(`!!document.querySelector('#kb-new-name')`)
		a.fill(`#kb-new-name`, "Household papers")
		a.fill(`#kb-new-description`, "Where things are.")
		a.click(`#kb-save`)
		a.waitJS(`document.querySelector('#kb-title')?.textContent === 'Household papers'`)
		a.do(chromedp.SetUploadFiles(chromedp.CSS(`#kb-file`), []string{doc}))
		a.waitJS(`[...document.querySelectorAll('#kb-docs .kb-doc-name')].some((e) => e.textContent === '` + libraryDocName + `')`)
		a.waitJS(`!document.querySelector('#kb-uploads')`)
		// The list says how many documents the base holds.
		a.waitJS(`(document.querySelector('#kb-list .model-row-sub')?.textContent || '').includes('1 document')`)
		// The download link serves the original file.
		href := a.str(`document.querySelector('#kb-docs .kb-doc-name').getAttribute('href')`)
		got := a.await(`fetch(` + jsString(href) + `).then(async (r) => r.status + ' ' + (r.headers.get('content-disposition') || '').split(';')[0] + ' ' + await r.text())`)
		if !strings.HasPrefix(got, "200 attachment") || !strings.Contains(got, libraryFact) {
			t.Errorf("downloading the document: %.200q", got)
		}
		// In a browser the link stays a plain download (the desktop window
		// asks the app instead: tests/desktop/document_test.go).
		dir := t.TempDir()
		if _, err := chromedp.Call(a.ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir}); err != nil {
			t.Fatalf("allow downloads: %v", err)
		}
		a.click(`#kb-docs .kb-doc-name`)
		if got := downloaded(t, dir, libraryDocName); string(got) != libraryDocText {
			t.Errorf("the downloaded document holds %.200q", got)
		}
		// Files dropped on the base: a text file joins it; an image is not
		// a document, and the upload says so where it was dropped.
		a.js(`(() => {
			const dt = new DataTransfer();
			dt.items.add(new File(['Bread is in the blue bin.\n'], 'pantry.txt', { type: 'text/plain' }));
			dt.items.add(new File([new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13])], 'photo.png', { type: 'image/png' }));
			const zone = document.querySelector('#kb-drop');
			zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
			zone.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
			return true;
		})()`)
		a.waitJS(`[...document.querySelectorAll('#kb-docs .kb-doc-name')].some((e) => e.textContent === 'pantry.txt')`)
		a.waitJS(`(document.querySelector('#kb-uploads .kb-upload.is-error')?.innerText || '').includes('photo.png')`)
		if msg := a.str(`document.querySelector('#kb-uploads .kb-upload-error').textContent`); len(msg) < 10 {
			t.Errorf("the refused image says %q", msg)
		}
		a.shot("knowledge-drop")
		a.click(`#kb-uploads .kb-upload.is-error button`)
		a.waitJS(`!document.querySelector('#kb-uploads')`)
		// Deleting a document asks first.
		a.click(`.kb-doc-delete[aria-label="Delete pantry.txt"]`)
		a.confirmDialog("Delete document")
		a.waitJS(`![...document.querySelectorAll('#kb-docs .kb-doc-name')].some((e) => e.textContent === 'pantry.txt')`)
		// A search over the base marks the words found.
		a.fill(`#kb-search`, "flowerpot")
		a.waitJS(`(document.querySelector('#kb-hits mark')?.textContent || '').toLowerCase() === 'flowerpot'`)
		for _, theme := range []string{"moria", "shire"} {
			a.js(fmt.Sprintf(`document.documentElement.dataset.theme = %q, true`, theme))
			a.shot("knowledge-" + theme)
		}
	})

	t.Run("the Knowledge tab on a phone", func(t *testing.T) {
		a.t = t
		a.do(chromedp.EmulateViewport(390, 844))
		defer a.do(chromedp.EmulateViewport(1280, 800))
		for _, view := range []struct{ name, sub, ready string }{
			{"list", "", `!!document.querySelector('#kb-list')`},
			{"base", "1", `!!document.querySelector('#kb-docs')`},
			{"new", "new", `!!document.querySelector('#kb-new-name')`},
		} {
			hash := "#/library/knowledge"
			if view.sub != "" {
				hash += "/" + view.sub
			}
			a.js(fmt.Sprintf(`location.hash = %q, true`, hash))
			a.waitJS(view.ready)
			a.waitJS(`!document.querySelector('#main .loading-line')`)
			for _, theme := range []string{"moria", "shire"} {
				a.js(fmt.Sprintf(`document.documentElement.dataset.theme = %q, true`, theme))
				a.js(`window.scrollTo(0, 0), true`)
				if bad := a.str(overflowJS); bad != "" {
					t.Errorf("%s (%s):\n%s", view.name, theme, bad)
				}
				a.shot("knowledge-phone-" + view.name + "-" + theme)
			}
		}
	})

	t.Run("a base shared with you is read-only", func(t *testing.T) {
		a.t = t
		var sam struct{ ID int64 }
		harness.API(t, a.base, "Admin.CreateUser", &sam, map[string]any{"username": "samwise", "displayName": "Samwise Gamgee", "password": "potatoes-and-rope"})
		sc := harness.Login(t, a.base, "samwise", "potatoes-and-rope")
		var garden struct{ ID int64 }
		harness.APIAs(t, sc, a.base, "Library.CreateBase", &garden, map[string]any{"name": "Samwise's garden"})
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		mw.WriteField("base", fmt.Sprint(garden.ID))
		fw, _ := mw.CreateFormFile("file", "potatoes.txt")
		fw.Write([]byte("Plant the potatoes in March.\n"))
		mw.Close()
		resp, err := sc.Post(a.base+"/api/library/documents", mw.FormDataContentType(), &body)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("Samwise's upload: %d", resp.StatusCode)
		}
		var me struct{ ID int64 }
		harness.API(t, a.base, "Account.Me", &me)
		harness.APIAs(t, sc, a.base, "Library.SetShares", nil, map[string]any{"kind": "base", "id": garden.ID, "to": []map[string]any{{"userId": me.ID}}})

		// Shares reach the reader's page when it is opened.
		a.do(chromedp.Navigate(a.base+"/#/library/knowledge"), chromedp.Reload())
		a.waitJS(`(document.querySelector('#kb-shared')?.innerText || '').includes("Samwise's garden")`)
		a.click(`#kb-shared .model-row-main`)
		a.waitJS(`(document.querySelector('#kb-owner')?.textContent || '').includes('Samwise Gamgee') && !!document.querySelector('#kb-docs')`)
		if a.bool(`!!document.querySelector('#kb-upload, #kb-file, .kb-doc-delete, #kb-delete, #kb-rename, [id^=share-base-]')`) {
			t.Error("a base shared with the reader offers changes (upload, delete, rename or share)")
		}
		if !a.bool(`!!document.querySelector('#kb-readonly')`) {
			t.Error("the shared base does not say it is read-only")
		}
		href := a.str(`document.querySelector('#kb-docs .kb-doc-name').getAttribute('href')`)
		if got := a.await(`fetch(` + jsString(href) + `).then(async (r) => r.status + ' ' + await r.text())`); !strings.Contains(got, "200 Plant the potatoes") {
			t.Errorf("downloading a shared document: %.100q", got)
		}
		a.shot("knowledge-shared")
	})

	t.Run("a reply searches the base", func(t *testing.T) {
		a.t = t
		a.do(chromedp.Navigate(a.base + "/#/"))
		a.waitJS(`!!document.querySelector('#composer-input') && !!document.querySelector('#composer-knowledge')`)
		if got := a.str(`document.querySelector('#composer-knowledge').innerText`); !strings.Contains(got, "All bases") {
			t.Errorf("the knowledge control of a new chat reads %q", got)
		}
		n := len(a.llm.Requests())
		a.send("Where is the spare key?")
		a.waitJS(lastReply + `.includes('under the blue flowerpot, says')`)
		a.waitReplyIdle()
		// The search step is in the transcript: the call and its result.
		a.do(chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('.msg-assistant details').forEach((d) => { d.open = true; })`))
		a.waitJS(`(document.querySelector('.msg-assistant .tool-activity')?.innerText || '').includes('knowledge_search')`)
		a.waitJS(`(document.querySelector('.msg-assistant .tool-result-text')?.textContent || '').includes('` + libraryFact + `')`)
		a.shot("knowledge-reply")
		var carried bool
		for _, r := range a.llm.Requests()[n:] {
			msgs, _ := r.JSON["messages"].([]any)
			for _, m := range msgs {
				mm, _ := m.(map[string]any)
				if c, _ := mm["content"].(string); mm["role"] == "tool" && strings.Contains(c, libraryFact) {
					carried = true
				}
			}
		}
		if !carried {
			t.Errorf("no request after the call carried the document's text in a tool result")
		}

		// The chat's scope, from the composer: only the one base.
		a.click(`#composer-knowledge`)
		a.waitJS(`!!document.querySelector('.kb-scope-panel')`)
		a.click(`.kb-scope-list input[type=checkbox]`)
		chatID := a.js(`Number(location.hash.split('/').pop())`)
		var scope struct {
			Scoped bool
			Bases  []struct{ ID int64 }
		}
		deadline := time.Now().Add(30 * time.Second)
		for harness.API(t, a.base, "Library.ChatScope", &scope, chatID); !scope.Scoped || len(scope.Bases) != 1; harness.API(t, a.base, "Library.ChatScope", &scope, chatID) {
			if time.Now().After(deadline) {
				t.Fatalf("the chat's scope is %+v after choosing one base", scope)
			}
			time.Sleep(50 * time.Millisecond)
		}
		a.waitJS(`document.querySelector('#composer-knowledge').innerText.includes('Household papers')`)
		a.shot("knowledge-scope")
		a.keys("\x1b") // Escape closes the panel
	})

	t.Run("attach from library", func(t *testing.T) {
		a.t = t
		a.do(chromedp.Navigate(a.base + "/#/"))
		a.waitJS(`!!document.querySelector('#composer-library')`)
		a.click(`#composer-library`)
		a.waitJS(`!!document.querySelector('#kb-attach-search')`)
		a.fill(`#kb-attach-search`, "flowerpot")
		a.waitJS(`!!document.querySelector('#kb-attach-docs .kb-attach-doc')`)
		a.click(`#kb-attach-docs .kb-attach-doc`)
		a.waitJS(`[...document.querySelectorAll('.composer .attach-chip.is-ready .attach-name')].some((e) => e.textContent === '` + libraryDocName + `')`)
		a.shot("attach-from-library")
		// A new chat's scope goes with its first message.
		a.click(`#composer-knowledge`)
		a.waitJS(`!!document.querySelector('.kb-scope-panel')`)
		a.click(`.kb-scope-list input[type=checkbox]`)
		a.waitJS(`document.querySelector('#composer-knowledge').innerText.includes('Household papers')`)
		a.keys("\x1b")
		n := len(a.llm.Requests())
		a.send("What does this say?")
		a.waitJS(lastReply + `.includes('Read it.')`)
		a.waitReplyIdle()
		var scope struct {
			Scoped bool
			Bases  []struct{ Name string }
		}
		harness.API(t, a.base, "Library.ChatScope", &scope, a.js(`Number(location.hash.split('/').pop())`))
		if !scope.Scoped || len(scope.Bases) != 1 || scope.Bases[0].Name != "Household papers" {
			t.Errorf("the new chat's scope is %+v; want only Household papers", scope)
		}
		var sentText bool
		for _, r := range a.llm.Requests()[n:] {
			if strings.Contains(string(r.Body), libraryFact) && strings.Contains(string(r.Body), "What does this say?") {
				sentText = true
			}
		}
		if !sentText {
			t.Error("the request of the message did not carry the attached document's text")
		}

		// The document is deleted from its base; the message keeps its copy.
		var docs []struct{ ID int64 }
		harness.API(t, a.base, "Library.Documents", &docs, 1)
		if len(docs) != 1 {
			t.Fatalf("documents of the base: %+v", docs)
		}
		harness.API(t, a.base, "Library.DeleteDocument", nil, docs[0].ID)
		a.do(chromedp.Reload())
		a.waitJS(`[...document.querySelectorAll('.msg-user .attach-chip .attach-name')].some((e) => e.textContent === '` + libraryDocName + `')`)
		href := a.str(`document.querySelector('.msg-user .attach-chip a.attach-link').getAttribute('href')`)
		got := a.await(`fetch(` + jsString(href) + `).then(async (r) => r.status + ' ' + await r.text())`)
		if !strings.HasPrefix(got, "200 ") || !strings.Contains(got, libraryFact) {
			t.Errorf("the sent copy after the document was deleted: %.200q", got)
		}
	})
	a.t = t
	// The image dropped on the base is refused on purpose (400).
	a.pe.check(t, "status of 400 (Bad Request) "+a.base+"/api/library/documents")
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	return fmt.Sprintf("%q", s)
}
