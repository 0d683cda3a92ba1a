package e2e

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/llembas/lembas/backend/fakellm"
)

// versionsOf is a condition: the last message of role shows its versions
// control reading text ("2/4").
func versionsOf(role, text string) string {
	return fmt.Sprintf(`(() => { const m = [...document.querySelectorAll('.msg-%s')].pop();
		const c = m && m.querySelector('.msg-versions-count'); return !!c && c.innerText.replace(/\s+/g, ' ').trim() === 'Version %s'; })()`,
		role, text)
}

// transcriptText is the transcript's messages' text, one line each.
const transcriptText = `[...document.querySelectorAll('.transcript .msg')].map((m) => m.querySelector('.msg-text, .msg-content')?.innerText.trim()).join('|')`

// TestVersionsInChromium regenerates a reply three times and moves
// between the versions with ‹ › (by mouse and by keyboard), edits a turn
// and goes back to the original branch, deletes a version, and finds the
// chosen path again after a reload.
func TestVersionsInChromium(t *testing.T) {
	a := newChatApp(t)
	a.llm.SetDefault(fakellm.Stream("A title"))

	a.llm.Enqueue(fakellm.Stream("answer 0"))
	a.send("Question")
	a.waitJS(lastReply + `.includes('answer 0')`)
	a.waitReplyIdle()
	if a.bool(`!!document.querySelector('.msg-versions')`) {
		t.Fatal("a reply with one version shows the versions control")
	}
	for i := 1; i <= 3; i++ {
		a.llm.Enqueue(fakellm.Stream(fmt.Sprintf("answer %d", i)))
		a.clickXPath(`//article[contains(@class,'msg-assistant')][last()]//button[contains(., 'Regenerate')]`)
		a.waitJS(lastReply + fmt.Sprintf(`.includes('answer %d')`, i))
		a.waitReplyIdle()
	}
	a.waitJS(versionsOf("assistant", "4/4"))

	// Previous version by mouse, then by keyboard: the focus stays on
	// the control, now the chosen version's.
	a.click(`.msg-assistant .msg-versions button[aria-label="Previous version"]`)
	a.waitJS(versionsOf("assistant", "3/4"))
	a.waitJS(lastReply + `.includes('answer 2')`)
	a.waitJS(`document.activeElement?.getAttribute('aria-label') === 'Previous version'`)
	a.keys(kb.Enter)
	a.waitJS(versionsOf("assistant", "2/4"))
	a.waitJS(lastReply + `.includes('answer 1')`)
	a.shot("second-of-four")

	// A turn on the second version, then an edit of it.
	a.llm.Enqueue(fakellm.Stream("follow-up answer"))
	a.send("Follow-up")
	a.waitJS(lastReply + `.includes('follow-up answer')`)
	a.waitReplyIdle()
	a.llm.Enqueue(fakellm.Stream("edited answer"))
	a.clickXPath(`(//article[contains(@class,'msg-user')])[last()]//button[contains(., 'Edit')]`)
	a.waitJS(`!!document.querySelector('.msg-edit textarea')`)
	a.setValue(".msg-edit textarea", "Follow-up, edited")
	a.clickXPath(`//form[contains(@class,'msg-edit')]//button[@type='submit']`)
	a.waitJS(lastReply + `.includes('edited answer')`)
	a.waitReplyIdle()
	a.waitJS(versionsOf("user", "2/2"))
	if got := a.str(transcriptText); got != "Question|answer 1|Follow-up, edited|edited answer" {
		t.Fatalf("after the edit: %q", got)
	}

	// Back to the original turn: its reply comes back with it.
	a.clickXPath(`(//article[contains(@class,'msg-user')])[last()]//button[@aria-label='Previous version']`)
	a.waitJS(versionsOf("user", "1/2"))
	a.waitJS(transcriptText + ` === 'Question|answer 1|Follow-up|follow-up answer'`)
	a.shot("original-branch")

	// A reload finds the same path.
	a.do(chromedp.Reload())
	a.waitJS(`document.querySelectorAll('.transcript .msg').length === 4`)
	a.waitJS(transcriptText + ` === 'Question|answer 1|Follow-up|follow-up answer'`)
	a.waitJS(versionsOf("user", "1/2"))
	if !a.bool(`(() => { const r = document.querySelectorAll('.transcript .msg-assistant')[0]; const c = r.querySelector('.msg-versions-count'); return !!c && c.innerText.includes('2/4'); })()`) {
		t.Errorf("after a reload the first reply's control does not read 2/4")
	}

	// A second tab on the chat follows the path the first one chooses,
	// without a reload.
	ctx2, cancel := chromedp.NewContext(a.ctx)
	t.Cleanup(cancel)
	b := newTab(t, ctx2, "second")
	b.do(chromedp.EmulateViewport(1280, 800), chromedp.Navigate(a.base+"/"+a.str(`location.hash`)))
	b.waitJS(transcriptText + ` === 'Question|answer 1|Follow-up|follow-up answer'`)
	a.clickXPath(`(//article[contains(@class,'msg-user')])[last()]//button[@aria-label='Next version']`)
	a.waitJS(versionsOf("user", "2/2"))
	b.waitJS(transcriptText + ` === 'Question|answer 1|Follow-up, edited|edited answer'`)
	b.waitJS(versionsOf("user", "2/2"))

	// Delete the chosen first-reply version (confirmed): a neighbour is chosen.
	a.clickXPath(`(//article[contains(@class,'msg-assistant')])[1]//button[contains(., 'Delete version')]`)
	a.confirmDialog("Delete version")
	a.waitJS(transcriptText + ` === 'Question|answer 2'`)
	a.waitJS(versionsOf("assistant", "2/3"))
	b.waitJS(transcriptText + ` === 'Question|answer 2'`)
}
