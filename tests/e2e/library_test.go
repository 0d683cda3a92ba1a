package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/tests/harness"
)

// The Library screen (issue 14): its shell, and the Notes, Memories and
// Skills tabs, driven the way a person uses them.

// TestLibraryShellInChromium: the sidebar's Library entry opens the Library
// screen, whose tab bar is the router's LIBRARY_TABS, each a route that
// opens its tab; someone without library.use gets no entry.
func TestLibraryShellInChromium(t *testing.T) {
	u := newAdminUI(t, 1280, 860, func(base string) {
		harness.API(t, base, "Admin.CreateUser", nil, map[string]any{"username": "samwise", "displayName": "Samwise Gamgee", "password": "potatoes-and-rope"})
	})
	u.waitJS(`!!document.querySelector('#sidebar-library')`)
	u.click(`#sidebar-library`)
	u.waitJS(`location.hash === '#/library/knowledge' && !!document.querySelector('.library-tabs .tab.is-active')`)
	u.waitJS(`document.activeElement === document.querySelector('.main .page-title')`)
	var got struct{ Want, Drawn []string }
	raw := u.await(`(async () => {
	  const { LIBRARY_TABS } = await import(` + appModule("core/router.js") + `);
	  return JSON.stringify({
	    want: LIBRARY_TABS.map((t) => t.label + ' #/library/' + t.id),
	    drawn: [...document.querySelectorAll('.library-tabs .tab')].map((a) => a.textContent.trim() + ' ' + a.getAttribute('href')),
	  });
	})()`)
	if err := json.Unmarshal([]byte(raw), &got); err != nil {
		t.Fatal(err)
	}
	want := []string{"Knowledge #/library/knowledge", "Notes #/library/notes", "Memories #/library/memories", "Skills #/library/skills"}
	if !slices.Equal(got.Want, want) || !slices.Equal(got.Drawn, want) {
		t.Errorf("the library's tabs: routes %q, drawn %q; want %q", got.Want, got.Drawn, want)
	}
	for _, tab := range []string{"notes", "memories", "skills", "knowledge"} {
		u.click(`#library-tab-` + tab)
		u.waitJS(`location.hash === '#/library/` + tab + `' && document.querySelector('.library-tabs .tab.is-active').id === 'library-tab-` + tab + `'
			&& document.querySelector('#sidebar-library').getAttribute('aria-current') === 'page'`)
	}
	u.shot("knowledge")
	// An unknown tab is the first one.
	u.js(`location.hash = '#/library/scrolls', true`)
	u.waitJS(`document.querySelector('.library-tabs .tab.is-active').id === 'library-tab-knowledge'`)

	// Without library.use: no entry.
	harness.API(t, u.base, "Admin.SetBaseline", nil, []string{"chat.create"})
	s := newTab(t, harness.Browser(t), "samwise")
	harness.BrowserLogin(t, s.ctx, u.base, "samwise", "potatoes-and-rope")
	s.do(chromedp.Navigate(u.base + "/"))
	s.waitJS(appShown)
	s.await(`import(` + appModule("core/store.js") + `).then(async (m) => {
		for (let i = 0; i < 400 && m.getState().account.status !== 'ready'; i++) await new Promise((r) => setTimeout(r, 50));
		return m.getState().account.status;
	})`)
	if s.bool(`!!document.querySelector('#sidebar-library')`) {
		t.Error("someone without library.use has the Library entry")
	}
	u.pe.check(t)
}

// libraryUI opens the administrator's app at w×h with Samwise in the
// household, on the Library tab given.
func libraryUI(t *testing.T, w, h int64, tab string) (u *adminUI, samwise int) {
	u = newAdminUI(t, w, h, func(base string) {
		var nu struct{ ID int }
		harness.API(t, base, "Admin.CreateUser", &nu, map[string]any{"username": "samwise", "displayName": "Samwise Gamgee", "password": "potatoes-and-rope"})
		samwise = nu.ID
	})
	u.waitJS(`!!document.querySelector('#sidebar-library')`)
	u.click(`#sidebar-library`)
	u.click(`#library-tab-` + tab)
	u.waitJS(`location.hash === '#/library/` + tab + `' && !document.querySelector('#main .loading-line')`)
	return u, samwise
}

// setValue puts text in the field css as if pasted (one input event).
func (p *tab) setValue(css, text string) {
	p.t.Helper()
	p.bool(fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.focus(); e.value = %q;
		return e.dispatchEvent(new Event('input', {bubbles: true})); })()`, css, text))
}

// confirmDialog presses the button labelled label in the open dialog.
func (p *tab) confirmDialog(label string) {
	p.t.Helper()
	p.waitJS(`!!document.querySelector('dialog[open]')`)
	p.clickXPath(button(`//dialog[@open]`, label))
	p.waitJS(`!document.querySelector('dialog[open]')`)
}

// TestLibraryNotesInChromium writes a note with the Markdown editor and its
// server preview, keeps unsaved changes from being left behind, searches,
// shares the note with Samwise — who reads it rendered and cannot change
// it — and deletes one.
func TestLibraryNotesInChromium(t *testing.T) {
	u, samwise := libraryUI(t, 1280, 900, "notes")
	var noteID int

	u.step(t, "create", func(t *testing.T, u *adminUI) {
		u.waitJS(`!!document.querySelector('#notes-empty')`)
		u.shot("empty")
		u.click(`#note-create`)
		u.waitJS(`location.hash === '#/library/notes/new' && document.activeElement.id === 'note-title'`)
		u.fill(`#note-title`, "Road to Rivendell")
		u.setValue(`#note-body`, "# Stages\n\n- Bree\n- **Weathertop**\n\n<script>window.__ran = 1</script><img src=x onerror=\"window.__ran = 2\">")
		u.click(`#note-body-preview`)
		u.waitJS(`document.querySelector('#note-body-rendered h1')?.textContent === 'Stages' &&
			document.querySelector('#note-body-rendered strong')?.textContent === 'Weathertop'`)
		if u.bool(`!!document.querySelector('#note-body-rendered script, #note-body-rendered [onerror]') || !!window.__ran`) {
			t.Error("the preview kept a script or an event handler")
		}
		if !u.bool(`document.querySelector('#note-body').hidden`) {
			t.Error("the text field shows beside the preview")
		}
		u.shot("preview")
		u.click(`#note-body-write`)
		u.waitJS(`!document.querySelector('#note-body').hidden && !document.querySelector('#note-body-preview-box')`)
		u.click(`#note-save`)
		u.waitJS(`/^#\/library\/notes\/\d+$/.test(location.hash) && !!document.querySelector('#note-form') &&
			document.querySelector('#note-heading').textContent === 'Road to Rivendell'`)
		noteID = int(u.js(`Number(location.hash.split('/').pop())`).(float64))
		u.waitJS(`document.querySelectorAll('#notes-list > li').length === 1`)
		u.waitJS(`document.querySelector('#note-body').value.startsWith('# Stages')`)
		if u.bool(`!!document.querySelector('#note-unsaved')`) {
			t.Error("a saved note says it has unsaved changes")
		}
	})

	u.step(t, "unsaved changes are not left behind", func(t *testing.T, u *adminUI) {
		u.fill(`#note-title`, "Road to Rivendell, the long way")
		u.waitJS(`!!document.querySelector('#note-unsaved')`)
		// A link elsewhere asks first; staying keeps the text.
		u.click(`#library-tab-memories`)
		u.waitJS(`!!document.querySelector('dialog[open]')`)
		u.shot("leave")
		u.confirmDialog("Cancel")
		if h := u.str(`location.hash`); h != fmt.Sprintf("#/library/notes/%d", noteID) {
			t.Errorf("after Cancel the page is at %s", h)
		}
		if v := u.str(`document.querySelector('#note-title').value`); v != "Road to Rivendell, the long way" {
			t.Errorf("after Cancel the title is %q", v)
		}
		// So does the note's Close button.
		u.click(`#note-form .card-header button[aria-label="Close the note"]`)
		u.confirmDialog("Cancel")
		u.click(`#note-save`)
		u.waitJS(`!document.querySelector('#note-unsaved') && document.querySelector('#note-heading').textContent === 'Road to Rivendell, the long way'`)
		u.waitJS(`document.querySelector('#notes-list .model-row-name')?.textContent === 'Road to Rivendell, the long way'`)
		// Saved, it leaves without asking.
		u.click(`#library-tab-memories`)
		u.waitJS(`location.hash === '#/library/memories'`)
		if u.bool(`!!document.querySelector('dialog[open]')`) {
			t.Error("leaving a saved note asks")
		}
		// Leaving with changes, and saying so, drops them.
		u.js(fmt.Sprintf(`location.hash = '#/library/notes/%d', true`, noteID))
		u.waitJS(`!!document.querySelector('#note-title')`)
		u.fill(`#note-title`, "Changed my mind")
		u.click(`#library-tab-skills`)
		u.confirmDialog("Leave")
		u.waitJS(`location.hash === '#/library/skills'`)
		var n struct{ Title string }
		harness.API(t, u.base, "Library.Note", &n, noteID)
		if n.Title != "Road to Rivendell, the long way" {
			t.Errorf("the note's title is %q", n.Title)
		}
		u.click(`#library-tab-notes`)
		u.waitJS(`document.querySelectorAll('#notes-list > li').length === 1`)
	})

	u.step(t, "search", func(t *testing.T, u *adminUI) {
		harness.API(t, u.base, "Library.CreateNote", nil, map[string]any{"title": "Second breakfast", "body": "Eggs, bacon and mushrooms."})
		u.waitJS(`document.querySelectorAll('#notes-list > li').length === 2`)
		// Newest first.
		if first := u.str(`document.querySelector('#notes-list .model-row-name').textContent`); first != "Second breakfast" {
			t.Errorf("the first note is %q", first)
		}
		u.fill(`#notes-search`, "Weathertop")
		u.waitJS(`document.querySelectorAll('#notes-list > li').length === 1 &&
			document.querySelector('#notes-list .model-row-name').textContent === 'Road to Rivendell, the long way'`)
		u.fill(`#notes-search`, "Oliphaunt")
		u.waitJS(`!!document.querySelector('#notes-none') && !document.querySelector('#notes-list')`)
		u.fill(`#notes-search`, "")
		u.waitJS(`document.querySelectorAll('#notes-list > li').length === 2`)
	})

	u.step(t, "share", func(t *testing.T, u *adminUI) {
		u.js(fmt.Sprintf(`location.hash = '#/library/notes/%d', true`, noteID))
		u.click(fmt.Sprintf(`#share-note-%d`, noteID))
		u.waitJS(fmt.Sprintf(`!!document.querySelector('#share-dialog[open] #share-u-%d')`, samwise))
		if !strings.Contains(u.str(`document.querySelector('#share-dialog').innerText`), "People you share with can read it, not change it.") {
			t.Error("the share dialog does not say what sharing allows")
		}
		u.shot("share")
		u.click(fmt.Sprintf(`#share-u-%d`, samwise))
		u.click(`#share-save`)
		u.waitJS(`!document.querySelector('#share-dialog')`)
		u.waitJS(`document.querySelector('#note-form .card-subtitle')?.textContent.includes('shared with 1')`)
		var shares []struct{ UserID int }
		harness.API(t, u.base, "Library.Shares", &shares, map[string]any{"kind": "note", "id": noteID})
		if len(shares) != 1 || shares[0].UserID != samwise {
			t.Errorf("the note is shared with %+v", shares)
		}
		// Opened again, the dialog shows who it is shared with.
		u.click(fmt.Sprintf(`#share-note-%d`, noteID))
		u.waitJS(fmt.Sprintf(`document.querySelector('#share-u-%d')?.checked === true`, samwise))
		u.confirmDialog("Cancel")
	})

	u.step(t, "Samwise reads the shared note and cannot change it", func(t *testing.T, u *adminUI) {
		s := newTab(t, harness.Browser(t), "samwise")
		harness.BrowserLogin(t, s.ctx, u.base, "samwise", "potatoes-and-rope")
		s.do(chromedp.EmulateViewport(1280, 900), chromedp.Navigate(u.base+"/#/library/notes"))
		s.waitJS(`document.querySelectorAll('#notes-list > li').length === 1`)
		if row := s.str(`document.querySelector('#notes-list > li').innerText`); !strings.Contains(row, "admin") || !strings.Contains(row, "Shared") {
			t.Errorf("Samwise's row of the shared note: %q", row)
		}
		s.click(`#notes-list a`)
		s.waitJS(`document.querySelector('#note-rendered h1')?.textContent === 'Stages'`)
		if s.bool(`!!document.querySelector('#note-form, #main textarea, #note-save, #note-delete, [id^="share-note-"]')`) {
			t.Error("a shared note shows controls to change it")
		}
		if s.bool(`!!document.querySelector('#note-rendered script, #note-rendered [onerror]') || !!window.__ran`) {
			t.Error("the shared note kept a script or an event handler")
		}
		if o := s.str(`document.querySelector('#note-owner').textContent`); !strings.Contains(o, "admin") || !strings.Contains(o, "read only") {
			t.Errorf("the owner line says %q", o)
		}
		s.shot("shared")
		s.pe.check(t, "/api/Connections.List") // a member's start asks, and is refused
	})

	u.step(t, "a note without text opens in the editor", func(t *testing.T, u *adminUI) {
		// The view leaves out an empty body.
		var n struct{ ID int }
		harness.API(t, u.base, "Library.CreateNote", &n, map[string]any{"title": "Nothing yet", "body": ""})
		u.js(fmt.Sprintf(`location.hash = '#/library/notes/%d', true`, n.ID))
		u.waitJS(`document.querySelector('#note-title')?.value === 'Nothing yet' && document.querySelector('#note-body').value === ''`)
		u.click(`#note-body-preview`)
		u.waitJS(`!!document.querySelector('#note-body-preview-box')`)
		if u.bool(`!!document.querySelector('#note-unsaved')`) {
			t.Error("an untouched note without text says it has unsaved changes")
		}
		u.click(`#note-delete`)
		u.confirmDialog("Delete note")
		u.waitJS(`location.hash === '#/library/notes' && document.querySelectorAll('#notes-list > li').length === 2`)
	})

	u.step(t, "delete", func(t *testing.T, u *adminUI) {
		u.js(`location.hash = '#/library/notes', true`)
		u.clickXPath(`//ul[@id='notes-list']//a[.//span[normalize-space(.)='Second breakfast']]`)
		u.waitJS(`document.querySelector('#note-heading')?.textContent === 'Second breakfast'`)
		u.click(`#note-delete`)
		u.confirmDialog("Delete note")
		u.waitJS(`location.hash === '#/library/notes' && document.querySelectorAll('#notes-list > li').length === 1`)
		var notes []struct{ Title string }
		harness.API(t, u.base, "Library.Notes", &notes, map[string]any{})
		if len(notes) != 1 {
			t.Errorf("notes after the delete: %+v", notes)
		}
	})
	u.pe.check(t)
}

// TestLibraryMemoriesInChromium adds, edits and deletes memories, is told
// by the server when one is too long (the text stays to shorten), and
// turns memory off.
func TestLibraryMemoriesInChromium(t *testing.T) {
	u, _ := libraryUI(t, 1280, 900, "memories")

	u.step(t, "add", func(t *testing.T, u *adminUI) {
		u.waitJS(`!!document.querySelector('#memories-empty') && document.querySelector('#memory-on').checked`)
		u.shot("empty")
		u.fill(`#memory-new`, "I prefer metric units.")
		u.waitJS(`document.querySelector('#memory-new-count').textContent.includes('22 / 200 characters')`)
		u.click(`#memory-add-save`)
		u.waitJS(`document.querySelectorAll('#memory-list > li').length === 1 && document.querySelector('#memory-new').value === ''`)
		if row := u.str(`document.querySelector('#memory-list > li').innerText`); !strings.Contains(row, "I prefer metric units.") || !strings.Contains(row, "Added by you") {
			t.Errorf("the memory's row: %q", row)
		}
		u.waitJS(`document.querySelector('#memory-new-count').textContent.includes('22 / 2,000 used')`)
	})

	u.step(t, "a second", func(t *testing.T, u *adminUI) {
		u.fill(`#memory-new`, "My pony is called Bill.")
		u.click(`#memory-add-save`)
		u.waitJS(`document.querySelectorAll('#memory-list > li').length === 2`)
	})

	u.step(t, "too long: the server's refusal is the field's error", func(t *testing.T, u *adminUI) {
		long := strings.Repeat("a", 201)
		u.setValue(`#memory-new`, long)
		u.waitJS(`document.querySelector('#memory-new-count').classList.contains('is-over')`)
		u.click(`#memory-add-save`)
		u.waitJS(`!!document.querySelector('#memory-new-error') && document.querySelector('#memory-new').getAttribute('aria-invalid') === 'true'`)
		if v := u.str(`document.querySelector('#memory-new').value`); v != long {
			t.Errorf("after the refusal the box holds %d characters, want the 201 typed", len(v))
		}
		if n := u.js(`document.querySelectorAll('#memory-list > li').length`); n != float64(2) {
			t.Errorf("%v memories after the refusal", n)
		}
		u.shot("too-long")
		u.setValue(`#memory-new`, "")
		u.waitJS(`!document.querySelector('#memory-new-error')`)
	})

	u.step(t, "edit", func(t *testing.T, u *adminUI) {
		id := u.str(`document.querySelector('#memory-list > li').id`)
		u.click(`#` + id + `-edit`)
		u.waitJS(`document.activeElement.id === '` + id + `-text'`)
		u.fill(`#`+id+`-text`, "I prefer metric units, and tea.")
		u.click(`#` + id + `-save`)
		u.waitJS(`document.querySelector('#memory-list > li').innerText.includes('I prefer metric units, and tea.') && !document.querySelector('#` + id + `-text')`)
		var v struct{ Items []struct{ Text string } }
		harness.API(t, u.base, "Library.Memories", &v)
		if len(v.Items) != 2 || v.Items[0].Text != "I prefer metric units, and tea." {
			t.Errorf("memories after the edit: %+v", v.Items)
		}
	})

	u.step(t, "delete", func(t *testing.T, u *adminUI) {
		id := u.str(`document.querySelector('#memory-list > li:last-child').id`)
		u.click(`#` + id + `-delete`)
		u.confirmDialog("Delete memory")
		u.waitJS(`document.querySelectorAll('#memory-list > li').length === 1`)
	})

	u.step(t, "off", func(t *testing.T, u *adminUI) {
		u.click(`label.switch-row:has(#memory-on)`)
		u.waitJS(`!document.querySelector('#memory-on').checked && document.querySelector('#memory-on-text').textContent.startsWith('Off')`)
		var v struct{ On bool }
		harness.API(t, u.base, "Library.Memories", &v)
		if v.On {
			t.Error("memory is still on at the server")
		}
		u.shot("off")
		u.click(`label.switch-row:has(#memory-on)`)
		u.waitJS(`document.querySelector('#memory-on').checked && document.querySelector('#memory-on-text').textContent.startsWith('On')`)
	})
	u.pe.check(t, "/api/Library.AddMemory") // the refusal of the one too long
}

// TestLibrarySkillsInChromium creates a skill, changes it, shares it with
// Samwise, who reads it without a way to change it, and deletes it.
func TestLibrarySkillsInChromium(t *testing.T) {
	u, samwise := libraryUI(t, 1280, 900, "skills")
	var skillID int

	u.step(t, "create", func(t *testing.T, u *adminUI) {
		u.waitJS(`!!document.querySelector('#skills-empty')`)
		u.click(`#skill-create`)
		u.waitJS(`document.activeElement.id === 'skill-name'`)
		u.fill(`#skill-name`, "Plan a walk")
		u.fill(`#skill-description`, "Stages, inns and what to pack")
		u.setValue(`#skill-body`, "1. Ask how far a day.\n2. Find an inn at each stage.")
		u.click(`#skill-body-preview`)
		u.waitJS(`document.querySelectorAll('#skill-body-rendered ol li').length === 2`)
		u.click(`#skill-save`)
		u.waitJS(`/^#\/library\/skills\/\d+$/.test(location.hash) && document.querySelectorAll('#skills-list > li').length === 1`)
		skillID = int(u.js(`Number(location.hash.split('/').pop())`).(float64))
		u.waitJS(`!!document.querySelector('#skill-form') && document.querySelector('#skill-description').value === 'Stages, inns and what to pack'`)
		u.shot("skill")
	})

	u.step(t, "edit", func(t *testing.T, u *adminUI) {
		u.fill(`#skill-description`, "Stages, inns, and what to pack for rain")
		u.click(`#skill-save`)
		u.waitJS(`!document.querySelector('#skill-unsaved') && document.querySelector('#skills-list .model-row-sub')?.textContent === 'Stages, inns, and what to pack for rain'`)
		var s struct{ Description string }
		harness.API(t, u.base, "Library.Skill", &s, skillID)
		if s.Description != "Stages, inns, and what to pack for rain" {
			t.Errorf("the skill's description is %q", s.Description)
		}
	})

	u.step(t, "shared, read only", func(t *testing.T, u *adminUI) {
		u.click(fmt.Sprintf(`#share-skill-%d`, skillID))
		u.waitJS(fmt.Sprintf(`!!document.querySelector('#share-u-%d')`, samwise))
		u.click(fmt.Sprintf(`#share-u-%d`, samwise))
		u.click(`#share-save`)
		u.waitJS(`!document.querySelector('#share-dialog')`)
		s := newTab(t, harness.Browser(t), "samwise")
		harness.BrowserLogin(t, s.ctx, u.base, "samwise", "potatoes-and-rope")
		s.do(chromedp.EmulateViewport(1280, 900), chromedp.Navigate(u.base+fmt.Sprintf("/#/library/skills/%d", skillID)))
		s.waitJS(`document.querySelectorAll('#skill-rendered ol li').length === 2`)
		if s.bool(`!!document.querySelector('#skill-form, #main textarea, #main input:not([type=search]), #skill-save, #skill-delete')`) {
			t.Error("a shared skill shows controls to change it")
		}
		if o := s.str(`document.querySelector('#skill-owner').textContent`); !strings.Contains(o, "admin") {
			t.Errorf("the owner line says %q", o)
		}
		s.shot("shared")
		s.pe.check(t, "/api/Connections.List") // a member's start asks, and is refused
	})

	u.step(t, "delete", func(t *testing.T, u *adminUI) {
		u.click(`#skill-delete`)
		u.confirmDialog("Delete skill")
		u.waitJS(`location.hash === '#/library/skills' && !!document.querySelector('#skills-empty')`)
	})
	u.pe.check(t)
}

// TestLibraryPhoneLayout opens each library tab, a note, a skill, a memory
// being edited and the share dialog at 390×844 in both themes: nothing
// sticks out of the screen or its card, and every control has a name.
func TestLibraryPhoneLayout(t *testing.T) {
	var noteID, skillID int
	u := newAdminUI(t, 390, 844, func(base string) {
		harness.API(t, base, "Admin.CreateUser", nil, map[string]any{"username": "samwise", "displayName": "Samwise Gamgee", "password": "potatoes-and-rope"})
		var n struct{ ID int }
		harness.API(t, base, "Library.CreateNote", &n, map[string]any{"title": "A rather long title for a note about the road that goes ever on and on",
			"body": "# The road\n\n`a-long-unbroken-identifier-that-might-push-the-page-sideways-on-a-phone`\n\n| Stage | Inn |\n|---|---|\n| Bree | The Prancing Pony |"})
		noteID = n.ID
		var s struct{ ID int }
		harness.API(t, base, "Library.CreateSkill", &s, map[string]any{"name": "Plan a walk", "description": "Stages, inns and what to pack", "body": "Ask how far a day."})
		skillID = s.ID
		harness.API(t, base, "Library.AddMemory", nil, map[string]any{"text": "I prefer metric units, and my pony is called Bill."})
	})
	u.waitJS(`!!document.querySelector('#composer-input')`)
	pages := []struct{ name, hash, ready string }{
		{"knowledge", "knowledge", `!!document.querySelector('.library-tabs .tab.is-active')`},
		{"notes", "notes", `document.querySelectorAll('#notes-list > li').length === 1`},
		{"note", fmt.Sprintf("notes/%d", noteID), `!!document.querySelector('#note-form')`},
		{"note-new", "notes/new", `!!document.querySelector('#note-form')`},
		{"memories", "memories", `document.querySelectorAll('#memory-list > li').length === 1`},
		{"skills", "skills", `document.querySelectorAll('#skills-list > li').length === 1`},
		{"skill", fmt.Sprintf("skills/%d", skillID), `!!document.querySelector('#skill-form')`},
	}
	for _, p := range pages {
		u.step(t, p.name, func(t *testing.T, u *adminUI) {
			u.js(fmt.Sprintf(`location.hash = %q, true`, "#/library/"+p.hash))
			u.waitJS(p.ready)
			u.waitJS(`!document.querySelector('#main .loading-line')`)
			if bad := u.str(unlabelledJS); bad != "" {
				t.Errorf("%s: unnamed controls:\n%s", p.name, bad)
			}
			switch p.name {
			case "note":
				u.click(`#note-body-preview`)
				u.waitJS(`!!document.querySelector('#note-body-rendered table')`)
			case "memories":
				u.click(`#memory-list button[id$="-edit"]`)
				u.waitJS(`!!document.querySelector('#memory-list textarea')`)
				if bad := u.str(unlabelledJS); bad != "" {
					t.Errorf("editing a memory: unnamed controls:\n%s", bad)
				}
			}
			for _, theme := range []string{"moria", "shire"} {
				u.js(fmt.Sprintf(`document.documentElement.dataset.theme = %q, true`, theme))
				u.js(`window.scrollTo(0, 0), true`)
				if bad := u.str(overflowJS); bad != "" {
					t.Errorf("%s (%s):\n%s", p.name, theme, bad)
				}
				u.shot(theme)
			}
		})
	}
	u.step(t, "share dialog", func(t *testing.T, u *adminUI) {
		u.js(fmt.Sprintf(`location.hash = '#/library/notes/%d', true`, noteID))
		u.click(fmt.Sprintf(`#share-note-%d`, noteID))
		u.waitJS(`!!document.querySelector('#share-dialog[open] input[type=checkbox]')`)
		if bad := u.str(unlabelledJS); bad != "" {
			t.Errorf("the share dialog: unnamed controls:\n%s", bad)
		}
		if bad := u.str(`(() => { const d = document.querySelector('#share-dialog'), r = d.getBoundingClientRect();
			return [...d.querySelectorAll('*')].filter((e) => { const x = e.getBoundingClientRect(); return x.width > 0 && (x.right > r.right + 1 || x.left < r.left - 1); })
				.map((e) => e.tagName + ' ' + Math.round(e.getBoundingClientRect().right)).join(', ') +
				(r.left < 0 || r.right > document.documentElement.clientWidth ? ' dialog ' + r.left + '–' + r.right : ''); })()`); bad != "" {
			t.Errorf("the share dialog on a phone: %s", bad)
		}
		for _, theme := range []string{"moria", "shire"} {
			u.js(fmt.Sprintf(`document.documentElement.dataset.theme = %q, true`, theme))
			u.shot(theme)
		}
		u.confirmDialog("Cancel")
	})
	u.pe.check(t)
}

// TestLibraryModelMemoryInChromium: a memory the model adds in a reply (its
// memory_add tool) is listed with the others, marked as the model's, and
// can be deleted like any other; a note it writes (notes_write) is the
// person's, to edit.
func TestLibraryModelMemoryInChromium(t *testing.T) {
	llm := fakellm.New(t)
	llm.SetDefault(fakellm.Func(func(r fakellm.Request) fakellm.Reply {
		body := string(r.Body)
		switch {
		case strings.Contains(body, "You write titles"):
			return fakellm.Stream("Ponies")
		case strings.Contains(body, `"role":"tool"`):
			return fakellm.Stream("Noted: your pony is Bill.")
		}
		return fakellm.NewStream().ToolCall(0, "call_1", "memory_add", `{"text":"The person's pony is called Bill."}`).
			ToolCall(1, "call_2", "notes_write", `{"title":"Bill's needs","body":"- apples\n- a **good** brush"}`).Finish("tool_calls").Reply()
	}))
	u := newAdminUI(t, 1280, 900, func(base string) {
		harness.API(t, base, "Connections.Create", nil, map[string]any{"name": "Fake", "baseUrl": llm.URL()})
		var models []struct{ ID int64 }
		harness.API(t, base, "Models.Picker", &models)
		if len(models) == 0 {
			t.Fatal("no models")
		}
		harness.API(t, base, "Models.Update", nil, models[0].ID, map[string]any{"capabilities": map[string]any{"tools": true}})
	})
	u.waitJS(`!!document.querySelector('#composer-input')`)
	u.send("Remember that my pony is called Bill.")
	u.waitJS(`[...document.querySelectorAll('.msg-assistant')].some((m) => m.innerText.includes('Noted: your pony is Bill.'))`)
	u.click(`#sidebar-library`)
	u.click(`#library-tab-memories`)
	u.waitJS(`document.querySelectorAll('#memory-list > li').length === 1`)
	if row := u.str(`document.querySelector('#memory-list > li').innerText`); !strings.Contains(row, "The person's pony is called Bill.") || !strings.Contains(row, "Added by the model") {
		t.Errorf("the model's memory: %q", row)
	}
	u.shot("model")
	u.click(`#memory-list button[id$="-delete"]`)
	u.confirmDialog("Delete memory")
	u.waitJS(`!!document.querySelector('#memories-empty')`)

	u.click(`#library-tab-notes`)
	u.waitJS(`document.querySelector('#notes-list .model-row-name')?.textContent === "Bill's needs"`)
	u.click(`#notes-list a`)
	u.waitJS(`document.querySelector('#note-body')?.value === '- apples\n- a **good** brush'`)
	u.pe.check(t)
}
