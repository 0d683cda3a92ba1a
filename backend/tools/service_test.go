package tools

import (
	"context"
	"slices"
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
	sawChat  store.Chat
}

func (f *fakeSource) Gate() Family { return f.gate }

func (f *fakeSource) Tools(_ context.Context, _ auth.Caller, chat store.Chat, taken func(string) bool) ([]Tool, []Guidance, error) {
	f.sawChat = chat
	f.sawTaken = map[string]bool{}
	for _, n := range []string{NameWebSearch, NameFetchURL, "weather", "echo", "notes_read"} {
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

// The library's families are on while no setting says otherwise, and an
// administrator's "off" sticks; the web families stay off until turned on.
func TestLibraryFamiliesAreOnByDefault(t *testing.T) {
	ctx := context.Background()
	s := New(storetest.Open(t), &fakeWeb{ready: true})
	st, err := s.Settings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Family{FamilyKnowledge, FamilyNotes, FamilyMemory, FamilySkills} {
		if !st.Families[f] {
			t.Errorf("%s off by default", f)
		}
		if GatePermission[f] != auth.LibraryUse {
			t.Errorf("%s needs %q", f, GatePermission[f])
		}
	}
	for _, f := range []Family{FamilyWebSearch, FamilyFetch, GateCustom, GateMCP} {
		if st.Families[f] {
			t.Errorf("%s on by default", f)
		}
	}
	if st, err = s.SetSettings(ctx, SettingsPatch{Families: map[Family]bool{FamilyNotes: false}}); err != nil ||
		st.Families[FamilyNotes] || !st.Families[FamilyMemory] {
		t.Fatalf("after turning notes off %+v %v", st, err)
	}
	if st, _ = s.Settings(ctx); st.Families[FamilyNotes] {
		t.Error("notes came back on")
	}
	// Off, its source is not asked and its tools are not offered.
	lib := &claimer{fakeSource: fakeSource{gate: FamilyNotes, tools: []Tool{{Name: "notes_read", Family: FamilyNotes, Permission: auth.LibraryUse}}}}
	s.AddSource(lib)
	set, _ := s.Resolve(ctx, auth.Caller{Perms: auth.NewSet(false, auth.LibraryUse)}, store.Model{Capabilities: store.Capabilities{Tools: true}}, store.Chat{})
	if set.Len() != 0 {
		t.Errorf("notes off, offered %v", set.Names())
	}
	s.SetSettings(ctx, SettingsPatch{Families: map[Family]bool{FamilyNotes: true}})
	set, _ = s.Resolve(ctx, auth.Caller{Perms: auth.NewSet(false, auth.LibraryUse)}, store.Model{Capabilities: store.Capabilities{Tools: true}}, store.Chat{})
	if got := set.Names(); len(got) != 1 || got[0] != "notes_read" {
		t.Errorf("notes on, offered %v", got)
	}
}

// claimer is a source whose tools are fixed, as the library's are.
type claimer struct {
	fakeSource
	claims []string
}

func (c *claimer) Catalog() []Tool {
	var out []Tool
	for _, n := range c.claims {
		out = append(out, Tool{Name: n, Family: c.gate, Permission: auth.LibraryUse, Description: "Fixed " + n + "."})
	}
	return out
}

// A claimed name is the claimer's, offered or not: a source asked before
// it (a custom tool saved under that name) cannot take it, and it is
// reserved against new custom and MCP tools. The source gets the chat.
func TestClaimedNamesStayTheClaimers(t *testing.T) {
	ctx := context.Background()
	s := New(storetest.Open(t), &fakeWeb{ready: true})
	custom := &fakeSource{gate: GateCustom, tools: []Tool{
		{Name: "notes_read", Family: "custom:notes_read", Permission: auth.ToolsCustom},
		{Name: "weather", Family: "custom:weather", Permission: auth.ToolsCustom},
	}}
	lib := &claimer{fakeSource: fakeSource{gate: FamilyNotes, tools: []Tool{{Name: "notes_read", Family: FamilyNotes, Permission: auth.LibraryUse}}},
		claims: []string{"notes_read", "notes_write"}}
	s.AddSource(custom)
	s.AddSource(lib)
	s.SetSettings(ctx, SettingsPatch{Families: map[Family]bool{GateCustom: true}})
	caller := auth.Caller{Perms: auth.NewSet(false, auth.ToolsCustom, auth.LibraryUse)}
	model := store.Model{Capabilities: store.Capabilities{Tools: true}}
	set, err := s.Resolve(ctx, caller, model, store.Chat{ID: 7})
	if err != nil {
		t.Fatal(err)
	}
	if got := set.Names(); len(got) != 2 || got[0] != "weather" || got[1] != "notes_read" {
		t.Errorf("offered %v, want [weather notes_read]", got)
	}
	if tl, _ := set.Lookup("notes_read"); tl.Family != FamilyNotes {
		t.Errorf("notes_read is the %s family's", tl.Family)
	}
	if lib.sawChat.ID != 7 || custom.sawChat.ID != 7 {
		t.Errorf("the sources saw chats %d and %d, want 7", lib.sawChat.ID, custom.sawChat.ID)
	}
	// Taken for the custom source, not for the claimer itself.
	if !custom.sawTaken["notes_read"] || lib.sawTaken["notes_read"] {
		t.Errorf("custom saw notes_read taken %v, the claimer %v", custom.sawTaken["notes_read"], lib.sawTaken["notes_read"])
	}
	// Claimed even while the claimer's family is off.
	s.SetSettings(ctx, SettingsPatch{Families: map[Family]bool{FamilyNotes: false}})
	set, _ = s.Resolve(ctx, caller, model, store.Chat{})
	if got := set.Names(); len(got) != 1 || got[0] != "weather" {
		t.Errorf("notes off: offered %v, want [weather]", got)
	}
	res := s.Reserved()
	for _, n := range []string{NameWebSearch, NameFetchURL, "notes_read", "notes_write"} {
		if !slices.Contains(res, n) {
			t.Errorf("%s not reserved: %v", n, res)
		}
	}
	// The page lists the fixed tools after the built-ins, not the rows'.
	var listed []string
	for _, i := range s.List() {
		listed = append(listed, i.Name)
	}
	if want := []string{NameWebSearch, NameFetchURL, "notes_read", "notes_write"}; !slices.Equal(listed, want) {
		t.Errorf("listed %v, want %v", listed, want)
	}
}

// The web tools only read, so an agent chat in Plan mode may use them.
func TestBuiltinsReadOnly(t *testing.T) {
	for _, tl := range Builtins(nil) {
		if tl.Risk != RiskRead {
			t.Errorf("%s: risk %q, want read", tl.Name, tl.Risk)
		}
	}
}
