package audio

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/netguard"
	"github.com/llembas/lembas/backend/secrets"
	"github.com/llembas/lembas/backend/store"
)

// Service resolves a user's audio endpoints (their own overrides, else the
// instance's) and talks to them.
type Service struct {
	db      *store.DB
	keys    func() (*secrets.Keeper, error)
	log     *slog.Logger
	lan     *http.Client // instance endpoints: an admin's choice, LAN allowed
	guarded *http.Client // a user's own endpoints
	guard   netguard.Guard
}

// Options tune a Service.
type Options struct {
	// Guard is the guard for users' own endpoints (tests allow their
	// loopback fake through it).
	Guard netguard.Guard
}

// New returns the service.
func New(db *store.DB, keys func() (*secrets.Keeper, error), log *slog.Logger, opt Options) *Service {
	// Whole-request bounds: a transcription of 25 MB on a CPU can take a
	// while; speech is streamed and bounded by the request's context.
	return &Service{db: db, keys: keys, log: log, guard: opt.Guard,
		lan: &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, ForceAttemptHTTP2: true,
			MaxIdleConns: 8, IdleConnTimeout: 60 * time.Second}},
		// A user's own server: headers within 2 minutes (transcribing a
		// long recording takes a while), the whole answer within 10.
		guarded: opt.Guard.Client(netguard.Options{Timeout: 10 * time.Minute}),
	}
}

func (s *Service) client(ep Endpoint) *http.Client {
	if ep.Guarded {
		return s.guarded
	}
	return s.lan
}

// Settings is one scope's settings as the browser may see them: keys
// masked.
type Settings struct {
	STTURL   string   `json:"sttUrl"`
	STTKey   string   `json:"sttKey"`
	STTModel string   `json:"sttModel"`
	TTSURL   string   `json:"ttsUrl"`
	TTSKey   string   `json:"ttsKey"`
	TTSModel string   `json:"ttsModel"`
	TTSVoice string   `json:"ttsVoice"`
	Voices   []string `json:"voices"`
}

// SettingsInput changes one scope. A nil key keeps the stored one, ""
// clears it.
type SettingsInput struct {
	STTURL   string   `json:"sttUrl"`
	STTKey   *string  `json:"sttKey,omitempty"`
	STTModel string   `json:"sttModel"`
	TTSURL   string   `json:"ttsUrl"`
	TTSKey   *string  `json:"ttsKey,omitempty"`
	TTSModel string   `json:"ttsModel"`
	TTSVoice string   `json:"ttsVoice"`
	Voices   []string `json:"voices,omitempty"`
}

func (s *Service) decrypt(tok string) (string, error) {
	if tok == "" {
		return "", nil
	}
	k, err := s.keys()
	if err != nil {
		return "", err
	}
	v, err := k.Decrypt(tok)
	if err != nil {
		return "", apperr.Wrap(apperr.Unavailable, err, "an audio API key cannot be decrypted with the current encryption key")
	}
	return v, nil
}

func (s *Service) view(st store.AudioSettings) Settings {
	mask := func(tok string) string {
		if tok == "" {
			return ""
		}
		v, err := s.decrypt(tok)
		if err != nil {
			return "(unreadable)"
		}
		return secrets.Mask(v)
	}
	voices := st.Voices
	if voices == nil {
		voices = []string{}
	}
	return Settings{STTURL: st.STTURL, STTKey: mask(st.STTKeyEnc), STTModel: st.STTModel,
		TTSURL: st.TTSURL, TTSKey: mask(st.TTSKeyEnc), TTSModel: st.TTSModel, TTSVoice: st.TTSVoice, Voices: voices}
}

// Get returns a scope's settings (user nil: the instance's).
func (s *Service) Get(ctx context.Context, user *ids.UserID) (Settings, error) {
	st, err := s.db.AudioSettings(ctx, user)
	if err != nil {
		return Settings{}, err
	}
	return s.view(st), nil
}

// Set stores a scope's settings. A user's own addresses are checked
// against the guard first, so that a LAN address is refused when saved
// rather than on first use.
func (s *Service) Set(ctx context.Context, user *ids.UserID, in SettingsInput) (Settings, error) {
	old, err := s.db.AudioSettings(ctx, user)
	if err != nil {
		return Settings{}, err
	}
	st := store.AudioSettings{UserID: user, STTModel: clip(in.STTModel, 200), TTSModel: clip(in.TTSModel, 200),
		TTSVoice: clip(in.TTSVoice, 100)}
	for _, u := range []struct {
		in  string
		out *string
	}{{in.STTURL, &st.STTURL}, {in.TTSURL, &st.TTSURL}} {
		if strings.TrimSpace(u.in) == "" {
			continue
		}
		norm, err := llm.NormalizeBaseURL(u.in)
		if err != nil {
			return Settings{}, err
		}
		if user != nil {
			if err := s.guard.CheckURL(norm); err != nil {
				return Settings{}, apperr.Wrap(apperr.Invalid, err, "%s is on this server's own network, which personal settings may not reach; ask an administrator to set it for everyone.", norm.Redacted())
			}
			rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			err := s.guard.Resolve(rctx, norm.Hostname())
			cancel()
			if errors.Is(err, netguard.ErrBlocked) {
				return Settings{}, apperr.Wrap(apperr.Invalid, err, "%s resolves to this server's own network, which personal settings may not reach.", norm.Hostname())
			}
		}
		*u.out = norm.String()
	}
	var keyErr error
	keep := func(in *string, old string) string {
		switch {
		case in == nil:
			return old
		case *in == "":
			return ""
		}
		k, err := s.keys()
		if err != nil {
			keyErr = err
			return old
		}
		tok, err := k.Encrypt(strings.TrimSpace(*in))
		if err != nil {
			keyErr = err
			return old
		}
		return tok
	}
	st.STTKeyEnc = keep(in.STTKey, old.STTKeyEnc)
	st.TTSKeyEnc = keep(in.TTSKey, old.TTSKeyEnc)
	if keyErr != nil {
		return Settings{}, keyErr
	}
	for _, v := range in.Voices {
		if v = strings.TrimSpace(v); v != "" && len(v) <= 100 && len(st.Voices) < 200 {
			st.Voices = append(st.Voices, v)
		}
	}
	if err := s.db.SetAudioSettings(ctx, st); err != nil {
		return Settings{}, err
	}
	return s.Get(ctx, user)
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n]
	}
	return s
}

// resolved is what a user's requests go to.
type resolved struct {
	stt, tts Endpoint
	voice    string
	voices   []string // from the settings, the user's first
}

func (s *Service) resolve(ctx context.Context, user ids.UserID) (resolved, error) {
	inst, err := s.db.AudioSettings(ctx, nil)
	if err != nil {
		return resolved{}, err
	}
	mine, err := s.db.AudioSettings(ctx, &user)
	if err != nil {
		return resolved{}, err
	}
	var r resolved
	pick := func(myURL, myKey, myModel, instURL, instKey, instModel string) (Endpoint, error) {
		if myURL != "" {
			k, err := s.decrypt(myKey)
			return Endpoint{BaseURL: myURL, APIKey: k, Model: myModel, Guarded: true}, err
		}
		if instURL != "" {
			k, err := s.decrypt(instKey)
			return Endpoint{BaseURL: instURL, APIKey: k, Model: instModel}, err
		}
		return Endpoint{}, nil
	}
	if r.stt, err = pick(mine.STTURL, mine.STTKeyEnc, mine.STTModel, inst.STTURL, inst.STTKeyEnc, inst.STTModel); err != nil {
		return resolved{}, err
	}
	if r.tts, err = pick(mine.TTSURL, mine.TTSKeyEnc, mine.TTSModel, inst.TTSURL, inst.TTSKeyEnc, inst.TTSModel); err != nil {
		return resolved{}, err
	}
	r.voice = firstNonEmpty(mine.TTSVoice, inst.TTSVoice)
	if mine.TTSURL != "" {
		r.voices = mine.Voices
	} else {
		r.voices = inst.Voices
	}
	return r, nil
}

// Status says what a user can do: whether dictation and read-aloud are
// set up, and the voice they get.
type Status struct {
	STT           bool   `json:"stt"`
	TTS           bool   `json:"tts"`
	Voice         string `json:"voice"`
	MaxAudioBytes int    `json:"maxAudioBytes"`
	MaxChars      int    `json:"maxChars"`
}

// Status returns the user's status.
func (s *Service) Status(ctx context.Context, user ids.UserID) (Status, error) {
	r, err := s.resolve(ctx, user)
	if err != nil {
		return Status{}, err
	}
	return Status{STT: r.stt.BaseURL != "", TTS: r.tts.BaseURL != "", Voice: r.voice,
		MaxAudioBytes: MaxAudioBytes, MaxChars: MaxSpeechChars}, nil
}

var errNoSTT = apperr.New(apperr.Unavailable, "Dictation is not set up: an administrator can add a speech-to-text server under Settings → Voice.")
var errNoTTS = apperr.New(apperr.Unavailable, "Reading aloud is not set up: an administrator can add a text-to-speech server under Settings → Voice.")

// Transcribe turns a user's recording into text.
func (s *Service) Transcribe(ctx context.Context, user ids.UserID, audio []byte, filename, contentType, language string) (string, error) {
	r, err := s.resolve(ctx, user)
	if err != nil {
		return "", err
	}
	if r.stt.BaseURL == "" {
		return "", errNoSTT
	}
	return Transcribe(ctx, s.client(r.stt), r.stt, audio, filename, contentType, language)
}

// Speak reads text aloud in voice (empty: the user's voice); the caller
// streams the response body on and closes it.
func (s *Service) Speak(ctx context.Context, user ids.UserID, text, voice string) (*http.Response, error) {
	r, err := s.resolve(ctx, user)
	if err != nil {
		return nil, err
	}
	if r.tts.BaseURL == "" {
		return nil, errNoTTS
	}
	return Speech(ctx, s.client(r.tts), r.tts, text, firstNonEmpty(voice, r.voice))
}

// Voices lists the voices a user can choose from: the server's own list
// where it has one, else the configured list, else OpenAI's names.
func (s *Service) Voices(ctx context.Context, user ids.UserID) ([]string, error) {
	r, err := s.resolve(ctx, user)
	if err != nil {
		return nil, err
	}
	if r.tts.BaseURL != "" {
		vctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		list, err := Voices(vctx, s.client(r.tts), r.tts)
		cancel()
		if err != nil {
			s.log.Debug("voice list", "endpoint", r.tts.BaseURL, "err", err)
		} else if len(list) > 0 {
			return list, nil
		}
	}
	if len(r.voices) > 0 {
		return r.voices, nil
	}
	return DefaultVoices, nil
}
