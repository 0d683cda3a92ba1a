// Package audio is speech to text (dictation) and text to speech (read
// aloud) against OpenAI-shaped endpoints: POST {base}/audio/transcriptions
// (multipart: file, model, optional language; answers {"text": …}) and POST
// {base}/audio/speech (JSON: model, input, voice, response_format; answers
// audio bytes), as served by OpenAI, whisper.cpp's and faster-whisper's
// servers, Kokoro-FastAPI, openedai-speech, LocalAI and others. The voice
// list comes from GET {base}/audio/voices where the server has one.
//
// Endpoints come from the instance settings (an admin's choice, which may be
// on the LAN) or from a user's own overrides, which are reached only through
// the SSRF-guarded client (backend/netguard). Recorded audio is handled in
// memory and never written to disk: it is not an attachment, has no owner
// and nothing would ever sweep it.
package audio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"sort"
	"strings"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/netguard"
	"github.com/llembas/lembas/backend/secrets"
)

// MaxAudioBytes bounds one recording sent for transcription (OpenAI's own
// limit is 25 MB).
const MaxAudioBytes = 25 << 20

// MaxSpeechChars bounds the text of one speech request (OpenAI's limit);
// the frontend reads a long reply in several requests.
const MaxSpeechChars = 4096

// DefaultVoices are offered when neither the server nor the settings list
// any: OpenAI's voice names, which most compatible servers map to theirs.
var DefaultVoices = []string{"alloy", "echo", "fable", "onyx", "nova", "shimmer"}

// Endpoint is one resolved audio endpoint.
type Endpoint struct {
	BaseURL string // the API root, e.g. http://10.0.0.5:8000/v1
	APIKey  string
	Model   string
	// Guarded endpoints (a user's own) go through the SSRF-guarded client.
	Guarded bool
}

// errorBody is the OpenAI error shape, and the {"detail": …} of FastAPI
// servers.
type errorBody struct {
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	Detail any    `json:"detail"`
	Msg    string `json:"message"`
}

// maxMessage bounds the server's words quoted in an error, in characters.
const maxMessage = 300

// upstreamError turns a failed response into an unavailable error that
// says what the server said, with the endpoint's key (and any bearer
// token) hidden first: a server may echo the request it refused.
func upstreamError(what string, ep Endpoint, resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	b = []byte(secrets.NewRedactor(ep.APIKey).Redact(string(b)))
	msg := ""
	var eb errorBody
	if json.Unmarshal(b, &eb) == nil {
		switch {
		case eb.Error != nil && eb.Error.Message != "":
			msg = eb.Error.Message
		case eb.Msg != "":
			msg = eb.Msg
		case eb.Detail != nil:
			if s, ok := eb.Detail.(string); ok {
				msg = s
			} else {
				d, _ := json.Marshal(eb.Detail)
				msg = string(d)
			}
		}
	}
	if msg == "" {
		msg = strings.TrimSpace(string(b))
	}
	msg = strings.Join(strings.Fields(strings.ToValidUTF8(msg, "\uFFFD")), " ")
	if r := []rune(msg); len(r) > maxMessage {
		msg = string(r[:maxMessage]) + "…"
	}
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	kind := apperr.Unavailable
	if resp.StatusCode == http.StatusRequestEntityTooLarge {
		kind = apperr.Invalid
	}
	return apperr.New(kind, "The %s server answered %d: %s", what, resp.StatusCode, msg)
}

// reachError words a failure to reach the server; a guarded refusal says
// why in words.
func reachError(what string, err error) error {
	if errors.Is(err, netguard.ErrBlocked) {
		return apperr.Wrap(apperr.Forbidden, err,
			"Your %s address points at this server's own network, which personal settings may not reach; ask an administrator to set it for everyone.", what)
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	return apperr.Wrap(apperr.Unavailable, err, "The %s server cannot be reached: %v", what, shortErr(err))
}

func shortErr(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && len(s) > 160 {
		s = s[i+2:]
	}
	return s
}

func newRequest(ctx context.Context, method string, ep Endpoint, path string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(ep.BaseURL, "/")+path, body)
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err, "the audio address is not valid")
	}
	req.Header.Set("User-Agent", "LLeMbas")
	if ep.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+ep.APIKey)
	}
	return req, nil
}

// Transcribe sends one recording and returns its text.
func Transcribe(ctx context.Context, hc *http.Client, ep Endpoint, audio []byte, filename, contentType, language string) (string, error) {
	if len(audio) == 0 {
		return "", apperr.New(apperr.Invalid, "The recording is empty.")
	}
	if len(audio) > MaxAudioBytes {
		return "", apperr.New(apperr.Invalid, "The recording is larger than the %d MB limit.", MaxAudioBytes>>20)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if filename == "" {
		filename = "recording.webm"
	}
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": "file", "filename": filename}))
	h.Set("Content-Type", contentType)
	fw, err := mw.CreatePart(h)
	if err != nil {
		return "", err
	}
	fw.Write(audio)
	model := ep.Model
	if model == "" {
		model = "whisper-1"
	}
	mw.WriteField("model", model)
	mw.WriteField("response_format", "json")
	if language != "" {
		mw.WriteField("language", language)
	}
	mw.Close()
	req, err := newRequest(ctx, http.MethodPost, ep, "/audio/transcriptions", &body)
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := hc.Do(req)
	if err != nil {
		return "", reachError("speech-to-text", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return "", upstreamError("speech-to-text", ep, resp)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return "", reachError("speech-to-text", err)
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct == "text/plain" {
		return strings.TrimSpace(string(b)), nil
	}
	var out struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.Text == nil {
		return "", apperr.New(apperr.Unavailable, "The speech-to-text server answered something that is not a transcription.")
	}
	return strings.TrimSpace(*out.Text), nil
}

// Speech asks for text read aloud and returns the response, whose body the
// caller streams on and closes. Its Content-Type is an audio type.
func Speech(ctx context.Context, hc *http.Client, ep Endpoint, text, voice string) (*http.Response, error) {
	if strings.TrimSpace(text) == "" {
		return nil, apperr.New(apperr.Invalid, "There is nothing to read aloud.")
	}
	if n := len([]rune(text)); n > MaxSpeechChars {
		return nil, apperr.New(apperr.Invalid, "The text is too long to read in one go (%d characters; the limit is %d).", n, MaxSpeechChars)
	}
	model := ep.Model
	if model == "" {
		model = "tts-1"
	}
	if voice == "" {
		voice = DefaultVoices[0]
	}
	b, _ := json.Marshal(map[string]any{"model": model, "input": text, "voice": voice, "response_format": "mp3"})
	req, err := newRequest(ctx, http.MethodPost, ep, "/audio/speech", bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, reachError("text-to-speech", err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		return nil, upstreamError("text-to-speech", ep, resp)
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if !strings.HasPrefix(ct, "audio/") && ct != "application/octet-stream" {
		resp.Body.Close()
		return nil, apperr.New(apperr.Unavailable, "The text-to-speech server answered %s, not audio.", ct)
	}
	if !strings.HasPrefix(ct, "audio/") {
		resp.Header.Set("Content-Type", "audio/mpeg") // what we asked for
	}
	return resp, nil
}

// Voices asks the server for its voices: GET {base}/audio/voices in the
// shapes servers use ({"voices": ["af_bella", …]}, objects with id or
// name, or a bare list). A server without the route answers nil, nil.
func Voices(ctx context.Context, hc *http.Client, ep Endpoint) ([]string, error) {
	req, err := newRequest(ctx, http.MethodGet, ep, "/audio/voices", nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, reachError("text-to-speech", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusMethodNotAllowed {
		return nil, nil
	}
	if resp.StatusCode/100 != 2 {
		return nil, upstreamError("text-to-speech", ep, resp)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, reachError("text-to-speech", err)
	}
	return parseVoices(b), nil
}

func parseVoices(b []byte) []string {
	var raw json.RawMessage = b
	var obj map[string]json.RawMessage
	if json.Unmarshal(b, &obj) == nil {
		for _, k := range []string{"voices", "data", "items"} {
			if v, ok := obj[k]; ok {
				raw = v
				break
			}
		}
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, it := range items {
		var s string
		if json.Unmarshal(it, &s) != nil {
			var o struct {
				ID      string `json:"id"`
				VoiceID string `json:"voice_id"`
				Name    string `json:"name"`
			}
			if json.Unmarshal(it, &o) != nil {
				continue
			}
			s = firstNonEmpty(o.ID, o.VoiceID, o.Name)
		}
		s = strings.TrimSpace(s)
		if s != "" && len(s) <= 100 && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	if len(out) > 500 {
		out = out[:500]
	}
	return out
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// describe is for log lines: the endpoint without credentials.
func (e Endpoint) String() string { return fmt.Sprintf("%s (model %q)", e.BaseURL, e.Model) }
