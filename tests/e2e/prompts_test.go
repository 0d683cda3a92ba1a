package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/prompts"
	"github.com/llembas/lembas/tests/harness"
)

// TestPromptsPage: an administrator edits a fragment on Settings → Prompts
// and the preview shows the new system message at once (the very text
// Prompts.Preview gives, which the backend's tests compare with what the
// endpoint receives); turning a fragment off and resetting one to its
// default show in the preview too.
func TestPromptsPage(t *testing.T) {
	llm := fakellm.New(t)
	u := newAdminUI(t, 1280, 900, func(base string) {
		harness.API(t, base, "Connections.Create", nil, map[string]any{"name": "Fake", "baseUrl": llm.URL()})
	})
	preview := `document.querySelector('#prompt-preview')?.innerText ?? ''`

	u.step(t, "the page and its preview", func(t *testing.T, u *adminUI) {
		u.do(chromedp.Navigate(u.base + "/#/settings/prompts"))
		u.waitJS(`!!document.querySelector('#prompt-date') && (document.querySelector('#prompt-preview')?.innerText ?? '').startsWith('The current date is ')`)
		if tab := u.str(`document.querySelector('.tabs .tab.is-active')?.innerText ?? ''`); tab != "Prompts" {
			t.Errorf("active tab %q", tab)
		}
		if !strings.Contains(u.str(preview), "You are the model ") {
			t.Errorf("preview %q", u.str(preview))
		}
		if n, want := u.js(`document.querySelectorAll('.prompt-card').length`), len(prompts.Builtins()); n != float64(want) {
			t.Errorf("%v fragments shown, want %d", n, want)
		}
		u.shot("defaults")
	})

	u.step(t, "edit a fragment", func(t *testing.T, u *adminUI) {
		u.fill("#prompt-date", "Answering as {{model_name}} in the test.")
		u.click("#prompt-date-save")
		u.waitJS(`(document.querySelector('#prompt-preview')?.innerText ?? '').startsWith('Answering as ')`)
		u.waitJS(`document.querySelector('#prompt-date-title').parentElement.innerText.includes('Changed')`)
		model := u.js(`Number(document.querySelector('#prompt-preview-model').value)`)
		var want struct{ System string }
		harness.API(t, u.base, "Prompts.Preview", &want, map[string]any{"modelId": model})
		if got := u.str(preview); got != want.System {
			t.Errorf("page shows %q\nPrompts.Preview %q", got, want.System)
		}
		u.shot("edited")
	})

	u.step(t, "turn a fragment off", func(t *testing.T, u *adminUI) {
		u.click("#prompt-model-off")
		u.waitJS(`!(document.querySelector('#prompt-preview')?.innerText ?? 'You are').includes('You are the model')`)
		if v := u.str(`document.querySelector('#prompt-model').value`); v != "" {
			t.Errorf("an off fragment's text %q", v)
		}
	})

	u.step(t, "reset to default", func(t *testing.T, u *adminUI) {
		u.click("#prompt-date-reset")
		u.waitJS(`(document.querySelector('#prompt-preview')?.innerText ?? '').startsWith('The current date is ')`)
		u.waitJS(`document.querySelector('#prompt-date').value === document.querySelector('#prompt-date-default').textContent`)
		if u.bool(`!!document.querySelector('#prompt-date-reset')`) {
			t.Error("Reset is still offered for a fragment at its default")
		}
	})
}
