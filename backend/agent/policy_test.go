package agent

import (
	"testing"

	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/tools"
)

func TestPolicyEveryModeAndRisk(t *testing.T) {
	const (
		run    = tools.Run
		ask    = tools.Ask
		refuse = tools.Refuse
	)
	// contract.md's table: risk × (manual, plan, edit, auto).
	want := map[tools.Risk][4]tools.Decision{
		tools.RiskInteract: {run, run, run, run},
		tools.RiskRead:     {ask, run, run, run},
		tools.RiskWrite:    {ask, refuse, run, run},
		tools.RiskExec:     {ask, refuse, ask, run},
		// A tool that states no risk is an exec: custom and MCP tools.
		"": {ask, refuse, ask, run},
	}
	modes := []store.AgentMode{store.ModeManual, store.ModePlan, store.ModeEdit, store.ModeAuto}
	for risk, row := range want {
		for i, mode := range modes {
			tool := tools.Tool{Name: "some_tool", Risk: risk}
			got, why := Policy{Mode: mode}.Decide(tool, tools.Call{Name: "some_tool"})
			if got != row[i] {
				t.Errorf("risk %q in %s: got %v, want %v", risk, mode, got, row[i])
			}
			if (got == refuse) != (why != "") {
				t.Errorf("risk %q in %s: decision %v with reason %q", risk, mode, got, why)
			}
			// The runners' backstop agrees, and lets an Ask through only
			// when approved.
			for _, approved := range []bool{false, true} {
				_, ok := allowed(mode, "some_tool", risk, tools.Call{Approved: approved})
				wantOK := got == run || got == ask && approved
				if ok != wantOK {
					t.Errorf("backstop, risk %q in %s, approved %v: ok %v, want %v", risk, mode, approved, ok, wantOK)
				}
			}
		}
	}
	// An unknown mode asks before everything but talking.
	if d, _ := (Policy{Mode: "yolo"}).Decide(tools.Tool{Risk: tools.RiskRead}, tools.Call{}); d != ask {
		t.Errorf("unknown mode, read: %v, want ask", d)
	}
	// plan_submit outside Plan mode is refused even though it only talks.
	for _, mode := range modes {
		d, _ := Policy{Mode: mode}.Decide(tools.Tool{Name: NamePlanSubmit, Risk: tools.RiskInteract}, tools.Call{})
		if (mode == store.ModePlan) != (d == run) {
			t.Errorf("plan_submit in %s: %v", mode, d)
		}
	}
}

func TestAgentToolsDeclareTheirRisks(t *testing.T) {
	s := &Service{}
	want := map[string]tools.Risk{NameShellRun: tools.RiskExec, NameFileRead: tools.RiskRead, NameFileWrite: tools.RiskWrite,
		NameFileList: tools.RiskRead, NameAskUser: tools.RiskInteract, NamePlanSubmit: tools.RiskInteract}
	for _, mode := range []store.AgentMode{store.ModeManual, store.ModePlan, store.ModeEdit, store.ModeAuto} {
		names := map[string]bool{}
		for _, tl := range s.defs(nil, mode) {
			names[tl.Name] = true
			if tl.Risk != want[tl.Name] || tl.Family != tools.FamilyAgent || tl.Permission != Permission {
				t.Errorf("%s in %s: risk %q family %q permission %q", tl.Name, mode, tl.Risk, tl.Family, tl.Permission)
			}
			if (tl.Name == NamePlanSubmit) != tl.EndsTurn || (tl.Name == NameAskUser) != (tl.Questions != nil) {
				t.Errorf("%s: EndsTurn %v, Questions %v", tl.Name, tl.EndsTurn, tl.Questions != nil)
			}
		}
		if names[NamePlanSubmit] != (mode == store.ModePlan) {
			t.Errorf("plan_submit offered in %s: %v", mode, names[NamePlanSubmit])
		}
		if len(names) < 5 {
			t.Errorf("%s offers %v", mode, names)
		}
	}
}

// The runners refuse by themselves what their mode does not allow: a call
// reaching one without the loop's decision meets the table there.
func TestRunnersBackstop(t *testing.T) {
	b := &binding{s: &Service{}, mode: store.ModeManual, dir: "/srv"}
	byName := map[string]tools.Tool{}
	for _, tl := range b.s.defs(b, store.ModePlan) {
		byName[tl.Name] = tl
	}
	for _, name := range []string{NameShellRun, NameFileRead, NameFileWrite, NameFileList} {
		r := byName[name].Run(t.Context(), tools.Call{Name: name, Arguments: []byte(`{"command":"true","path":"x","content":""}`)})
		if !r.Failed || r.Text != "This call needs the person's approval in this mode, and it was not approved." {
			t.Errorf("%s unapproved in manual mode: %+v", name, r)
		}
	}
	b.mode = store.ModePlan
	for _, name := range []string{NameShellRun, NameFileWrite} {
		r := byName[name].Run(t.Context(), tools.Call{Name: name, Approved: true, Arguments: []byte(`{"command":"true","path":"x","content":""}`)})
		if !r.Failed || r.Text == "" {
			t.Errorf("%s approved in plan mode: %+v", name, r)
		}
	}
	b.mode = store.ModeEdit
	if r := byName[NamePlanSubmit].Run(t.Context(), tools.Call{Arguments: []byte(`{"plan":"x"}`)}); !r.Failed || r.Text != refuseNotPlan {
		t.Errorf("plan_submit in edit mode: %+v", r)
	}
}
