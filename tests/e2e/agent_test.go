package e2e

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/crypto/ssh"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/sshx/sshtest"
	"github.com/llembas/lembas/tests/harness"
)

// Hostile strings: each must show as text, and nothing in them may run.
const (
	hostileProfile  = `<img src=x onerror="window.__pwned=1">Build box`
	hostileEcho     = `echo '<b>bold</b> <img src=x onerror=window.__pwned=1>' from-agent`
	hostileQuestion = `Which <b>branch</b>? <img src=x onerror="window.__pwned=1">`
	planMark        = "PLAN-MARK"
)

// agentTurn reads what the fake endpoint needs from a request: the role of
// the last message and the text of the last user message.
func agentTurn(body []byte) (lastRole, lastUser string) {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil || len(req.Messages) == 0 {
		return "", ""
	}
	lastRole = req.Messages[len(req.Messages)-1].Role
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != "user" {
			continue
		}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			return lastRole, s
		}
		var parts []struct{ Text string }
		_ = json.Unmarshal(m.Content, &parts)
		for _, p := range parts {
			s += p.Text
		}
		return lastRole, s
	}
	return lastRole, ""
}

func toolCall(name string, args any) fakellm.Reply {
	b, _ := json.Marshal(args)
	return fakellm.NewStream().Content("Let me do that. ").ToolCall(0, "call_"+name, name, string(b)).Finish("tool_calls").Reply()
}

// agentLLM answers an agent chat's turns by the last user message: each
// test step's message asks for one tool call, and a tool's result gets a
// short answer.
func agentLLM(r fakellm.Request) fakellm.Reply {
	body := string(r.Body)
	if strings.Contains(body, "You write titles") {
		return fakellm.Stream("Agent work")
	}
	role, user := agentTurn(r.Body)
	if role == "tool" {
		return fakellm.Stream("Done with the tools.")
	}
	switch {
	case strings.Contains(user, planMark):
		return fakellm.Stream("Carrying out the plan now.")
	case strings.Contains(user, "run the echo"):
		return toolCall("shell_run", map[string]any{"command": hostileEcho, "cwd": ""})
	case strings.Contains(user, "run two"):
		return fakellm.NewStream().Content("Two commands. ").
			ToolCall(0, "call_a", "shell_run", `{"command":"echo first-of-two","cwd":""}`).
			ToolCall(1, "call_b", "shell_run", `{"command":"touch second-of-two","cwd":""}`).
			Finish("tool_calls").Reply()
	case strings.Contains(user, "do not run this"):
		return toolCall("shell_run", map[string]any{"command": "touch declined-file", "cwd": ""})
	case strings.Contains(user, "wait for me"):
		return toolCall("shell_run", map[string]any{"command": "echo waited", "cwd": ""})
	case strings.Contains(user, "ask me"):
		return toolCall("ask_user", map[string]any{"questions": []map[string]any{
			{"question": hostileQuestion, "options": []string{"main", "<i>dev</i>"}},
			{"question": "How many tests?", "options": []string{"1", "2"}},
			{"question": "Anything else?"},
		}})
	case strings.Contains(user, "make a plan"):
		return toolCall("plan_submit", map[string]any{"plan": "1. Read the <b>README</b>.\n2. Fix it. " + planMark})
	}
	return fakellm.Stream("Hello.")
}

// TestAgentChatInChromium: an SSH connection made in Settings (a key
// LLeMbas makes, authorised on a real sshd; its host key checked and
// accepted; a test connection), an agent chat in Manual mode whose
// command is approved in its card and runs, one refused, ask_user's three
// questions answered in one card, Stop while a card waits, a reload that
// finds the waiting card, and a plan carried out (the mode becomes Edit).
// Every hostile string shows as text.
func TestAgentChatInChromium(t *testing.T) {
	sshd := sshtest.Start(t)
	a := serveChatApp(t)
	a.llm.SetDefault(fakellm.Func(agentLLM))
	a.open(t, "")
	var models []struct{ ID int64 }
	harness.API(t, a.base, "Models.Picker", &models)
	if len(models) == 0 {
		t.Fatal("no models")
	}
	harness.API(t, a.base, "Models.Update", nil, models[0].ID, map[string]any{"capabilities": map[string]any{"tools": true}})
	run := func(name string, step func(t *testing.T)) {
		t.Run(name, func(st *testing.T) {
			a.t = st
			defer func() { a.t = t }()
			step(st)
		})
	}
	pwned := func(t *testing.T) {
		if a.bool(`!!window.__pwned || !!document.querySelector('.ask-card b, .ask-card img, .ask-card i, .plan-card b, #ssh-list img, .agent-bar img')`) {
			t.Fatal("a hostile string became HTML")
		}
	}
	const card = `document.querySelector('.msg-assistant:last-of-type .ask-card')`
	const mode = `(document.querySelector('#agent-mode')?.value || '')`

	run("the instance's agent settings", func(t *testing.T) {
		a.do(chromedp.Navigate(a.base + "/#/settings/agent"))
		a.waitJS(`document.querySelector('#agent-enabled')?.checked === true && document.querySelector('#agent-rounds').value === '24'`)
		if got := a.str(`document.querySelector('#agent-approval').closest('.field').innerText`); !strings.Contains(got, "does not run and the reply ends") {
			t.Errorf("the approval limit's hint reads %q", got)
		}
		a.fill("#agent-rounds", "30")
		a.click("#agent-settings-save")
		var s struct{ MaxRounds int }
		pollUntil(t, "the round limit saved", func() bool {
			harness.API(t, a.base, "Agent.Settings", &s)
			return s.MaxRounds == 30
		})
	})

	var profileID int
	run("a connection with a key LLeMbas makes", func(t *testing.T) {
		a.do(chromedp.Navigate(a.base + "/#/settings/ssh/new"))
		a.waitJS(`!!document.querySelector('#ssh-name')`)
		a.fill("#ssh-name", hostileProfile)
		a.fill("#ssh-host", sshd.Host)
		a.fill("#ssh-port", strconv.Itoa(sshd.Port))
		a.fill("#ssh-user", sshd.User)
		if !a.bool(`document.querySelector('#ssh-signin-generated').checked`) {
			t.Fatal("a new connection does not default to a key LLeMbas makes")
		}
		a.click("#ssh-save")
		a.waitJS(`/^#\/settings\/ssh\/\d+$/.test(location.hash) && !!document.querySelector('#ssh-pubkey')`)
		profileID, _ = strconv.Atoi(strings.TrimPrefix(a.str(`location.hash`), "#/settings/ssh/"))
		pub := strings.TrimSpace(a.str(`document.querySelector('#ssh-pubkey').textContent`))
		if !strings.HasPrefix(pub, "ssh-ed25519 ") {
			t.Fatalf("the public key reads %q", pub)
		}
		if !a.bool(`document.querySelector('.agent-pubkey').innerText.includes('Add this line to ~/.ssh/authorized_keys on the host')`) {
			t.Error("no line says where the key goes")
		}
		if got := a.str(`document.querySelector('#ssh-list .model-row-name').textContent`); got != hostileProfile {
			t.Errorf("the list shows the name as %q", got)
		}
		sshd.AuthorizeKey(pub)
		pwned(t)
	})

	run("host key checked, accepted, then matches", func(t *testing.T) {
		a.click("#ssh-check")
		a.waitJS(`document.querySelector('#ssh-scan')?.dataset.status === 'new'`)
		a.shot("host-key-new")
		a.click("#ssh-accept")
		a.waitJS(`!!document.querySelector('#ssh-pinned')`)
		a.click("#ssh-check")
		a.waitJS(`document.querySelector('#ssh-scan')?.dataset.status === 'same'`)
		if !a.bool(`document.querySelector('#ssh-scan').innerText.includes('Matches the accepted key')`) {
			t.Error("a matching key does not say so")
		}
	})

	run("test connection", func(t *testing.T) {
		a.click("#ssh-test-run")
		a.waitJSFor(`!!document.querySelector('#ssh-test-result')`, 60*time.Second)
		if !a.bool(`document.querySelector('#ssh-test-result').dataset.ok === 'true'`) {
			t.Fatalf("the test failed: %s", a.str(`document.querySelector('#ssh-test-result').textContent`))
		}
		a.shot("connection")
	})

	run("a pasted key and a password, never shown back", func(t *testing.T) {
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		block, err := ssh.MarshalPrivateKey(priv, "")
		if err != nil {
			t.Fatal(err)
		}
		signer, err := ssh.NewSignerFromKey(priv)
		if err != nil {
			t.Fatal(err)
		}
		sshd.AuthorizeKey(strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey()))))
		pemText := string(pem.EncodeToMemory(block))
		secretLine := strings.Split(pemText, "\n")[1]
		type way struct{ name, radio, field, secret string }
		ways := []way{{"Pasted key", "#ssh-signin-pasted", "#ssh-private-key", pemText}}
		if sshd.Password != "" {
			ways = append(ways, way{"Password", "#ssh-signin-password", "#ssh-password", sshd.Password})
		} else {
			t.Log("sshtest has no password user here: the password connection is not tried")
		}
		for _, w := range ways {
			a.do(chromedp.Navigate(a.base + "/#/settings/ssh/new"))
			a.waitJS(`!!document.querySelector('#ssh-name') && !document.querySelector('#ssh-host').value`)
			a.fill("#ssh-name", w.name)
			a.fill("#ssh-host", sshd.Host)
			a.fill("#ssh-port", strconv.Itoa(sshd.Port))
			a.fill("#ssh-user", sshd.User)
			a.click(w.radio)
			a.waitJS(`!!document.querySelector(` + jsString(w.field) + `)`)
			a.setValue(w.field, w.secret)
			a.click("#ssh-save")
			a.waitJS(`/^#\/settings\/ssh\/\d+$/.test(location.hash) && location.hash !== '#/settings/ssh/` + strconv.Itoa(profileID) + `' && document.querySelector('#ssh-form h2').textContent === ` + jsString(w.name))
			if !a.bool(`(document.querySelector(` + jsString(w.field) + `)?.value || '') === ''`) {
				t.Errorf("%s: the secret is still in its field after saving", w.name)
			}
			needle := w.secret
			if w.field == "#ssh-private-key" {
				needle = secretLine
			}
			if a.bool(`document.documentElement.innerHTML.includes(` + jsString(needle) + `)`) {
				t.Errorf("%s: the secret is in the page", w.name)
			}
			a.click("#ssh-check")
			a.waitJS(`document.querySelector('#ssh-scan')?.dataset.status === 'new'`)
			a.click("#ssh-accept")
			a.waitJS(`!!document.querySelector('#ssh-pinned')`)
			a.click("#ssh-test-run")
			a.waitJSFor(`!!document.querySelector('#ssh-test-result')`, 60*time.Second)
			if !a.bool(`document.querySelector('#ssh-test-result').dataset.ok === 'true'`) {
				t.Errorf("%s: the test failed: %s", w.name, a.str(`document.querySelector('#ssh-test-result').textContent`))
			}
			// Reopened, the connection shows the way it signs in.
			a.do(chromedp.Reload())
			a.waitJS(`document.querySelector('#ssh-form h2')?.textContent === ` + jsString(w.name))
			if !a.bool(`document.querySelector(` + jsString(w.radio) + `).checked`) {
				t.Errorf("%s: reopened, the connection shows %q checked", w.name, a.str(`document.querySelector('input[name=ssh-signin]:checked')?.id || ''`))
			}
			if a.bool(`!!document.querySelector('#ssh-new-key')`) {
				t.Errorf("%s: reopened, it offers to make a new key as if it had made this one", w.name)
			}
		}
	})

	run("an agent chat in Manual mode; a command approved", func(t *testing.T) {
		a.do(chromedp.Navigate(a.base + "/#/"))
		a.waitJS(`!!document.querySelector('#chat-kind-agent')`)
		a.click("#chat-kind-agent")
		a.waitJS(`!!document.querySelector('#agent-profile')`)
		if got := a.str(`document.querySelector('#agent-profile').value`); got != strconv.Itoa(profileID) {
			t.Fatalf("the connection chosen is %q, want %d", got, profileID)
		}
		// A directory that is not there: Browse says so and offers the home directory.
		a.fill("#agent-dir", "/no/such/dir")
		a.click("#agent-browse-open")
		a.waitJSFor(`!!document.querySelector('#agent-browse .error-note') && !!document.querySelector('#agent-browse-home')`, 60*time.Second)
		a.click("#agent-browse-home")
		a.waitJSFor(`!!document.querySelector('#agent-browse-use') && !document.querySelector('#agent-browse .error-note')`, 60*time.Second)
		a.click("#agent-browse-use")
		a.waitJS(`document.querySelector('#agent-dir').value.startsWith('/')`)
		if got := a.str(`document.querySelector('#agent-new-mode').value`); got != "manual" {
			t.Errorf("a new agent chat's mode is %q, want manual", got)
		}
		a.shot("new-agent-chat")
		a.send("Please run the echo")
		a.waitJS(`location.hash.startsWith('#/chat/')`)
		a.waitJS(card + `?.dataset.kind === 'approve'`)
		if got := a.str(card + `.querySelector('.ask-call-main').textContent`); got != hostileEcho {
			t.Errorf("the card shows the command as %q", got)
		}
		if !a.bool(card + `.querySelector('.ask-call-tool').textContent === 'shell_run'`) {
			t.Error("the card does not name the tool")
		}
		if !a.bool(`document.querySelector('#agent-where').textContent.includes(':/')`) {
			t.Errorf("the header reads %q", a.str(`document.querySelector('#agent-where').textContent`))
		}
		if got := a.str(mode); got != "manual" {
			t.Errorf("the header's mode is %q", got)
		}
		if a.bool(`!!document.querySelector('#composer-tools')`) {
			t.Error("an agent chat offers the Tools switch, which would leave the agent nothing to act with")
		}
		if !a.bool(`/^Asked to approve 1 call · waiting for your answer$/.test(document.querySelector('.msg-assistant:last-of-type .part-pause summary')?.textContent || '')`) {
			t.Errorf("the pause line reads %q", a.str(`document.querySelector('.msg-assistant:last-of-type .part-pause')?.textContent || ''`))
		}
		pwned(t)
		a.shot("approve-card")
		a.click(".ask-card .ask-approve")
		a.waitJS(`!document.querySelector('.ask-card')`)
		a.waitReplyIdle()
		a.waitJS(lastReply + `.includes('Done with the tools.')`)
		a.waitJS(`[...document.querySelectorAll('.msg-assistant:last-of-type .tool-result-text')].some((e) => e.textContent.includes('<b>bold</b> <img src=x onerror=window.__pwned=1> from-agent'))`)
		pwned(t)
	})

	run("two calls in one card: one run, one not", func(t *testing.T) {
		a.send("Please run two commands")
		a.waitJS(card + `?.dataset.kind === 'approve' && ` + card + `.querySelectorAll('.ask-call').length === 2`)
		a.clickXPath(`(//section[contains(@class,'ask-card')]//li[contains(@class,'ask-call')])[1]//button[normalize-space(.)='Run']`)
		a.clickXPath(`(//section[contains(@class,'ask-card')]//li[contains(@class,'ask-call')])[2]//button[normalize-space(.)="Don't run"]`)
		a.fill(".ask-card .ask-note input", "not that file")
		a.shot("approve-two")
		a.click(".ask-card .ask-send-choices")
		a.waitJS(`!document.querySelector('.ask-card')`)
		a.waitReplyIdle()
		results := `[...document.querySelectorAll('.msg-assistant:last-of-type .tool-result-text')].map((e) => e.textContent).join('\n')`
		a.waitJS(results + `.includes('first-of-two') && ` + results + `.includes('not that file')`)
		if got := a.str(`document.querySelector('.msg-assistant:last-of-type .part-pause summary')?.textContent || ''`); got != "Asked to approve 2 calls · Approved 1, declined 1" {
			t.Errorf("the pause line reads %q", got)
		}
	})

	run("a command refused with a note", func(t *testing.T) {
		a.send("Please do not run this")
		a.waitJS(card + `?.dataset.kind === 'approve'`)
		a.fill(".ask-card .ask-note input", "not today")
		a.click(".ask-card .ask-decline")
		a.waitJS(`!document.querySelector('.ask-card')`)
		a.waitReplyIdle()
		a.waitJS(`[...document.querySelectorAll('.msg-assistant:last-of-type .tool-result-text')].some((e) => e.textContent.includes('declined'))`)
	})

	run("three questions in one card", func(t *testing.T) {
		a.send("Please ask me three things")
		a.waitJS(card + `?.dataset.kind === 'questions' && ` + card + `.querySelectorAll('.ask-question').length === 3`)
		if got := a.str(card + `.querySelector('.ask-question-text').textContent`); got != hostileQuestion {
			t.Errorf("the first question reads %q", got)
		}
		if got := a.str(card + `.querySelectorAll('.ask-option')[1].textContent`); got != "<i>dev</i>" {
			t.Errorf("the second option reads %q", got)
		}
		pwned(t)
		a.clickXPath(`(//section[contains(@class,'ask-card')]//li[contains(@class,'ask-question')])[1]//button[normalize-space(.)='main']`)
		a.clickXPath(`(//section[contains(@class,'ask-card')]//li[contains(@class,'ask-question')])[2]//button[normalize-space(.)='2']`)
		a.fill(`.ask-card .ask-question:nth-child(3) input`, "Nothing more")
		a.shot("questions-card")
		a.click(".ask-card .ask-send")
		a.waitJS(`!document.querySelector('.ask-card')`)
		a.waitReplyIdle()
		a.waitJS(lastReply + `.includes('Done with the tools.')`)
		// The model was told every answer at once, in one tool turn.
		reqs := a.llm.Requests()
		last := string(reqs[len(reqs)-1].Body)
		for _, want := range []string{"main", "Nothing more"} {
			if !strings.Contains(last, want) {
				t.Errorf("the answers sent to the model lack %q", want)
			}
		}
	})

	run("Stop while a card waits", func(t *testing.T) {
		a.send("Now wait for me")
		a.waitJS(card + `?.dataset.kind === 'approve'`)
		a.waitJS(`/stop/i.test(document.querySelector('#composer-button')?.innerText || '')`)
		a.click("#composer-button")
		a.waitJS(`!document.querySelector('.ask-card')`)
		a.waitReplyIdle()
		a.waitJS(`/stopped/i.test(` + lastReply + `)`)
	})

	run("a reload finds the waiting card", func(t *testing.T) {
		a.send("Again wait for me")
		a.waitJS(card + `?.dataset.kind === 'approve'`)
		a.do(chromedp.Reload())
		a.waitJS(card + `?.dataset.kind === 'approve'`)
		a.click(".ask-card .ask-approve")
		a.waitJS(`!document.querySelector('.ask-card')`)
		a.waitReplyIdle()
		a.waitJS(`[...document.querySelectorAll('.msg-assistant:last-of-type .tool-result-text')].some((e) => e.textContent.includes('waited'))`)
	})

	run("a plan carried out switches to Edit", func(t *testing.T) {
		a.waitJS(`!!document.querySelector('#agent-mode')`)
		a.bool(`(() => { const s = document.querySelector("#agent-mode"); s.value = "plan"; return s.dispatchEvent(new Event("change", {bubbles: true})); })()`)
		a.waitJS(mode + ` === 'plan'`)
		chatID, _ := strconv.Atoi(strings.TrimPrefix(a.str(`location.hash`), "#/chat/"))
		var c struct {
			Agent struct{ Mode string }
		}
		pollUntil(t, "the mode saved", func() bool {
			harness.API(t, a.base, "Chats.Get", &c, chatID)
			return c.Agent.Mode == "plan"
		})
		a.send("Please make a plan")
		a.waitReplyIdle()
		a.waitJS(`!!document.querySelector('.msg-assistant:last-of-type .plan-card .plan-carry')`)
		if got := a.str(`document.querySelector('.plan-card .plan-text').textContent`); !strings.Contains(got, "Read the <b>README</b>.") {
			t.Errorf("the plan reads %q", got)
		}
		pwned(t)
		a.shot("plan-card")
		a.click(".msg-assistant:last-of-type .plan-carry")
		a.waitJS(mode + ` === 'edit'`)
		a.waitJS(lastReply + `.includes('Carrying out the plan now.')`)
		harness.API(t, a.base, "Chats.Get", &c, chatID)
		if c.Agent.Mode != "edit" {
			t.Errorf("after carrying out the plan the chat's mode is %q, want edit", c.Agent.Mode)
		}
		a.shot("carried-out")
	})

	run("a regenerated reply says the host was not rewound", func(t *testing.T) {
		if a.bool(`!!document.querySelector('.agent-rewound')`) {
			t.Fatal("the rewound notice shows before any rewind")
		}
		a.clickXPath(`(//article[contains(@class,'msg-assistant')])[last()]//button[contains(., 'Regenerate')]`)
		a.waitReplyIdle()
		a.waitJS(`document.querySelector('.agent-rewound')?.textContent === 'The transcript was rewound; files changed by earlier steps are still on the host.'`)
		// Switching back to the first version says so at once.
		a.click(`.msg-assistant:last-of-type .msg-versions button[aria-label="Previous version"]`)
		a.waitJS(`[...document.querySelectorAll('.toast')].some((t) => t.innerText.includes('The host was not rewound'))`)
	})

	run("the agent bar on a phone", func(t *testing.T) {
		a.do(chromedp.EmulateViewport(390, 844))
		defer a.do(chromedp.EmulateViewport(1280, 800))
		a.waitJS(`(() => { const s = document.querySelector('#agent-mode'); if (!s) return false;
			const r = s.getBoundingClientRect(); return r.width > 0 && r.right <= innerWidth; })()`)
		// The sidebar slides away first.
		a.waitJS(`(() => { const s = document.querySelector('.sidebar'); return !s || s.getBoundingClientRect().right <= 1; })()`)
		if a.bool(`document.documentElement.scrollWidth > innerWidth`) {
			t.Error("the agent chat scrolls sideways on a phone")
		}
		a.shot("phone")
	})

	run("a changed host key warns and offers no accept", func(t *testing.T) {
		sshd.RotateHostKey()
		a.do(chromedp.Navigate(a.base + "/#/settings/ssh/" + strconv.Itoa(profileID)))
		a.waitJS(`!!document.querySelector('#ssh-check')`)
		a.click("#ssh-check")
		a.waitJS(`document.querySelector('#ssh-scan')?.dataset.status === 'changed'`)
		if a.bool(`!!document.querySelector('#ssh-accept')`) {
			t.Error("a changed key can be accepted from the warning")
		}
		a.click("#ssh-test-run")
		a.waitJSFor(`document.querySelector('#ssh-test-result')?.dataset.ok === 'false'`, 60*time.Second)
		a.shot("host-key-changed")
	})
	run("a chat whose connection was deleted says it can no longer act", func(t *testing.T) {
		var chats []struct {
			ID   int64
			Kind string
		}
		harness.API(t, a.base, "Chats.List", &chats)
		var chatID int64
		for _, c := range chats {
			if c.Kind == "agent" {
				chatID = c.ID
			}
		}
		if chatID == 0 {
			t.Fatalf("no agent chat in %+v", chats)
		}
		harness.API(t, a.base, "Agent.DeleteProfile", nil, profileID)
		a.do(chromedp.Navigate(a.base + "/#/chat/" + strconv.FormatInt(chatID, 10)))
		a.waitJS(`(document.querySelector('#composer-note')?.textContent || '').includes('SSH connection was deleted')`)
		if got := a.str(`document.querySelector('#agent-where').textContent`); !strings.HasPrefix(got, "Connection deleted · /") {
			t.Errorf("the agent bar reads %q", got)
		}
		a.shot("connection-deleted")
	})
	// Browse of a directory that is not there answers 400, which the browser logs.
	a.pe.check(t, "/api/Agent.Browse")
}

// TestAgentHiddenWithoutPermission: a member without agent.use is offered
// no Agent choice on the new-chat screen and no SSH connections tab.
func TestAgentHiddenWithoutPermission(t *testing.T) {
	a := serveChatApp(t)
	harness.API(t, a.base, "Connections.Create", nil, map[string]any{"name": "Fake", "baseUrl": a.llm.URL()})
	harness.API(t, a.base, "Admin.CreateUser", nil, map[string]any{"username": "pippin", "displayName": "Pippin", "password": "second-breakfast"})
	ctx := harness.Browser(t)
	harness.BrowserLogin(t, ctx, a.base, "pippin", "second-breakfast")
	p := newTab(t, ctx, "member")
	p.do(chromedp.EmulateViewport(1280, 800), chromedp.Navigate(a.base+"/"))
	p.waitJS(`!!document.querySelector('#composer-input')`)
	// Account.Me has answered once the settings tabs are drawn from it.
	p.do(chromedp.Navigate(a.base + "/#/settings/ssh"))
	p.waitJS(`!!document.querySelector('.tabs .tab.is-active') && location.hash !== '#/settings/ssh'`)
	if p.bool(`[...document.querySelectorAll('.tabs .tab')].some((t) => t.textContent === 'SSH connections')`) {
		t.Error("a member without agent.use sees the SSH connections tab")
	}
	p.do(chromedp.Navigate(a.base + "/#/"))
	p.waitJS(`!!document.querySelector('#composer-input')`)
	if p.bool(`!!document.querySelector('#chat-kind-agent, .agent-new')`) {
		t.Error("a member without agent.use is offered an agent chat")
	}
	// A member's start asks for the connections, and is refused; nothing
	// of the agent's is asked for at all (it would be refused too).
	p.pe.check(t, "/api/Connections.List")
}
