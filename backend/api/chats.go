package api

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/generation"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/store"
)

func user(ctx context.Context) ids.UserID { return ids.UserID(CallerFrom(ctx).UserID) }

// manager is the actor for configuring shared connections and models. The
// methods that use it are guarded by connections.manage (Table): an admin,
// or a user granted it, who then acts with an admin's reach over shared
// connections (never over personal ones). Used by a method behind any other
// guard it panics (an internal error), rather than grant that reach.
func manager(ctx context.Context) store.Actor {
	if !passed(ctx, Perm(auth.ConnectionsManage)) {
		panic("api: manager used by a method not guarded by connections.manage")
	}
	return store.Actor{User: user(ctx), Admin: true}
}

// storeErr maps the store's sentinel errors to kinds.
func storeErr(err error, what string) error { return store.Kinded(err, what) }

// ChatSummary is a chat in the sidebar.
type ChatSummary struct {
	ID        ids.ChatID    `json:"id"`
	Title     string        `json:"title"`
	FolderID  *ids.FolderID `json:"folderId"`
	ModelID   *ids.ModelID  `json:"modelId"`
	Pinned    bool          `json:"pinned"`
	Unread    bool          `json:"unread"`
	Streaming bool          `json:"streaming"`
	UpdatedAt int64         `json:"updatedAt"`
}

// ChatView is one chat with its settings.
type ChatView struct {
	ChatSummary
	Params       store.Params `json:"params"`
	SystemPrompt string       `json:"systemPrompt"`
	Draft        string       `json:"draft"`
}

func summary(c store.Chat) ChatSummary {
	return ChatSummary{ID: c.ID, Title: c.Title, FolderID: c.FolderID, ModelID: c.ModelID, Pinned: c.Pinned,
		Unread: c.Unread, Streaming: c.LastStatus == store.StatusStreaming, UpdatedAt: c.UpdatedAt}
}

func chatView(c store.Chat) ChatView {
	return ChatView{ChatSummary: summary(c), Params: c.Params, SystemPrompt: c.SystemPrompt, Draft: c.Draft}
}

// MessageView is one message as the frontend shows it.
type MessageView struct {
	ID         ids.MessageID   `json:"id"`
	ChatID     ids.ChatID      `json:"chatId"`
	Role       store.Role      `json:"role"`
	Content    string          `json:"content"`
	HTML       string          `json:"html"`
	Reasoning  string          `json:"reasoning"`
	Status     store.Status    `json:"status"`
	Error      string          `json:"error"`
	ModelLabel string          `json:"modelLabel"`
	Metrics    json.RawMessage `json:"metrics,omitempty"`
	CreatedAt  int64           `json:"createdAt"`
	// Attachments are the files sent with a user turn.
	Attachments []AttachmentView `json:"attachments,omitempty"`
	// Parts are a reply's parts in order, only when it is more than its
	// reasoning and then its text (which html and reasoning show).
	Parts []PartView `json:"parts,omitempty"`
}

// PartView is one part of a reply: a text part as sanitised HTML, any
// other kind as plain text (the page escapes it).
type PartView struct {
	Kind   store.PartKind `json:"kind"`
	HTML   string         `json:"html,omitempty"`
	Text   string         `json:"text,omitempty"`
	Name   string         `json:"name,omitempty"`
	CallID string         `json:"callId,omitempty"`
}

func (c *Chats) message(m store.Message) MessageView {
	v := MessageView{ID: m.ID, ChatID: m.ChatID, Role: m.Role, Content: m.Content, Reasoning: m.Reasoning,
		Status: m.Status, Error: m.Error, ModelLabel: m.ModelLabel, Metrics: m.Metrics, CreatedAt: m.CreatedAt}
	switch {
	case m.Role != store.RoleAssistant:
	case m.Layout() != "":
		v.Parts, v.HTML = c.parts(m)
	case m.Status == store.StatusFinal || m.Status == store.StatusStreaming:
		v.HTML = c.deps.Render.Markdown(m.Content)
	default:
		// Ended early: what it left open is closed, as its final frame was.
		v.HTML = c.deps.Render.Partial(m.Content)
	}
	if len(v.Metrics) == 0 || string(v.Metrics) == "{}" {
		v.Metrics = nil
	}
	return v
}

// parts renders a reply's parts, and returns the HTML of its text parts
// joined. Only the last text part of a reply that ended early has what it
// left open closed: the others were finished when a later part began.
func (c *Chats) parts(m store.Message) ([]PartView, string) {
	parts := m.Parts()
	last := -1
	for i, p := range parts {
		if p.Kind == store.PartText {
			last = i
		}
	}
	out := make([]PartView, len(parts))
	var html strings.Builder
	for i, p := range parts {
		out[i] = PartView{Kind: p.Kind, Name: p.Name, CallID: p.CallID}
		if p.Kind != store.PartText {
			out[i].Text = p.Text
			continue
		}
		if i == last && m.Status != store.StatusFinal && m.Status != store.StatusStreaming {
			out[i].HTML = c.deps.Render.Partial(p.Text)
		} else {
			out[i].HTML = c.deps.Render.Markdown(p.Text)
		}
		html.WriteString(out[i].HTML)
	}
	return out, html.String()
}

// Chats is the facade for the caller's chats.
type Chats struct{ deps Deps }

// List returns the caller's chats (not the trash), pinned first, newest first.
func (c *Chats) List(ctx context.Context) ([]ChatSummary, error) {
	list, err := c.deps.DB.ListChats(ctx, user(ctx), store.ChatFilter{})
	if err != nil {
		return nil, err
	}
	out := make([]ChatSummary, 0, len(list))
	for _, ch := range list {
		s := summary(ch)
		s.Streaming = s.Streaming && c.deps.Gen.Running(ch.ID)
		out = append(out, s)
	}
	return out, nil
}

// Get returns one chat.
func (c *Chats) Get(ctx context.Context, id ids.ChatID) (ChatView, error) {
	ch, err := c.deps.DB.ChatByID(ctx, user(ctx), id)
	if err != nil {
		return ChatView{}, storeErr(err, "chat")
	}
	return chatView(ch), nil
}

// MessagesPage is a page of a transcript.
type MessagesPage struct {
	Messages []MessageView `json:"messages"`
	HasMore  bool          `json:"hasMore"`
}

// Messages returns the newest page of messages before beforeID (0: the
// newest), in chronological order.
func (c *Chats) Messages(ctx context.Context, chatID ids.ChatID, beforeID ids.MessageID, limit int) (MessagesPage, error) {
	if limit <= 0 || limit > 200 {
		limit = 50
	}
	msgs, more, err := c.deps.DB.MessagesPage(ctx, user(ctx), chatID, beforeID, limit)
	if err != nil {
		return MessagesPage{}, storeErr(err, "chat")
	}
	out := MessagesPage{Messages: make([]MessageView, 0, len(msgs)), HasMore: more}
	var turns []ids.MessageID
	for _, m := range msgs {
		if m.Role == store.RoleUser {
			turns = append(turns, m.ID)
		}
	}
	files, err := c.deps.DB.AttachmentsOf(ctx, user(ctx), turns)
	if err != nil {
		return MessagesPage{}, err
	}
	for _, m := range msgs {
		v := c.message(m)
		v.Attachments = attachmentViews(files[m.ID])
		out.Messages = append(out.Messages, v)
	}
	return out, nil
}

// TurnView is what Send and Edit return.
type TurnView struct {
	Chat      ChatView    `json:"chat"`
	User      MessageView `json:"user"`
	Assistant MessageView `json:"assistant"`
}

func (c *Chats) turn(t chat.Turn) TurnView {
	v := TurnView{Chat: chatView(t.Chat), User: c.message(t.User), Assistant: c.message(t.Assistant)}
	v.User.Attachments = attachmentViews(t.Files)
	return v
}

// Send adds the caller's turn (creating the chat on its first message) and
// starts the reply in the background.
func (c *Chats) Send(ctx context.Context, in chat.SendInput) (TurnView, error) {
	ctx, err := c.deps.withCaller(ctx)
	if err != nil {
		return TurnView{}, err
	}
	if len(in.Attachments) > 0 {
		if err := c.deps.require(ctx, auth.FilesUpload); err != nil {
			return TurnView{}, err
		}
	}
	// A new chat takes its settings from the first message: the same
	// permission as changing them later with Update.
	if in.ChatID == 0 && (in.Params != nil || in.SystemPrompt != "") {
		if err := c.deps.require(ctx, auth.ChatParams); err != nil {
			return TurnView{}, err
		}
	}
	t, err := c.deps.Chat.Send(ctx, user(ctx), in)
	if err != nil {
		return TurnView{}, err
	}
	return c.turn(t), nil
}

// Stop aborts the chat's running reply, keeping what arrived.
func (c *Chats) Stop(ctx context.Context, id ids.ChatID) error {
	return c.deps.Chat.Stop(ctx, user(ctx), id)
}

// Regenerate replaces the last reply.
func (c *Chats) Regenerate(ctx context.Context, id ids.ChatID) (MessageView, error) {
	ctx, err := c.deps.withCaller(ctx)
	if err != nil {
		return MessageView{}, err
	}
	m, err := c.deps.Chat.Regenerate(ctx, user(ctx), id)
	if err != nil {
		return MessageView{}, err
	}
	return c.message(m), nil
}

// Continue extends a reply cut off by the length limit or interrupted.
func (c *Chats) Continue(ctx context.Context, id ids.ChatID) (MessageView, error) {
	ctx, err := c.deps.withCaller(ctx)
	if err != nil {
		return MessageView{}, err
	}
	m, err := c.deps.Chat.Continue(ctx, user(ctx), id)
	if err != nil {
		return MessageView{}, err
	}
	return c.message(m), nil
}

// Edit changes a user turn, deletes every later message and starts a reply.
// attachments, when given (even empty), replace the turn's files.
func (c *Chats) Edit(ctx context.Context, id ids.MessageID, content string, attachments []ids.AttachmentID) (TurnView, error) {
	ctx, err := c.deps.withCaller(ctx)
	if err != nil {
		return TurnView{}, err
	}
	if len(attachments) > 0 {
		// Keeping some of the turn's own files needs no permission; adding
		// one does (so that losing files.upload does not lock a turn's
		// files in place).
		have, err := c.deps.DB.AttachmentsOf(ctx, user(ctx), []ids.MessageID{id})
		if err != nil {
			return TurnView{}, err
		}
		own := map[ids.AttachmentID]bool{}
		for _, a := range have[id] {
			own[a.ID] = true
		}
		for _, a := range attachments {
			if !own[a] {
				if err := c.deps.require(ctx, auth.FilesUpload); err != nil {
					return TurnView{}, err
				}
				break
			}
		}
	}
	t, err := c.deps.Chat.Edit(ctx, user(ctx), id, content, attachments)
	if err != nil {
		return TurnView{}, err
	}
	return c.turn(t), nil
}

// ChatPatchInput is what the frontend may change on a chat. folderId null
// (or clearFolder) takes the chat out of its folder.
type ChatPatchInput struct {
	Title        *string                      `json:"title,omitempty"`
	FolderID     store.Optional[ids.FolderID] `json:"folderId"`
	ClearFolder  bool                         `json:"clearFolder,omitempty"`
	ModelID      *ids.ModelID                 `json:"modelId,omitempty"`
	Params       *store.Params                `json:"params,omitempty"`
	SystemPrompt *string                      `json:"systemPrompt,omitempty"`
	Pinned       *bool                        `json:"pinned,omitempty"`
}

// Update changes a chat's title, folder, model, parameters, system prompt
// or pin.
func (c *Chats) Update(ctx context.Context, id ids.ChatID, in ChatPatchInput) (ChatView, error) {
	if in.Params != nil || in.SystemPrompt != nil {
		if err := c.deps.require(ctx, auth.ChatParams); err != nil {
			return ChatView{}, err
		}
	}
	u := user(ctx)
	p := store.ChatPatch{Title: in.Title, Folder: in.FolderID, Params: in.Params, SystemPrompt: in.SystemPrompt, Pinned: in.Pinned}
	if in.ClearFolder {
		p.Folder = store.Null[ids.FolderID]()
	}
	if in.Title != nil {
		t := strings.TrimSpace(*in.Title)
		if len(t) > 200 {
			return ChatView{}, apperr.New(apperr.Invalid, "the title is too long")
		}
		p.Title = &t
	}
	if in.Params != nil && in.Params.ReasoningEffort != nil && *in.Params.ReasoningEffort != "" {
		if !validEffort(*in.Params.ReasoningEffort) {
			return ChatView{}, apperr.New(apperr.Invalid, "unknown reasoning effort %q (want %s)", *in.Params.ReasoningEffort, strings.Join(llm.Efforts, ", "))
		}
	}
	if in.ModelID != nil {
		m, err := c.deps.DB.ModelByID(ctx, u, *in.ModelID)
		if err != nil {
			return ChatView{}, storeErr(err, "model")
		}
		if !m.Enabled {
			return ChatView{}, apperr.New(apperr.Conflict, "that model is disabled")
		}
		p.Model = store.Some(*in.ModelID)
	}
	ch, err := c.deps.DB.UpdateChat(ctx, u, id, p)
	if err != nil {
		return ChatView{}, storeErr(err, "chat")
	}
	c.deps.Chat.Notify(u, id, "updated")
	return chatView(ch), nil
}

func validEffort(e string) bool {
	for _, v := range llm.Efforts {
		if v == e {
			return true
		}
	}
	return false
}

// SaveDraft keeps the composer's unsent text for the chat.
func (c *Chats) SaveDraft(ctx context.Context, id ids.ChatID, text string) error {
	if len(text) > chat.MaxMessage {
		return apperr.New(apperr.Invalid, "the draft is too long")
	}
	_, err := c.deps.DB.UpdateChat(ctx, user(ctx), id, store.ChatPatch{Draft: &text})
	return storeErr(err, "chat")
}

// MarkRead clears the chat's unread marker.
func (c *Chats) MarkRead(ctx context.Context, id ids.ChatID) error {
	return storeErr(c.deps.DB.MarkRead(ctx, user(ctx), id), "chat")
}

// Trash moves a chat to the trash (undo with Restore). A running reply is
// stopped first.
func (c *Chats) Trash(ctx context.Context, id ids.ChatID) error {
	u := user(ctx)
	if err := c.deps.DB.TrashChat(ctx, u, id); err != nil {
		return storeErr(err, "chat")
	}
	c.deps.Gen.Stop(u, id)
	c.deps.Chat.Notify(u, id, "trashed")
	return nil
}

// Restore takes a chat out of the trash.
func (c *Chats) Restore(ctx context.Context, id ids.ChatID) error {
	u := user(ctx)
	if err := c.deps.DB.RestoreChat(ctx, u, id); err != nil {
		return storeErr(err, "chat")
	}
	c.deps.Chat.Notify(u, id, "restored")
	return nil
}

// ListTrash returns the caller's trashed chats.
func (c *Chats) ListTrash(ctx context.Context) ([]ChatSummary, error) {
	list, err := c.deps.DB.ListTrash(ctx, user(ctx))
	if err != nil {
		return nil, err
	}
	out := make([]ChatSummary, 0, len(list))
	for _, ch := range list {
		out = append(out, summary(ch))
	}
	return out, nil
}

// EmptyTrash deletes every trashed chat of the caller for good.
func (c *Chats) EmptyTrash(ctx context.Context) (int, error) {
	n, err := c.deps.DB.EmptyTrash(ctx, user(ctx), time.Now().UnixMilli())
	if err != nil {
		return 0, err
	}
	c.deps.Chat.Notify(user(ctx), 0, "deleted")
	return n, nil
}

// SearchHit is one search result. Snippet is HTML: escaped text with
// <mark> around the matches.
type SearchHit struct {
	ChatID    ids.ChatID    `json:"chatId"`
	ChatTitle string        `json:"chatTitle"`
	MessageID ids.MessageID `json:"messageId"`
	Snippet   string        `json:"snippet"`
	Role      store.Role    `json:"role"`
	CreatedAt int64         `json:"createdAt"`
}

// Search finds the query in the caller's chat titles and messages.
func (c *Chats) Search(ctx context.Context, query string) ([]SearchHit, error) {
	if len(query) > 500 {
		return nil, apperr.New(apperr.Invalid, "the search is too long")
	}
	hits, err := c.deps.DB.Search(ctx, user(ctx), query, 50)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	out := make([]SearchHit, 0, len(hits))
	for _, h := range hits {
		out = append(out, SearchHit{ChatID: h.ChatID, ChatTitle: h.ChatTitle, MessageID: h.MessageID,
			Snippet: h.Snippet, Role: h.Role, CreatedAt: h.CreatedAt})
	}
	return out, nil
}

// LiveReply is the running reply of a chat, for a follower attaching
// mid-reply.
type LiveReply struct {
	MessageID ids.MessageID    `json:"messageId"`
	Frame     generation.Frame `json:"frame"`
}

// Live returns the chat's running (or just finished) reply, or null.
func (c *Chats) Live(ctx context.Context, id ids.ChatID) (*LiveReply, error) {
	u := user(ctx)
	if _, err := c.deps.DB.ChatByID(ctx, u, id); err != nil {
		return nil, storeErr(err, "chat")
	}
	f, ok := c.deps.Gen.Live(u, id)
	if !ok {
		return nil, nil
	}
	return &LiveReply{MessageID: f.MessageID, Frame: f}, nil
}
