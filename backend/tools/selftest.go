package tools

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// SelfTestWeb is the Web of an instance run under LEMBAS_SELFTEST (the
// Chromium tests), which must never reach the network: searches answer
// with fixed hits naming the query, and a query containing "[hold]" waits
// until Release (or Stop), so a test can act while a tool runs. A page
// fetch is refused.
type SelfTestWeb struct {
	mu   sync.Mutex
	hold chan struct{}
}

// NewSelfTestWeb returns a self-test Web holding its "[hold]" searches.
func NewSelfTestWeb() *SelfTestWeb { return &SelfTestWeb{hold: make(chan struct{})} }

// Search answers two hits naming the query; a "[hold]" query first waits
// for Release.
func (w *SelfTestWeb) Search(ctx context.Context, query string, n int) ([]SearchHit, error) {
	if strings.Contains(query, "[hold]") {
		w.mu.Lock()
		hold := w.hold
		w.mu.Unlock()
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
	q := strings.TrimSpace(strings.ReplaceAll(query, "[hold]", ""))
	hits := []SearchHit{
		{Title: "First result for " + q, URL: "https://example.org/first", Snippet: "What the first page says about " + q + "."},
		{Title: "Second <b>result</b>", URL: "javascript:alert(1)", Snippet: "A result whose URL must never become a link."},
	}
	return hits[:min(n, len(hits))], nil
}

// Fetch refuses: the self-test has no pages.
func (w *SelfTestWeb) Fetch(ctx context.Context, rawURL string) (Page, error) {
	return Page{}, fmt.Errorf("pages cannot be read in the self-test")
}

// SearchReady is always true.
func (w *SelfTestWeb) SearchReady(context.Context) bool { return true }

// Release lets every held search go on (and later ones too, until the
// next hold begins: it arms a new hold).
func (w *SelfTestWeb) Release() {
	w.mu.Lock()
	close(w.hold)
	w.hold = make(chan struct{})
	w.mu.Unlock()
}
