package audio

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A voice server that echoes the request in its refusal must not get the
// key into the error the person sees.
func TestUpstreamErrorsHideTheKey(t *testing.T) {
	const key = "sk-voice-0123456789abcdefghij"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := json.Marshal(r.Header)
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"message": "refused " + string(b)}})
	}))
	defer srv.Close()
	ep := Endpoint{BaseURL: srv.URL + "/v1", APIKey: key, Model: "whisper"}
	_, errT := Transcribe(context.Background(), srv.Client(), ep, []byte("RIFF"), "a.wav", "audio/wav", "")
	resp, errS := Speech(context.Background(), srv.Client(), ep, "hello", "alloy")
	if resp != nil {
		resp.Body.Close()
	}
	_, errV := Voices(context.Background(), srv.Client(), ep)
	for what, err := range map[string]error{"transcribe": errT, "speech": errS, "voices": errV} {
		if err == nil {
			t.Errorf("%s: no error", what)
			continue
		}
		if strings.Contains(err.Error(), key[:10]) {
			t.Errorf("%s: the error holds the key: %v", what, err)
		}
		if !strings.Contains(err.Error(), "refused") {
			t.Errorf("%s: the server's words are gone: %v", what, err)
		}
	}
}
