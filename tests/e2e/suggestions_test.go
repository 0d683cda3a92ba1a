package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/backend/fakellm"
)

// TestSuggestionCardsInChromium: the new-chat screen shows the seeded
// cards; a card that fills puts its prompt in the composer (nothing
// sent), one that sends starts the chat with its prompt; an administrator
// adds a card with a hostile title in Settings → Suggestions, and it
// shows as text.
func TestSuggestionCardsInChromium(t *testing.T) {
	a := newChatApp(t)
	a.llm.SetDefault(fakellm.Func(func(r fakellm.Request) fakellm.Reply {
		if strings.Contains(string(r.Body), "You write titles") {
			return fakellm.Stream("Dinners")
		}
		return fakellm.Stream("Here is a plan.")
	}))
	const hostile = `<img src=x onerror="window.pwned=1">Tea & "scones"`

	t.Run("a card fills the composer", func(t *testing.T) {
		a.t = t
		a.waitJS(`document.querySelectorAll('#suggestions .suggestion-card').length === 4`)
		a.shot("suggestions-new-chat")
		n := len(a.llm.Requests())
		a.click(`#suggestions li:nth-child(2) .suggestion-card`)
		a.waitJS(`document.querySelector('#composer-input').value.startsWith('Summarise the following text')`)
		if got := len(a.llm.Requests()); got != n {
			t.Errorf("filling the composer sent %d requests", got-n)
		}
		if !a.within(10*time.Second, `document.activeElement === document.querySelector('#composer-input')`) {
			t.Error("the composer does not have the focus after a card filled it")
		}
		a.js(`(() => { const el = document.querySelector('#composer-input'); el.value = ''; el.dispatchEvent(new Event('input', { bubbles: true })); return true; })()`)
	})

	t.Run("a card that sends", func(t *testing.T) {
		a.t = t
		a.click(`#suggestions li:nth-child(4) .suggestion-card`)
		a.waitJS(`[...document.querySelectorAll('.msg-user')].some((m) => m.innerText.includes('Plan a week of simple dinners'))`)
		a.waitReplyIdle()
		found := false
		for _, r := range a.llm.Requests() {
			if strings.Contains(string(r.Body), "Plan a week of simple dinners for two") {
				found = true
			}
		}
		if !found {
			t.Error("the card's prompt did not reach the model")
		}
	})

	t.Run("Settings → Suggestions", func(t *testing.T) {
		a.t = t
		a.do(chromedp.Navigate(a.base + "/#/settings/suggestions"))
		a.waitJS(`document.querySelectorAll('#suggestion-list .model-row').length === 4`)
		a.click(`#suggestion-create`)
		a.waitJS(`!!document.querySelector('#suggestion-new-name')`)
		a.fill(`#suggestion-new-name`, hostile)
		a.fill(`#suggestion-new-prompt`, "Tell me about <b>tea</b>.")
		a.click(`#suggestion-save`)
		a.waitJS(`[...document.querySelectorAll('#suggestion-list .model-row-name')].some((e) => e.textContent === ` + jsString(hostile) + `)`)
		a.shot("suggestions-settings")
		a.do(chromedp.Navigate(a.base + "/#/"))
		a.waitJS(`[...document.querySelectorAll('#suggestions .suggestion-title')].some((e) => e.textContent === ` + jsString(hostile) + `)`)
		if a.bool(`!!document.querySelector('#suggestions img') || !!window.pwned`) {
			t.Error("a suggestion's title became markup")
		}
		if got := a.str(`[...document.querySelectorAll('#suggestions .suggestion-prompt')].pop().textContent`); got != "Tell me about <b>tea</b>." {
			t.Errorf("the prompt shows as %q", got)
		}
	})

}
