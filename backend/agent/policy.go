package agent

import (
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/tools"
)

// Policy is the table that decides, for an agent chat's mode, what each
// call may do: run, ask the person first, or be refused. It is keyed on
// the tool's Risk (a tool with none is an exec: what is not known to be
// harmless asks), and the loop consults it for every call of an agent
// chat's reply, the built-ins and the library's tools included. The model
// is told its mode in the harness, but the rule lives here: a file it
// reads may argue with a sentence, not with this table.
type Policy struct {
	// Mode is the chat's mode as read once for the reply; switching the
	// chat to Auto mid-reply approves nothing already decided.
	Mode store.AgentMode
}

var _ tools.Policy = Policy{}

// The reasons a call is refused, as the model reads them.
const (
	refusePlanWrite = "Plan mode only looks: files cannot be changed here. Propose the change in your plan (plan_submit); " +
		"the person decides whether to carry it out."
	refusePlanExec = "Plan mode only looks: commands cannot run here. Read files with file_read and file_list instead, " +
		"and propose what to run in your plan (plan_submit)."
	refuseNotPlan = "plan_submit is only for Plan mode; this chat is not in Plan mode. Go on with the task."
)

// Decide returns what the mode allows for a call of t.
func (p Policy) Decide(t tools.Tool, _ tools.Call) (tools.Decision, string) {
	return decide(p.Mode, t.Name, t.Risk)
}

// decide is the table (contract.md):
//
//	risk \ mode   manual  plan    edit  auto
//	interact      run     run     run   run
//	read          ask     run     run   run
//	write         ask     refuse  run   run
//	exec          ask     refuse  ask   run
//
// An unknown mode is Manual (everything asks). plan_submit outside Plan
// mode is refused (it is offered only there; this is the backstop).
func decide(mode store.AgentMode, name string, risk tools.Risk) (tools.Decision, string) {
	if name == NamePlanSubmit && mode != store.ModePlan {
		return tools.Refuse, refuseNotPlan
	}
	switch risk {
	case tools.RiskInteract:
		return tools.Run, ""
	case tools.RiskRead:
		if mode == store.ModePlan || mode == store.ModeEdit || mode == store.ModeAuto {
			return tools.Run, ""
		}
		return tools.Ask, ""
	case tools.RiskWrite:
		switch mode {
		case store.ModePlan:
			return tools.Refuse, refusePlanWrite
		case store.ModeEdit, store.ModeAuto:
			return tools.Run, ""
		}
		return tools.Ask, ""
	}
	// exec, and anything without a risk.
	switch mode {
	case store.ModePlan:
		return tools.Refuse, refusePlanExec
	case store.ModeAuto:
		return tools.Run, ""
	}
	return tools.Ask, ""
}

// allowed is each agent runner's own check (the backstop): a call may run
// when the table says Run, or says Ask and the person approved it. It
// returns the failed result to give otherwise.
func allowed(mode store.AgentMode, name string, risk tools.Risk, call tools.Call) (tools.Result, bool) {
	d, why := decide(mode, name, risk)
	switch {
	case d == tools.Run, d == tools.Ask && call.Approved:
		return tools.Result{}, true
	case d == tools.Ask:
		return tools.Result{Text: "This call needs the person's approval in this mode, and it was not approved.", Failed: true}, false
	}
	return tools.Result{Text: why, Failed: true}, false
}

// modeSentence is {{agent_mode}}: the mode and what it lets a reply do.
func modeSentence(m store.AgentMode) string {
	switch m {
	case store.ModePlan:
		return "Plan. You may only look: read files and list directories. You cannot change files or run commands. " +
			"Investigate, then submit a plan with plan_submit; the person decides whether to carry it out."
	case store.ModeEdit:
		return "Edit. You may read and change files without asking; each command you run is shown to the person for approval first."
	case store.ModeAuto:
		return "Auto. You may read and change files and run commands without asking. The person trusts you with this machine: " +
			"be careful with anything that deletes or cannot be undone."
	}
	return "Manual. Each call, a file read included, is shown to the person for approval before it runs; " +
		"group what you need so that they are asked once per step."
}
