package library

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/prompts"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/tools"
)

// MaxScopeBases bounds the bases one chat is scoped to.
const MaxScopeBases = 100

// Harness returns the library's part of the harness of a reply of chat
// for caller, offered the tool families families (chat.Service asks it
// before the harness is composed): the memories, whenever the person holds
// library.use and has memory on, tools or not (memory is context); the
// skills index and the knowledge scope only when their tools are offered.
// Nothing without library.use.
func (s *Service) Harness(ctx context.Context, caller auth.Caller, chat store.Chat, families []tools.Family) (prompts.Library, error) {
	var out prompts.Library
	if !caller.Perms.Has(auth.LibraryUse) {
		return out, nil
	}
	var err error
	if out.Memories, err = s.memoriesText(ctx, caller.User, slices.Contains(families, tools.FamilyMemory)); err != nil {
		return out, err
	}
	if slices.Contains(families, tools.FamilySkills) {
		skills, err := s.Skills(ctx, caller.User)
		if err != nil {
			return out, err
		}
		out.Skills = skillIndex(caller.User, skills)
	}
	if slices.Contains(families, tools.FamilyKnowledge) {
		scope, err := s.chatScope(ctx, caller.User, chat)
		if err != nil {
			return out, err
		}
		in, _, err := s.scopeBases(ctx, caller.User, scope)
		if err != nil {
			return out, err
		}
		switch {
		case scope.Scoped && len(in) == 0:
			out.KnowledgeBases = "The knowledge bases chosen for this chat are no longer available, so searches find nothing."
		case scope.Scoped:
			out.KnowledgeBases = fmt.Sprintf("This chat may search only these knowledge bases, chosen for it: %s. "+
				"Others are not searched here, so when they do not cover a question, say that it is outside what this chat may search.", baseNames(in))
		default:
			out.KnowledgeBases = fmt.Sprintf("This chat searches all the knowledge bases the person can see: %s.", baseNames(in))
		}
	}
	return out, nil
}

// What one reply's system message carries of names that other people
// choose: anyone can share a thousand skills or a hundred bases with a
// person, and every request of theirs would pay for them in tokens (a
// thousand skills' lines are about 250 KB). Their own come first.
const (
	maxIndexSkills = 50      // lines of the skills index
	maxIndexBytes  = 8 << 10 // bytes of the skills index
	maxNamedBases  = 20      // bases named in one sentence
)

// skillIndex is the skills index: a "- name: description" line for each
// skill, user's own first, within maxIndexSkills and maxIndexBytes, then a
// line saying how many are left out.
func skillIndex(user ids.UserID, skills []store.Skill) string {
	skills = slices.Clone(skills)
	slices.SortStableFunc(skills, func(a, b store.Skill) int {
		return cmpBool(a.OwnerID != user, b.OwnerID != user)
	})
	lines := make([]string, 0, min(len(skills), maxIndexSkills)+1)
	size := 0
	for _, k := range skills {
		line := "- " + oneLine(k.Name)
		if d := oneLine(k.Description); d != "" {
			line += ": " + d
		}
		if len(lines) == maxIndexSkills || size+len(line)+1 > maxIndexBytes {
			break
		}
		lines = append(lines, line)
		size += len(line) + 1
	}
	if left := len(skills) - len(lines); left > 0 {
		lines = append(lines, fmt.Sprintf("- (%d more skills shared with the person are not listed here.)", left))
	}
	return strings.Join(lines, "\n")
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// memoriesText is the {{memories}} value: "- …" lines, numbered by id when
// the memory tools are offered (memory_forget takes the id); when there
// are none, a sentence saying so only if the tools are offered (the
// section is there for its guidance), else nothing.
func (s *Service) memoriesText(ctx context.Context, user ids.UserID, tools bool) (string, error) {
	on, err := s.MemoryOn(ctx, user)
	if err != nil || !on {
		return "", err
	}
	mems, err := s.Memories(ctx, user)
	if err != nil {
		return "", err
	}
	if len(mems) == 0 {
		if tools {
			return "(No memories are stored yet.)", nil
		}
		return "", nil
	}
	lines := make([]string, 0, len(mems))
	for _, m := range mems {
		if tools {
			lines = append(lines, fmt.Sprintf("- [%d] %s", m.ID, oneLine(m.Text)))
		} else {
			lines = append(lines, "- "+oneLine(m.Text))
		}
	}
	return strings.Join(lines, "\n"), nil
}

// CheckScope checks a new chat's knowledge scope before anything is
// stored: at most MaxScopeBases bases, each one user can see. The store
// checks again as it writes (store.NewChat.Knowledge).
func (s *Service) CheckScope(ctx context.Context, user ids.UserID, bases []ids.BaseID) error {
	if len(bases) > MaxScopeBases {
		return apperr.New(apperr.Invalid, "a chat can be limited to at most %d knowledge bases", MaxScopeBases)
	}
	for _, b := range bases {
		if _, err := s.Base(ctx, user, b); err != nil {
			if apperr.KindOf(err) == apperr.NotFound {
				return apperr.New(apperr.Invalid, "a knowledge base chosen for this chat does not exist or is not shared with you")
			}
			return err
		}
	}
	return nil
}
