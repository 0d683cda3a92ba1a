package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/tests/harness"
)

// A search hit in a reply full of Markdown and LaTeX reads as plain text,
// with the match highlighted and nothing else as markup.
func TestSearchSnippetIsPlainTextInChromium(t *testing.T) {
	a := newChatApp(t)
	a.llm.Enqueue(fakellm.Stream("The **mallorn** answer:\n\n$$\\int_0^1 x^2\\,dx$$\n\n```go\nfmt.Println(\"<b>mallorn</b>\")\n```\n"))
	a.send("Tell me about trees")
	a.waitReplyIdle()
	a.waitJS(lastReply + `.includes('answer')`)
	a.do(harness.Click(chromedp.CSS("#chat-search")), chromedp.SendKeys(chromedp.CSS("#chat-search"), "mallorn"))
	a.waitJS(`[...document.querySelectorAll('.search-hit .hit-snippet')].some((s) => s.querySelector('mark'))`)
	a.shot("search-plain-snippet")
	snippet := a.str(`[...document.querySelectorAll('.search-hit .hit-snippet')].find((s) => s.querySelector('mark')).innerText`)
	for _, raw := range []string{"```", "**", "$$", `\int`} {
		if strings.Contains(snippet, raw) {
			t.Errorf("the snippet shows %q: %q", raw, snippet)
		}
	}
	if !strings.Contains(snippet, "mallorn") || !strings.Contains(snippet, "∫") || !strings.Contains(snippet, "<b>mallorn</b>") {
		t.Errorf("snippet %q", snippet)
	}
	// Only <mark> is markup: the <b> in the code is text.
	if n := a.js(`[...document.querySelectorAll('.search-hit .hit-snippet *')].filter((e) => e.tagName !== 'MARK').length`); n != float64(0) {
		t.Errorf("%v elements other than mark in the snippets", n)
	}
}
