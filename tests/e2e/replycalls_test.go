package e2e

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/tests/harness"
)

// callsIn counts the facade calls of each method that the server logged in
// log (at DEBUG: msg=call method=…).
func callsIn(log string) map[string]int {
	out := map[string]int{}
	for _, m := range regexp.MustCompile(`msg=call method=(\S+)`).FindAllStringSubmatch(log, -1) {
		out[m[1]]++
	}
	return out
}

// TestReplyEndReadsNothingAgain: the end of a reply in the open chat costs
// one MarkRead and one Chats.List, and no Chats.Messages: the final frame
// carries the final HTML, the metrics and the Markdown source (Copy). It
// used to cost three Chats.List and a Chats.Messages.
func TestReplyEndReadsNothingAgain(t *testing.T) {
	a := newChatApp(t)
	if !a.bool(recordCopies) {
		t.Fatal("no navigator.clipboard in this page")
	}
	// The first exchange, and its title, before anything is counted.
	a.llm.Enqueue(fakellm.Stream("First answer."), fakellm.Stream("Hobbit matters"))
	a.send("Tell me about hobbits")
	a.waitReplyIdle()
	a.waitJS(`[...document.querySelectorAll('.chat-row')].some((r) => r.innerText.includes('Hobbit matters'))`)

	gate := make(chan struct{})
	r := fakellm.NewStream().Content("Second answer, ", "with **bold** words.").Reply()
	r.Events[2].After = gate // Events[0] is the role chunk
	a.llm.Enqueue(r)
	a.send("And their feet?")
	a.waitJS(lastReply + `.includes('Second answer')`)
	// What the send itself costs is done once its list refresh is logged.
	pollUntil(t, "the send's list refresh", func() bool {
		log := a.srv.Stderr()
		i := strings.LastIndex(log, "msg=call method=Chats.Send ")
		return i >= 0 && strings.Contains(log[i:], "msg=call method=Chats.List ")
	})
	time.Sleep(500 * time.Millisecond) // a lower bound for stray calls of the send, not a deadline
	from := len(a.srv.Stderr())

	close(gate)
	a.waitReplyIdle()
	a.waitJS(lastReply + `.includes('bold words')`)
	pollUntil(t, "the reply's read mark", func() bool { return callsIn(a.srv.Stderr()[from:])["Chats.MarkRead"] >= 1 })
	// Late refreshes (the sidebar's timers) come within a second; wait
	// longer than that (a lower bound, not a deadline).
	time.Sleep(2 * time.Second)
	got := callsIn(a.srv.Stderr()[from:])
	if got["Chats.List"] != 1 || got["Chats.Messages"] != 0 || got["Chats.MarkRead"] != 1 {
		t.Errorf("the end of a reply called %v; want one Chats.List, one Chats.MarkRead and no Chats.Messages", got)
	}

	// Copy has the Markdown source, from the final frame.
	a.clickXPath(`(//article[contains(@class,'msg-assistant')])[last()]//button[contains(., 'Copy')]`)
	a.waitJS(`window.__copies.length >= 1`)
	if got := a.str(`window.__copies[window.__copies.length - 1]`); got != "Second answer, with **bold** words." {
		t.Errorf("Copy copied %q, want the Markdown source", got)
	}
	chatID, err := strconv.Atoi(strings.TrimPrefix(a.str(`location.hash`), "#/chat/"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct{ Unread bool }
	harness.API(t, a.base, "Chats.Get", &c, chatID)
	if c.Unread {
		t.Error("the chat is unread after its reader watched the reply finish")
	}
	a.waitJS(`!document.querySelector('.chat-row.is-unread')`)
	a.pe.check(t)
}

// pollUntil waits (generously) until ok holds.
func pollUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !ok(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}
