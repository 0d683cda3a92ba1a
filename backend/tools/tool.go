// Package tools is what lets a reply act: the tools a reply may be
// offered, the set resolved once per reply, and the loop that runs a
// reply's rounds (stream, run the calls, ask again).
//
// This file is the contract the built-in tools and their providers are
// written against; the loop and the registry are beside it.
package tools

import (
	"context"
	"encoding/json"

	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/store"
)

// Family names tools switched on and off together: per model, per
// instance, and in the harness's gates.
type Family string

// The built-in families.
const (
	FamilyWebSearch Family = "web_search"
	FamilyFetch     Family = "fetch"
)

// The library's families (backend/library supplies their tools as
// sources, one per family): a person's knowledge bases, notes, memories
// and skills. They reach nothing outside the instance, so they are on
// unless an administrator turns them off (DefaultOn).
const (
	FamilyKnowledge Family = "knowledge"
	FamilyNotes     Family = "notes"
	FamilyMemory    Family = "memory"
	FamilySkills    Family = "skills"
)

// FamilyAgent is the agent chat's tools (backend/agent): commands and
// files on the chat's host over SSH, questions to the person, and the
// plan. Offered only in agent chats, to holders of agent.use.
const FamilyAgent Family = "agent"

// Risk is what a tool can do, which is what an agent chat's mode decides
// on (backend/agent's policy table: run, ask, or refuse). A tool with no
// Risk is treated as RiskExec: what is not known to be harmless asks.
type Risk string

// The risks, from harmless to most dangerous.
const (
	// RiskInteract talks to the person and acts on nothing (ask_user,
	// plan_submit).
	RiskInteract Risk = "interact"
	// RiskRead only reads (file_read, file_list, knowledge_search, web
	// search).
	RiskRead Risk = "read"
	// RiskWrite changes files or stored data (file_write, notes_write,
	// memory_add).
	RiskWrite Risk = "write"
	// RiskExec runs a command or reaches a system whose effect is unknown
	// (shell_run, custom and MCP tools).
	RiskExec Risk = "exec"
)

// Question is one question a call puts to the person in its round's card
// (ask_user): Key is unique in the call, Text is plain text, Options are
// choices offered beside a free answer (may be empty).
type Question struct {
	Key     string   `json:"key"`
	Text    string   `json:"text"`
	Options []string `json:"options,omitempty"`
}

// Tool is one tool a reply may be offered.
type Tool struct {
	// Name is the function name offered to the model, [a-z0-9_-]{1,64}.
	Name   string
	Family Family
	// Permission is what the person must hold for it to be offered.
	Permission auth.Permission
	// Description and Parameters (a JSON schema object) are sent verbatim
	// in the request's tools array. They state what the runner does, so
	// they are not editable (the harness is where guidance lives).
	Description string
	Parameters  json.RawMessage
	// Activity is the status line while a call runs, from its arguments
	// ("Searching the web for …"); plain text, never HTML.
	Activity func(args json.RawMessage) string
	// Run runs one call. Failures are results the model can read
	// (Result.Failed), not errors; ctx ends on Stop.
	Run func(ctx context.Context, call Call) Result
	// Risk is what the tool can do (an agent chat's mode decides on it).
	Risk Risk
	// Questions, when set, are the questions a call puts to the person:
	// the loop asks them in its round's card (one pause for the round) and
	// passes the answers to Run in Call.Answers. An error is the call's
	// failed result, and nothing is asked.
	Questions func(args json.RawMessage) ([]Question, error)
	// EndsTurn: once a call of this tool has run without failing, the
	// reply gets one more round, with no tools offered, and ends
	// (plan_submit).
	EndsTurn bool
}

// Call is one call the model made.
type Call struct {
	ID   string
	Name string
	// Arguments is the JSON text the model wrote (it may be invalid).
	Arguments json.RawMessage
	// Caller is who the reply acts for.
	Caller auth.Caller
	// Approved: the person approved this call in the round's card (the
	// runner's own check of the mode must let it through).
	Approved bool
	// Answers are the person's answers to Tool.Questions, by key.
	Answers map[string]string
}

// Result is what a call returned: Text goes to the model as the tool
// turn's content and is shown in the transcript as escaped text.
type Result struct {
	Text   string
	Failed bool
}

// SearchHit is one web search result.
type SearchHit struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
}

// Page is a fetched web page as readable text.
type Page struct {
	URL   string // after redirects
	Title string
	Text  string
	// Truncated: Text was cut at the size cap.
	Truncated bool
}

// Web is what the built-in web tools run on (backend/web implements it).
// Errors are shown to the model as the tool's result, so their text says
// plainly what went wrong and never holds a secret.
type Web interface {
	// Search returns at most n hits for query from the provider the
	// administrator chose.
	Search(ctx context.Context, query string, n int) ([]SearchHit, error)
	// Fetch reads a page through the SSRF guard, as readable text.
	Fetch(ctx context.Context, rawURL string) (Page, error)
	// Ready reports whether web search is configured (a provider chosen);
	// a tool that is not ready is not offered.
	SearchReady(ctx context.Context) bool
}

// Row-backed tools (issue 13): a custom HTTP tool or a remote MCP
// server's tool is a row, not code. Its Family is "<gate>:<slug>"
// (custom:weather, mcp:github): the gate is what the instance switch, the
// model's switch and the permission are named after (a server advertising
// forty tools is not forty checkboxes on every model); the full family is
// what its guidance fragment is gated on.
const (
	GateCustom Family = "custom"
	GateMCP    Family = "mcp"
)

// Gate returns the family's gate: the part before ':' for a row-backed
// family, the family itself for a built-in one.
func (f Family) Gate() Family {
	for i := 0; i < len(f); i++ {
		if f[i] == ':' {
			return f[:i]
		}
	}
	return f
}

// Guidance is a row's harness fragment: text for the system message when
// one of its tools is offered (gated on Family). Plain text an
// administrator wrote; {{variables}} are substituted as in any fragment.
type Guidance struct {
	Family Family
	Title  string
	Text   string
}

// Source supplies tools read once per reply (Service.Resolve asks every
// source, after the built-ins): row-backed ones (custom tools, MCP) and
// the library's.
type Source interface {
	// Gate is the gate of every tool this source supplies (GateCustom,
	// GateMCP, FamilyNotes, …).
	Gate() Family
	// Tools returns the tools the source offers caller now, in a reply
	// of chat, each with its Family and Permission set, and their
	// guidance. chat is the reply's chat as the request is built: a new
	// chat's ID is 0 (it is stored after the request is built) and its
	// settings are on the struct; a source that binds a chat's state (the
	// library's knowledge scope) reads it here, and its tools carry it.
	// taken reports names already claimed (built-ins, claimed names, and
	// sources asked before this one): a source must not return a taken
	// name (custom tools refuse a colliding slug at save; MCP renames its
	// tool).
	Tools(ctx context.Context, caller auth.Caller, chat store.Chat, taken func(name string) bool) ([]Tool, []Guidance, error)
}

// Fixed is a Source whose tools are fixed in code, as the built-ins' are
// (the library's), not rows. Catalog returns them all, as models are
// offered them: List shows them (nothing a model is sent is hidden from
// the page), and Resolve claims their names before any source is asked,
// offered or not, so a custom tool or an MCP server's tool never takes
// one and a name never changes meaning from one reply to the next.
type Fixed interface {
	Catalog() []Tool
}
