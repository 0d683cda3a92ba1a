package api

import (
	"context"
	"encoding/json"

	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/prompts"
	"github.com/llembas/lembas/backend/tools"
)

// Prompts is the facade for the harness (administrators only): the
// fragments with their overrides, the tools' descriptions read-only, and
// the preview of a system message.
type Prompts struct {
	prompts *prompts.Service
	chats   *chat.Service
	tools   func() []tools.Info
	permits Permits
}

// NewPrompts returns the Prompts facade; tools lists the tools a reply may
// be offered (nil: none yet).
func NewPrompts(p *prompts.Service, chats *chat.Service, permits Permits, tools func() []tools.Info) *Prompts {
	return &Prompts{prompts: p, chats: chats, permits: permits, tools: tools}
}

// PromptsView is the admin page's content.
type PromptsView struct {
	Fragments []prompts.State    `json:"fragments"`
	Variables []prompts.Variable `json:"variables"`
	// Tools are the tools' descriptions and parameters, sent verbatim to
	// the model and not editable: they state what a runner does.
	Tools []ToolView `json:"tools"`
}

// ToolView is one tool as the model is offered it.
type ToolView struct {
	Name        string          `json:"name"`
	Family      tools.Family    `json:"family"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// List returns every fragment, the variables and the tools.
func (p *Prompts) List(ctx context.Context) (PromptsView, error) {
	frags, err := p.prompts.List(ctx)
	if err != nil {
		return PromptsView{}, err
	}
	v := PromptsView{Fragments: frags, Variables: prompts.Variables(), Tools: []ToolView{}}
	if p.tools != nil {
		for _, t := range p.tools() {
			v.Tools = append(v.Tools, ToolView{Name: t.Name, Family: t.Family, Description: t.Description, Parameters: t.Parameters})
		}
	}
	return v, nil
}

// PromptTexts are fragments' new wording by key: the default's text
// removes the override, an empty text turns the fragment off, and a
// fragment not named keeps what it had.
type PromptTexts struct {
	Fragments map[string]string `json:"fragments"`
}

// Set stores fragments' wording.
func (p *Prompts) Set(ctx context.Context, in PromptTexts) (PromptsView, error) {
	if err := p.prompts.Set(ctx, in.Fragments); err != nil {
		return PromptsView{}, err
	}
	return p.List(ctx)
}

// Reset puts a fragment back to its default.
func (p *Prompts) Reset(ctx context.Context, key string) (PromptsView, error) {
	if err := p.prompts.Reset(ctx, key); err != nil {
		return PromptsView{}, err
	}
	return p.List(ctx)
}

// PreviewInput chooses whose request to preview: a model, as a person
// (0: the caller).
type PreviewInput struct {
	ModelID ids.ModelID `json:"modelId"`
	UserID  ids.UserID  `json:"userId,omitempty"`
}

// PreviewView is the system message a new chat would send.
type PreviewView struct {
	System string `json:"system"`
}

// Preview returns the exact system message a new chat with the model
// would send for the person now, built by the request's own code; for
// another person, their library's texts are stand-ins.
func (p *Prompts) Preview(ctx context.Context, in PreviewInput) (PreviewView, error) {
	u := in.UserID
	if u == 0 {
		u = user(ctx)
	}
	// The person's own permissions decide which tools (and so which
	// guidance) they would be offered, not the administrator's.
	caller, err := p.permits.CallerOf(ctx, u)
	if err != nil {
		return PreviewView{}, err
	}
	s, err := p.chats.SystemPreview(ctx, caller, in.ModelID, user(ctx))
	if err != nil {
		return PreviewView{}, err
	}
	return PreviewView{System: s}, nil
}
