package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/tests/harness"
)

// TestLibraryPagesFollowChanges: an open Library page follows changes made
// elsewhere without a reload. The Memories tab open in a second window
// lists the memory a reply adds (memory_add) in the first; Samwise's
// Knowledge tab lists a base the moment it is shared with him, and drops it
// when it no longer is; a link to a base he cannot see says so instead of
// showing nothing.
func TestLibraryPagesFollowChanges(t *testing.T) {
	llm := fakellm.New(t)
	var noteID int64
	llm.SetDefault(fakellm.Func(func(r fakellm.Request) fakellm.Reply {
		// What the newest message asks for.
		msgs, _ := r.JSON["messages"].([]any)
		last := map[string]any{}
		if len(msgs) > 0 {
			last, _ = msgs[len(msgs)-1].(map[string]any)
		}
		content, _ := last["content"].(string)
		switch {
		case strings.Contains(string(r.Body), "You write titles"):
			return fakellm.Stream("Ponies")
		case last["role"] == "tool":
			return fakellm.Stream("Noted.")
		case strings.Contains(content, "brush"):
			return fakellm.NewStream().ToolCall(0, "call_2", "notes_write",
				fmt.Sprintf(`{"id":%d,"body":"- apples\n- a good brush"}`, noteID)).Finish("tool_calls").Reply()
		}
		return fakellm.NewStream().ToolCall(0, "call_1", "memory_add", `{"text":"The person's pony is called Bill."}`).Finish("tool_calls").Reply()
	}))
	var samwise int64
	u := newAdminUI(t, 1280, 900, func(base string) {
		harness.API(t, base, "Connections.Create", nil, map[string]any{"name": "Fake", "baseUrl": llm.URL()})
		var models []struct{ ID int64 }
		harness.API(t, base, "Models.Picker", &models)
		if len(models) == 0 {
			t.Fatal("no models")
		}
		harness.API(t, base, "Models.Update", nil, models[0].ID, map[string]any{"capabilities": map[string]any{"tools": true}})
		var nu struct{ ID int64 }
		harness.API(t, base, "Admin.CreateUser", &nu, map[string]any{"username": "samwise", "displayName": "Samwise Gamgee", "password": "potatoes-and-rope"})
		samwise = nu.ID
	})
	u.waitJS(`!!document.querySelector('#composer-input')`)

	// A second window of the same person, on the Memories tab.
	ctx := harness.Browser(t)
	harness.BrowserAdmin(t, ctx, u.base)
	m := newTab(t, ctx, "memories")
	m.do(chromedp.EmulateViewport(1280, 900), chromedp.Navigate(u.base+"/#/library/memories"))
	m.waitJS(`!!document.querySelector('#memories-empty')`)

	u.send("Remember that my pony is called Bill.")
	u.waitJS(`document.querySelectorAll('.msg-assistant').length === 1 && document.querySelector('.msg-assistant').innerText.includes('Noted.')`)
	m.waitJS(`(document.querySelector('#memory-list')?.innerText || '').includes("The person's pony is called Bill.")`)

	// The same window with a note open in its editor: the reply's
	// notes_write shows there, so a later Save does not put the old text back.
	var note struct{ ID int64 }
	harness.API(t, u.base, "Library.CreateNote", &note, map[string]any{"title": "Bill's needs", "body": "- apples"})
	noteID = note.ID
	m.js(fmt.Sprintf(`location.hash = '#/library/notes/%d', true`, note.ID))
	m.waitJS(`document.querySelector('#note-body')?.value === '- apples'`)
	u.send("Add a brush to Bill's note.")
	u.waitJS(`document.querySelectorAll('.msg-assistant').length === 2 && document.querySelectorAll('.msg-assistant')[1].innerText.includes('Noted.')`)
	m.waitJS(`document.querySelector('#note-body')?.value === '- apples\n- a good brush' && !document.querySelector('#note-unsaved')`)

	// Samwise, on his Knowledge tab, with nothing shared yet.
	s := newTab(t, harness.Browser(t), "samwise")
	harness.BrowserLogin(t, s.ctx, u.base, "samwise", "potatoes-and-rope")
	s.do(chromedp.EmulateViewport(1280, 900), chromedp.Navigate(u.base+"/#/library/knowledge"))
	s.waitJS(`!!document.querySelector('#main .empty-state')`)

	var maps struct{ ID int64 }
	harness.API(t, u.base, "Library.CreateBase", &maps, map[string]any{"name": "Maps of the Shire"})
	// A link to a base he cannot see says so.
	s.js(fmt.Sprintf(`location.hash = '#/library/knowledge/%d', true`, maps.ID))
	s.waitJS(`!!document.querySelector('#kb-missing')`)
	// A key pressed, as someone using the keyboard would: programmatic focus
	// then shows a ring where it may (:focus-visible).
	s.do(chromedp.KeyEvent(kb.Escape))
	harness.API(t, u.base, "Library.SetShares", nil, map[string]any{"kind": "base", "id": maps.ID, "to": []map[string]any{{"userId": samwise}}})
	s.waitJS(`(document.querySelector('#kb-shared')?.innerText || '').includes('Maps of the Shire')`)
	s.waitJS(`(document.querySelector('#kb-owner')?.textContent || '').includes('admin') && !document.querySelector('#kb-missing')`)
	// The base's heading takes focus as it opens, without a ring (it is
	// not a control).
	s.waitJS(`document.activeElement?.id === 'kb-title'`)
	if ring := s.str(`getComputedStyle(document.querySelector('#kb-title')).outlineStyle`); ring != "none" {
		t.Errorf("the focused heading of a base shows an outline (%s)", ring)
	}
	harness.API(t, u.base, "Library.SetShares", nil, map[string]any{"kind": "base", "id": maps.ID, "to": []map[string]any{}})
	s.waitJS(`!document.querySelector('#kb-shared') && !!document.querySelector('#kb-missing')`)
	s.shot("kb-missing")

	// A note shared with him, open: its owner's edit shows; unshared, the
	// pane says it is gone rather than "note not found".
	var road struct{ ID int64 }
	harness.API(t, u.base, "Library.CreateNote", &road, map[string]any{"title": "The road", "body": "Goes ever on."})
	harness.API(t, u.base, "Library.SetShares", nil, map[string]any{"kind": "note", "id": road.ID, "to": []map[string]any{{"userId": samwise}}})
	s.js(fmt.Sprintf(`location.hash = '#/library/notes/%d', true`, road.ID))
	s.waitJS(`(document.querySelector('#note-rendered')?.textContent || '').includes('Goes ever on.')`)
	harness.API(t, u.base, "Library.UpdateNote", nil, road.ID, map[string]any{"body": "Goes ever on and on."})
	s.waitJS(`(document.querySelector('#note-rendered')?.textContent || '').includes('Goes ever on and on.')`)
	harness.API(t, u.base, "Library.SetShares", nil, map[string]any{"kind": "note", "id": road.ID, "to": []map[string]any{}})
	s.waitJS(`!!document.querySelector('#note-missing') && !document.querySelector('#notes-list')`)
	u.pe.check(t)
}

// TestMemoryKeys: a memory is one line, so Enter adds it (and saves an
// edit), and Escape leaves an edit unchanged, focus back on its Edit.
func TestMemoryKeys(t *testing.T) {
	u, _ := libraryUI(t, 1280, 900, "memories")
	u.click(`#memory-new`)
	u.do(chromedp.SendKeys(`#memory-new`, "I walk everywhere."), chromedp.KeyEvent(kb.Enter))
	u.waitJS(`(document.querySelector('#memory-list')?.innerText || '').includes('I walk everywhere.') && document.querySelector('#memory-new').value === ''`)
	u.click(`#memory-list button[id$="-edit"]`)
	u.waitJS(`document.activeElement?.matches('#memory-list textarea')`)
	u.do(chromedp.KeyEvent(" Mostly."), chromedp.KeyEvent(kb.Escape))
	u.waitJS(`!document.querySelector('#memory-list textarea') && document.activeElement?.matches('#memory-list button[id$="-edit"]')`)
	if got := u.str(`document.querySelector('#memory-list .memory-words').textContent`); got != "I walk everywhere." {
		t.Errorf("after Escape the memory reads %q", got)
	}
	u.click(`#memory-list button[id$="-edit"]`)
	u.waitJS(`document.activeElement?.matches('#memory-list textarea')`)
	u.do(chromedp.KeyEvent(kb.End), chromedp.KeyEvent(" Mostly."), chromedp.KeyEvent(kb.Enter))
	u.waitJS(`document.querySelector('#memory-list .memory-words')?.textContent === 'I walk everywhere. Mostly.'`)
	u.pe.check(t)
}
