// Package suggestions keeps the cards of the new-chat screen: a few
// prompts an administrator curates (everyone sees them, per model where
// one is set), seeded once with plain defaults.
package suggestions

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// SeededSetting records that the defaults were stored once: deleting
// them sticks.
const SeededSetting = "suggestions_seeded"

// Max is how many suggestions an instance keeps.
const Max = 50

// Field bounds.
const (
	MaxTitle  = 80
	MaxPrompt = 4000
)

// Defaults are the suggestions a new instance starts with.
var Defaults = []store.Suggestion{
	{Title: "Explain a concept", Prompt: "Explain this to me simply, with an example: "},
	{Title: "Summarise a text", Prompt: "Summarise the following text in a few bullet points:\n\n"},
	{Title: "Improve my writing", Prompt: "Improve the wording of this text, keeping its meaning:\n\n"},
	{Title: "Plan a week of meals", Prompt: "Plan a week of simple dinners for two, with a shopping list.", Send: true},
}

// Suggestion is a card as the page sees it.
type Suggestion struct {
	ID     int64  `json:"id"`
	Title  string `json:"title"`
	Prompt string `json:"prompt"`
	Send   bool   `json:"send"`
	// ModelID is set in the administrators' list: the card is shown only
	// with that model.
	ModelID *ids.ModelID `json:"modelId,omitempty"`
}

// Input creates or replaces a suggestion.
type Input struct {
	Title   string       `json:"title"`
	Prompt  string       `json:"prompt"`
	Send    bool         `json:"send"`
	ModelID *ids.ModelID `json:"modelId"`
}

// Service is the suggestions service.
type Service struct{ db *store.DB }

// New returns the service.
func New(db *store.DB) *Service { return &Service{db: db} }

// Seed stores the defaults unless that was done before.
func (s *Service) Seed(ctx context.Context) error {
	return s.db.SeedSuggestions(ctx, SeededSetting, Defaults)
}

func view(x store.Suggestion, admin bool) Suggestion {
	v := Suggestion{ID: x.ID, Title: x.Title, Prompt: x.Prompt, Send: x.Send}
	if admin {
		v.ModelID = x.ModelID
	}
	return v
}

// List returns the cards user sees with model (nil: none chosen): that
// model's own first, then those for every model. A model user cannot
// use counts as none.
func (s *Service) List(ctx context.Context, user ids.UserID, model *ids.ModelID) ([]Suggestion, error) {
	if model != nil {
		if _, err := s.db.ModelByID(ctx, user, *model); err != nil {
			model = nil
		}
	}
	all, err := s.db.Suggestions(ctx)
	if err != nil {
		return nil, err
	}
	own, general := []Suggestion{}, []Suggestion{}
	for _, x := range all {
		switch {
		case x.ModelID == nil:
			general = append(general, view(x, false))
		case model != nil && *x.ModelID == *model:
			own = append(own, view(x, false))
		}
	}
	return append(own, general...), nil
}

// Admin lists every suggestion with its model.
func (s *Service) Admin(ctx context.Context) ([]Suggestion, error) {
	all, err := s.db.Suggestions(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Suggestion, len(all))
	for i, x := range all {
		out[i] = view(x, true)
	}
	return out, nil
}

func check(in Input) (store.Suggestion, error) {
	title, prompt := strings.TrimSpace(in.Title), in.Prompt
	switch {
	case title == "":
		return store.Suggestion{}, apperr.New(apperr.Invalid, "Give the suggestion a title.")
	case utf8.RuneCountInString(title) > MaxTitle || strings.ContainsAny(title, "\r\n") || !utf8.ValidString(title):
		return store.Suggestion{}, apperr.New(apperr.Invalid, "A suggestion's title is one line of at most %d characters.", MaxTitle)
	case strings.TrimSpace(prompt) == "":
		return store.Suggestion{}, apperr.New(apperr.Invalid, "Write the prompt the suggestion puts in the composer.")
	case utf8.RuneCountInString(prompt) > MaxPrompt || !utf8.ValidString(prompt):
		return store.Suggestion{}, apperr.New(apperr.Invalid, "A suggestion's prompt is at most %d characters.", MaxPrompt)
	}
	return store.Suggestion{Title: title, Prompt: prompt, Send: in.Send, ModelID: in.ModelID}, nil
}

// Create adds a suggestion at the end.
func (s *Service) Create(ctx context.Context, in Input) (Suggestion, error) {
	x, err := check(in)
	if err != nil {
		return Suggestion{}, err
	}
	out, err := s.db.CreateSuggestion(ctx, x, Max)
	if errors.Is(err, store.ErrConflict) {
		return Suggestion{}, apperr.Wrap(apperr.Conflict, err, "There are %d suggestions already; delete some first.", Max)
	}
	if err != nil {
		return Suggestion{}, modelErr(err)
	}
	return view(out, true), nil
}

// Update replaces suggestion id's fields.
func (s *Service) Update(ctx context.Context, id int64, in Input) (Suggestion, error) {
	x, err := check(in)
	if err != nil {
		return Suggestion{}, err
	}
	x.ID = id
	out, err := s.db.UpdateSuggestion(ctx, x)
	if err != nil {
		return Suggestion{}, modelErr(err)
	}
	return view(out, true), nil
}

// modelErr: a model that does not exist fails the foreign key.
func modelErr(err error) error {
	if err != nil && strings.Contains(err.Error(), "FOREIGN KEY") {
		return apperr.Wrap(apperr.Invalid, err, "That model does not exist any more.")
	}
	return store.Kinded(err, "suggestion")
}

// Delete deletes suggestion id.
func (s *Service) Delete(ctx context.Context, id int64) error {
	return store.Kinded(s.db.DeleteSuggestion(ctx, id), "suggestion")
}

// Reorder puts the suggestions in the order of order.
func (s *Service) Reorder(ctx context.Context, order []int64) error {
	if len(order) > Max {
		return apperr.New(apperr.Invalid, "Too many suggestions to order.")
	}
	return s.db.ReorderSuggestions(ctx, order)
}
