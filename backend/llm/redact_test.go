package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// An endpoint that echoes the request's headers in what it answers (many
// gateways and debugging proxies do) must not get the connection's key or
// extra header values into an error, not even their first characters.
func TestUpstreamTextNeverCarriesTheSecrets(t *testing.T) {
	const key = "sk-live-0123456789abcdefghijklmnopqrstuvwxyz"
	const orgValue = "org-private-value-42"
	echo := func(r *http.Request) string {
		b, _ := json.Marshal(r.Header)
		return string(b)
	}
	cases := []struct {
		name    string
		handler http.HandlerFunc
	}{
		{"500 with the headers as the message", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(500)
			fmt.Fprintf(w, `{"error":{"message":%q}}`, "upstream failed; request was "+echo(r))
		}},
		{"403 as plain text, the key near the cut", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(403)
			// The key starts just before the 300th character, where
			// messages are cut: its beginning must not survive.
			fmt.Fprint(w, strings.Repeat("x", 265)+" Authorization: "+r.Header.Get("Authorization")+" X-Org: "+r.Header.Get("X-Org"))
		}},
		{"error event inside the stream", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: {\"error\":{\"message\":%q}}\n\n", "echo "+echo(r))
		}},
		{"stream event that is not JSON", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: got %s\n\n", r.Header.Get("Authorization"))
		}},
		{"whole answer that is not JSON", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, "%s", r.Header.Get("X-Org")+" "+r.Header.Get("Authorization"))
		}},
		{"redirect to a URL with the key", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", "https://elsewhere.example/?k="+key)
			w.WriteHeader(302)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			c, err := NewClient(Endpoint{BaseURL: srv.URL + "/v1", APIKey: key, Headers: map[string]string{"X-Org": orgValue}}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			_, chatErr := c.Chat(context.Background(), ask(), (&reply{}).fn)
			_, listErr := c.ListModels(context.Background())
			_, completeErr := c.Complete(context.Background(), ask())
			for what, err := range map[string]error{"Chat": chatErr, "ListModels": listErr, "Complete": completeErr} {
				if err == nil {
					continue
				}
				msg := err.Error()
				for _, secret := range []string{key[:12], orgValue[:8], key[len(key)-8:]} {
					if strings.Contains(msg, secret) {
						t.Errorf("%s: the error holds %q: %s", what, secret, msg)
					}
				}
			}
			if chatErr == nil {
				t.Error("Chat did not fail")
			}
		})
	}
}

// A model list that is not JSON until a secret in it is hidden (an endpoint
// echoing a header value with a quote in it, unescaped) is still an error:
// the second parse, of the hidden text, is only for quoting. It answered no
// models and no error, which a refresh takes as an endpoint without models.
func TestModelListThatParsesOnlyOnceHiddenIsAnError(t *testing.T) {
	const value = `tenant"42`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"object":"list","data":[{"id":"m1"}],"echo":"%s"}`, r.Header.Get("X-Tenant"))
	}))
	defer srv.Close()
	c, err := NewClient(Endpoint{BaseURL: srv.URL + "/v1", Headers: map[string]string{"X-Tenant": value}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	models, err := c.ListModels(context.Background())
	if err == nil {
		t.Fatalf("no error for a list that is not JSON; %d models", len(models))
	}
	if strings.Contains(err.Error(), "tenant") {
		t.Errorf("the error holds the header value: %v", err)
	}
}
