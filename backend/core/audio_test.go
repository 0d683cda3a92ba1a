package core

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/fakellm"
)

// transcribe posts a recording to /api/audio/transcribe.
func (w *web) transcribe(c *http.Client, audio []byte) (int, string) {
	w.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("language", "en")
	fw, _ := mw.CreateFormFile("file", "dictation.webm")
	fw.Write(audio)
	mw.Close()
	return w.postForm(c, "/api/audio/transcribe", &body, mw)
}

func (w *web) speech(c *http.Client, text string) (*http.Response, string) {
	w.t.Helper()
	resp, body := w.postRaw(c, "/api/audio/speech", map[string]string{"text": text})
	return resp, body
}

func (w *web) postRaw(c *http.Client, path string, v any) (*http.Response, string) {
	w.t.Helper()
	b, _ := json.Marshal(v)
	req, _ := http.NewRequest("POST", w.srv.URL+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, string(out)
}

// fakeAudio is an OpenAI-shaped audio server: transcriptions, speech,
// and a voice list.
func fakeAudio(t *testing.T) *fakellm.Server {
	s := fakellm.New(t)
	s.SetRoute("POST", "/v1/audio/transcriptions", fakellm.Func(func(r fakellm.Request) fakellm.Reply {
		_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil {
			return fakellm.Status(400, `{"error":{"message":"not multipart"}}`)
		}
		mr := multipart.NewReader(bytes.NewReader(r.Body), params["boundary"])
		var model, audio string
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			b, _ := io.ReadAll(p)
			switch p.FormName() {
			case "model":
				model = string(b)
			case "file":
				audio = string(b)
			}
		}
		if model == "" || audio == "" {
			return fakellm.Status(400, `{"error":{"message":"file and model are required"}}`)
		}
		return fakellm.Reply{Body: `{"text":" you said ` + audio + ` to ` + model + ` "}`}
	}))
	s.SetRoute("POST", "/v1/audio/speech", fakellm.Func(func(r fakellm.Request) fakellm.Reply {
		if r.JSON["input"] == "" || r.JSON["voice"] == "" {
			return fakellm.Status(400, `{"detail":"input and voice are required"}`)
		}
		return fakellm.Reply{Header: http.Header{"Content-Type": {"audio/mpeg"}},
			Body: "ID3-fake-mp3:" + r.JSON["voice"].(string) + ":" + r.JSON["input"].(string)}
	}))
	s.SetRoute("GET", "/v1/audio/voices", fakellm.Reply{Body: `{"voices":["am_adam","af_bella",{"id":"bf_emma"}]}`})
	return s
}

func TestVoiceAgainstAFakeAudioServer(t *testing.T) {
	w := newFilesWeb(t, false)
	admin, other, otherID := twoUsers(t, w)

	// Nothing set up: both say so.
	if code, body := w.transcribe(other, []byte("hello")); code != http.StatusServiceUnavailable || !strings.Contains(body, "not set up") {
		t.Fatalf("transcribe with no server: %d %s", code, body)
	}
	if resp, body := w.speech(other, "hello"); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "not set up") {
		t.Fatalf("speech with no server: %d %s", resp.StatusCode, body)
	}

	srv := fakeAudio(t)
	// The instance's server may be on this machine or the LAN (an admin's
	// choice); its key is stored encrypted and shown masked.
	code, body := w.call(admin, "Audio.SetSettings", map[string]any{"sttUrl": srv.URL(), "sttModel": "whisper-large",
		"ttsUrl": srv.URL(), "ttsKey": "sk-tts-secret-9876", "ttsVoice": "af_bella"})
	if code != 200 || strings.Contains(body, "secret-9876") || !strings.Contains(body, "9876") {
		t.Fatalf("Audio.SetSettings: %d %s", code, body)
	}
	if code, body := w.call(other, "Audio.SetSettings", map[string]any{"sttUrl": "http://x/v1"}); code != http.StatusForbidden {
		t.Fatalf("a non-admin sets the instance's voice: %d %s", code, body)
	}
	st, _ := w.c.DB.AudioSettings(context.Background(), nil)
	if st.TTSKeyEnc == "" || strings.Contains(st.TTSKeyEnc, "secret") {
		t.Fatalf("the key is not encrypted at rest: %q", st.TTSKeyEnc)
	}
	if code, body := w.call(other, "Audio.Status"); code != 200 || !strings.Contains(body, `"stt":true`) || !strings.Contains(body, `"tts":true`) {
		t.Fatalf("Audio.Status: %d %s", code, body)
	}

	// Dictation.
	code, body = w.transcribe(other, []byte("RIFF-fake-recording"))
	if code != 200 || !strings.Contains(body, `"text":"you said RIFF-fake-recording to whisper-large"`) {
		t.Fatalf("transcribe: %d %s", code, body)
	}
	// The size cap: refused before anything goes upstream.
	before := len(srv.Requests())
	big := bytes.Repeat([]byte{1}, 25<<20+1)
	if code, body := w.transcribe(other, big); code != http.StatusBadRequest || !strings.Contains(body, "25 MB") {
		t.Fatalf("a recording over the cap: %d %.200s", code, body)
	}
	if len(srv.Requests()) != before {
		t.Fatal("an oversized recording reached the server")
	}
	// The server's own error, in words.
	srv.SetRoute("POST", "/v1/audio/transcriptions", fakellm.Status(500, ""))
	if code, body := w.transcribe(other, []byte("x")); code != http.StatusServiceUnavailable || !strings.Contains(body, "500") {
		t.Fatalf("transcription server error: %d %s", code, body)
	}

	// Read aloud: the audio streams back, with the key as a bearer token.
	resp, body := w.speech(other, "Hello there.")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "audio/mpeg" || body != "ID3-fake-mp3:af_bella:Hello there." {
		t.Fatalf("speech: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	reqs := srv.Requests()
	if last := reqs[len(reqs)-1]; last.Header.Get("Authorization") != "Bearer sk-tts-secret-9876" || last.JSON["model"] != "tts-1" {
		t.Fatalf("speech request: %v %v", last.Header, last.JSON)
	}
	if resp, body := w.speech(other, strings.Repeat("long ", 1000)); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "too long") {
		t.Fatalf("speech over the length limit: %d %s", resp.StatusCode, body)
	}
	srv.SetRoute("POST", "/v1/audio/speech", fakellm.Status(401, ""))
	if resp, body := w.speech(other, "hello"); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "Incorrect API key") {
		t.Fatalf("speech with a bad key: %d %s", resp.StatusCode, body)
	}
	srv.SetRoute("POST", "/v1/audio/speech", fakellm.Reply{Header: http.Header{"Content-Type": {"text/html"}}, Body: "<script>"})
	if resp, body := w.speech(other, "hello"); resp.StatusCode != http.StatusServiceUnavailable || strings.Contains(body, "<script>") {
		t.Fatalf("speech answered with HTML: %d %s", resp.StatusCode, body)
	}

	// Voices: the server's list where it has one, else the configured one.
	if code, body := w.call(other, "Audio.Voices"); code != 200 || body != `["af_bella","am_adam","bf_emma"]` {
		t.Fatalf("Audio.Voices: %d %s", code, body)
	}
	srv.SetRoute("GET", "/v1/audio/voices", fakellm.Status(404, `{"detail":"Not Found"}`))
	w.call(admin, "Audio.SetSettings", map[string]any{"ttsUrl": srv.URL(), "voices": []string{"nova", "onyx"}})
	if code, body := w.call(other, "Audio.Voices"); code != 200 || body != `["nova","onyx"]` {
		t.Fatalf("Audio.Voices from the settings: %d %s", code, body)
	}

	// A user's own endpoint goes through the SSRF guard: this machine and
	// the LAN are refused, when saved and when used.
	for _, u := range []string{srv.URL(), "http://10.0.0.5:8000/v1", "http://[::1]:9/v1", "http://169.254.169.254/v1"} {
		if code, body := w.call(other, "Audio.SetMine", map[string]any{"ttsUrl": u}); code != http.StatusBadRequest || !strings.Contains(body, "network") {
			t.Errorf("a user's own endpoint %s: %d %s, want refused", u, code, body)
		}
	}
	// Stored behind the form's back (or a name that resolves there later):
	// refused when dialled.
	mine, _ := w.c.DB.AudioSettings(context.Background(), &otherID)
	mine.TTSURL = strings.Replace(srv.URL(), "127.0.0.1", "localhost", 1)
	if err := w.c.DB.SetAudioSettings(context.Background(), mine); err != nil {
		t.Fatal(err)
	}
	if resp, body := w.speech(other, "hello"); resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "network") {
		t.Fatalf("speech through a user's loopback endpoint: %d %s", resp.StatusCode, body)
	}
	// The auto-read preference is per user.
	if code, body := w.call(other, "Audio.SetMine", map[string]any{"autoRead": true, "ttsVoice": "onyx"}); code != 200 || !strings.Contains(body, `"autoRead":true`) {
		t.Fatalf("Audio.SetMine: %d %s", code, body)
	}
	if code, body := w.call(admin, "Audio.Status"); code != 200 || strings.Contains(body, `"autoRead":true`) {
		t.Fatalf("another user's auto-read leaked: %s", body)
	}
}

// With the guard opened for a test's loopback address, a user's own
// endpoint is used instead of the instance's, with the user's key.
func TestUserVoiceOverride(t *testing.T) {
	w := newFilesWeb(t, true)
	admin, other, _ := twoUsers(t, w)
	inst, mine := fakeAudio(t), fakeAudio(t)
	if code, body := w.call(admin, "Audio.SetSettings", map[string]any{"ttsUrl": inst.URL()}); code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	if code, body := w.call(other, "Audio.SetMine", map[string]any{"ttsUrl": mine.URL(), "ttsKey": "sk-mine-1111", "ttsVoice": "am_adam"}); code != 200 {
		t.Fatalf("Audio.SetMine: %d %s", code, body)
	}
	if resp, body := w.speech(other, "mine"); resp.StatusCode != 200 || body != "ID3-fake-mp3:am_adam:mine" {
		t.Fatalf("speech: %d %s", resp.StatusCode, body)
	}
	if len(mine.Requests()) != 1 || len(inst.Requests()) != 0 || mine.Requests()[0].Header.Get("Authorization") != "Bearer sk-mine-1111" {
		t.Fatalf("requests: mine %d, instance %d", len(mine.Requests()), len(inst.Requests()))
	}
	// The admin still uses the instance's.
	if resp, _ := w.speech(admin, "theirs"); resp.StatusCode != 200 || len(inst.Requests()) != 1 {
		t.Fatalf("the admin's speech: %d, instance requests %d", resp.StatusCode, len(inst.Requests()))
	}
}
