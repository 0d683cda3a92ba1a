package e2e

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/tests/harness"
)

// A chat longer than its model's context is sent from its newest turns, and
// the transcript says above the reply how many earlier ones were not sent.
func TestOmittedTurnsMarkerInChromium(t *testing.T) {
	a := newChatApp(t)
	// Turns left out start an automatic compaction; here every summary
	// fails, so the newest turns that fit are sent and the marker says so.
	a.llm.SetDefault(fakellm.Func(func(r fakellm.Request) fakellm.Reply {
		if strings.Contains(string(r.Body), "Summarise the conversation above") {
			return fakellm.Status(http.StatusBadRequest, `{"error":{"message":"no summaries here"}}`)
		}
		return noAutoTitles()
	}))
	question := strings.Repeat("A long question about the keeping of lembas. ", 20) // ~300 tokens
	chatID := seedTurns(t, a.base, 1024, 4, question)
	a.do(chromedp.Navigate(a.base + "/#/chat/" + strconv.Itoa(chatID)))
	a.waitJS(`document.querySelectorAll('.msg-assistant').length === 4`)
	markers := a.str(`[...document.querySelectorAll('.msg-assistant')].map(m => { const o = m.querySelector('.msg-omitted'); return o ? o.innerText : '-'; }).join('|')`)
	parts := strings.Split(markers, "|")
	if parts[0] != "-" || !strings.HasSuffix(parts[3], "earlier turns were not sent") {
		t.Errorf("markers above the replies: %q", markers)
	}
	a.js(`[...document.querySelectorAll('.msg-omitted')].pop().scrollIntoView({block: 'center'})`)
	a.shot("omitted")

	// A regenerated reply takes its history the same way, and says so.
	a.llm.Enqueue(fakellm.Stream("A regenerated answer."))
	a.clickXPath(`//article[contains(@class,'msg-assistant')][last()]//button[contains(., 'Regenerate')]`)
	a.waitJS(lastReply + `.includes('A regenerated answer.')`)
	a.waitReplyIdle()
	a.waitJS(`(() => { const m = [...document.querySelectorAll('.msg-assistant')].pop(); const o = m && m.querySelector('.msg-omitted'); return !!o && o.innerText.endsWith('earlier turns were not sent'); })()`)
	if n := a.js(`document.querySelectorAll('.msg-assistant').length`).(float64); n != 4 {
		t.Errorf("%v replies after regenerating, want 4", n)
	}
	a.js(`[...document.querySelectorAll('.msg-omitted')].pop().scrollIntoView({block: 'center'})`)
	a.shot("omitted-regenerated")
}

// seedTurns sends n user turns (content each) to one new chat with the
// first picker model, whose context length is set to window, waiting for
// each reply to finish; it returns the chat's id.
func seedTurns(t *testing.T, base string, window, n int, content string) int {
	t.Helper()
	var models []struct{ ID int }
	harness.API(t, base, "Models.Picker", &models)
	if len(models) == 0 {
		t.Fatal("no models")
	}
	harness.API(t, base, "Models.Update", nil, models[0].ID, map[string]any{"contextLength": window})
	var turn struct{ Chat struct{ ID int } }
	for i := range n {
		args := map[string]any{"modelId": models[0].ID, "content": content}
		if i > 0 {
			args["chatId"] = turn.Chat.ID
		}
		harness.API(t, base, "Chats.Send", &turn, args)
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			var chats []struct {
				ID        int
				Streaming bool
			}
			harness.API(t, base, "Chats.List", &chats)
			if len(chats) == 1 && !chats[0].Streaming {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("reply %d never finished: %+v", i, chats)
			}
		}
	}
	return turn.Chat.ID
}
