package api

import (
	"cmp"
	"context"
	"encoding/json"
	"strings"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/generation"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/render"
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
	// Kind is "chat" or "agent".
	Kind store.ChatKind `json:"kind"`
}

// ChatView is one chat with its settings.
type ChatView struct {
	ChatSummary
	Params       store.Params `json:"params"`
	SystemPrompt string       `json:"systemPrompt"`
	Draft        string       `json:"draft"`
	// ToolsOff: the chat's replies are offered no tools.
	ToolsOff bool `json:"toolsOff"`
	// Agent is an agent chat's host, directory and mode; null for a chat.
	Agent *AgentChatView `json:"agent"`
	// Compact is the chat's summary of its earlier turns (null: none, or
	// its message is no longer on the chosen path).
	Compact *CompactView `json:"compact"`
	// Context is what the next request will take (the composer's meter).
	Context *ContextView `json:"context"`
}

// CompactView is a chat's compaction: the summary (Markdown, and as the
// server rendered it), the last message it covers, when it was made.
type CompactView struct {
	Through ids.MessageID `json:"through"`
	Summary string        `json:"summary"`
	HTML    string        `json:"html"`
	At      int64         `json:"at"`
}

// ContextView is chat.Context; Before is set by Compact: what the next
// request took before it.
type ContextView struct {
	chat.Context
	Before          *int64 `json:"before,omitempty"`
	BeforeEstimated bool   `json:"beforeEstimated,omitempty"`
}

// AgentChatView is an agent chat's fixed host and directory, its mode,
// and when its transcript was last rewound (null: never). Profile is null
// once the profile was deleted (the chat can no longer act); ProfileName
// and Host are then "".
type AgentChatView struct {
	Profile     *ids.ProfileID  `json:"profile"`
	ProfileName string          `json:"profileName"`
	Host        string          `json:"host"`
	Dir         string          `json:"dir"`
	Mode        store.AgentMode `json:"mode"`
	RewoundAt   *int64          `json:"rewoundAt"`
}

func summary(c store.Chat) ChatSummary {
	kind := c.Kind
	if kind == "" {
		kind = store.ChatPlain
	}
	return ChatSummary{ID: c.ID, Title: c.Title, FolderID: c.FolderID, ModelID: c.ModelID, Pinned: c.Pinned,
		Unread: c.Unread, Streaming: c.LastStatus == store.StatusStreaming, UpdatedAt: c.UpdatedAt, Kind: kind}
}

// chatView is a chat with its settings, an agent chat's with its
// profile's name and host.
func (c *Chats) chatView(ctx context.Context, ch store.Chat) ChatView {
	v := ChatView{ChatSummary: summary(ch), Params: ch.Params, SystemPrompt: ch.SystemPrompt, Draft: ch.Draft, ToolsOff: ch.ToolsOff}
	if ch.Kind == store.ChatAgent {
		name, host := c.chat.ProfileLabel(ctx, user(ctx), ch)
		v.Agent = &AgentChatView{Profile: ch.Agent.Profile, ProfileName: name, Host: host, Dir: ch.Agent.Dir,
			Mode: ch.Agent.Mode, RewoundAt: ch.Agent.RewoundAt}
	}
	if ch.ID == 0 {
		return v
	}
	// The meter and the summary are extras: a chat whose path cannot be
	// read is still shown (the error reaches the log through Get's path).
	cp, err := c.chat.Compaction(ctx, user(ctx), ch.ID)
	if err == nil && cp != nil {
		v.Compact = &CompactView{Through: cp.Through, Summary: cp.Summary, HTML: c.render.Markdown(cp.Summary), At: cp.At}
	}
	if use, err := c.chat.ContextUse(ctx, user(ctx), ch, cp); err == nil {
		v.Context = &ContextView{Context: use}
	}
	return v
}

// Compact summarises the chat's earlier turns with its model (all but the
// last two exchanges): requests then carry the summary instead of them.
// Refused while a reply is being written. Returns the chat, its context
// with what it was before.
func (c *Chats) Compact(ctx context.Context, id ids.ChatID) (ChatView, error) {
	before, err := c.Get(ctx, id)
	if err != nil {
		return ChatView{}, err
	}
	if _, err := c.chat.Compact(ctx, user(ctx), id); err != nil {
		return ChatView{}, err
	}
	v, err := c.Get(ctx, id)
	if err != nil {
		return ChatView{}, err
	}
	if before.Context != nil && v.Context != nil {
		used := before.Context.Used
		v.Context.Before, v.Context.BeforeEstimated = &used, before.Context.Estimated
	}
	return v, nil
}

// Uncompact drops the chat's summary: requests carry the full turns again.
func (c *Chats) Uncompact(ctx context.Context, id ids.ChatID) (ChatView, error) {
	if err := c.chat.Uncompact(ctx, user(ctx), id); err != nil {
		return ChatView{}, err
	}
	return c.Get(ctx, id)
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
	// Versions are the message's versions when it has more than one (a
	// regenerated reply, an edited turn); absent: the only one.
	Versions *VersionsView `json:"versions,omitempty"`
}

// VersionsView is where a message stands among its versions (the
// messages of its role sharing its parent, oldest first): index is its
// place (0-based) in ids.
type VersionsView struct {
	Index int             `json:"index"`
	Count int             `json:"count"`
	IDs   []ids.MessageID `json:"ids"`
}

// versionsView places m among sib (nil when it is alone).
func versionsView(m ids.MessageID, sib []ids.MessageID) *VersionsView {
	if len(sib) < 2 {
		return nil
	}
	v := &VersionsView{Count: len(sib), IDs: sib}
	for i, id := range sib {
		if id == m {
			v.Index = i
		}
	}
	return v
}

// withVersions adds their versions to views of one chat's messages.
func (c *Chats) withVersions(ctx context.Context, chatID ids.ChatID, vs ...*MessageView) {
	list := make([]ids.MessageID, len(vs))
	for i, v := range vs {
		list[i] = v.ID
	}
	sib, err := c.chat.Versions(ctx, user(ctx), chatID, list)
	if err != nil {
		return // the control is missing, the message is shown
	}
	for _, v := range vs {
		v.Versions = versionsView(v.ID, sib[v.ID])
	}
}

// PartView is one part of a reply: a text part as sanitised HTML, any
// other kind as plain text (the page escapes it).
type PartView struct {
	Kind   store.PartKind `json:"kind"`
	HTML   string         `json:"html,omitempty"`
	Text   string         `json:"text,omitempty"`
	Name   string         `json:"name,omitempty"`
	CallID string         `json:"callId,omitempty"`
	// Error marks a failed tool result, as its live frame did.
	Error bool `json:"error,omitempty"`
}

func (c *Chats) message(m store.Message) MessageView {
	v := MessageView{ID: m.ID, ChatID: m.ChatID, Role: m.Role, Content: m.Content, Reasoning: m.Reasoning,
		Status: m.Status, Error: m.Error, ModelLabel: m.ModelLabel, Metrics: m.Metrics, CreatedAt: m.CreatedAt}
	switch {
	case m.Role != store.RoleAssistant:
	case m.Layout() != "":
		v.Parts, v.HTML = c.parts(m)
		v.Content = store.ReplyText(m.Parts())
	case m.Status == store.StatusFinal || m.Status == store.StatusStreaming:
		v.HTML = c.render.Markdown(m.Content)
	default:
		// Ended early: what it left open is closed, as its final frame was.
		v.HTML = c.render.Partial(m.Content)
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
		out[i] = PartView{Kind: p.Kind, Name: p.Name, CallID: p.CallID, Error: p.Error}
		if p.Kind != store.PartText {
			out[i].Text = p.Text
			continue
		}
		if i == last && m.Status != store.StatusFinal && m.Status != store.StatusStreaming {
			out[i].HTML = c.render.Partial(p.Text)
		} else {
			out[i].HTML = c.render.Markdown(p.Text)
		}
		html.WriteString(out[i].HTML)
	}
	return out, html.String()
}

// Chats is the facade for the caller's chats.
type Chats struct {
	chat    *chat.Service
	render  *render.Renderer
	permits Permits
}

// NewChats returns the Chats facade.
func NewChats(chat *chat.Service, render *render.Renderer, permits Permits) *Chats {
	return &Chats{chat: chat, render: render, permits: permits}
}

// List returns the caller's chats (not the trash), pinned first, newest first.
func (c *Chats) List(ctx context.Context) ([]ChatSummary, error) {
	list, err := c.chat.List(ctx, user(ctx))
	if err != nil {
		return nil, err
	}
	return views(list, func(ch chat.Listed) ChatSummary {
		s := summary(ch.Chat)
		s.Streaming = ch.Streaming
		return s
	}), nil
}

// Get returns one chat.
func (c *Chats) Get(ctx context.Context, id ids.ChatID) (ChatView, error) {
	ch, err := c.chat.Get(ctx, user(ctx), id)
	if err != nil {
		return ChatView{}, err
	}
	return c.chatView(ctx, ch), nil
}

// MessagesPage is a page of a transcript.
type MessagesPage struct {
	Messages []MessageView `json:"messages"`
	HasMore  bool          `json:"hasMore"`
}

// Messages returns the newest page of messages before beforeID (0: the
// newest), in chronological order.
func (c *Chats) Messages(ctx context.Context, chatID ids.ChatID, beforeID ids.MessageID, limit int) (MessagesPage, error) {
	page, err := c.chat.Messages(ctx, user(ctx), chatID, beforeID, limit)
	if err != nil {
		return MessagesPage{}, err
	}
	return MessagesPage{HasMore: page.HasMore, Messages: views(page.Messages, func(m store.Message) MessageView {
		v := c.message(m)
		v.Attachments = attachmentViews(page.Files[m.ID])
		v.Versions = versionsView(m.ID, page.Versions[m.ID])
		return v
	})}, nil
}

// TurnView is what Send and Edit return.
type TurnView struct {
	Chat      ChatView    `json:"chat"`
	User      MessageView `json:"user"`
	Assistant MessageView `json:"assistant"`
}

func (c *Chats) turn(ctx context.Context, t chat.Turn) TurnView {
	v := TurnView{Chat: c.chatView(ctx, t.Chat), User: c.message(t.User), Assistant: c.message(t.Assistant)}
	v.User.Attachments = attachmentViews(t.Files)
	return v
}

// Send adds the caller's turn (creating the chat on its first message) and
// starts the reply in the background.
func (c *Chats) Send(ctx context.Context, in chat.SendInput) (TurnView, error) {
	ctx, err := c.permits.WithCaller(ctx)
	if err != nil {
		return TurnView{}, err
	}
	if len(in.Attachments) > 0 {
		if err := c.permits.Require(ctx, auth.FilesUpload); err != nil {
			return TurnView{}, err
		}
	}
	// A new chat takes its settings from the first message: the same
	// permission as changing them later with Update.
	if in.ChatID == 0 && (in.Params != nil || in.SystemPrompt != "") {
		if err := c.permits.Require(ctx, auth.ChatParams); err != nil {
			return TurnView{}, err
		}
	}
	// Scoping a new chat's knowledge search is using the library.
	if in.ChatID == 0 && in.Knowledge != nil {
		if err := c.permits.Require(ctx, auth.LibraryUse); err != nil {
			return TurnView{}, err
		}
	}
	// An agent chat hands its replies a shell.
	if in.ChatID == 0 && in.Agent != nil {
		if err := c.permits.Require(ctx, auth.AgentUse); err != nil {
			return TurnView{}, err
		}
	}
	t, err := c.chat.Send(ctx, user(ctx), in)
	if err != nil {
		return TurnView{}, err
	}
	return c.turn(ctx, t), nil
}

// Stop aborts the chat's running reply, keeping what arrived.
func (c *Chats) Stop(ctx context.Context, id ids.ChatID) error {
	return c.chat.Stop(ctx, user(ctx), id)
}

// Regenerate answers the last turn again: a new version of its reply,
// the old ones kept.
func (c *Chats) Regenerate(ctx context.Context, id ids.ChatID) (MessageView, error) {
	ctx, err := c.permits.WithCaller(ctx)
	if err != nil {
		return MessageView{}, err
	}
	m, err := c.chat.Regenerate(ctx, user(ctx), id)
	if err != nil {
		return MessageView{}, err
	}
	v := c.message(m)
	c.withVersions(ctx, id, &v)
	return v, nil
}

// Continue extends a reply cut off by the length limit or interrupted.
func (c *Chats) Continue(ctx context.Context, id ids.ChatID) (MessageView, error) {
	ctx, err := c.permits.WithCaller(ctx)
	if err != nil {
		return MessageView{}, err
	}
	m, err := c.chat.Continue(ctx, user(ctx), id)
	if err != nil {
		return MessageView{}, err
	}
	return c.message(m), nil
}

// Edit sends a changed user turn as a new version of it (the old one and
// what followed it are kept) and starts a reply.
// attachments, when given (even empty), are the new version's files.
func (c *Chats) Edit(ctx context.Context, id ids.MessageID, content string, attachments []ids.AttachmentID) (TurnView, error) {
	ctx, err := c.permits.WithCaller(ctx)
	if err != nil {
		return TurnView{}, err
	}
	// Keeping some of the turn's own files needs no permission; adding one
	// does.
	adds, err := c.chat.AddsFiles(ctx, user(ctx), id, attachments)
	if err != nil {
		return TurnView{}, err
	}
	if adds {
		if err := c.permits.Require(ctx, auth.FilesUpload); err != nil {
			return TurnView{}, err
		}
	}
	t, err := c.chat.Edit(ctx, user(ctx), id, content, attachments)
	if err != nil {
		return TurnView{}, err
	}
	v := c.turn(ctx, t)
	c.withVersions(ctx, t.Chat.ID, &v.User)
	return v, nil
}

// PathView is a chat whose chosen path changed, with the newest page of
// that path (what Get and Messages return).
type PathView struct {
	Chat     ChatView      `json:"chat"`
	Messages []MessageView `json:"messages"`
	HasMore  bool          `json:"hasMore"`
}

func (c *Chats) pathView(ctx context.Context, chatID ids.ChatID) (PathView, error) {
	ch, err := c.Get(ctx, chatID)
	if err != nil {
		return PathView{}, err
	}
	page, err := c.Messages(ctx, chatID, 0, 0)
	if err != nil {
		return PathView{}, err
	}
	return PathView{Chat: ch, Messages: page.Messages, HasMore: page.HasMore}, nil
}

// SwitchVersion chooses a version of a message (a reply or a turn): the
// chat's path follows its newest branch from then on (transcript,
// requests, search). Refused while a reply is being written; an agent
// chat is stamped rewound (the machine stays as it is).
func (c *Chats) SwitchVersion(ctx context.Context, id ids.MessageID) (PathView, error) {
	chatID, err := c.chat.SwitchVersion(ctx, user(ctx), id)
	if err != nil {
		return PathView{}, err
	}
	return c.pathView(ctx, chatID)
}

// DeleteVersion deletes one of a message's versions with everything after
// it (refused for the only version, and while a reply is being written);
// when it was the chosen one, a neighbouring version is chosen.
func (c *Chats) DeleteVersion(ctx context.Context, id ids.MessageID) (PathView, error) {
	chatID, err := c.chat.DeleteVersion(ctx, user(ctx), id)
	if err != nil {
		return PathView{}, err
	}
	return c.pathView(ctx, chatID)
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
	ToolsOff     *bool                        `json:"toolsOff,omitempty"`
	// AgentMode changes an agent chat's mode (the only agent field that
	// changes).
	AgentMode *store.AgentMode `json:"agentMode,omitempty"`
	// Kind, Profile, Dir and Agent's profile and dir are taken only to be
	// refused when they would change the chat (fixed when it is created):
	// compared with the caller's own chat, never used to read anything,
	// so a profile here is not an id to check (raw, not ids.ProfileID).
	Kind    *store.ChatKind `json:"kind,omitempty"`
	Profile json.RawMessage `json:"profile,omitempty"`
	Dir     *string         `json:"dir,omitempty"`
	Agent   *struct {
		Profile json.RawMessage  `json:"profile,omitempty"`
		Dir     *string          `json:"dir,omitempty"`
		Mode    *store.AgentMode `json:"mode,omitempty"`
	} `json:"agent,omitempty"`
}

// fixedProfile reads a profile sent to Update, only to compare it.
func fixedProfile(raw json.RawMessage) (*ids.ProfileID, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var p ids.ProfileID
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, apperr.New(apperr.Invalid, "profile is an id")
	}
	return &p, nil
}

// Update changes a chat's title, folder, model, parameters, system prompt,
// pin, or an agent chat's mode.
func (c *Chats) Update(ctx context.Context, id ids.ChatID, in ChatPatchInput) (ChatView, error) {
	if in.Params != nil || in.SystemPrompt != nil {
		if err := c.permits.Require(ctx, auth.ChatParams); err != nil {
			return ChatView{}, err
		}
	}
	p := chat.Patch{Title: in.Title, Folder: in.FolderID, Model: in.ModelID, Params: in.Params, SystemPrompt: in.SystemPrompt, Pinned: in.Pinned, ToolsOff: in.ToolsOff,
		AgentMode: in.AgentMode, Kind: in.Kind, Dir: in.Dir}
	raw := in.Profile
	if a := in.Agent; a != nil {
		p.AgentMode = cmp.Or(a.Mode, p.AgentMode)
		p.Dir = cmp.Or(a.Dir, p.Dir)
		if len(a.Profile) > 0 {
			raw = a.Profile
		}
	}
	var err error
	if p.Profile, err = fixedProfile(raw); err != nil {
		return ChatView{}, err
	}
	// The mode decides what an agent chat's replies may do unasked.
	if p.AgentMode != nil {
		if err := c.permits.Require(ctx, auth.AgentUse); err != nil {
			return ChatView{}, err
		}
	}
	if in.ClearFolder {
		p.Folder = store.Null[ids.FolderID]()
	}
	ch, err := c.chat.Update(ctx, user(ctx), id, p)
	if err != nil {
		return ChatView{}, err
	}
	return c.chatView(ctx, ch), nil
}

// Answer answers the card the reply messageID waits on (frames' ask): a
// card answered already (another tab), timed out or gone is a conflict.
func (c *Chats) Answer(ctx context.Context, messageID ids.MessageID, a generation.Answer) error {
	// Resolved now: approving an agent chat's call needs agent.use now,
	// not when the reply started (chat.Service.Answer).
	ctx, err := c.permits.WithCaller(ctx)
	if err != nil {
		return err
	}
	return c.chat.Answer(ctx, user(ctx), messageID, a)
}

// CarryOutPlan carries out the plan the reply messageID submitted: the
// chat switches to Edit (never Auto) and a new turn quotes the plan as the
// model's. It returns the turn, as Send does.
func (c *Chats) CarryOutPlan(ctx context.Context, messageID ids.MessageID) (TurnView, error) {
	ctx, err := c.permits.WithCaller(ctx)
	if err != nil {
		return TurnView{}, err
	}
	if err := c.permits.Require(ctx, auth.AgentUse); err != nil {
		return TurnView{}, err
	}
	t, err := c.chat.CarryOutPlan(ctx, user(ctx), messageID)
	if err != nil {
		return TurnView{}, err
	}
	return c.turn(ctx, t), nil
}

// SaveDraft keeps the composer's unsent text for the chat.
func (c *Chats) SaveDraft(ctx context.Context, id ids.ChatID, text string) error {
	return c.chat.SaveDraft(ctx, user(ctx), id, text)
}

// MarkRead clears the chat's unread marker.
func (c *Chats) MarkRead(ctx context.Context, id ids.ChatID) error {
	return c.chat.MarkRead(ctx, user(ctx), id)
}

// Trash moves a chat to the trash (undo with Restore). A running reply is
// stopped first.
func (c *Chats) Trash(ctx context.Context, id ids.ChatID) error {
	return c.chat.Trash(ctx, user(ctx), id)
}

// Restore takes a chat out of the trash.
func (c *Chats) Restore(ctx context.Context, id ids.ChatID) error {
	return c.chat.Restore(ctx, user(ctx), id)
}

// ListTrash returns the caller's trashed chats.
func (c *Chats) ListTrash(ctx context.Context) ([]ChatSummary, error) {
	list, err := c.chat.ListTrash(ctx, user(ctx))
	if err != nil {
		return nil, err
	}
	return views(list, summary), nil
}

// EmptyTrash deletes every trashed chat of the caller for good.
func (c *Chats) EmptyTrash(ctx context.Context) (int, error) {
	return c.chat.EmptyTrash(ctx, user(ctx))
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
	hits, err := c.chat.Search(ctx, user(ctx), query)
	if err != nil {
		return nil, err
	}
	return views(hits, func(h store.Hit) SearchHit {
		return SearchHit{ChatID: h.ChatID, ChatTitle: h.ChatTitle, MessageID: h.MessageID,
			Snippet: h.Snippet, Role: h.Role, CreatedAt: h.CreatedAt}
	}), nil
}

// LiveReply is the running reply of a chat, for a follower attaching
// mid-reply.
type LiveReply struct {
	MessageID ids.MessageID    `json:"messageId"`
	Frame     generation.Frame `json:"frame"`
}

// Live returns the chat's running (or just finished) reply, or null.
func (c *Chats) Live(ctx context.Context, id ids.ChatID) (*LiveReply, error) {
	f, ok, err := c.chat.Live(ctx, user(ctx), id)
	if err != nil || !ok {
		return nil, err
	}
	return &LiveReply{MessageID: f.MessageID, Frame: f}, nil
}
