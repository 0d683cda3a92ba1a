package library

import (
	"context"

	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// SkillPatch changes the fields of a skill that are set.
type SkillPatch struct {
	Name        *string `json:"name,omitempty"`
	Description *string `json:"description,omitempty"`
	Body        *string `json:"body,omitempty"`
}

// Skills lists the skills user can see, by name.
func (s *Service) Skills(ctx context.Context, user ids.UserID) ([]store.Skill, error) {
	return nil, errTodo
}

// Skill returns one skill user can see.
func (s *Service) Skill(ctx context.Context, user ids.UserID, id ids.SkillID) (store.Skill, error) {
	return store.Skill{}, errTodo
}

// CreateSkill creates a skill owned by user.
func (s *Service) CreateSkill(ctx context.Context, user ids.UserID, name, description, body string) (store.Skill, error) {
	return store.Skill{}, errTodo
}

// UpdateSkill changes a skill of user's own.
func (s *Service) UpdateSkill(ctx context.Context, user ids.UserID, id ids.SkillID, p SkillPatch) (store.Skill, error) {
	return store.Skill{}, errTodo
}

// DeleteSkill deletes a skill of user's own.
func (s *Service) DeleteSkill(ctx context.Context, user ids.UserID, id ids.SkillID) error {
	return errTodo
}
