package tools

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strconv"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/store"
)

// The instance settings of tools. A family is on when its setting is "1";
// unset is off (DefaultOn: on): the administrator turns a tool that reaches
// outside on for the household, and everyone holding its permission (in
// the default baseline) gets it then.
const (
	SettingFamilyPrefix = "tools_family_"
	SettingMaxRounds    = "tools_max_rounds"
)

// DefaultMaxRounds is how many requests of one reply may carry tools
// when the administrator has not said; the request after the last one goes
// without tools, so the model answers with what it has.
const DefaultMaxRounds = 8

// MaxRoundsCap bounds the setting (generation.MaxRounds bounds every reply).
const MaxRoundsCap = 32

// Families lists what the instance and each model switch, in the order
// pages show them: the built-in families, then the gates of row-backed
// tools (one switch for every custom tool, one for every MCP tool).
var Families = []Family{FamilyWebSearch, FamilyFetch, GateCustom, GateMCP,
	FamilyKnowledge, FamilyNotes, FamilyMemory, FamilySkills, FamilyAgent}

// DefaultOn are the families on while no setting says otherwise (a stored
// "0" turns one off): the library's, which act only on the person's own
// library and reach nothing outside, so an instance has them from the
// start. The others reach the network (the web, an administrator's
// endpoints) and wait for an administrator. The agent's are on too: they
// are offered only in agent chats, which need agent.use (not in the
// default baseline) and the agent settings' switch.
var DefaultOn = map[Family]bool{FamilyKnowledge: true, FamilyNotes: true, FamilyMemory: true, FamilySkills: true, FamilyAgent: true}

// GatePermission is the permission a gate's tools need.
var GatePermission = map[Family]auth.Permission{
	FamilyWebSearch: auth.ToolsWebSearch, FamilyFetch: auth.ToolsFetch,
	GateCustom: auth.ToolsCustom, GateMCP: auth.ToolsMCP,
	FamilyKnowledge: auth.LibraryUse, FamilyNotes: auth.LibraryUse, FamilyMemory: auth.LibraryUse, FamilySkills: auth.LibraryUse,
	FamilyAgent: auth.AgentUse,
}

// Service is the registry of tools: the built-ins over a Web, the
// instance's switches, and the set a reply is offered (Resolve).
type Service struct {
	db      *store.DB
	tools   []Tool
	web     Web
	sources []Source
}

// AddSource adds a supplier of row-backed tools (custom HTTP tools, MCP
// servers), asked per reply after the built-ins and the sources added
// before it. Call it while the core is built, before any reply.
func (s *Service) AddSource(src Source) { s.sources = append(s.sources, src) }

// New returns the registry. web is what the web tools run on; nil leaves
// them out (nothing is offered).
func New(db *store.DB, web Web) *Service {
	s := &Service{db: db, web: web}
	if web != nil {
		s.tools = Builtins(web)
	}
	return s
}

// Settings are the instance's tool settings.
type Settings struct {
	// Families says which families are on for the instance.
	Families map[Family]bool `json:"families"`
	// MaxRounds is how many requests of one reply may carry tools.
	MaxRounds int `json:"maxRounds"`
}

// SettingsPatch changes the settings that are set.
type SettingsPatch struct {
	Families  map[Family]bool `json:"families,omitempty"`
	MaxRounds *int            `json:"maxRounds,omitempty"`
}

// Settings reads the instance's tool settings.
func (s *Service) Settings(ctx context.Context) (Settings, error) {
	out := Settings{Families: map[Family]bool{}, MaxRounds: DefaultMaxRounds}
	for _, f := range Families {
		v, ok, err := s.db.Setting(ctx, SettingFamilyPrefix+string(f))
		if err != nil {
			return Settings{}, err
		}
		out.Families[f] = v == "1" || !ok && DefaultOn[f]
	}
	v, ok, err := s.db.Setting(ctx, SettingMaxRounds)
	if err != nil {
		return Settings{}, err
	}
	if n, err := strconv.Atoi(v); ok && err == nil && n >= 1 && n <= MaxRoundsCap {
		out.MaxRounds = n
	}
	return out, nil
}

// SetSettings changes the instance's tool settings (administrators).
func (s *Service) SetSettings(ctx context.Context, p SettingsPatch) (Settings, error) {
	for f := range p.Families {
		if !slices.Contains(Families, f) {
			return Settings{}, apperr.New(apperr.Invalid, "There is no tool family %q.", f)
		}
	}
	if p.MaxRounds != nil && (*p.MaxRounds < 1 || *p.MaxRounds > MaxRoundsCap) {
		return Settings{}, apperr.New(apperr.Invalid, "The number of tool rounds is 1 to %d.", MaxRoundsCap)
	}
	for f, on := range p.Families {
		v := "0"
		if on {
			v = "1"
		}
		if err := s.db.SetSetting(ctx, SettingFamilyPrefix+string(f), v); err != nil {
			return Settings{}, err
		}
	}
	if p.MaxRounds != nil {
		if err := s.db.SetSetting(ctx, SettingMaxRounds, strconv.Itoa(*p.MaxRounds)); err != nil {
			return Settings{}, err
		}
	}
	return s.Settings(ctx)
}

// Info is a tool as pages show it: what it is offered as, read-only.
type Info struct {
	Name        string          `json:"name"`
	Family      Family          `json:"family"`
	Permission  string          `json:"permission"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// List describes every tool fixed in code: the built-ins, then the fixed
// sources' (Fixed). Row-backed tools are listed where their rows are.
func (s *Service) List() []Info { return NewToolSet(s.fixed()...).Info() }

// fixed are the built-ins and the fixed sources' tools.
func (s *Service) fixed() []Tool {
	out := slices.Clone(s.tools)
	for _, src := range s.sources {
		if f, ok := src.(Fixed); ok {
			out = append(out, f.Catalog()...)
		}
	}
	return out
}

// Reserved lists the names no custom tool or MCP tool may take: the
// built-ins' and the fixed sources'.
func (s *Service) Reserved() []string {
	var out []string
	for _, t := range s.fixed() {
		out = append(out, t.Name)
	}
	return out
}

// Info describes the set's tools.
func (s ToolSet) Info() []Info {
	out := make([]Info, 0, len(s.tools))
	for _, t := range s.tools {
		out = append(out, Info{Name: t.Name, Family: t.Family, Permission: t.Permission,
			Description: t.Description, Parameters: t.Parameters})
	}
	return out
}

// Resolve returns the tools a reply of model in chat, for caller, is
// offered. A tool is offered only when every switch allows it: the model
// is flagged tools, the caller holds the tool's permission, the instance
// has its gate on, the model has not switched the gate off, the chat has
// not turned tools off, and (web search) a provider is ready. Row-backed
// tools come from the sources, after the built-ins, which claim their
// names first (even when not offered, so a name never changes meaning),
// as do a fixed source's (Fixed) against every other source.
// The set travels with the reply: what it may run is exactly what was
// offered.
func (s *Service) Resolve(ctx context.Context, caller auth.Caller, model store.Model, chat store.Chat) (ToolSet, error) {
	if s == nil || len(s.tools)+len(s.sources) == 0 || !model.Capabilities.Tools || chat.ToolsOff {
		return ToolSet{}, nil
	}
	st, err := s.Settings(ctx)
	if err != nil {
		return ToolSet{}, err
	}
	allowed := func(gate Family) bool {
		return st.Families[gate] && !slices.Contains(model.Capabilities.ToolsOff, string(gate)) &&
			caller.Perms.Has(GatePermission[gate])
	}
	taken := map[string]bool{}
	claimedBy := map[string]Source{}
	for _, src := range s.sources {
		if f, ok := src.(Fixed); ok {
			for _, t := range f.Catalog() {
				claimedBy[t.Name] = src
			}
		}
	}
	var set ToolSet
	for _, t := range s.tools {
		taken[t.Name] = true
		if !allowed(t.Family.Gate()) || !caller.Perms.Has(t.Permission) ||
			t.Family == FamilyWebSearch && !s.web.SearchReady(ctx) {
			continue
		}
		set.tools = append(set.tools, t)
	}
	for _, src := range s.sources {
		if !allowed(src.Gate()) {
			continue
		}
		mine := func(name string) bool { c, ok := claimedBy[name]; return !ok || c == src }
		list, guidance, err := src.Tools(ctx, caller, chat, func(name string) bool { return taken[name] || !mine(name) })
		if err != nil {
			// One source failing (a database error) must not take the
			// others' tools away; the reply goes on without its tools.
			slog.Default().Warn("tools: a source failed; its tools are not offered", "gate", src.Gate(), "err", err)
			continue
		}
		for _, t := range list {
			if taken[t.Name] || !mine(t.Name) || t.Family.Gate() != src.Gate() || t.Permission != "" && !caller.Perms.Has(t.Permission) {
				continue // never shadow, never offer what a source mislabels
			}
			taken[t.Name] = true
			set.tools = append(set.tools, t)
		}
		for _, g := range guidance {
			if g.Family.Gate() == src.Gate() && set.offers(g.Family) {
				set.guidance = append(set.guidance, g)
			}
		}
	}
	return set, nil
}

// MaxRounds is the instance's round limit (the default when unreadable).
func (s *Service) MaxRounds(ctx context.Context) int {
	st, err := s.Settings(ctx)
	if err != nil {
		return DefaultMaxRounds
	}
	return st.MaxRounds
}

// ToolSet is the tools one reply is offered: their schemas for the
// request and their runners for the loop.
type ToolSet struct {
	tools    []Tool
	guidance []Guidance
}

// offers reports whether a tool of family f is in the set.
func (s ToolSet) offers(f Family) bool {
	for _, t := range s.tools {
		if t.Family == f {
			return true
		}
	}
	return false
}

// Guidance is the row-backed tools' guidance for the harness, for the
// families offered.
func (s ToolSet) Guidance() []Guidance { return s.guidance }

// NewToolSet returns a set of the given tools, in offering order.
func NewToolSet(tools ...Tool) ToolSet { return ToolSet{tools: tools} }

// Len is how many tools are offered.
func (s ToolSet) Len() int { return len(s.tools) }

// Names lists the offered tools' names.
func (s ToolSet) Names() []string {
	out := make([]string, len(s.tools))
	for i, t := range s.tools {
		out[i] = t.Name
	}
	return out
}

// Lookup returns the offered tool of that name.
func (s ToolSet) Lookup(name string) (Tool, bool) {
	for _, t := range s.tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// Families are the families of the offered tools, each once, in
// offering order (the harness's gates).
func (s ToolSet) Families() []Family {
	var out []Family
	for _, t := range s.tools {
		if !slices.Contains(out, t.Family) {
			out = append(out, t.Family)
		}
	}
	return out
}

// Schemas are the request's tools array: one function schema each.
func (s ToolSet) Schemas() []json.RawMessage {
	out := make([]json.RawMessage, 0, len(s.tools))
	for _, t := range s.tools {
		b, _ := json.Marshal(map[string]any{"type": "function", "function": map[string]any{
			"name": t.Name, "description": t.Description, "parameters": t.Parameters}})
		out = append(out, b)
	}
	return out
}
