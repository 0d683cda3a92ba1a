package api

import (
	"context"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/tools"
	"github.com/llembas/lembas/backend/web"
)

// Web is the facade for the web tools' settings (administrators): the
// search provider, the SearXNG address, the Firecrawl key (write-only),
// the LAN ranges web requests may reach, and a test search.
type Web struct{ web *web.Service }

// NewWeb returns the Web facade.
func NewWeb(w *web.Service) *Web { return &Web{web: w} }

// WebSettings are the web settings as the page sees them (the key only as
// whether one is set).
type WebSettings = web.Settings

// WebSettingsInput changes the settings that are set; firecrawlKey ""
// clears the key.
type WebSettingsInput = web.SettingsInput

// WebTestInput is the query of a test search.
type WebTestInput struct {
	Query string `json:"query"`
}

// WebTestResult is what a test search found, or why it failed.
type WebTestResult struct {
	Hits  []tools.SearchHit `json:"hits"`
	Error string            `json:"error,omitempty"`
}

// Settings returns the web settings.
func (w *Web) Settings(ctx context.Context) (WebSettings, error) { return w.web.Get(ctx) }

// SetSettings changes the web settings.
func (w *Web) SetSettings(ctx context.Context, in WebSettingsInput) (WebSettings, error) {
	return w.web.Set(ctx, in)
}

// TestSearch runs one search with the saved settings, as the web_search
// tool would; a failure is the result's error, in the words the model
// would read.
func (w *Web) TestSearch(ctx context.Context, in WebTestInput) (WebTestResult, error) {
	if in.Query == "" {
		return WebTestResult{}, apperr.New(apperr.Invalid, "Enter something to search for.")
	}
	if !w.web.SearchReady(ctx) {
		return WebTestResult{}, apperr.New(apperr.Invalid, "Choose a search provider and save first.")
	}
	hits, err := w.web.Search(ctx, in.Query, 0)
	if err != nil {
		return WebTestResult{Hits: []tools.SearchHit{}, Error: err.Error()}, nil
	}
	return WebTestResult{Hits: hits}, nil
}
