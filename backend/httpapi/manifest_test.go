package httpapi_test

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/httpapi"
	"github.com/llembas/lembas/frontend"
)

// The manifest cannot read CSS variables; its colour is a copy of the moria
// theme's --bg, and this keeps the copy true.
func TestManifestColourMatchesTheTokens(t *testing.T) {
	b, err := fs.ReadFile(frontend.FS(), "css/tokens.css")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)\[data-theme="moria"\]\s*\{.*?--bg:\s*(#[0-9a-fA-F]{6})`).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatal("no --bg in the moria theme of tokens.css")
	}
	if !strings.EqualFold(m[1], httpapi.ManifestBackground) {
		t.Errorf("manifest background %s, moria --bg %s: update httpapi.ManifestBackground", httpapi.ManifestBackground, m[1])
	}
}
