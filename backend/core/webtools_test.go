package core

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The Web facade end to end: administrators only; a SearXNG on this
// machine needs its range on the allow-list; the Firecrawl key never
// comes back; Test search returns the hits or the provider's error.
func TestWebSettingsAndTestSearch(t *testing.T) {
	w := newFilesWeb(t, false)
	admin, other, _ := twoUsers(t, w)
	searx := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" {
			http.Error(rw, "forbidden", http.StatusForbidden)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		rw.Write([]byte(`{"query":"hobbits","results":[{"url":"https://example.org/shire","title":"The Shire","content":"Where hobbits live."},{"url":"javascript:alert(1)","title":"x","content":"y"}]}`))
	}))
	defer searx.Close()

	for m, args := range map[string][]any{"Web.Settings": nil, "Web.SetSettings": {map[string]any{}},
		"Web.TestSearch": {map[string]any{"query": "x"}}} {
		if code, body := w.call(other, m, args...); code != http.StatusForbidden {
			t.Errorf("%s as a non-admin: %d %s", m, code, body)
		}
	}
	code, body := w.call(admin, "Web.SetSettings", map[string]any{"provider": "searxng", "searxngUrl": searx.URL})
	if code != http.StatusBadRequest || !strings.Contains(body, "allowed ranges") {
		t.Fatalf("loopback SearXNG without the allow-list: %d %s", code, body)
	}
	code, body = w.call(admin, "Web.SetSettings", map[string]any{"provider": "searxng", "searxngUrl": searx.URL,
		"allow": []string{"127.0.0.1/32"}, "firecrawlKey": "fc-secret-key-0123456789"})
	if code != 200 || strings.Contains(body, "fc-secret") || !strings.Contains(body, `"firecrawlKeySet":true`) {
		t.Fatalf("SetSettings: %d %s", code, body)
	}
	if code, body := w.call(admin, "Web.Settings"); code != 200 || strings.Contains(body, "fc-secret") || !strings.Contains(body, `"allow":["127.0.0.1/32"]`) {
		t.Fatalf("Settings: %d %s", code, body)
	}
	code, body = w.call(admin, "Web.TestSearch", map[string]any{"query": "hobbits"})
	if code != 200 || !strings.Contains(body, "https://example.org/shire") || strings.Contains(body, "javascript:") {
		t.Fatalf("TestSearch: %d %s", code, body)
	}
	// A provider's failure is the result's error, not a failed call.
	w.call(admin, "Web.SetSettings", map[string]any{"searxngUrl": searx.URL + "/nojson"})
	code, body = w.call(admin, "Web.TestSearch", map[string]any{"query": "hobbits"})
	if code != 200 || !strings.Contains(body, "403") {
		t.Fatalf("TestSearch against a SearXNG without JSON: %d %s", code, body)
	}
}
