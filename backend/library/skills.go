package library

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// SkillPatch changes the fields of a skill that are set.
type SkillPatch struct {
	Name        *string `json:"name,omitempty"`
	Description *string `json:"description,omitempty"`
	Body        *string `json:"body,omitempty"`
}

// Limits of a skill. Name and description are the index injected into
// every request, one line each, so they are short; the body is read by
// skill_read only when the model asks for it.
const (
	MaxSkillName        = 64       // characters
	MaxSkillDescription = 200      // characters
	MaxSkillBody        = 64 << 10 // bytes
)

// Skills lists the skills user can see, by name.
func (s *Service) Skills(ctx context.Context, user ids.UserID) ([]store.Skill, error) {
	return s.db.ListSkills(ctx, user)
}

// Skill returns one skill user can see.
func (s *Service) Skill(ctx context.Context, user ids.UserID, id ids.SkillID) (store.Skill, error) {
	k, err := s.db.SkillByID(ctx, user, id)
	return k, store.Kinded(err, "skill")
}

// SkillByName returns the skill called name (in any letter case) that user
// can see, their own winning over one shared with them: what skill_read
// reads when the model names a skill from the index.
func (s *Service) SkillByName(ctx context.Context, user ids.UserID, name string) (store.Skill, error) {
	k, err := s.db.SkillByName(ctx, user, strings.TrimSpace(name))
	return k, store.Kinded(err, "skill")
}

// CreateSkill creates a skill owned by user.
func (s *Service) CreateSkill(ctx context.Context, user ids.UserID, name, description, body string) (store.Skill, error) {
	name, err := skillName(name)
	if err != nil {
		return store.Skill{}, err
	}
	if description, err = skillDescription(description); err != nil {
		return store.Skill{}, err
	}
	if err := skillBody(body); err != nil {
		return store.Skill{}, err
	}
	if err := s.room(ctx, user, func(c store.LibraryCounts) int { return c.Skills }, MaxSkills, "skills", "delete one"); err != nil {
		return store.Skill{}, err
	}
	k, err := s.db.CreateSkill(ctx, user, name, description, body)
	if err == nil {
		s.changed(user, nil, "skill", int64(k.ID))
	}
	return k, skillErr(err, name)
}

// UpdateSkill changes a skill of user's own.
func (s *Service) UpdateSkill(ctx context.Context, user ids.UserID, id ids.SkillID, p SkillPatch) (store.Skill, error) {
	if err := s.writable(ctx, user, store.KindSkill, int64(id)); err != nil {
		return store.Skill{}, err
	}
	if p.Name != nil {
		n, err := skillName(*p.Name)
		if err != nil {
			return store.Skill{}, err
		}
		p.Name = &n
	}
	if p.Description != nil {
		d, err := skillDescription(*p.Description)
		if err != nil {
			return store.Skill{}, err
		}
		p.Description = &d
	}
	if p.Body != nil {
		if err := skillBody(*p.Body); err != nil {
			return store.Skill{}, err
		}
	}
	k, err := s.db.UpdateSkill(ctx, user, id, p.Name, p.Description, p.Body)
	if err == nil {
		s.changedItem(ctx, user, store.KindSkill, int64(id))
	}
	name := ""
	if p.Name != nil {
		name = *p.Name
	}
	return k, skillErr(err, name)
}

// DeleteSkill deletes a skill of user's own.
func (s *Service) DeleteSkill(ctx context.Context, user ids.UserID, id ids.SkillID) error {
	if err := s.writable(ctx, user, store.KindSkill, int64(id)); err != nil {
		return err
	}
	readers := s.readers(ctx, store.KindSkill, int64(id))
	if err := s.db.DeleteSkill(ctx, user, id); err != nil {
		return store.Kinded(err, "skill")
	}
	s.changed(user, readers, "skill", int64(id))
	return nil
}

func skillErr(err error, name string) error {
	if errors.Is(err, store.ErrConflict) {
		return apperr.Wrap(apperr.Conflict, err, "You already have a skill called %q; choose another name.", name)
	}
	return store.Kinded(err, "skill")
}

func skillName(name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case !utf8.ValidString(name):
		return "", apperr.New(apperr.Invalid, "The name is not valid text.")
	case name == "":
		return "", apperr.New(apperr.Invalid, "A skill needs a name.")
	case strings.ContainsAny(name, "\r\n"):
		return "", apperr.New(apperr.Invalid, "A skill's name is one line.")
	case utf8.RuneCountInString(name) > MaxSkillName:
		return "", apperr.New(apperr.Invalid, "A skill's name is at most %d characters; this one has %d.", MaxSkillName, utf8.RuneCountInString(name))
	}
	return name, nil
}

func skillDescription(d string) (string, error) {
	d = strings.TrimSpace(d)
	switch {
	case !utf8.ValidString(d):
		return "", apperr.New(apperr.Invalid, "The description is not valid text.")
	case strings.ContainsAny(d, "\r\n"):
		return "", apperr.New(apperr.Invalid, "A skill's description is one line.")
	case utf8.RuneCountInString(d) > MaxSkillDescription:
		return "", apperr.New(apperr.Invalid, "A skill's description is at most %d characters; this one has %d.", MaxSkillDescription, utf8.RuneCountInString(d))
	}
	return d, nil
}

func skillBody(body string) error {
	switch {
	case !utf8.ValidString(body):
		return apperr.New(apperr.Invalid, "The skill is not valid text.")
	case len(body) > MaxSkillBody:
		return apperr.New(apperr.Invalid, "A skill is at most %d KiB; this one has %d KiB.", MaxSkillBody>>10, (len(body)+1023)>>10)
	}
	return nil
}
