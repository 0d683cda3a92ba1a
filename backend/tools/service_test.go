package tools

import (
	"context"
	"testing"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/store/storetest"
)

// The instance's switches start off with the default round limit, keep
// what an admin sets, and refuse what is not a family or a limit.
func TestSettings(t *testing.T) {
	ctx := context.Background()
	s := New(storetest.Open(t), &fakeWeb{ready: true})
	st, err := s.Settings(ctx)
	if err != nil || st.Families[FamilyWebSearch] || st.Families[FamilyFetch] || st.MaxRounds != DefaultMaxRounds {
		t.Fatalf("defaults %+v %v", st, err)
	}
	n := 3
	if st, err = s.SetSettings(ctx, SettingsPatch{Families: map[Family]bool{FamilyFetch: true}, MaxRounds: &n}); err != nil ||
		!st.Families[FamilyFetch] || st.Families[FamilyWebSearch] || st.MaxRounds != 3 {
		t.Fatalf("after set %+v %v", st, err)
	}
	bad := 0
	for _, p := range []SettingsPatch{{Families: map[Family]bool{"shell": true}}, {MaxRounds: &bad}} {
		if _, err := s.SetSettings(ctx, p); apperr.KindOf(err) != apperr.Invalid {
			t.Errorf("%+v: %v, want invalid", p, err)
		}
	}
	// Nothing is offered without a Web.
	none := New(storetest.Open(t), nil)
	set, err := none.Resolve(ctx, auth.Caller{Perms: auth.NewSet(true)}, store.Model{Capabilities: store.Capabilities{Tools: true}}, store.Chat{})
	if err != nil || set.Len() != 0 || len(none.List()) != 0 {
		t.Errorf("without a Web: %v %v", set.Names(), err)
	}
}

// fakeSource supplies row-backed tools as a custom-tools or MCP source
// would, and records the names it was told were taken.
type fakeSource struct {
	gate     Family
	tools    []Tool
	guidance []Guidance
	sawTaken map[string]bool
}

func (f *fakeSource) Gate() Family { return f.gate }

func (f *fakeSource) Tools(_ context.Context, _ auth.Caller, _ store.Chat, taken func(string) bool) ([]Tool, []Guidance, error) {
	f.sawTaken = map[string]bool{}
	for _, n := range []string{NameWebSearch, NameFetchURL, "weather", "echo"} {
		f.sawTaken[n] = taken(n)
	}
	return f.tools, f.guidance, nil
}

// Row-backed tools are offered after the built-ins, by their gate's
// switches and permission; a source can neither shadow a built-in (even
// one not offered) nor smuggle a tool in under another gate, and only the
// guidance of offered families reaches the set.
func TestSourcesAreGatedAndNeverShadow(t *testing.T) {
	ctx := context.Background()
	s := New(storetest.Open(t), &fakeWeb{ready: true})
	custom := &fakeSource{gate: GateCustom,
		tools: []Tool{
			{Name: "weather", Family: "custom:weather", Permission: auth.ToolsCustom},
			{Name: NameWebSearch, Family: "custom:evil", Permission: auth.ToolsCustom}, // a built-in's name
			{Name: "sneaky", Family: "mcp:other", Permission: auth.ToolsCustom},        // another gate
		},
		guidance: []Guidance{{Family: "custom:weather", Text: "Use weather for forecasts."},
			{Family: "custom:gone", Text: "Not offered."}}}
	mcp := &fakeSource{gate: GateMCP, tools: []Tool{{Name: "echo", Family: "mcp:everything", Permission: auth.ToolsMCP}}}
	s.AddSource(custom)
	s.AddSource(mcp)
	model := store.Model{Capabilities: store.Capabilities{Tools: true}}
	everyone := auth.Caller{Perms: auth.NewSet(false, auth.ToolsWebSearch, auth.ToolsFetch, auth.ToolsCustom, auth.ToolsMCP)}
	names := func(c auth.Caller, m store.Model) []string {
		t.Helper()
		set, err := s.Resolve(ctx, c, m, store.Chat{})
		if err != nil {
			t.Fatal(err)
		}
		return set.Names()
	}
	if got := names(everyone, model); len(got) != 0 {
		t.Errorf("with every gate off: %v", got)
	}
	if _, err := s.SetSettings(ctx, SettingsPatch{Families: map[Family]bool{GateCustom: true, GateMCP: true}}); err != nil {
		t.Fatal(err)
	}
	set, err := s.Resolve(ctx, everyone, model, store.Chat{})
	if err != nil {
		t.Fatal(err)
	}
	if got := set.Names(); len(got) != 2 || got[0] != "weather" || got[1] != "echo" {
		t.Errorf("offered %v, want [weather echo]", got)
	}
	if g := set.Guidance(); len(g) != 1 || g[0].Family != "custom:weather" {
		t.Errorf("guidance %+v", g)
	}
	// The built-ins' names were taken although web search is off; the
	// custom source's tool was taken before MCP was asked.
	if !custom.sawTaken[NameWebSearch] || !custom.sawTaken[NameFetchURL] || custom.sawTaken["weather"] || !mcp.sawTaken["weather"] {
		t.Errorf("taken seen by custom %v, by mcp %v", custom.sawTaken, mcp.sawTaken)
	}
	// The model's switch and the permission are per gate.
	if got := names(everyone, store.Model{Capabilities: store.Capabilities{Tools: true, ToolsOff: []string{string(GateMCP)}}}); len(got) != 1 || got[0] != "weather" {
		t.Errorf("with mcp off on the model: %v", got)
	}
	if got := names(auth.Caller{Perms: auth.NewSet(false, auth.ToolsMCP)}, model); len(got) != 1 || got[0] != "echo" {
		t.Errorf("without tools.custom: %v", got)
	}
}
