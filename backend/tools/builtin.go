package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/llembas/lembas/backend/auth"
)

// The built-in tools' names, as offered to models.
const (
	NameWebSearch = "web_search"
	NameFetchURL  = "fetch_url"
)

// The permissions of the built-in tools (backend/auth defines them).
const (
	PermWebSearch = auth.ToolsWebSearch
	PermFetch     = auth.ToolsFetch
)

// Search hits: how many a call gets unless it asks (and at most).
const (
	defaultHits = 5
	maxHits     = 10
)

// Builtins returns the built-in tools running on web.
func Builtins(web Web) []Tool {
	return []Tool{
		{
			Name: NameWebSearch, Family: FamilyWebSearch, Permission: PermWebSearch, Risk: RiskRead,
			Description: "Search the web. Returns numbered results, each with a title, URL and snippet; cite the URLs you use.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"query":{"type":"string","description":"What to search for"},` +
				`"count":{"type":"integer","description":"How many results (1-10, default 5)"}},"required":["query"]}`),
			Activity: func(args json.RawMessage) string {
				var a struct{ Query string }
				_ = json.Unmarshal(args, &a)
				return "Searching the web for “" + clip(a.Query, 80) + "”"
			},
			Run: func(ctx context.Context, c Call) Result {
				var a struct {
					Query string `json:"query"`
					Count int    `json:"count"`
				}
				if err := json.Unmarshal(c.Arguments, &a); err != nil || strings.TrimSpace(a.Query) == "" {
					return Result{Text: `The arguments must be a JSON object with a non-empty "query".`, Failed: true}
				}
				n := a.Count
				if n <= 0 {
					n = defaultHits
				}
				n = min(n, maxHits)
				hits, err := web.Search(ctx, a.Query, n)
				if err != nil {
					return Result{Text: "The search failed: " + err.Error(), Failed: true}
				}
				return Result{Text: FormatHits(a.Query, hits)}
			},
		},
		{
			Name: NameFetchURL, Family: FamilyFetch, Permission: PermFetch, Risk: RiskRead,
			Description: "Read a web page (http or https) as plain text: its title, final URL after redirects, and text.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"url":{"type":"string","description":"The page's address, http or https"}},"required":["url"]}`),
			Activity: func(args json.RawMessage) string {
				var a struct{ URL string }
				_ = json.Unmarshal(args, &a)
				host := a.URL
				if u, err := url.Parse(a.URL); err == nil && u.Host != "" {
					host = u.Host
				}
				return "Reading " + clip(host, 80) + "…"
			},
			Run: func(ctx context.Context, c Call) Result {
				var a struct {
					URL string `json:"url"`
				}
				if err := json.Unmarshal(c.Arguments, &a); err != nil || strings.TrimSpace(a.URL) == "" {
					return Result{Text: `The arguments must be a JSON object with a non-empty "url".`, Failed: true}
				}
				p, err := web.Fetch(ctx, strings.TrimSpace(a.URL))
				if err != nil {
					return Result{Text: "The page could not be read: " + err.Error(), Failed: true}
				}
				return Result{Text: FormatPage(p)}
			},
		},
	}
}

// FormatHits is a search's result as the model reads it: numbered hits
// with title, URL and snippet, so it can cite them.
func FormatHits(query string, hits []SearchHit) string {
	if len(hits) == 0 {
		return fmt.Sprintf("No results for %q.", query)
	}
	var b strings.Builder
	for i, h := range hits {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%d. %s\n   %s\n", i+1, oneLine(h.Title), oneLine(h.URL))
		if s := oneLine(h.Snippet); s != "" {
			fmt.Fprintf(&b, "   %s\n", s)
		}
	}
	return b.String()
}

// FormatPage is a fetched page as the model reads it.
func FormatPage(p Page) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Title: %s\nURL: %s\n\n%s", oneLine(p.Title), oneLine(p.URL), p.Text)
	if p.Truncated {
		b.WriteString("\n\n[The page was cut at the size limit.]")
	}
	return b.String()
}

// oneLine folds whitespace so a field of a result cannot forge the next
// numbered line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip bounds s to n runes for an activity line.
func clip(s string, n int) string {
	s = oneLine(s)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
