package api

import (
	"context"

	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/suggestions"
)

// Suggestions is the facade for the new-chat screen's cards: everyone
// lists them (per model where one is set); administrators keep them
// (Settings → Suggestions).
type Suggestions struct{ s *suggestions.Service }

// NewSuggestions returns the Suggestions facade.
func NewSuggestions(s *suggestions.Service) *Suggestions { return &Suggestions{s: s} }

// Suggestion is a card: choosing it fills the composer with prompt, or
// sends it when send is set.
type Suggestion = suggestions.Suggestion

// SuggestionInput creates or replaces a suggestion; modelId set shows it
// only with that model.
type SuggestionInput = suggestions.Input

// List returns the cards to show with the model chosen (nil: none).
func (s *Suggestions) List(ctx context.Context, modelID *ids.ModelID) ([]Suggestion, error) {
	return s.s.List(ctx, user(ctx), modelID)
}

// Admin lists every suggestion with its model.
func (s *Suggestions) Admin(ctx context.Context) ([]Suggestion, error) { return s.s.Admin(ctx) }

// Create adds a suggestion at the end.
func (s *Suggestions) Create(ctx context.Context, in SuggestionInput) (Suggestion, error) {
	return s.s.Create(ctx, in)
}

// Update replaces a suggestion.
func (s *Suggestions) Update(ctx context.Context, id int64, in SuggestionInput) (Suggestion, error) {
	return s.s.Update(ctx, id, in)
}

// Delete deletes a suggestion.
func (s *Suggestions) Delete(ctx context.Context, id int64) error { return s.s.Delete(ctx, id) }

// Reorder orders the suggestions as ids.
func (s *Suggestions) Reorder(ctx context.Context, order []int64) error {
	return s.s.Reorder(ctx, order)
}
