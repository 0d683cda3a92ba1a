package e2e

import (
	"github.com/llembas/lembas/tests/harness"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/backend/fakellm"
)

// Compacting from the page: the earlier messages fold behind "N earlier
// messages", the summary (the model's Markdown, sanitised) stands in their
// place, the meter shows before → after, and Undo brings the turns back.
func TestCompactionInChromium(t *testing.T) {
	a := newChatApp(t)
	a.llm.SetDefault(noAutoTitles())
	question := strings.Repeat("A question about the keeping of lembas. ", 10)
	chatID := seedTurns(t, a.base, 32768, 3, question)
	a.do(chromedp.Navigate(a.base + "/#/chat/" + strconv.Itoa(chatID)))
	a.waitJS(`document.querySelectorAll('.msg-assistant').length === 3`)
	a.waitJS(`!!document.querySelector('.context-meter-bar')`)
	before := a.str(`document.querySelector('#context-meter-text').innerText`)
	// The fake's replies carry a usage: the meter shows it, not an estimate.
	if strings.HasPrefix(before, "~") || !strings.Contains(before, "/ 32k tokens") || !strings.Contains(before, "%") {
		t.Errorf("meter before: %q", before)
	}

	a.llm.Enqueue(fakellm.Stream("**Lembas** is kept in mallorn leaves.\n\n<img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script>"))
	a.click("#compact-button")
	a.waitJS(`!!document.querySelector('.compact-summary')`)
	a.waitJS(`document.querySelector('#context-meter-text').innerText.includes('→')`)
	if got := a.str(`document.querySelector('.compact-fold-toggle').innerText`); got != "2 earlier messages" {
		t.Errorf("fold: %q", got)
	}
	const hidden = `[...document.querySelectorAll('.transcript .msg')].filter(m => !m.checkVisibility()).map(m => m.id).join(',')`
	if got, first := a.str(hidden), a.str(`[...document.querySelectorAll('.transcript .msg')].slice(0, 2).map(m => m.id).join(',')`); got != first {
		t.Errorf("folded messages %q, want the first exchange %q", got, first)
	}
	if !a.bool(`!!document.querySelector('.compact-summary-body strong')`) ||
		a.bool(`!!document.querySelector('.compact-summary-body img[onerror], .compact-summary-body script')`) ||
		a.str(`document.title`) == "pwned" {
		t.Errorf("summary body: %q", a.str(`document.querySelector('.compact-summary-body').innerHTML`))
	}
	after := a.str(`document.querySelector('#context-meter-text').innerText`)
	// Before: the last reply's usage (exact); after: an estimate.
	if used, _, _ := strings.Cut(before, " "); !strings.HasPrefix(after, used+" → ~") {
		t.Errorf("meter after compaction %q (before %q)", after, before)
	}
	t.Logf("meter: %q → %q", before, after)
	// A wheel is the reader's own scrolling: the transcript stops
	// following the newest message.
	a.js(`document.querySelector('.chat-scroll').dispatchEvent(new WheelEvent('wheel', {bubbles: true}))`)
	a.js(`document.querySelector('.compact-summary').scrollIntoView({block: 'center'})`)
	a.shot("compacted")

	// The folded messages are still there to read.
	a.js(`document.querySelector('.chat-scroll').dispatchEvent(new WheelEvent('wheel', {bubbles: true}))`)
	a.js(`document.querySelector('.compact-fold-toggle').scrollIntoView({block: 'center'})`)
	a.click(".compact-fold-toggle")
	a.waitJS(hidden + ` === ''`)
	a.shot("unfolded")

	// The next request carries the summary in place of the first
	// exchange: the summary's pair, then the last two exchanges.
	a.llm.Enqueue(fakellm.Stream("An answer after the summary."))
	a.send("A question after the summary")
	a.waitJS(lastReply + `.includes('An answer after the summary.')`)
	a.waitReplyIdle()
	if n, summary := requestTurns(t, a.llm, question); n != 2 || !summary {
		t.Errorf("after compaction the request carried %d of the 3 first questions (want 2), summary %v", n, summary)
	}

	// Sending followed the newest message again: stop following (a wheel)
	// and bring the summary's Undo into view, or the click can land while
	// the transcript still scrolls.
	a.js(`document.querySelector('.chat-scroll').dispatchEvent(new WheelEvent('wheel', {bubbles: true}))`)
	a.js(`document.querySelector('.compact-summary').scrollIntoView({block: 'center'})`)
	a.js(`document.querySelector('.transcript .msg').dataset.kept = 'yes'`)
	a.clickXPath(`//section[contains(@class,'compact-summary')]//button[normalize-space(.)='Undo']`)
	a.waitJS(`!document.querySelector('.compact-summary') && !document.querySelector('.compact-fold')`)
	// The messages were not made again (their elements kept): Chromium
	// painted new ones only once scrolled.
	if !a.bool(`document.querySelector('.transcript .msg').dataset.kept === 'yes'`) {
		t.Error("the transcript's messages were made again on Undo")
	}
	a.waitJS(`document.querySelectorAll('.msg').length === 8 && !document.querySelector('#context-meter-text').innerText.includes('→')`)
	a.shot("uncompacted")

	// A reply that ends moves the meter on.
	shown := a.str(`document.querySelector('#context-meter-text').innerText`)
	a.llm.Enqueue(fakellm.NewStream().Content("A fourth answer.").Usage(5000, 21).Reply())
	a.send("A fourth question")
	a.waitJS(lastReply + `.includes('A fourth answer.')`)
	a.waitReplyIdle()
	a.waitJS(`document.querySelector('#context-meter-text').innerText.startsWith('5,021 / 32k')`)
	// After Undo the request carries every turn again, and no summary.
	if n, summary := requestTurns(t, a.llm, question); n != 3 || summary {
		t.Errorf("after Undo the request carried %d of the 3 first questions (want 3), summary %v", n, summary)
	}
	t.Logf("meter: %q → after a reply %q", shown, a.str(`document.querySelector('#context-meter-text').innerText`))
}

// requestTurns reads the last reply request the fake endpoint was sent:
// how many user turns were exactly question, and whether it carried a
// compaction's summary (its pair opens with "Summarise our conversation
// so far.").
func requestTurns(t *testing.T, llm *fakellm.Server, question string) (int, bool) {
	t.Helper()
	_, raw := lastUserContent(t, llm)
	msgs, _ := raw["messages"].([]any)
	n, summary := 0, false
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		if mm["role"] != "user" {
			continue
		}
		switch c, _ := mm["content"].(string); c {
		case question:
			n++
		case "Summarise our conversation so far.":
			summary = true
		}
	}
	return n, summary
}

// TestAutoCompactionInChromium: a message sent near the window is shown at
// once, its reply says the earlier turns are being summarised while the
// summary is written, then the summary block appears and the reply goes
// on after its notice.
func TestAutoCompactionInChromium(t *testing.T) {
	a := newChatApp(t)
	a.llm.SetDefault(noAutoTitles())
	question := strings.Repeat("A question about the keeping of lembas. ", 30) // ~300 tokens
	chatID := seedTurns(t, a.base, 32768, 4, question)
	var models []struct{ ID int }
	harness.API(t, a.base, "Models.Picker", &models)
	harness.API(t, a.base, "Models.Update", nil, models[0].ID, map[string]any{"contextLength": 1024})
	a.do(chromedp.Navigate(a.base + "/#/chat/" + strconv.Itoa(chatID)))
	a.waitJS(`document.querySelectorAll('.msg-assistant').length === 4`)

	gate := make(chan struct{})
	a.llm.Enqueue(
		fakellm.NewStream().Event(fakellm.Event{Comment: "thinking it over", After: gate}).Content("The hobbits kept lembas in leaves.").Reply(),
		fakellm.Stream("An answer after the summary."))
	a.send("A fifth question")
	a.waitJS(`[...document.querySelectorAll('.msg-user .msg-text')].pop()?.textContent === 'A fifth question'`)
	a.waitJS(`[...document.querySelectorAll('.msg-assistant')].pop()?.querySelector('.reply-activity')?.textContent === 'Summarising the earlier turns first…'`)
	a.shot("summarising")
	if a.bool(`!![...document.querySelectorAll('.msg-assistant')].pop()?.querySelector('.msg-omitted')`) {
		t.Error("the reply says earlier turns were not sent while they are being summarised")
	}
	close(gate)
	a.waitJS(lastReply + `.includes('An answer after the summary.')`)
	a.waitReplyIdle()
	a.waitJS(lastReply + `.includes('earlier turns were summarised first')`)
	a.waitJS(`!!document.querySelector('.compact-summary')`)
	a.shot("summarised")
	if a.bool(`!![...document.querySelectorAll('.msg-assistant')].pop()?.querySelector('.reply-activity:not([hidden])')`) {
		t.Error("the activity line stays after the reply")
	}
}
