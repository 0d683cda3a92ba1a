package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/net/html"

	"github.com/llembas/lembas/backend/tools"
)

// providerError is a provider's refusal, in words for the model and the
// administrator's Test search.
type providerError struct{ msg string }

func (e *providerError) Error() string { return e.msg }

func refusal(format string, args ...any) error {
	return &providerError{msg: fmt.Sprintf(format, args...)}
}

// userAgent is what the requests say they are.
const userAgent = "Mozilla/5.0 (compatible; LLeMbas web tools)"

// maxAnswer bounds what a search provider's answer may be.
const maxAnswer = 4 << 20

func readAnswer(resp *http.Response) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxAnswer {
		return nil, refusal("the search provider's answer is larger than %d MB", maxAnswer>>20)
	}
	return b, nil
}

// duckduckgo reads DuckDuckGo's HTML results page, which needs no key.
func (s *Service) duckduckgo(ctx context.Context, hc *http.Client, query string) ([]tools.SearchHit, error) {
	u := s.opt.DuckDuckGoURL + "?" + url.Values{"q": {query}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "text/html")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := readAnswer(resp)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted {
		return nil, refusal("DuckDuckGo answered %s", resp.Status)
	}
	return parseDuckDuckGo(body)
}

// parseDuckDuckGo reads the hits of DuckDuckGo's HTML page: each
// div.result (ads, div.result--ad, skipped) holds a.result__a, whose href
// is a redirect link //duckduckgo.com/l/?uddg=<url>, and a
// .result__snippet. The page that asks for a captcha (it suspects a bot)
// is an error saying so.
func parseDuckDuckGo(body []byte) ([]tools.SearchHit, error) {
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return nil, refusal("DuckDuckGo's page could not be read")
	}
	var hits []tools.SearchHit
	blocked := false
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			cls := attr(n, "class")
			switch {
			case n.Data == "form" && (attr(n, "id") == "challenge-form" || strings.Contains(attr(n, "action"), "anomaly")),
				hasClass(cls, "anomaly-modal__modal"):
				blocked = true
			case n.Data == "div" && hasClass(cls, "result") && !hasClass(cls, "result--ad") && !hasClass(cls, "result--no-result"):
				if h, ok := duckHit(n); ok {
					hits = append(hits, h)
				}
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if blocked && len(hits) == 0 {
		return nil, refusal("DuckDuckGo refused the search and asks for a captcha (it does that when it suspects automated use). Try again later, or choose SearXNG or Firecrawl under Settings → Web.")
	}
	return hits, nil
}

func duckHit(n *html.Node) (tools.SearchHit, bool) {
	var h tools.SearchHit
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			cls := attr(n, "class")
			switch {
			case hasClass(cls, "result__a") && h.URL == "":
				h.URL = unwrapDuck(attr(n, "href"))
				h.Title = text(n)
				return
			case hasClass(cls, "result__snippet") && h.Snippet == "":
				h.Snippet = text(n)
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return h, h.URL != ""
}

// unwrapDuck turns DuckDuckGo's redirect link into the result's own URL;
// an ad's link (duckduckgo.com/y.js) gives "".
func unwrapDuck(href string) string {
	u, err := url.Parse(href)
	if err != nil {
		return ""
	}
	if strings.HasSuffix(u.Hostname(), "duckduckgo.com") {
		if u.Path == "/l/" || u.Path == "/l" {
			return u.Query().Get("uddg")
		}
		return ""
	}
	return href
}

// searxng asks a SearXNG instance's JSON API.
func (s *Service) searxng(ctx context.Context, hc *http.Client, base, query string) ([]tools.SearchHit, error) {
	if base == "" {
		return nil, refusal("no SearXNG address is set")
	}
	u := base + "/search?" + url.Values{"q": {query}, "format": {"json"}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := readAnswer(resp)
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusForbidden:
		return nil, refusal("SearXNG refused the JSON format (403 Forbidden): add json to search.formats in the instance's settings.yml")
	case resp.StatusCode == http.StatusTooManyRequests:
		return nil, refusal("SearXNG is limiting requests (429 Too Many Requests); its limiter may need this server on its pass list")
	case resp.StatusCode != http.StatusOK:
		return nil, refusal("SearXNG answered %s", resp.Status)
	}
	return parseSearXNG(body)
}

func parseSearXNG(body []byte) ([]tools.SearchHit, error) {
	var v struct {
		Results []struct {
			URL     string `json:"url"`
			Title   string `json:"title"`
			Content string `json:"content"`
		} `json:"results"`
		Unresponsive [][]any `json:"unresponsive_engines"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, refusal("SearXNG's answer is not the JSON of its search API (is the address the instance's base URL?)")
	}
	hits := []tools.SearchHit{}
	for _, r := range v.Results {
		hits = append(hits, tools.SearchHit{Title: r.Title, URL: r.URL, Snippet: r.Content})
	}
	if len(hits) == 0 && len(v.Unresponsive) > 0 {
		var names []string
		for _, e := range v.Unresponsive {
			switch len(e) {
			case 0:
			case 1:
				names = append(names, cleanLine(fmt.Sprint(e[0]), 80))
			default:
				names = append(names, cleanLine(fmt.Sprintf("%v (%v)", e[0], e[1]), 80))
			}
			if len(names) == 5 {
				break
			}
		}
		return nil, refusal("SearXNG found nothing because its engines did not answer: %s", strings.Join(names, "; "))
	}
	return hits, nil
}

// firecrawl asks Firecrawl's search API. Its answer's data is the list of
// hits (v1) or holds them under web (v2); both are read.
func (s *Service) firecrawl(ctx context.Context, hc *http.Client, key, query string, n int) ([]tools.SearchHit, error) {
	payload, _ := json.Marshal(map[string]any{"query": query, "limit": n})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.opt.FirecrawlURL, bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := readAnswer(resp)
	if err != nil {
		return nil, err
	}
	var v struct {
		Success bool            `json:"success"`
		Error   string          `json:"error"`
		Data    json.RawMessage `json:"data"`
	}
	jerr := json.Unmarshal(body, &v)
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, refusal("Firecrawl refused the API key (%s)", resp.Status)
	case resp.StatusCode == http.StatusPaymentRequired:
		return nil, refusal("Firecrawl says the account has no credits left (402 Payment Required)")
	case resp.StatusCode == http.StatusTooManyRequests:
		return nil, refusal("Firecrawl is limiting requests (429 Too Many Requests); try again in a minute")
	case resp.StatusCode != http.StatusOK || jerr != nil || !v.Success:
		msg := cleanLine(strings.ReplaceAll(v.Error, key, "…"), 200)
		if msg == "" {
			msg = resp.Status
		}
		return nil, refusal("Firecrawl's search failed: %s", msg)
	}
	type hit struct {
		URL         string `json:"url"`
		Title       string `json:"title"`
		Description string `json:"description"`
	}
	var list []hit
	if err := json.Unmarshal(v.Data, &list); err != nil {
		var v2 struct {
			Web []hit `json:"web"`
		}
		if err := json.Unmarshal(v.Data, &v2); err != nil {
			return nil, refusal("Firecrawl's answer has no list of results")
		}
		list = v2.Web
	}
	hits := []tools.SearchHit{}
	for _, h := range list {
		hits = append(hits, tools.SearchHit{Title: h.Title, URL: h.URL, Snippet: h.Description})
	}
	return hits, nil
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(cls, c string) bool {
	for _, f := range strings.Fields(cls) {
		if f == c {
			return true
		}
	}
	return false
}

// text is a node's text, whitespace collapsed.
func text(n *html.Node) string {
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}
