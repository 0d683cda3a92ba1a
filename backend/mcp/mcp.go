// Package mcp lets replies call the tools of remote MCP servers over the
// streamable HTTP transport (the official Go SDK). A server is a row
// (store.MCPServer): its address, a bearer token or headers (encrypted),
// who may use it and a guidance fragment; its tools/list is cached on the
// row as cleaned JSON and refreshed on demand. Service implements
// tools.Source (gate tools.GateMCP, family "mcp:<slug>").
//
// Everything a server says is untrusted: names, descriptions and schemas
// are bounded and stripped of control and bidi characters, a schema that
// is not an object becomes an empty one, and a call's result is text. Every
// request goes through backend/netguard with the administrator's allowed
// ranges (the web tools' guard). A call opens its own session (initialize,
// call, close) under a time limit.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/netguard"
	"github.com/llembas/lembas/backend/secrets"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/tools"
)

// Permission is what a person must hold to be offered MCP tools.
const Permission = auth.ToolsMCP

// Options tune a Service; zero values are the defaults.
type Options struct {
	// CallTimeout bounds one call, session included (default 60 s); a
	// server that hangs ends the call with a tool error.
	CallTimeout time.Duration
	// ListTimeout bounds a refresh of a server's tools (default 30 s).
	ListTimeout time.Duration
	// Version is sent as the client's version in initialize.
	Version string
	// Reserved returns the built-in tools' names, so that the page shows
	// the names a reply will offer (a reply renames against every name
	// taken before MCP's, custom tools' included).
	Reserved func() []string
}

// Service keeps the MCP servers and offers their tools.
type Service struct {
	db    *store.DB
	keys  func() (*secrets.Keeper, error)
	guard func(ctx context.Context) (netguard.Guard, error)
	log   *slog.Logger
	opt   Options
}

var _ tools.Source = (*Service)(nil)

// New returns the service. guard gives the guard every request goes
// through (the web tools' guard with the administrator's allowed ranges).
func New(db *store.DB, keys func() (*secrets.Keeper, error), guard func(ctx context.Context) (netguard.Guard, error), log *slog.Logger, opt Options) *Service {
	if opt.CallTimeout <= 0 {
		opt.CallTimeout = 60 * time.Second
	}
	if opt.ListTimeout <= 0 {
		opt.ListTimeout = 30 * time.Second
	}
	if opt.Version == "" {
		opt.Version = "dev"
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{db: db, keys: keys, guard: guard, log: log, opt: opt}
}

// secret is what secret_enc holds, encrypted.
type secret struct {
	Token   string            `json:"token,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// ToolView is a discovered tool as the admin page shows it (the page
// escapes every field).
type ToolView struct {
	// Name is the server's name for it; Offered the name models see.
	Name        string          `json:"name"`
	Offered     string          `json:"offered"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	On          bool            `json:"on"`
}

// Server is a server as the admin page sees it: the token only as whether
// one is set, the headers by name.
type Server struct {
	ID           int64      `json:"id"`
	Name         string     `json:"name"`
	Slug         string     `json:"slug"`
	URL          string     `json:"url"`
	TokenSet     bool       `json:"tokenSet"`
	HeaderNames  []string   `json:"headerNames"`
	Enabled      bool       `json:"enabled"`
	Groups       []int64    `json:"groups"`
	Guidance     string     `json:"guidance"`
	Tools        []ToolView `json:"tools"`
	RefreshedAt  int64      `json:"refreshedAt"`
	RefreshError string     `json:"refreshError"`
}

// Input saves a server (ID 0 adds one). Token and Headers are write-only:
// nil keeps what is stored, "" (an empty map) clears it.
type Input struct {
	ID       int64              `json:"id,omitempty"`
	Name     string             `json:"name"`
	Slug     string             `json:"slug,omitempty"`
	URL      string             `json:"url"`
	Token    *string            `json:"token,omitempty"`
	Headers  *map[string]string `json:"headers,omitempty"`
	Enabled  bool               `json:"enabled"`
	Groups   []int64            `json:"groups"`
	Guidance string             `json:"guidance"`
}

func (s *Service) view(ctx context.Context, row store.MCPServer) Server {
	v := Server{ID: row.ID, Name: row.Name, Slug: row.Slug, URL: row.URL, Enabled: row.Enabled, Groups: row.Groups,
		Guidance: row.Guidance, RefreshedAt: row.RefreshedAt, RefreshError: row.RefreshError,
		HeaderNames: []string{}, Tools: []ToolView{}}
	if sec, err := s.secret(row); err == nil {
		v.TokenSet = sec.Token != ""
		for k := range sec.Headers {
			v.HeaderNames = append(v.HeaderNames, k)
		}
		slices.Sort(v.HeaderNames)
	}
	names := map[string]bool{}
	if s.opt.Reserved != nil {
		for _, n := range s.opt.Reserved() {
			names[n] = true
		}
	}
	for _, d := range discovered(row) {
		off := slices.Contains(row.ToolOff, d.Name)
		offered := offeredName(row.Slug, d.Name, func(n string) bool { return names[n] })
		names[offered] = true
		v.Tools = append(v.Tools, ToolView{Name: d.Name, Offered: offered, Description: d.Description, Schema: d.Schema, On: !off})
	}
	return v
}

func discovered(row store.MCPServer) []Discovered {
	var out []Discovered
	if json.Unmarshal(row.Tools, &out) != nil {
		return nil
	}
	return out
}

func (s *Service) secret(row store.MCPServer) (secret, error) {
	var sec secret
	if row.SecretEnc == "" {
		return sec, nil
	}
	k, err := s.keys()
	if err != nil {
		return sec, fmt.Errorf("the encryption key is unavailable: %w", err)
	}
	plain, err := k.Decrypt(row.SecretEnc)
	if err != nil {
		return sec, fmt.Errorf("the server's token cannot be decrypted: %w", err)
	}
	if err := json.Unmarshal([]byte(plain), &sec); err != nil {
		return sec, fmt.Errorf("read the server's token: %w", err)
	}
	return sec, nil
}

// List returns every server.
func (s *Service) List(ctx context.Context) ([]Server, error) {
	rows, err := s.db.MCPServers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Server, 0, len(rows))
	for _, r := range rows {
		out = append(out, s.view(ctx, r))
	}
	return out, nil
}

// Get returns one server.
func (s *Service) Get(ctx context.Context, id int64) (Server, error) {
	row, err := s.db.MCPServer(ctx, id)
	if err != nil {
		return Server{}, store.Kinded(err, "MCP server")
	}
	return s.view(ctx, row), nil
}

// Save adds or changes a server, then refreshes its tools; a failed
// refresh does not undo the save (its error is on the server).
func (s *Service) Save(ctx context.Context, in Input) (Server, error) {
	var row store.MCPServer
	if in.ID != 0 {
		var err error
		if row, err = s.db.MCPServer(ctx, in.ID); err != nil {
			return Server{}, store.Kinded(err, "MCP server")
		}
	}
	row.Name = cleanText(in.Name, maxServerName)
	if row.Name == "" {
		return Server{}, apperr.New(apperr.Invalid, "Give the server a name.")
	}
	row.Slug = strings.TrimSpace(in.Slug)
	if row.Slug == "" {
		row.Slug = slugOf(row.Name)
	}
	if !validSlug(row.Slug) {
		return Server{}, apperr.New(apperr.Invalid, "The short name may hold only a–z, 0–9 and _ (at most %d characters); it prefixes the server's tool names.", maxSlug)
	}
	u, err := s.checkURL(ctx, in.URL)
	if err != nil {
		return Server{}, err
	}
	row.URL = u
	row.Enabled = in.Enabled
	row.Groups = in.Groups
	if row.Groups == nil {
		row.Groups = []int64{}
	}
	row.Guidance = strings.TrimSpace(in.Guidance)
	if len(row.Guidance) > maxGuidance {
		return Server{}, apperr.New(apperr.Invalid, "The guidance is too long (at most %d characters).", maxGuidance)
	}
	if in.Token != nil || in.Headers != nil {
		sec, err := s.secret(row)
		if err != nil {
			return Server{}, apperr.Wrap(apperr.Unavailable, err, "The stored token cannot be read; enter it again.")
		}
		if in.Token != nil {
			sec.Token = strings.TrimSpace(*in.Token)
		}
		if in.Headers != nil {
			sec.Headers = map[string]string{}
			for k, v := range *in.Headers {
				k = strings.TrimSpace(k)
				if k == "" {
					continue
				}
				if !validHeader(k, v) {
					return Server{}, apperr.New(apperr.Invalid, "The header %q is not a valid HTTP header.", cleanText(k, 64))
				}
				sec.Headers[http.CanonicalHeaderKey(k)] = v
			}
		}
		row.SecretEnc = ""
		if sec.Token != "" || len(sec.Headers) > 0 {
			k, err := s.keys()
			if err != nil {
				return Server{}, apperr.Wrap(apperr.Unavailable, err, "The encryption key is unavailable, so a token cannot be stored.")
			}
			b, _ := json.Marshal(sec)
			if row.SecretEnc, err = k.Encrypt(string(b)); err != nil {
				return Server{}, fmt.Errorf("encrypt mcp secret: %w", err)
			}
		}
	}
	id, err := s.db.SaveMCPServer(ctx, row)
	if errors.Is(err, store.ErrConflict) {
		return Server{}, apperr.New(apperr.Conflict, "Another server already uses the short name %q.", row.Slug)
	}
	if err != nil {
		return Server{}, store.Kinded(err, "MCP server")
	}
	if row.Enabled {
		_ = s.refresh(ctx, id) // its error is stored on the row and shown
	}
	return s.Get(ctx, id)
}

func validHeader(k, v string) bool {
	for _, r := range k {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune("()<>@,;:\\\"/[]?={}", r) {
			return false
		}
	}
	return !strings.ContainsAny(v, "\r\n\x00")
}

// checkURL refuses what cannot be an MCP endpoint: not http(s), user info,
// or an address the guard refuses (checked again at every call).
func (s *Service) checkURL(ctx context.Context, raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", apperr.New(apperr.Invalid, "Enter the server's address, starting with https:// (or http://).")
	}
	g, err := s.guard(ctx)
	if err != nil {
		return "", err
	}
	if err := g.CheckURL(u); err != nil {
		return "", apperr.New(apperr.Invalid, "This address is not allowed: %s. A server on your network needs its range under Settings → Web → allowed ranges.", plainGuardErr(err))
	}
	if err := g.Resolve(ctx, u.Hostname()); errors.Is(err, netguard.ErrBlocked) {
		return "", apperr.New(apperr.Invalid, "This address is not allowed: %s. A server on your network needs its range under Settings → Web → allowed ranges.", plainGuardErr(err))
	}
	u.Fragment = ""
	return u.String(), nil
}

func plainGuardErr(err error) string {
	msg := err.Error()
	if i := strings.LastIndex(msg, netguard.ErrBlocked.Error()+": "); i >= 0 {
		msg = msg[i+len(netguard.ErrBlocked.Error())+2:]
	}
	return msg
}

// Delete removes a server.
func (s *Service) Delete(ctx context.Context, id int64) error {
	return store.Kinded(s.db.DeleteMCPServer(ctx, id), "MCP server")
}

// Refresh asks the server for its tools again and caches them; the
// server's error, if any, is on the result (RefreshError), not an error.
func (s *Service) Refresh(ctx context.Context, id int64) (Server, error) {
	if _, err := s.db.MCPServer(ctx, id); err != nil {
		return Server{}, store.Kinded(err, "MCP server")
	}
	_ = s.refresh(ctx, id)
	return s.Get(ctx, id)
}

func (s *Service) refresh(ctx context.Context, id int64) error {
	row, err := s.db.MCPServer(ctx, id)
	if err != nil {
		return err
	}
	list, lerr := s.listTools(ctx, row)
	if lerr != nil {
		s.log.Info("mcp refresh failed", "server", row.Slug, "err", lerr)
		return s.db.SetMCPTools(ctx, id, nil, lerr.Error())
	}
	b, err := json.Marshal(list)
	if err != nil {
		return err
	}
	return s.db.SetMCPTools(ctx, id, b, "")
}

// SetTool switches one of a server's tools (by the server's name) on or
// off.
func (s *Service) SetTool(ctx context.Context, id int64, name string, on bool) (Server, error) {
	row, err := s.db.MCPServer(ctx, id)
	if err != nil {
		return Server{}, store.Kinded(err, "MCP server")
	}
	off := slices.DeleteFunc(slices.Clone(row.ToolOff), func(n string) bool { return n == name })
	if !on {
		off = append(off, name)
	}
	if err := s.db.SetMCPToolOff(ctx, id, off); err != nil {
		return Server{}, store.Kinded(err, "MCP server")
	}
	return s.Get(ctx, id)
}

// Gate is tools.GateMCP.
func (s *Service) Gate() tools.Family { return tools.GateMCP }

// Tools returns the tools of every enabled server caller may use, named
// "<slug>_<tool>" and renamed while taken, with each server's guidance.
func (s *Service) Tools(ctx context.Context, caller auth.Caller, _ store.Chat, taken func(string) bool) ([]tools.Tool, []tools.Guidance, error) {
	if !caller.Perms.Has(Permission) {
		return nil, nil, nil
	}
	rows, err := s.db.MCPServers(ctx)
	if err != nil {
		return nil, nil, err
	}
	var mine map[int64]bool
	var out []tools.Tool
	var guide []tools.Guidance
	names := map[string]bool{}
	isTaken := func(n string) bool { return names[n] || (taken != nil && taken(n)) }
	for _, row := range rows {
		if !row.Enabled {
			continue
		}
		if len(row.Groups) > 0 && !caller.Perms.Admin() {
			if mine == nil {
				mine = map[int64]bool{}
				gs, err := s.db.UserGroups(ctx, caller.User)
				if err != nil {
					return nil, nil, err
				}
				for _, g := range gs {
					mine[g.ID] = true
				}
			}
			if !slices.ContainsFunc(row.Groups, func(g int64) bool { return mine[g] }) {
				continue
			}
		}
		family := tools.GateMCP + ":" + tools.Family(row.Slug)
		n := 0
		for _, d := range discovered(row) {
			// A tool switched off still claims its name, so the others
			// keep theirs (as the page shows them).
			name := offeredName(row.Slug, d.Name, isTaken)
			names[name] = true
			if slices.Contains(row.ToolOff, d.Name) {
				continue
			}
			out = append(out, s.tool(row, d, name, family))
			n++
		}
		if n > 0 && row.Guidance != "" {
			guide = append(guide, tools.Guidance{Family: family, Title: row.Name, Text: row.Guidance})
		}
	}
	return out, guide, nil
}

func (s *Service) tool(row store.MCPServer, d Discovered, name string, family tools.Family) tools.Tool {
	id, server, toolName := row.ID, row.Name, d.Name
	return tools.Tool{
		Name:        name,
		Family:      family,
		Permission:  Permission,
		Description: d.Description,
		Parameters:  d.Schema,
		Activity: func(json.RawMessage) string {
			return "Using " + server + ": " + toolName
		},
		Run: func(ctx context.Context, call tools.Call) tools.Result {
			return s.call(ctx, id, toolName, call.Arguments)
		},
	}
}
