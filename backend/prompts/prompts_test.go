package prompts_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/prompts"
	"github.com/llembas/lembas/backend/store/storetest"
	"github.com/llembas/lembas/backend/tools"
)

func TestSubstituteIsOnePassAndLeavesUnknownNames(t *testing.T) {
	vars := map[string]string{"date": "today", "model_name": "{{date}}", "x1_y": "ok", "empty": ""}
	for _, tc := range []struct{ in, want string }{
		{"It is {{date}}.", "It is today."},
		{"{{date}}{{date}}", "todaytoday"},
		{"unknown {{nope}} stays", "unknown {{nope}} stays"},
		// A value is never expanded in its turn.
		{"I am {{model_name}}", "I am {{date}}"},
		{"digits and underscores {{x1_y}}", "digits and underscores ok"},
		{"empty value {{empty}}.", "empty value ."},
		// Only [a-z0-9_]+ are names.
		{"{{ date }} {{Date}} {{da-te}} ${date} {date} {{}}", "{{ date }} {{Date}} {{da-te}} ${date} {date} {{}}"},
		{`{"total": 1} {{{date}}}`, `{"total": 1} {today}`},
	} {
		if got := prompts.Substitute(tc.in, vars); got != tc.want {
			t.Errorf("Substitute(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestComposeGates(t *testing.T) {
	frags := []prompts.Fragment{
		{Key: "core", Default: "Core {{v}}."},
		{Key: "search", Default: "Search.", Families: []tools.Family{tools.FamilyWebSearch}},
		{Key: "either", Default: "Either.", Families: []tools.Family{tools.FamilyWebSearch, tools.FamilyFetch}},
		{Key: "anytool", Default: "Any tool.", WhenTools: true},
		{Key: "about_search", Default: "About search.", Requires: "search"},
		{Key: "chain", Default: "Chain.", Requires: "about_search"},
		{Key: "needs_var", Default: "Listing: {{listing}}", Requires: "listing"},
	}
	vars := map[string]string{"v": "one"}
	for _, tc := range []struct {
		name     string
		families []tools.Family
		over     map[string]string
		vars     map[string]string
		want     string
	}{
		{"no tools", nil, nil, vars, "Core one."},
		{"search", []tools.Family{tools.FamilyWebSearch}, nil, vars,
			"Core one.\n\nSearch.\n\nEither.\n\nAny tool.\n\nAbout search.\n\nChain."},
		{"fetch only", []tools.Family{tools.FamilyFetch}, nil, vars, "Core one.\n\nEither.\n\nAny tool."},
		{"a required fragment off takes its dependants", []tools.Family{tools.FamilyWebSearch},
			map[string]string{"search": ""}, vars, "Core one.\n\nEither.\n\nAny tool."},
		{"a required variable", nil, nil, map[string]string{"v": "one", "listing": "a.go"}, "Core one.\n\nListing: a.go"},
		{"empty override is off", nil, map[string]string{"core": ""}, vars, ""},
		{"blank override is off", nil, map[string]string{"core": " \n "}, vars, ""},
		{"override replaces the default", nil, map[string]string{"core": "Mine {{v}} {{zz}}."}, vars, "Mine one {{zz}}."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := prompts.Compose(frags, tc.over, prompts.Input{Families: tc.families, Vars: tc.vars})
			if got != tc.want {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestCoreFragmentsReachModelsWithNoTools(t *testing.T) {
	db := storetest.Open(t)
	clock := func() time.Time {
		return time.Date(2026, time.December, 1, 23, 9, 0, 0, time.FixedZone("CET", 3600))
	}
	s := prompts.New(db, clock)
	got, err := s.Harness(context.Background(), prompts.Request{ModelName: "Qwen {{date}}"})
	if err != nil {
		t.Fatal(err)
	}
	want := "The current date is Tuesday 1 December 2026 and the time is 23:09 (CET, UTC+01:00).\n\nYou are the model Qwen {{date}}."
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	// With both web tools, their guidance follows, in order.
	got, _ = s.Harness(context.Background(), prompts.Request{ModelName: "Q", Families: []tools.Family{tools.FamilyWebSearch, tools.FamilyFetch}})
	for _, key := range []string{"tool_results", "web_search", "fetch", "citations"} {
		if !strings.Contains(got, defaultOf(t, key)) {
			t.Errorf("%s missing from %q", key, got)
		}
	}
}

func defaultOf(t *testing.T, key string) string {
	for _, f := range prompts.Builtins() {
		if f.Key == key {
			return f.Default
		}
	}
	t.Fatalf("no fragment %q", key)
	return ""
}

func TestOverridesStoreOnlyWhatDiffersFromTheDefault(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	s := prompts.New(db, nil)
	stored := func() map[string]string {
		t.Helper()
		m, err := db.PromptOverrides(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if err := s.Set(ctx, map[string]string{"date": "Today is {{date}}.", "model": ""}); err != nil {
		t.Fatal(err)
	}
	if m := stored(); len(m) != 2 || m["date"] != "Today is {{date}}." || m["model"] != "" {
		t.Fatalf("stored %q", m)
	}
	// Not submitted: kept. The default's text (with a browser's CRLF):
	// the override is deleted, not stored.
	if err := s.Set(ctx, map[string]string{"date": strings.ReplaceAll(defaultOf(t, "date"), "\n", "\r\n")}); err != nil {
		t.Fatal(err)
	}
	if m := stored(); len(m) != 1 || m["model"] != "" {
		t.Fatalf("after saving the default: %q", m)
	}
	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range list {
		switch f.Key {
		case "model":
			if !f.Overridden || !f.Off || f.Text != "" {
				t.Errorf("model: %+v", f)
			}
		default:
			if f.Overridden || f.Off || f.Text != f.Default {
				t.Errorf("%s: %+v", f.Key, f)
			}
		}
	}
	h, _ := s.Harness(ctx, prompts.Request{ModelName: "Q"})
	if strings.Contains(h, "You are") || !strings.HasPrefix(h, "The current date") {
		t.Errorf("harness with the model fragment off: %q", h)
	}
	if err := s.Reset(ctx, "model"); err != nil {
		t.Fatal(err)
	}
	if m := stored(); len(m) != 0 {
		t.Fatalf("after reset: %q", m)
	}
	for _, bad := range []map[string]string{{"nope": "x"}, {"date": strings.Repeat("x", prompts.MaxText+1)}, {"date": "\xff"}} {
		if err := s.Set(ctx, bad); apperr.KindOf(err) != apperr.Invalid {
			t.Errorf("Set(%.20q): %v, want invalid", bad, err)
		}
	}
	if err := s.Reset(ctx, "nope"); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("Reset(nope): %v", err)
	}
}

// A row's guidance (a custom tool's, an MCP server's) follows the built-in
// fragments when its family is offered, substituted like any fragment,
// and is absent when it is not offered.
func TestRowGuidanceFollowsItsFamily(t *testing.T) {
	s := prompts.New(storetest.Open(t), func() time.Time { return time.Date(2026, 3, 14, 15, 9, 0, 0, time.UTC) })
	g := []tools.Guidance{{Family: "custom:weather", Title: "Weather", Text: "Ask weather on {{date}}."}}
	on, err := s.Harness(context.Background(), prompts.Request{ModelName: "Tiny", Families: []tools.Family{"custom:weather"}, Guidance: g})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(on, "\n\nAsk weather on Saturday 14 March 2026.") {
		t.Errorf("offered: %q", on)
	}
	off, _ := s.Harness(context.Background(), prompts.Request{ModelName: "Tiny", Families: []tools.Family{"mcp:other"}, Guidance: g})
	if strings.Contains(off, "Ask weather") {
		t.Errorf("not offered: %q", off)
	}
}

// The library's fragments: knowledge, notes and skills follow their tool
// families; the memories section follows the memories alone (a model with
// no tools gets them), and the guidance about remembering lives inside it:
// memory off (no {{memories}}) takes both, and so does the section turned
// off by an administrator. What people and models wrote is substituted
// once: a memory reading "{{skills}}" stays literal.
func TestLibraryFragments(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	s := prompts.New(db, func() time.Time { return time.Date(2026, 3, 14, 15, 9, 0, 0, time.UTC) })
	all := []tools.Family{tools.FamilyKnowledge, tools.FamilyNotes, tools.FamilyMemory, tools.FamilySkills}
	lib := prompts.Library{Memories: "- [1] Likes {{skills}} and {{date}}.", Skills: "- tidy: Tidies {{memories}}.",
		KnowledgeBases: "This chat searches “{{model_name}}”."}
	has := func(h string, keys ...string) map[string]bool {
		got := map[string]bool{}
		for _, k := range keys {
			intro, _, _ := strings.Cut(defaultOf(t, k), "{{")
			got[k] = strings.Contains(h, strings.TrimSpace(intro))
		}
		return got
	}
	keys := []string{"memories", "memory_guidance", "knowledge", "notes", "skills"}
	for _, tc := range []struct {
		name     string
		families []tools.Family
		lib      prompts.Library
		over     map[string]string
		want     []string // the keys present
	}{
		{"everything", all, lib, nil, keys},
		{"no tools: the memories alone", nil, lib, nil, []string{"memories"}},
		{"memory off takes its guidance", all, prompts.Library{Skills: lib.Skills, KnowledgeBases: lib.KnowledgeBases}, nil,
			[]string{"knowledge", "notes", "skills"}},
		{"the section turned off takes its guidance", all, lib, map[string]string{"memories": ""}, []string{"knowledge", "notes", "skills"}},
		{"no skills visible: no index", all, prompts.Library{Memories: lib.Memories, KnowledgeBases: lib.KnowledgeBases}, nil,
			[]string{"memories", "memory_guidance", "knowledge", "notes"}},
		{"notes only", []tools.Family{tools.FamilyNotes}, prompts.Library{}, nil, []string{"notes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.Set(ctx, tc.over); err != nil {
				t.Fatal(err)
			}
			defer s.Reset(ctx, "memories")
			h, err := s.Harness(ctx, prompts.Request{ModelName: "Tiny", Families: tc.families, Library: tc.lib})
			if err != nil {
				t.Fatal(err)
			}
			got := has(h, keys...)
			for _, k := range keys {
				if want := slices.Contains(tc.want, k); got[k] != want {
					t.Errorf("%s present %v, want %v:\n%s", k, got[k], want, h)
				}
			}
		})
	}
	h, _ := s.Harness(ctx, prompts.Request{ModelName: "Tiny", Families: all, Library: lib})
	for _, want := range []string{"- [1] Likes {{skills}} and {{date}}.", "- tidy: Tidies {{memories}}.", "This chat searches “{{model_name}}”."} {
		if !strings.Contains(h, want) {
			t.Errorf("%q was not kept literally in:\n%s", want, h)
		}
	}
	for _, v := range []string{"memories", "skills", "knowledge_bases"} {
		if !slices.ContainsFunc(prompts.Variables(), func(x prompts.Variable) bool { return x.Name == v }) {
			t.Errorf("variable %s is not listed", v)
		}
	}
}

// A fragment requiring a variable of its own key reads the variable (it
// cannot satisfy itself); one requiring another fragment's key follows
// that fragment, even when the variable of that name has a value.
func TestRequiresOwnKeyIsTheVariable(t *testing.T) {
	frags := []prompts.Fragment{
		{Key: "list", Default: "List: {{list}}", Requires: "list"},
		{Key: "about", Default: "About the list.", Requires: "list"},
	}
	for _, tc := range []struct {
		name string
		vars map[string]string
		over map[string]string
		want string
	}{
		{"with a value", map[string]string{"list": "a"}, nil, "List: a\n\nAbout the list."},
		{"without", map[string]string{"list": " "}, nil, ""},
		{"the section off", map[string]string{"list": "a"}, map[string]string{"list": ""}, ""},
	} {
		if got := prompts.Compose(frags, tc.over, prompts.Input{Vars: tc.vars}); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestAgentFragments(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	s := prompts.New(db, func() time.Time { return time.Date(2026, 3, 14, 15, 9, 0, 0, time.UTC) })
	agent := prompts.Agent{Host: "me@box.lan:22", Dir: "/srv/{{date}} app", Mode: "Edit. You may change files.",
		Listing: "README.md\nsrc/ (12 files)\n{{agent_host}}", Rewound: "2 December 2026 at 05:12 UTC"}
	fams := []tools.Family{tools.FamilyAgent}
	h, err := s.Harness(ctx, prompts.Request{ModelName: "Tiny", Families: fams, Agent: agent})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"me@box.lan:22", "/srv/{{date}} app", "Mode: Edit. You may change files.", "fresh non-interactive shell",
		"cwd", "apt-get update", "file_read", "src/ (12 files)\n{{agent_host}}", "rewound on 2 December 2026 at 05:12 UTC"} {
		if !strings.Contains(h, want) {
			t.Errorf("the agent harness lacks %q:\n%s", want, h)
		}
	}
	// No listing cached yet and never rewound: those sections go, and
	// no empty heading is left.
	h, _ = s.Harness(ctx, prompts.Request{ModelName: "Tiny", Families: fams, Agent: prompts.Agent{Host: agent.Host, Dir: "/srv", Mode: agent.Mode}})
	if strings.Contains(h, "as last listed") || strings.Contains(h, "rewound") || !strings.Contains(h, "me@box.lan:22") {
		t.Errorf("without a listing or a rewind:\n%s", h)
	}
	// A plain chat hears nothing of agents.
	h, _ = s.Harness(ctx, prompts.Request{ModelName: "Tiny", Families: []tools.Family{tools.FamilyNotes}, Agent: agent})
	if strings.Contains(h, "SSH") || strings.Contains(h, "README.md") || strings.Contains(h, "rewound") {
		t.Errorf("a chat without the agent's tools gets the agent's harness:\n%s", h)
	}
	for _, v := range []string{"agent_host", "agent_dir", "agent_mode", "project_listing", "agent_rewound"} {
		if !slices.ContainsFunc(prompts.Variables(), func(x prompts.Variable) bool { return x.Name == v }) {
			t.Errorf("variable %s is not listed", v)
		}
	}
}

// A task fragment (compaction's instruction) is never in a reply's
// harness; Text gives its override, or its default when it is emptied.
func TestTaskFragmentText(t *testing.T) {
	db := storetest.Open(t)
	s := prompts.New(db, time.Now)
	ctx := context.Background()
	def := defaultOf(t, "compact")
	if got, _ := s.Harness(ctx, prompts.Request{ModelName: "Q"}); strings.Contains(got, def) {
		t.Errorf("the harness carries the compaction instruction: %q", got)
	}
	for _, c := range []struct{ set, want string }{{"Summarise briefly.", "Summarise briefly."}, {"", def}} {
		if err := s.Set(ctx, map[string]string{"compact": c.set}); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Text(ctx, "compact"); err != nil || got != c.want {
			t.Errorf("after setting %q: %q, %v", c.set, got, err)
		}
	}
}
