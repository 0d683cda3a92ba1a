package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/tests/harness"
)

// TestToolRoundInChromium: a chat whose model searches the web (the
// self-test's Web: no network, a "[hold]" query waits for
// Diag.ReleaseTools) shows the activity line while the tool runs; a reload
// mid-round re-attaches to the same state (the call in its activity block,
// the line); released, the answer follows, and the result's only link is
// its https URL.
func TestToolRoundInChromium(t *testing.T) {
	harness.Require(t, "chromium")
	bin := harness.Build(t, "", "CGO_ENABLED=0")
	srv, base := harness.Serve(t, bin, t.TempDir(), "LEMBAS_SELFTEST=1")
	a := &chatApp{base: base, llm: fakellm.New(t), srv: srv}
	a.llm.SetDefault(fakellm.Func(func(r fakellm.Request) fakellm.Reply {
		body := string(r.Body)
		switch {
		case strings.Contains(body, "You write titles"):
			return fakellm.Stream("Weather in Bree")
		case strings.Contains(body, `"role":"tool"`):
			return fakellm.Stream("It rains in Bree, says [the first result](https://example.org/first).")
		case !strings.Contains(body, "weather in Bree"), strings.Contains(body, "And tomorrow?"):
			return fakellm.Stream("Hello.") // the self-test's own chat
		}
		return fakellm.NewStream().Content("Let me search. ").
			ToolCall(0, "call_1", "web_search", `{"query":"[hold] Bree weather"}`).Finish("tool_calls").Reply()
	}))
	a.open(t, "")
	// LEMBAS_SELFTEST runs the page's self-test at every load; then a
	// new chat.
	selftests := func(n int) {
		t.Helper()
		rx := regexp.MustCompile(`selftest \w+ (done|error)`)
		deadline := time.Now().Add(90 * time.Second)
		for len(rx.FindAllString(srv.Stdout()+srv.Stderr(), -1)) < n {
			if time.Now().After(deadline) {
				t.Fatalf("the page's self-test did not finish %d times", n)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	selftests(1)
	a.do(chromedp.Navigate(base + "/#/"))
	a.waitJS(`!!document.querySelector('#composer-input')`)
	var models []struct{ ID int64 }
	harness.API(t, base, "Models.Picker", &models)
	if len(models) == 0 {
		t.Fatal("no models")
	}
	harness.API(t, base, "Models.Update", nil, models[0].ID, map[string]any{"capabilities": map[string]any{"tools": true}})
	// The library's families are on by default; off here, web search is
	// the only tool.
	harness.API(t, base, "Tools.SetSettings", nil, map[string]any{"families": map[string]bool{"web_search": true,
		"knowledge": false, "notes": false, "memory": false, "skills": false}})
	var avail []struct{ Name string }
	harness.API(t, base, "Tools.Available", &avail)
	if len(avail) != 1 || avail[0].Name != "web_search" {
		t.Fatalf("available tools %+v", avail)
	}

	a.send("What is the weather in Bree?")
	const activity = `(document.querySelector('.msg-assistant .reply-activity:not([hidden])')?.textContent || '')`
	const block = `(document.querySelector('.msg-assistant .tool-activity')?.innerText || '')`
	a.waitJS(activity + `.includes('Searching the web for “[hold] Bree weather”')`)
	a.waitJS(block + `.includes('web_search')`)
	a.shot("tool-activity")

	// A reload while the tool runs comes back to the same state (the
	// self-test runs again first, then the chat is opened).
	chatHash := a.str(`location.hash`)
	a.do(chromedp.Reload())
	selftests(2)
	a.do(chromedp.Navigate(base + "/" + chatHash))
	a.waitJS(activity + `.includes('Searching the web for “[hold] Bree weather”') && ` + block + `.includes('web_search')`)
	if got := a.str(`document.querySelector('.msg-assistant .tool-call')?.textContent || ''`); !strings.Contains(got, "[hold] Bree weather") {
		t.Errorf("the call after the reload reads %q", got)
	}
	if !a.bool(`!!document.querySelector('.msg-assistant.is-streaming')`) {
		t.Error("after the reload the reply is not shown as streaming")
	}

	harness.API(t, base, "Diag.ReleaseTools", nil)
	a.waitJS(lastReply + `.includes('It rains in Bree')`)
	a.waitReplyIdle()
	a.waitJS(`!document.querySelector('.msg-assistant .reply-activity:not([hidden])')`)
	a.do(chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('.msg-assistant details').forEach((d) => { d.open = true; })`))
	a.waitJS(`!!document.querySelector('.msg-assistant .tool-result-text')`)
	links := a.str(`[...document.querySelectorAll('.msg-assistant .tool-result-text a')].map((x) => x.getAttribute('href')).join(' ')`)
	if links != "https://example.org/first" {
		t.Errorf("links in the result: %q (a javascript: URL must never be one)", links)
	}
	if got := a.str(`document.querySelector('.msg-assistant .tool-result-text').textContent`); !strings.Contains(got, "javascript:alert(1)") || !strings.Contains(got, "Second <b>result</b>") {
		t.Errorf("result text %q", got)
	}
	a.shot("tool-result")

	// The chat's tools switch: shown (on) for a model that offers tools;
	// turned off, the next request carries no tools array.
	a.waitJS(`document.querySelector('#composer-tools')?.checked === true`)
	a.click(`#composer-tools`)
	a.waitJS(`document.querySelector('#composer-tools')?.checked === false`)
	// The box flips at once; Chats.Update is still on its way, so the
	// server's view is polled rather than read once.
	var view struct{ ToolsOff bool }
	chatID := a.js(`Number(location.hash.split('/').pop())`)
	offBy := time.Now().Add(30 * time.Second)
	for harness.API(t, base, "Chats.Get", &view, chatID); !view.ToolsOff; harness.API(t, base, "Chats.Get", &view, chatID) {
		if time.Now().After(offBy) {
			t.Fatal("the switch did not turn the chat's tools off")
		}
		time.Sleep(50 * time.Millisecond)
	}
	n := len(a.llm.Requests())
	a.send("And tomorrow?")
	a.waitJS(lastReply + `.includes('Hello.')`)
	for _, r := range a.llm.Requests()[n:] {
		if _, ok := r.JSON["tools"]; ok && r.JSON["stream"] == true {
			t.Errorf("a request of a chat with tools off offered tools: %s", r.Body)
		}
	}

	// Settings → Tools: the families and the round limit.
	a.do(chromedp.Navigate(base + "/#/settings/tools"))
	a.waitJS(`document.querySelector('#tools-family-web_search')?.checked === true && document.querySelector('#tools-family-fetch')?.checked === false`)
	a.fill(`#tools-rounds`, "3")
	a.click(`#tools-form button[type=submit]`)
	var st struct{ MaxRounds int }
	deadline := time.Now().Add(30 * time.Second)
	for harness.API(t, base, "Tools.Settings", &st); st.MaxRounds != 3; harness.API(t, base, "Tools.Settings", &st) {
		if time.Now().After(deadline) {
			t.Fatalf("the round limit is %d after saving 3", st.MaxRounds)
		}
		time.Sleep(50 * time.Millisecond)
	}
	a.shot("tools-settings")
	// No a.pe.check: the self-test makes its 500s on purpose.
}

// TestModelToolSwitches: a model marked for tools shows a switch per tool
// family on its card; one turned off is saved in its capabilities.
func TestModelToolSwitches(t *testing.T) {
	a := newChatApp(t)
	a.do(chromedp.Navigate(a.base + "/#/settings/models"))
	a.click(".model-row-main")
	a.waitJS(`!!document.querySelector('.model-detail')`)
	if a.bool(`!!document.querySelector("input[id$='-tool-web_search']")`) {
		t.Error("tool switches shown for a model not marked for tools")
	}
	a.clickXPath(`//form[contains(@class,'model-detail')]//label[.//span[text()='Tools']]/input`)
	a.waitJS(`!!document.querySelector("input[id$='-tool-web_search']") && document.querySelector("input[id$='-tool-web_search']").checked`)
	// The library's families have their switches too, in plain words.
	for _, f := range []struct{ id, label string }{{"knowledge", "Knowledge search"}, {"notes", "Notes"}, {"memory", "Memory"}, {"skills", "Skills"}} {
		sel := `document.querySelector("input[id$='-tool-` + f.id + `']")`
		if !a.bool(sel+`?.checked === true`) || a.str(sel+`?.nextElementSibling?.textContent ?? ''`) != f.label {
			t.Errorf("the model's %s switch: checked %v, label %q", f.id, a.bool(sel+`?.checked === true`), a.str(sel+`?.nextElementSibling?.textContent ?? ''`))
		}
	}
	a.click(`input[id$='-tool-web_search']`)
	a.shot("model-tool-switches")
	a.click(`.model-detail button[type=submit]`)
	var models []struct {
		Capabilities struct {
			Tools    bool
			ToolsOff []string
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		harness.API(t, a.base, "Models.Picker", &models)
		if len(models) > 0 && models[0].Capabilities.Tools && len(models[0].Capabilities.ToolsOff) == 1 && models[0].Capabilities.ToolsOff[0] == "web_search" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("capabilities after saving: %+v", models)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Settings → Tools: the library's families are on until turned off;
	// the web's are off until turned on.
	a.do(chromedp.Navigate(a.base + "/#/settings/tools"))
	a.waitJS(`!!document.querySelector('#tools-family-knowledge')`)
	for f, on := range map[string]bool{"knowledge": true, "notes": true, "memory": true, "skills": true, "web_search": false, "fetch": false} {
		if got := a.bool(`document.querySelector('#tools-family-` + f + `').checked`); got != on {
			t.Errorf("Settings → Tools: %s checked %v, want %v", f, got, on)
		}
	}
	a.shot("tools-settings-defaults")
	a.pe.check(t)
}

// TestStopDuringAToolRound: Stop while a tool runs ends the reply as
// stopped (no activity line left, the call kept in its block), and the
// stopped reply can be continued.
func TestStopDuringAToolRound(t *testing.T) {
	harness.Require(t, "chromium")
	bin := harness.Build(t, "", "CGO_ENABLED=0")
	srv, base := harness.Serve(t, bin, t.TempDir(), "LEMBAS_SELFTEST=1")
	a := &chatApp{base: base, llm: fakellm.New(t), srv: srv}
	a.llm.SetDefault(fakellm.Func(func(r fakellm.Request) fakellm.Reply {
		body := string(r.Body)
		switch {
		case strings.Contains(body, "You write titles"):
			return fakellm.Stream("Weather in Bree")
		case strings.Contains(body, "Continue exactly where"):
			return fakellm.Stream("It rains in Bree.")
		case !strings.Contains(body, "weather in Bree"):
			return fakellm.Stream("Hello.") // the self-test's own chat
		}
		return fakellm.NewStream().Content("Let me search. ").
			ToolCall(0, "call_1", "web_search", `{"query":"[hold] Bree weather"}`).Finish("tool_calls").Reply()
	}))
	a.open(t, "")
	rx := regexp.MustCompile(`selftest \w+ (done|error)`)
	for deadline := time.Now().Add(90 * time.Second); len(rx.FindAllString(srv.Stdout()+srv.Stderr(), -1)) < 1; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the page's self-test did not finish")
		}
	}
	a.do(chromedp.Navigate(base + "/#/"))
	a.waitJS(`!!document.querySelector('#composer-input')`)
	var models []struct{ ID int64 }
	harness.API(t, base, "Models.Picker", &models)
	if len(models) == 0 {
		t.Fatal("no models")
	}
	harness.API(t, base, "Models.Update", nil, models[0].ID, map[string]any{"capabilities": map[string]any{"tools": true}})
	harness.API(t, base, "Tools.SetSettings", nil, map[string]any{"families": map[string]bool{"web_search": true}})
	// The held search is let go at the end, whatever happened.
	t.Cleanup(func() { harness.API(t, base, "Diag.ReleaseTools", nil) })

	a.send("What is the weather in Bree?")
	const activity = `(document.querySelector('.msg-assistant .reply-activity:not([hidden])')?.textContent || '')`
	a.waitJS(activity + `.includes('Searching the web')`)
	a.waitJS(`/stop/i.test(document.querySelector('#composer-button')?.innerText || '')`)
	a.click("#composer-button")
	a.waitReplyIdle()
	a.waitJS(`/stopped/i.test(` + lastReply + `)`)
	a.waitJS(`!document.querySelector('.msg-assistant .reply-activity:not([hidden])')`)
	if got := a.str(`document.querySelector('.msg-assistant .tool-activity')?.innerText || ''`); !strings.Contains(got, "web_search") {
		t.Errorf("the stopped reply's activity block reads %q", got)
	}
	a.shot("tool-stopped")

	// The stored row is stopped, not streaming.
	id := int(a.js(`Number(location.hash.split('/').pop())`).(float64))
	var page struct {
		Messages []struct {
			Role, Status string
		}
	}
	harness.API(t, base, "Chats.Messages", &page, id, 0, 50)
	if n := len(page.Messages); n == 0 || page.Messages[n-1].Status != "stopped" {
		t.Errorf("messages after Stop: %+v", page.Messages)
	}

	a.clickXPath(`//article[contains(@class,'msg-assistant')][last()]//button[contains(., 'Continue')]`)
	a.waitJS(lastReply + `.includes('It rains in Bree.')`)
	a.waitReplyIdle()
	a.waitJS(`!document.querySelector('.msg-assistant .reply-activity:not([hidden])')`)
	a.shot("tool-continued")
}
