package httpapi

import (
	"encoding/json"
	"net/http"
)

// ManifestBackground is the moria theme's --bg, which the browser paints
// behind the app while it starts. A manifest cannot read CSS variables, so
// frontend/tokens_test.go checks that this copy matches tokens.css.
const ManifestBackground = "#131518"

// manifest serves the web app manifest, named after the instance, so that
// a phone installs the household's LLeMbas under the name it was given.
func (h *handler) manifest(w http.ResponseWriter, r *http.Request) {
	name := h.instanceName(r.Context())
	short := []rune(name)
	if len(short) > 12 {
		short = short[:12]
	}
	m := map[string]any{
		"name":             name,
		"short_name":       string(short),
		"id":               "/",
		"start_url":        "/",
		"scope":            "/",
		"display":          "standalone",
		"background_color": ManifestBackground,
		"theme_color":      ManifestBackground,
		"icons": []map[string]string{
			{"src": "/icons/icon-256.png", "sizes": "256x256", "type": "image/png", "purpose": "any"},
			{"src": "/icons/icon-512.png", "sizes": "512x512", "type": "image/png", "purpose": "any"},
		},
	}
	b, _ := json.Marshal(m)
	w.Header().Set("Content-Type", "application/manifest+json")
	w.Header().Set("Cache-Control", "no-cache")
	w.Write(b)
}
