package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/tests/harness"
)

// TestVoiceSettings: an administrator sets the instance's voice servers on
// Settings → Voice; a member's loopback override is refused with the
// server's words; the member's chosen voice is the one the speech endpoint
// is asked for, by Read aloud and by automatic reading.
func TestVoiceSettings(t *testing.T) {
	const (
		key      = "sk-voice-PLAINTEXT-0123456789abcdef"
		member   = "samwise"
		password = "po-tay-toes, boil em mash em"
	)
	voice := fakellm.New(t)
	voice.SetRoute("POST", "/v1/audio/speech", fakellm.Reply{Header: http.Header{"Content-Type": {"audio/wav"}}, Body: silentWAV()})
	voice.SetRoute("GET", "/v1/audio/voices", fakellm.Reply{Body: `{"voices":["nova","ember","sage"]}`})
	llm := fakellm.New(t)
	llm.SetDefault(fakellm.Func(func(r fakellm.Request) fakellm.Reply {
		if strings.Contains(string(r.Body), "You write titles") {
			return fakellm.Status(http.StatusInternalServerError, "")
		}
		if strings.Contains(string(r.Body), "And again?") {
			// Slow enough that the page sees it streaming: only a reply
			// seen to finish is read automatically.
			return fakellm.Stream("Fly, ", "you ", "fools.").Every(300 * time.Millisecond)
		}
		return fakellm.Stream("Speak, friend, ", "and enter.")
	}))
	u := newAdminUI(t, 1280, 900, func(base string) {
		harness.API(t, base, "Connections.Create", nil, map[string]any{"name": "Fake", "baseUrl": llm.URL()})
		harness.API(t, base, "Admin.CreateUser", nil, map[string]any{"username": member, "password": password})
	})
	samClient := harness.Login(t, u.base, member, password)

	// speech waits for a speech request whose input contains text and
	// returns its voice.
	speech := func(t *testing.T, text string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		for {
			for _, r := range voice.Requests() {
				if in, _ := r.JSON["input"].(string); r.Path == "/v1/audio/speech" && strings.Contains(in, text) {
					v, _ := r.JSON["voice"].(string)
					return v
				}
			}
			select {
			case <-ctx.Done():
				t.Fatalf("no speech request reading %q", text)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}

	u.step(t, "admin sets the instance's servers", func(t *testing.T, u *adminUI) {
		u.do(chromedp.Navigate(u.base + "/#/settings/voice"))
		u.waitJS(`!!document.querySelector('#voice-instance-tts-url') && !!document.querySelector('#voice-mine')`)
		if tab := u.str(`document.querySelector('.tabs .tab.is-active')?.innerText ?? ''`); tab != "Voice" {
			t.Errorf("active tab %q", tab)
		}
		u.fill("#voice-instance-stt-url", voice.URL())
		u.fill("#voice-instance-stt-model", "whisper-1")
		u.fill("#voice-instance-tts-url", voice.URL())
		u.fill("#voice-instance-tts-model", "kokoro")
		u.fill("#voice-instance-tts-key", key)
		u.click(`#voice-instance button[type=submit]`)
		u.waitJS(`[...document.querySelectorAll('.toast')].some((t) => t.innerText.includes('Voice servers saved.'))`)
		// The voice list now comes from the server just saved.
		u.waitJS(`[...document.querySelector('#voice-instance-voice').options].some((o) => o.value === 'ember')`)
		u.chooseOption("#voice-instance-voice", "ember")
		u.click(`#voice-instance button[type=submit]`)
		u.waitJS(`document.querySelectorAll('.toast').length > 0 && (document.querySelector('#voice-instance-tts-key-help')?.innerText ?? '').includes('A key is stored')`)
		u.shot("instance")

		var st struct {
			STTURL, STTModel, TTSURL, TTSModel, TTSKey, TTSVoice string
		}
		harness.API(t, u.base, "Audio.Settings", &st)
		if st.STTURL != voice.URL() || st.STTModel != "whisper-1" || st.TTSURL != voice.URL() || st.TTSModel != "kokoro" || st.TTSVoice != "ember" {
			t.Errorf("instance settings: %+v", st)
		}
		if st.TTSKey == "" || strings.Contains(st.TTSKey, "PLAINTEXT") {
			t.Errorf("stored key shown as %q", st.TTSKey)
		}
		if ph := u.str(`document.querySelector('#voice-instance-tts-key').placeholder`); ph != st.TTSKey || u.str(`document.querySelector('#voice-instance-tts-key').value`) != "" {
			t.Errorf("key field: placeholder %q (want the masked key %q), value not empty", ph, st.TTSKey)
		}
		if urls, seen := u.resp.containing(key); len(urls) > 0 || seen == 0 {
			t.Errorf("the key reached the browser in %v (of %d responses)", urls, seen)
		}
	})

	// The member, in a browser of their own.
	mctx := harness.Browser(t)
	harness.BrowserSession(t, mctx, u.base, samClient)
	m := &adminUI{tab: newTab(t, mctx, "member"), base: u.base, stopped: u.stopped}
	m.do(chromedp.EmulateViewport(1280, 900), chromedp.Navigate(m.base+"/#/settings/voice"))

	m.step(t, "a member's loopback server is refused", func(t *testing.T, m *adminUI) {
		m.waitJS(`!!document.querySelector('#voice-servers-tts-url') && !!document.querySelector('#voice-mine-voice')`)
		if m.js(`!!document.querySelector('#voice-instance')`) == true {
			t.Error("a member sees the instance's voice servers")
		}
		m.fill("#voice-servers-tts-url", "http://127.0.0.1:9/v1")
		m.click(`#voice-servers button[type=submit]`)
		m.waitJS(`!!document.querySelector('#voice-servers-error[role=alert]')`)
		msg := m.str(`document.querySelector('#voice-servers-error').innerText`)
		if !strings.Contains(msg, "127.0.0.1") || !strings.Contains(msg, "own network") {
			t.Errorf("refusal shown as %q", msg)
		}
		m.shot("refused")
		var mine struct{ TTSURL string }
		harness.APIAs(t, samClient, m.base, "Audio.Mine", &mine)
		if mine.TTSURL != "" {
			t.Errorf("the refused address was stored: %q", mine.TTSURL)
		}
		// Emptying it again uses the instance's servers.
		m.clickXPath(button(`//form[@id='voice-servers']`, "Undo changes"))
		m.waitJS(`document.querySelector('#voice-servers-tts-url').value === '' && !document.querySelector('#voice-servers-error')`)
	})

	m.step(t, "the member picks a voice", func(t *testing.T, m *adminUI) {
		m.waitJS(`[...document.querySelector('#voice-mine-voice').options].some((o) => o.value === 'sage')`)
		if def := m.str(`document.querySelector('#voice-mine-voice').options[0].textContent`); !strings.Contains(def, "ember") {
			t.Errorf("the default voice option reads %q, want it to name ember", def)
		}
		m.chooseOption("#voice-mine-voice", "sage")
		m.waitJS(`[...document.querySelectorAll('.toast')].some((t) => t.innerText.includes('Voice set to sage.'))`)
		var mine struct {
			TTSVoice string
			AutoRead bool
		}
		harness.APIAs(t, samClient, m.base, "Audio.Mine", &mine)
		if mine.TTSVoice != "sage" || mine.AutoRead {
			t.Errorf("member's settings: %+v", mine)
		}
	})

	sendAs := func(m *adminUI, text, reply string) {
		m.send(text)
		m.waitJS(`(() => { const r = [...document.querySelectorAll('.msg-assistant')].pop(); return !!r && !r.classList.contains('is-streaming') && r.innerText.includes(` + "`" + reply + "`" + `); })()`)
	}

	m.step(t, "read aloud asks for that voice", func(t *testing.T, m *adminUI) {
		m.do(chromedp.Navigate(m.base + "/#/"))
		m.waitJS(`!!document.querySelector('#composer-input')`)
		sendAs(m, "What is the password of Moria?", "and enter")
		m.waitJS(`!![...document.querySelectorAll('.msg-assistant .msg-read')].pop()`)
		m.js(`[...document.querySelectorAll('.msg-assistant .msg-read')].pop().click()`)
		if v := speech(t, "and enter"); v != "sage" {
			t.Errorf("speech request with voice %q, want sage", v)
		}
	})

	m.step(t, "new replies are read automatically once switched on", func(t *testing.T, m *adminUI) {
		m.do(chromedp.Navigate(m.base + "/#/settings/voice"))
		m.waitJS(`!!document.querySelector('#voice-auto-read') && !document.querySelector('#voice-auto-read').disabled`)
		m.js(`document.querySelector('#voice-auto-read').click()`)
		m.waitJS(`[...document.querySelectorAll('.toast')].some((t) => t.innerText.includes('New replies will be read aloud.'))`)
		var mine struct {
			TTSVoice string
			AutoRead bool
		}
		harness.APIAs(t, samClient, m.base, "Audio.Mine", &mine)
		if mine.TTSVoice != "sage" || !mine.AutoRead {
			t.Errorf("member's settings after the switch: %+v", mine)
		}
		m.do(chromedp.Navigate(m.base + "/#/"))
		m.waitJS(`!!document.querySelector('#composer-input')`)
		sendAs(m, "And again?", "you fools")
		if v := speech(t, "you fools"); v != "sage" {
			t.Errorf("automatic reading with voice %q, want sage", v)
		}
	})
	u.pe.check(t)
	// A member's page asks for the connections list and is refused (not
	// this page's doing); the refused override is a 400.
	m.pe.check(t, "/api/Connections.List", "/api/Audio.SetMine")
}
