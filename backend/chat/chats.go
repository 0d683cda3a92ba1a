package chat

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/generation"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/store"
)

// Listed is a chat in a list, with whether a reply is being written in it
// now (a row can say streaming after a crash until the start marks it).
type Listed struct {
	store.Chat
	Streaming bool
}

// List returns the user's chats (not the trash), pinned first, newest
// first.
func (s *Service) List(ctx context.Context, user ids.UserID) ([]Listed, error) {
	list, err := s.db.ListChats(ctx, user, store.ChatFilter{})
	if err != nil {
		return nil, err
	}
	out := make([]Listed, 0, len(list))
	for _, ch := range list {
		out = append(out, Listed{Chat: ch, Streaming: ch.LastStatus == store.StatusStreaming && s.gen.Running(ch.ID)})
	}
	return out, nil
}

// ListTrash returns the user's trashed chats.
func (s *Service) ListTrash(ctx context.Context, user ids.UserID) ([]store.Chat, error) {
	return s.db.ListTrash(ctx, user)
}

// Get returns one of the user's chats.
func (s *Service) Get(ctx context.Context, user ids.UserID, id ids.ChatID) (store.Chat, error) {
	ch, err := s.db.ChatByID(ctx, user, id)
	return ch, storeErr(err, "chat")
}

// Page is a page of a transcript with the files of its user turns.
type Page struct {
	Messages []store.Message
	Files    map[ids.MessageID][]store.Attachment
	// Versions are the versions of the page's messages that have more
	// than one (Service.Versions).
	Versions map[ids.MessageID][]ids.MessageID
	HasMore  bool
}

// Messages returns the newest page of at most limit messages (1 to 200,
// else 50) of the chosen path before beforeID (0: its leaf), in
// chronological order.
func (s *Service) Messages(ctx context.Context, user ids.UserID, chatID ids.ChatID, beforeID ids.MessageID, limit int) (Page, error) {
	if limit <= 0 || limit > 200 {
		limit = 50
	}
	msgs, more, err := s.db.MessagesPage(ctx, user, chatID, beforeID, limit)
	if err != nil {
		return Page{}, storeErr(err, "chat")
	}
	var turns, all []ids.MessageID
	for _, m := range msgs {
		all = append(all, m.ID)
		if m.Role == store.RoleUser {
			turns = append(turns, m.ID)
		}
	}
	files, err := s.db.AttachmentsOf(ctx, user, turns)
	if err != nil {
		return Page{}, err
	}
	versions, err := s.db.Versions(ctx, user, chatID, all)
	if err != nil {
		return Page{}, storeErr(err, "chat")
	}
	return Page{Messages: msgs, Files: files, Versions: versions, HasMore: more}, nil
}

// AddsFiles reports whether attachments hold a file that is not already
// one of the turn msg's own (an edit adding files needs files.upload;
// keeping some of the turn's own does not, so that losing the permission
// does not lock a turn's files in place).
func (s *Service) AddsFiles(ctx context.Context, user ids.UserID, msg ids.MessageID, attachments []ids.AttachmentID) (bool, error) {
	if len(attachments) == 0 {
		return false, nil
	}
	have, err := s.db.AttachmentsOf(ctx, user, []ids.MessageID{msg})
	if err != nil {
		return false, err
	}
	own := map[ids.AttachmentID]bool{}
	for _, a := range have[msg] {
		own[a.ID] = true
	}
	for _, a := range attachments {
		if !own[a] {
			return true, nil
		}
	}
	return false, nil
}

// Patch is a change to a chat's title, folder, model, parameters, system
// prompt or pin; nil fields are kept.
type Patch struct {
	Title        *string
	Folder       store.Optional[ids.FolderID]
	Model        *ids.ModelID
	Params       *store.Params
	SystemPrompt *string
	Pinned       *bool
	ToolsOff     *bool
	// AgentMode changes an agent chat's mode, which its next reply reads
	// (a reply running keeps the mode it started with).
	AgentMode *store.AgentMode
	// Kind, Profile and Dir are fixed when a chat is created: a patch
	// that would change one is refused.
	Kind    *store.ChatKind
	Profile *ids.ProfileID
	Dir     *string
}

// Update changes a chat and tells the user's followers.
func (s *Service) Update(ctx context.Context, user ids.UserID, id ids.ChatID, in Patch) (store.Chat, error) {
	p := store.ChatPatch{Title: in.Title, Folder: in.Folder, Params: in.Params, SystemPrompt: in.SystemPrompt, Pinned: in.Pinned, ToolsOff: in.ToolsOff}
	if in.AgentMode != nil || in.Kind != nil || in.Profile != nil || in.Dir != nil {
		if err := s.checkAgentPatch(ctx, user, id, in); err != nil {
			return store.Chat{}, err
		}
		p.AgentMode = in.AgentMode
	}
	if in.Title != nil {
		t := strings.TrimSpace(*in.Title)
		if len(t) > 200 {
			return store.Chat{}, apperr.New(apperr.Invalid, "the title is too long")
		}
		p.Title = &t
	}
	if in.Params != nil {
		if err := llm.CheckEffort(in.Params.ReasoningEffort); err != nil {
			return store.Chat{}, err
		}
	}
	if in.Model != nil {
		m, err := s.db.ModelByID(ctx, user, *in.Model)
		if err != nil {
			return store.Chat{}, storeErr(err, "model")
		}
		if !m.Enabled {
			return store.Chat{}, apperr.New(apperr.Conflict, "that model is disabled")
		}
		p.Model = store.Some(*in.Model)
	}
	ch, err := s.db.UpdateChat(ctx, user, id, p)
	if err != nil {
		return store.Chat{}, storeErr(err, "chat")
	}
	s.Notify(user, id, "updated")
	return ch, nil
}

// checkAgentPatch checks a patch's agent fields against the chat: only
// the mode of an agent chat may change. A transcript whose earlier turns
// ran somewhere else is not one conversation, so kind, connection and
// directory stay as the chat was created (the same value is no change).
func (s *Service) checkAgentPatch(ctx context.Context, user ids.UserID, id ids.ChatID, in Patch) error {
	ch, err := s.db.ChatByID(ctx, user, id)
	if err != nil {
		return storeErr(err, "chat")
	}
	kind := ch.Kind
	if kind == "" {
		kind = store.ChatPlain
	}
	if in.Kind != nil && *in.Kind != kind ||
		in.Profile != nil && (ch.Agent.Profile == nil || *ch.Agent.Profile != *in.Profile) ||
		in.Dir != nil && *in.Dir != ch.Agent.Dir {
		return apperr.New(apperr.Invalid, "A chat's kind, connection and directory are fixed when the chat was created; only an agent chat's mode changes.")
	}
	if in.AgentMode != nil {
		if kind != store.ChatAgent {
			return apperr.New(apperr.Invalid, "Only an agent chat has a mode.")
		}
		if !in.AgentMode.Valid() {
			return apperr.New(apperr.Invalid, "The mode is manual, plan, edit or auto.")
		}
	}
	return nil
}

// ProfileLabel returns the name and user@host of an agent chat's SSH
// profile, for its view ("" when it has none: deleted).
func (s *Service) ProfileLabel(ctx context.Context, user ids.UserID, ch store.Chat) (name, host string) {
	if ch.Kind != store.ChatAgent || ch.Agent.Profile == nil {
		return "", ""
	}
	name, host, err := s.db.ProfileLabel(ctx, user, *ch.Agent.Profile)
	if err != nil {
		return "", ""
	}
	return name, host
}

// SaveDraft keeps the composer's unsent text for the chat.
func (s *Service) SaveDraft(ctx context.Context, user ids.UserID, id ids.ChatID, text string) error {
	if len(text) > MaxMessage {
		return apperr.New(apperr.Invalid, "the draft is too long")
	}
	_, err := s.db.UpdateChat(ctx, user, id, store.ChatPatch{Draft: &text})
	return storeErr(err, "chat")
}

// MarkRead clears the chat's unread marker.
func (s *Service) MarkRead(ctx context.Context, user ids.UserID, id ids.ChatID) error {
	return storeErr(s.db.MarkRead(ctx, user, id), "chat")
}

// Trash moves a chat to the trash, stopping its running reply.
func (s *Service) Trash(ctx context.Context, user ids.UserID, id ids.ChatID) error {
	if err := s.db.TrashChat(ctx, user, id); err != nil {
		return storeErr(err, "chat")
	}
	s.gen.Stop(user, id)
	s.Notify(user, id, "trashed")
	return nil
}

// Restore takes a chat out of the trash.
func (s *Service) Restore(ctx context.Context, user ids.UserID, id ids.ChatID) error {
	if err := s.db.RestoreChat(ctx, user, id); err != nil {
		return storeErr(err, "chat")
	}
	s.Notify(user, id, "restored")
	return nil
}

// EmptyTrash deletes every trashed chat of the user for good.
func (s *Service) EmptyTrash(ctx context.Context, user ids.UserID) (int, error) {
	n, err := s.db.EmptyTrash(ctx, user, time.Now().UnixMilli())
	if err != nil {
		return 0, err
	}
	s.Notify(user, 0, "deleted")
	return n, nil
}

// Search finds query in the user's chat titles and messages (50 hits at
// most).
func (s *Service) Search(ctx context.Context, user ids.UserID, query string) ([]store.Hit, error) {
	if len(query) > 500 {
		return nil, apperr.New(apperr.Invalid, "the search is too long")
	}
	hits, err := s.db.Search(ctx, user, query, 50)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return hits, nil
}

// Live returns the chat's running (or just finished) reply, if any.
func (s *Service) Live(ctx context.Context, user ids.UserID, id ids.ChatID) (generation.Frame, bool, error) {
	if _, err := s.db.ChatByID(ctx, user, id); err != nil {
		return generation.Frame{}, false, storeErr(err, "chat")
	}
	f, ok := s.gen.Live(user, id)
	return f, ok, nil
}
