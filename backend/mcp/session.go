package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llembas/lembas/backend/netguard"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/tools"
)

// headerTransport adds the server's token and headers to requests for the
// server's own origin only: a redirect elsewhere (which netguard already
// strips Authorization from) never gets them back from here.
type headerTransport struct {
	base    http.RoundTripper
	origin  string
	token   string
	headers map[string]string
}

func originOf(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return u.Scheme + "://" + strings.ToLower(strings.TrimSuffix(u.Hostname(), ".")) + ":" + port
}

func (t headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if originOf(req.URL) == t.origin && (t.token != "" || len(t.headers) > 0) {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
		if t.token != "" {
			req.Header.Set("Authorization", "Bearer "+t.token)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err == nil {
		resp.Body = &cappedBody{ReadCloser: resp.Body, left: maxResponse}
	}
	return resp, err
}

// maxResponse bounds one HTTP answer of a server, an SSE stream's events
// together: the SDK reads a JSON answer whole into memory, so a server
// streaming for its whole time limit would otherwise fill it.
const maxResponse = 16 << 20

// errTooLarge ends an answer past maxResponse.
var errTooLarge = fmt.Errorf("its answer is larger than %d MB", maxResponse>>20)

type cappedBody struct {
	io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// CloseIdleConnections closes the base transport's idle connections.
func (t headerTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// session opens a session with the server (initialize); the caller calls
// end, which closes it and its connections (each session has a client of
// its own, whose idle connections would otherwise stay open for a
// minute). ctx bounds every request of the session.
func (s *Service) session(ctx context.Context, row store.MCPServer, limit time.Duration) (cs *sdk.ClientSession, end func(), err error) {
	sec, err := s.secret(row)
	if err != nil {
		return nil, nil, err
	}
	g, err := s.guard(ctx)
	if err != nil {
		return nil, nil, err
	}
	u, err := url.Parse(row.URL)
	if err != nil {
		return nil, nil, fmt.Errorf("the server's address cannot be read")
	}
	var secretHeaders []string
	for k := range sec.Headers {
		secretHeaders = append(secretHeaders, k)
	}
	hc := g.Client(netguard.Options{HeaderTimeout: limit, MaxRedirects: 3, SecretHeaders: secretHeaders})
	hc.Transport = headerTransport{base: hc.Transport, origin: originOf(u), token: sec.Token, headers: sec.Headers}
	client := sdk.NewClient(&sdk.Implementation{Name: "lembas", Version: s.opt.Version}, nil)
	cs, err = client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint:   row.URL,
		HTTPClient: hc,
		// One request and its answer is all a call needs: no standing
		// GET stream, and no retries that would stretch the time limit.
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}, nil)
	if err != nil {
		hc.CloseIdleConnections()
		return nil, nil, err
	}
	return cs, func() { cs.Close(); hc.CloseIdleConnections() }, nil
}

// plain turns a session's error into a sentence for the model and the
// admin page; it never holds the token (headers are not in errors).
func (s *Service) plain(ctx context.Context, row store.MCPServer, err error, limit time.Duration) error {
	name := cleanText(row.Name, maxServerName)
	switch {
	case errors.Is(err, netguard.ErrBlocked):
		return fmt.Errorf("the MCP server %s cannot be reached: its address is not allowed (%s)", name, plainGuardErr(err))
	case errors.Is(err, netguard.ErrRedirect):
		return fmt.Errorf("the MCP server %s answered with a redirect that is not followed (%v)", name, errors.Unwrap(err))
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("the MCP server %s did not answer within %s", name, limit.Round(time.Second))
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("the call to the MCP server %s was stopped", name)
	}
	return fmt.Errorf("the MCP server %s failed: %s", name, cleanText(withoutQuery(err.Error(), row.URL), 300))
}

// withoutQuery replaces the server's address in msg by the address
// without its query, which may hold a key (errors are logged and shown).
func withoutQuery(msg, raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.RawQuery == "" {
		return msg
	}
	u.RawQuery = "…"
	return strings.ReplaceAll(msg, raw, u.String())
}

// listTools asks the server for its tools (every page, up to maxTools)
// and cleans them.
func (s *Service) listTools(ctx context.Context, row store.MCPServer) ([]Discovered, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opt.ListTimeout)
	defer cancel()
	cs, end, err := s.session(ctx, row, s.opt.ListTimeout)
	if err != nil {
		return nil, s.plain(ctx, row, err, s.opt.ListTimeout)
	}
	defer end()
	out := []Discovered{}
	seen := map[string]bool{}
	size := 0
	var cursor string
	for page := 0; page < 10 && len(out) < maxTools; page++ {
		res, err := cs.ListTools(ctx, &sdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, s.plain(ctx, row, err, s.opt.ListTimeout)
		}
		for _, t := range res.Tools {
			if t == nil || t.Name == "" || len(t.Name) > maxToolName || seen[t.Name] || len(out) >= maxTools {
				continue
			}
			schema, _ := json.Marshal(t.InputSchema)
			d := Discovered{Name: strings.ToValidUTF8(t.Name, ""), Description: cleanText(t.Description, maxDesc), Schema: cleanSchema(schema)}
			if size += len(d.Name) + len(d.Description) + len(d.Schema); size > maxListBytes {
				break
			}
			seen[t.Name] = true
			out = append(out, d)
		}
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	return out, nil
}

// call runs one tools/call in a session of its own, under the time limit.
func (s *Service) call(ctx context.Context, id int64, name string, args json.RawMessage) tools.Result {
	row, err := s.db.MCPServer(ctx, id)
	if err != nil {
		return tools.Result{Text: "This MCP server is no longer configured.", Failed: true}
	}
	var arguments map[string]any
	if len(strings.TrimSpace(string(args))) > 0 {
		if err := json.Unmarshal(args, &arguments); err != nil {
			return tools.Result{Text: "The arguments are not a JSON object: " + err.Error(), Failed: true}
		}
	}
	limit := s.opt.CallTimeout
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	type outcome struct {
		res *sdk.CallToolResult
		err error
	}
	// The SDK's calls end with ctx; the goroutine is so that a call whose
	// transport ignored it still returns at the limit.
	done := make(chan outcome, 1)
	go func() {
		cs, end, err := s.session(ctx, row, limit)
		if err != nil {
			done <- outcome{err: err}
			return
		}
		defer end()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: arguments})
		done <- outcome{res, err}
	}()
	var o outcome
	select {
	case o = <-done:
	case <-ctx.Done():
		o.err = ctx.Err()
	}
	if o.err != nil {
		return tools.Result{Text: s.plain(ctx, row, o.err, limit).Error(), Failed: true}
	}
	return tools.Result{Text: resultText(o.res), Failed: o.res.IsError}
}

// resultText is a call's content as text for the model: texts as they are
// (control characters stripped), anything else described.
func resultText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image: %s, %d bytes]", cleanText(c.MIMEType, 80), len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %d bytes]", cleanText(c.MIMEType, 80), len(c.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource: %s %s]", cleanText(c.Name, 200), cleanText(c.URI, 500)))
		case *sdk.EmbeddedResource:
			if r := c.Resource; r != nil {
				if r.Text != "" {
					parts = append(parts, r.Text)
				} else {
					parts = append(parts, fmt.Sprintf("[resource: %s, %s, %d bytes]", cleanText(r.URI, 500), cleanText(r.MIMEType, 80), len(r.Blob)))
				}
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	text := strings.Join(parts, "\n")
	if len(text) > maxResultRaw {
		text = text[:maxResultRaw]
	}
	text = cleanText(text, maxResultRaw)
	if r := []rune(text); len(r) > maxResultText {
		text = string(r[:maxResultText]) + "\n[result cut at 40,000 characters]"
	}
	if text == "" && res.IsError {
		return "The tool failed without saying why."
	}
	return text
}
