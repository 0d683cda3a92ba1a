// Package chat is the chat service: it turns a user's turn into a request
// for the right endpoint (model, connection, system prompt and parameters
// with chat > model > instance precedence), starts the reply in the
// generation service, and handles regenerate, continue and edit (each a
// new version beside what it replaces),
// automatic titles and unread markers. Connections and their clients are
// backend/connections'.
package chat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/connections"
	"github.com/llembas/lembas/backend/events"
	"github.com/llembas/lembas/backend/generation"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/prompts"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/tools"
)

// Service is the chat service.
type Service struct {
	db    *store.DB
	gen   *generation.Service
	conns *connections.Service
	bus   events.Publisher
	log   *slog.Logger
	// readFile reads an attachment's stored bytes by storage name.
	readFile func(name string) ([]byte, error)
	// maxFiles bounds the attachments of one message.
	maxFiles int
	// tools resolves the tools a reply is offered (nil: none).
	tools *tools.Service
	// prompts builds the harness (nil: none).
	prompts *prompts.Service
	// library is the person's library as replies read it (nil: none).
	library Library
	// agent runs agent chats (nil: none can be created or replied to).
	agent Agent
	// copyFile copies a stored attachment as a new unsent upload (nil:
	// an edited turn cannot keep its files).
	copyFile CopyFile

	// chatLocks serialise the check-then-start of a reply per chat, so
	// two tabs sending at once cannot both pass "no reply is running".
	chatLocks sync.Map // ids.ChatID → *sync.Mutex
	// compacting holds the chats whose summary is being written (compact):
	// a second one at the same time would only ask the model again.
	compacting sync.Map // ids.ChatID → struct{}
	// bg tracks background work (automatic titles) for Wait.
	bg sync.WaitGroup
}

func (s *Service) lockChat(id ids.ChatID) func() {
	m, _ := s.chatLocks.LoadOrStore(id, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// Wait waits for background work such as automatic titles (at shutdown).
func (s *Service) Wait() { s.bg.Wait() }

// Options configure a Service.
type Options struct {
	// ReadFile reads an attachment's bytes by storage name (backend/files);
	// nil means images cannot be sent.
	ReadFile func(name string) ([]byte, error)
	// MaxFiles bounds the attachments of one message (0: 10).
	MaxFiles int
	// Tools is the tool registry; nil offers no tools.
	Tools *tools.Service
	// Prompts builds the harness put before the system prompt (nil: none).
	Prompts *prompts.Service
	// Library is the person's library (backend/library); nil: replies
	// get no memories, skills or knowledge scope, and a new chat cannot
	// be scoped.
	Library Library
	// Agent runs agent chats (backend/agent); nil: no agent chat can be
	// created or replied to.
	Agent Agent
	// CopyFile copies a stored file as a new unsent upload of user
	// (files.Service.Copy): an edited turn is a new message beside the
	// old one, and each keeps its own files. nil: an edit keeping files
	// is refused.
	CopyFile CopyFile
}

// CopyFile stores a copy of the stored file from as a new unsent upload a
// of user (files.Service.Copy).
type CopyFile func(ctx context.Context, user ids.UserID, from string, a store.Attachment) (store.Attachment, error)

// Agent is what an agent chat's reply needs from backend/agent, read
// once per reply (*agent.Service implements it; chat does not import it).
type Agent interface {
	// Reply returns the policy (the chat's mode, read now), the limits and
	// the harness variables of a reply in an agent chat, or an error
	// saying why the chat cannot act (agent chats off, no agent.use, the
	// profile deleted).
	Reply(ctx context.Context, caller auth.Caller, chat store.Chat) (AgentReply, error)
	// CheckNew checks a new agent chat's profile, directory and mode for
	// user before anything is stored.
	CheckNew(ctx context.Context, caller auth.Caller, agent store.AgentChat) error
}

// AgentReply is what Agent.Reply returns.
type AgentReply struct {
	Policy     tools.Policy
	MaxRounds  int
	AskTimeout time.Duration
	Harness    prompts.Agent
}

// Library is what a reply reads from the person's library: the
// library's part of the harness, and the check of a new chat's scope.
// *library.Service implements it; chat does not import the library.
type Library interface {
	// Harness returns the memories, the skills index and the knowledge
	// scope text for a reply of chat for caller, offered families.
	Harness(ctx context.Context, caller auth.Caller, chat store.Chat, families []tools.Family) (prompts.Library, error)
	// CheckScope checks that user can see every base a new chat is
	// scoped to.
	CheckScope(ctx context.Context, user ids.UserID, bases []ids.BaseID) error
}

// New returns the service.
func New(db *store.DB, gen *generation.Service, conns *connections.Service, bus events.Publisher, log *slog.Logger, opt Options) *Service {
	if opt.MaxFiles <= 0 {
		opt.MaxFiles = 10
	}
	return &Service{db: db, gen: gen, conns: conns, bus: bus, log: log,
		readFile: opt.ReadFile, maxFiles: opt.MaxFiles, tools: opt.Tools, prompts: opt.Prompts, library: opt.Library, agent: opt.Agent,
		copyFile: opt.CopyFile}
}

// ChatEvent is published on topic "chat" when a chat changes. Change
// "path" says the chosen path moved (a version switched or deleted): the
// chat's messages on screen are no longer the ones to show.
type ChatEvent struct {
	ChatID ids.ChatID `json:"chatId"`
	Change string     `json:"change"`
}

// Notify tells the user's followers that a chat changed.
func (s *Service) Notify(user ids.UserID, chat ids.ChatID, change string) {
	s.bus.Publish(events.Event{Topic: "chat", UserID: int64(user), Data: ChatEvent{ChatID: chat, Change: change}})
}

// MaxMessage bounds one user turn (1 MiB of text is far beyond any context).
const MaxMessage = 1 << 20

// SendInput is a user's turn. ChatID 0 starts a new chat, which may start
// with its own parameters and system prompt (ignored for an existing chat:
// Chats.Update changes those).
type SendInput struct {
	ChatID       ids.ChatID    `json:"chatId,omitempty"`
	ModelID      ids.ModelID   `json:"modelId,omitempty"`
	Content      string        `json:"content"`
	Params       *store.Params `json:"params,omitempty"`
	SystemPrompt string        `json:"systemPrompt,omitempty"`
	// Attachments are the caller's unsent uploads to send with the turn.
	Attachments []ids.AttachmentID `json:"attachments,omitempty"`
	// ToolsOff starts a new chat with tools off (an existing chat changes
	// it with Chats.Update).
	ToolsOff bool `json:"toolsOff,omitempty"`
	// Knowledge starts a new chat with its knowledge search limited to
	// some bases, so that its first reply already searches only them (an
	// existing chat changes it with Library.SetChatScope; sent with one,
	// it is refused).
	Knowledge *KnowledgeInput `json:"knowledge,omitempty"`
	// Agent makes the new chat an agent chat working on one of the
	// caller's SSH profiles in a directory, in a mode; fixed once the
	// chat exists (but for the mode, Chats.Update). Sent for an existing
	// chat, it is refused.
	Agent *AgentInput `json:"agent,omitempty"`
}

// AgentInput is a new agent chat's host, directory and first mode ("":
// manual, which asks before everything).
type AgentInput struct {
	Profile ids.ProfileID   `json:"profile"`
	Dir     string          `json:"dir"`
	Mode    store.AgentMode `json:"mode"`
}

// KnowledgeInput is a new chat's knowledge scope: Scoped, only Bases (each
// one the caller can see); not scoped, every base they can see.
type KnowledgeInput struct {
	Scoped bool         `json:"scoped"`
	Bases  []ids.BaseID `json:"bases,omitempty"`
}

// Turn is what Send and Edit return.
type Turn struct {
	Chat      store.Chat
	User      store.Message
	Assistant store.Message
	// Files are the user turn's attachments, in order.
	Files []store.Attachment
}

func checkContent(content string, files int) (string, error) {
	if !utf8.ValidString(content) {
		return "", apperr.New(apperr.Invalid, "the message is not valid text")
	}
	if strings.TrimSpace(content) == "" && files == 0 {
		return "", apperr.New(apperr.Invalid, "the message is empty")
	}
	if len(content) > MaxMessage {
		return "", apperr.New(apperr.Invalid, "the message is too long (%d KiB; the limit is %d KiB)", len(content)>>10, MaxMessage>>10)
	}
	return content, nil
}

// Send adds the user's turn (creating the chat on its first message) and
// starts the reply.
//
// Everything that could refuse the turn is checked, and the reply's request
// built, before anything is stored; then the chat's changes, the turn and
// the reply row are written in one transaction (store.AddTurn), and only
// after it commits does the reply start: a send is stored whole or not at
// all, and a reply never streams into a row that may roll back.
func (s *Service) Send(ctx context.Context, user ids.UserID, in SendInput) (Turn, error) {
	content, err := checkContent(in.Content, len(in.Attachments))
	if err != nil {
		return Turn{}, err
	}
	files, err := s.checkFiles(ctx, user, in.Attachments, 0)
	if err != nil {
		return Turn{}, err
	}
	st := store.Turn{User: store.Message{Role: store.RoleUser, Content: content, Status: store.StatusFinal,
		Attachments: in.Attachments}}
	if in.ChatID == 0 {
		if in.ModelID == 0 {
			return Turn{}, apperr.New(apperr.Invalid, "choose a model for the new chat")
		}
		mid := in.ModelID
		st.New = store.NewChat{ModelID: &mid, SystemPrompt: in.SystemPrompt, ToolsOff: in.ToolsOff}
		if in.Knowledge != nil && in.Knowledge.Scoped {
			if st.New.Knowledge, err = s.newScope(ctx, user, *in.Knowledge); err != nil {
				return Turn{}, err
			}
		}
		if in.Params != nil {
			if err := llm.CheckEffort(in.Params.ReasoningEffort); err != nil {
				return Turn{}, err
			}
			st.New.Params = *in.Params
		}
		if in.Agent != nil {
			agent, err := s.newAgent(ctx, *in.Agent)
			if err != nil {
				return Turn{}, err
			}
			st.New.Kind, st.New.Agent = store.ChatAgent, agent
		}
		// A provisional title at once; the model's title replaces it later.
		st.Title = provisionalTitle(firstNonEmpty(content, "Attachment"))
		st.Chat = store.Chat{ModelID: &mid, Params: st.New.Params, SystemPrompt: st.New.SystemPrompt, ToolsOff: in.ToolsOff,
			Knowledge: st.New.Knowledge, Kind: st.New.Kind, Agent: st.New.Agent}
	} else {
		defer s.lockChat(in.ChatID)()
		if st.Chat, err = s.db.ChatByID(ctx, user, in.ChatID); err != nil {
			return Turn{}, storeErr(err, "chat")
		}
		if st.Chat.DeletedAt != nil {
			return Turn{}, apperr.New(apperr.Conflict, "this chat is in the trash; restore it first")
		}
		if s.gen.Running(st.Chat.ID) {
			return Turn{}, apperr.New(apperr.Conflict, "a reply is still being written; stop it or wait")
		}
		if in.ModelID != 0 && (st.Chat.ModelID == nil || *st.Chat.ModelID != in.ModelID) {
			mid := in.ModelID
			st.Model, st.Chat.ModelID = &mid, &mid
		}
	}
	tgt, err := s.target(ctx, user, st.Chat)
	if err != nil {
		return Turn{}, err
	}
	if in.ChatID != 0 && in.Knowledge != nil {
		// Not ignored like a new chat's other settings: it names bases,
		// and an id is either used and checked or refused. After the
		// chat's and the model's checks, so another's id there is refused
		// as not found first.
		return Turn{}, apperr.New(apperr.Invalid, "this chat exists already; its knowledge bases are changed with Library.SetChatScope")
	}
	if in.ChatID != 0 && in.Agent != nil {
		return Turn{}, apperr.New(apperr.Invalid, "this chat exists already: an agent chat's connection and directory are fixed when the chat was created")
	}
	pending := &newTurn{content: content, files: files}
	if tgt, err = s.withRequest(ctx, user, tgt, 0, nil, pending); err != nil {
		return Turn{}, err
	}
	// Near the window, the reply summarises the earlier turns first
	// (compactFirst): Send answers at once, and the reply says what it is
	// doing meanwhile.
	tgt.compactFirst = in.ChatID != 0 && tgt.over
	st.Reply = replyRow(tgt.model)
	chat, userMsg, asst, err := s.db.AddTurn(ctx, user, st)
	if err != nil {
		return Turn{}, sendErr(err, "chat", in.Attachments)
	}
	if in.ChatID == 0 {
		s.Notify(user, chat.ID, "created")
	}
	if err := s.start(ctx, user, chat.ID, asst, nil, tgt); err != nil {
		return Turn{}, err
	}
	for i := range files {
		files[i].MessageID = &userMsg.ID
	}
	return Turn{Chat: chat, User: userMsg, Assistant: asst, Files: files}, nil
}

// newScope checks a new chat's knowledge scope (the bases, each once, all
// visible to user) before anything is stored.
func (s *Service) newScope(ctx context.Context, user ids.UserID, in KnowledgeInput) (*store.KnowledgeScope, error) {
	if s.library == nil {
		return nil, apperr.New(apperr.Invalid, "knowledge bases are not available here")
	}
	var bases []ids.BaseID
	for _, b := range in.Bases {
		if !slices.Contains(bases, b) {
			bases = append(bases, b)
		}
	}
	if err := s.library.CheckScope(ctx, user, bases); err != nil {
		return nil, err
	}
	return &store.KnowledgeScope{Scoped: true, Bases: bases}, nil
}

// newAgent checks a new agent chat's profile, directory and mode
// (Agent.CheckNew) before anything is stored.
func (s *Service) newAgent(ctx context.Context, in AgentInput) (store.AgentChat, error) {
	if s.agent == nil {
		return store.AgentChat{}, apperr.New(apperr.Unavailable, "agent chats are not available here")
	}
	if in.Mode == "" {
		in.Mode = store.ModeManual
	}
	if !in.Mode.Valid() {
		return store.AgentChat{}, apperr.New(apperr.Invalid, "the mode is manual, plan, edit or auto")
	}
	p := in.Profile
	a := store.AgentChat{Profile: &p, Dir: in.Dir, Mode: in.Mode}
	caller, _ := auth.CallerFrom(ctx)
	if err := s.agent.CheckNew(ctx, caller, a); err != nil {
		return store.AgentChat{}, err
	}
	return a, nil
}

// Regenerate answers the chat's last turn again: a new reply beside the
// old ones (a version; the old stay, Chats.SwitchVersion goes back).
func (s *Service) Regenerate(ctx context.Context, user ids.UserID, chatID ids.ChatID) (store.Message, error) {
	defer s.lockChat(chatID)()
	if err := s.idle(ctx, user, chatID); err != nil {
		return store.Message{}, err
	}
	return s.regenerate(ctx, user, chatID)
}

// regenerate is Regenerate with the chat's lock held and the chat idle.
func (s *Service) regenerate(ctx context.Context, user ids.UserID, chatID ids.ChatID) (store.Message, error) {
	// The turn to answer again: the newest that is not a reply.
	var turn ids.MessageID
	if err := s.db.WalkPath(ctx, user, chatID, func(e store.PathEntry) bool {
		if e.Role == store.RoleAssistant {
			return true
		}
		turn = e.ID
		return false
	}); err != nil {
		return store.Message{}, storeErr(err, "chat")
	}
	if turn == 0 {
		return store.Message{}, apperr.New(apperr.Conflict, "there is no turn to answer again")
	}
	// Everything that could stop the new reply is checked before it is
	// added, the request included: it is built from the path ending at
	// the turn, which is the new reply's path.
	tgt, err := s.prepare(ctx, user, chatID)
	if err != nil {
		return store.Message{}, err
	}
	rewinding(&tgt)
	if tgt, err = s.withRequest(ctx, user, tgt, turn, nil, nil); err != nil {
		return store.Message{}, err
	}
	if err := s.stampRewound(ctx, user, tgt); err != nil {
		return store.Message{}, err
	}
	asst, err := s.db.AddMessageAt(ctx, user, chatID, &turn, replyRow(tgt.model))
	if err != nil {
		return store.Message{}, storeErr(err, "chat")
	}
	if err := s.start(ctx, user, chatID, asst, nil, tgt); err != nil {
		return store.Message{}, err
	}
	return asst, nil
}

// Continue extends the last reply (cut by the length limit, stopped, or
// interrupted by a restart) from where it ended. A reply with no text yet
// (stopped while the model was still thinking) has nowhere to continue
// from: the request would carry no assistant turn, only two user turns in a
// row, which strict chat templates refuse. It is answered again instead,
// as the frontend's Regenerate would.
func (s *Service) Continue(ctx context.Context, user ids.UserID, chatID ids.ChatID) (store.Message, error) {
	defer s.lockChat(chatID)()
	if err := s.idle(ctx, user, chatID); err != nil {
		return store.Message{}, err
	}
	var newest store.PathEntry
	if err := s.db.WalkPath(ctx, user, chatID, func(e store.PathEntry) bool { newest = e; return false }); err != nil {
		return store.Message{}, storeErr(err, "chat")
	}
	if newest.Role != store.RoleAssistant {
		return store.Message{}, apperr.New(apperr.Conflict, "the last message is not a reply that can be continued")
	}
	switch newest.Status {
	case store.StatusLength, store.StatusInterrupted, store.StatusStopped:
	default:
		return store.Message{}, apperr.New(apperr.Conflict, "only a reply that was cut off, stopped or interrupted can be continued")
	}
	// With its reasoning, which the continued reply keeps showing (the
	// request never carries it).
	last, err := s.db.MessageByID(ctx, user, newest.ID)
	if err != nil {
		return store.Message{}, storeErr(err, "message")
	}
	if strings.TrimSpace(last.Content) == "" {
		return s.regenerate(ctx, user, chatID)
	}
	tgt, err := s.prepare(ctx, user, chatID)
	if err != nil {
		return store.Message{}, err
	}
	if tgt, err = s.withRequest(ctx, user, tgt, last.ID, &last, nil); err != nil {
		return store.Message{}, err
	}
	return s.startReply(ctx, user, chatID, &last, tgt)
}

// Edit answers a changed user turn: the new text is a new turn beside the
// edited one (a version, with the same parent), and a new reply starts
// after it. The edited turn and everything after it stay, on their own
// branch (Chats.SwitchVersion goes back).
//
// attachments, when not nil, become the new turn's attachments: its own
// that are listed are copied, the caller's unsent uploads are added, the
// rest stay with the old turn only. nil keeps (copies) all of them.
func (s *Service) Edit(ctx context.Context, user ids.UserID, msgID ids.MessageID, content string, attachments []ids.AttachmentID) (Turn, error) {
	files, err := s.checkFiles(ctx, user, attachments, msgID)
	if err != nil {
		return Turn{}, err
	}
	m, err := s.db.MessageByID(ctx, user, msgID)
	if err != nil {
		return Turn{}, storeErr(err, "message")
	}
	if m.Role != store.RoleUser {
		return Turn{}, apperr.New(apperr.Invalid, "only your own turns can be edited")
	}
	if attachments == nil {
		have, err := s.db.AttachmentsOf(ctx, user, []ids.MessageID{m.ID})
		if err != nil {
			return Turn{}, err
		}
		files = have[m.ID]
	}
	content, err = checkContent(content, len(files))
	if err != nil {
		return Turn{}, err
	}
	defer s.lockChat(m.ChatID)()
	if err := s.idle(ctx, user, m.ChatID); err != nil {
		return Turn{}, err
	}
	tgt, err := s.prepare(ctx, user, m.ChatID)
	if err != nil {
		return Turn{}, err
	}
	if err := s.checkFits(ctx, tgt.chat, tgt.model, content, files); err != nil {
		return Turn{}, err
	}
	// An agent chat that cannot act refuses the edit before anything is
	// deleted; its reply is read once, here.
	rewinding(&tgt)
	if tgt, err = s.withAgent(ctx, user, tgt); err != nil {
		return Turn{}, err
	}
	if err := s.stampRewound(ctx, user, tgt); err != nil {
		return Turn{}, err
	}
	list, err := s.copyOwn(ctx, user, m.ID, files)
	if err != nil {
		return Turn{}, err
	}
	um, err := s.db.AddMessageAt(ctx, user, m.ChatID, m.ParentID,
		store.Message{Role: store.RoleUser, Content: content, Status: store.StatusFinal, Attachments: list})
	if err != nil {
		return Turn{}, sendErr(err, "message", list)
	}
	asst, err := s.startReply(ctx, user, m.ChatID, nil, tgt)
	if err != nil {
		return Turn{}, err
	}
	chat, err := s.db.ChatByID(ctx, user, m.ChatID)
	if err != nil {
		return Turn{}, storeErr(err, "chat")
	}
	bound, err := s.db.AttachmentsOf(ctx, user, []ids.MessageID{um.ID})
	if err != nil {
		return Turn{}, err
	}
	return Turn{Chat: chat, User: um, Assistant: asst, Files: bound[um.ID]}, nil
}

// copyOwn returns the ids an edited turn's new version is sent with: the
// files of files that belong to the edited turn msg are copied (each
// version keeps its own; the copies are unsent uploads until bound), the
// caller's unsent uploads are kept as they are.
func (s *Service) copyOwn(ctx context.Context, user ids.UserID, msg ids.MessageID, files []store.Attachment) ([]ids.AttachmentID, error) {
	list := make([]ids.AttachmentID, 0, len(files))
	for _, f := range files {
		if f.MessageID == nil || *f.MessageID != msg {
			list = append(list, f.ID)
			continue
		}
		if s.copyFile == nil {
			return nil, apperr.New(apperr.Unavailable, "an edited message cannot keep its files here")
		}
		c, err := s.copyFile(ctx, user, f.StorageName, f)
		if err != nil {
			return nil, err
		}
		list = append(list, c.ID)
	}
	return list, nil
}

// Stop stops the chat's running reply.
func (s *Service) Stop(ctx context.Context, user ids.UserID, chatID ids.ChatID) error {
	if _, err := s.db.ChatByID(ctx, user, chatID); err != nil {
		return storeErr(err, "chat")
	}
	s.gen.Stop(user, chatID)
	return nil
}

// idle checks that the chat can take a new reply in place of its last ones
// (Regenerate, Continue, Edit): it is not in the trash and no reply is
// being written. Call it holding the chat's lock.
func (s *Service) idle(ctx context.Context, user ids.UserID, chatID ids.ChatID) error {
	chat, err := s.db.ChatByID(ctx, user, chatID)
	if err != nil {
		return storeErr(err, "chat")
	}
	if chat.DeletedAt != nil {
		return apperr.New(apperr.Conflict, "this chat is in the trash; restore it first")
	}
	if s.gen.Running(chatID) {
		return apperr.New(apperr.Conflict, "a reply is still being written; stop it first")
	}
	return nil
}

// usableModel returns a model the user may chat with.
func (s *Service) usableModel(ctx context.Context, user ids.UserID, id ids.ModelID) (store.Model, error) {
	m, err := s.db.ModelByID(ctx, user, id)
	if err != nil {
		return store.Model{}, storeErr(err, "model")
	}
	if !m.Enabled {
		return store.Model{}, apperr.New(apperr.Conflict, "the model %s is disabled; choose another", modelName(m))
	}
	return m, nil
}

func modelName(m store.Model) string {
	if m.DisplayName != "" {
		return m.DisplayName
	}
	return m.UpstreamID
}

// target is what a reply will be sent to, checked before anything changes,
// and once withRequest has run, what it sends.
type target struct {
	chat   store.Chat
	model  store.Model
	client *llm.Client
	conn   store.Connection

	built   bool
	req     llm.ChatRequest
	omitted int // earlier turns req leaves out
	// over: req would take more than autoCompactShare of a known window
	// (Send compacts first); compactFirst: the reply does that before its
	// first round.
	over, compactFirst bool
	tools              tools.ToolSet // what the reply is offered
	// agent is an agent chat's reply: its policy (the mode, read once),
	// limits and harness (withAgent); nil in a plain chat.
	agent *AgentReply
}

// withAgent reads an agent chat's reply from the agent (Agent.Reply),
// once per reply: its mode decides every call of the reply, however the
// chat's mode changes meanwhile. An agent chat that cannot act (agent
// chats off, no agent.use, its profile deleted) refuses the reply with
// the agent's reason.
func (s *Service) withAgent(ctx context.Context, user ids.UserID, tgt target) (target, error) {
	if tgt.chat.Kind != store.ChatAgent || tgt.agent != nil {
		return tgt, nil
	}
	if s.agent == nil {
		return target{}, apperr.New(apperr.Unavailable, "agent chats are not available here")
	}
	caller, _ := auth.CallerFrom(ctx)
	caller.User = user
	r, err := s.agent.Reply(ctx, caller, tgt.chat)
	if err != nil {
		return target{}, err
	}
	if r.Policy == nil {
		// Fail closed: an agent chat's calls are never run undecided.
		return target{}, apperr.New(apperr.Internal, "the agent gave a reply no policy")
	}
	tgt.agent = &r
	return tgt, nil
}

// rewinding marks tgt's agent chat as rewound now (an edit or a
// regeneration), before its reply is read, so the reply's harness warns
// that the machine was not rewound with the transcript (stampRewound
// stores it).
func rewinding(tgt *target) {
	if tgt.chat.Kind == store.ChatAgent {
		now := time.Now().UnixMilli()
		tgt.chat.Agent.RewoundAt = &now
	}
}

// stampRewound stores that an agent chat's transcript was rewound (an
// edit or a regeneration deletes later turns; the files they changed stay
// on the host).
func (s *Service) stampRewound(ctx context.Context, user ids.UserID, tgt target) error {
	if tgt.chat.Kind != store.ChatAgent {
		return nil
	}
	if _, err := s.db.UpdateChat(ctx, user, tgt.chat.ID, store.ChatPatch{Rewound: true}); err != nil {
		return storeErr(err, "chat")
	}
	return nil
}

// prepare reads the chat and checks everything that could stop a reply
// from starting (target).
func (s *Service) prepare(ctx context.Context, user ids.UserID, chatID ids.ChatID) (target, error) {
	chat, err := s.db.ChatByID(ctx, user, chatID)
	if err != nil {
		return target{}, storeErr(err, "chat")
	}
	return s.target(ctx, user, chat)
}

// target checks everything that could stop a reply in chat from starting:
// the chat's model is usable, its connection enabled and its key readable.
func (s *Service) target(ctx context.Context, user ids.UserID, chat store.Chat) (target, error) {
	if chat.ModelID == nil {
		return target{}, apperr.New(apperr.Conflict, "this chat has no model (it was removed); choose one")
	}
	model, err := s.usableModel(ctx, user, *chat.ModelID)
	if err != nil {
		return target{}, err
	}
	client, conn, err := s.conns.Client(ctx, user, model.ConnectionID)
	if err != nil {
		return target{}, err
	}
	if !conn.Enabled {
		return target{}, apperr.New(apperr.Conflict, "the connection %q is disabled", conn.Name)
	}
	return target{chat: chat, model: model, client: client, conn: conn}, nil
}

// startReply starts the reply with tgt's request, built here from the
// chat's path (from its newest message) unless withRequest built it before.
// With cont set, the reply continues that existing message; otherwise a new
// assistant message is added. Call it holding the chat's lock.
func (s *Service) startReply(ctx context.Context, user ids.UserID, chatID ids.ChatID, cont *store.Message, tgt target) (store.Message, error) {
	var err error
	if !tgt.built {
		if tgt, err = s.withRequest(ctx, user, tgt, 0, cont, nil); err != nil {
			return store.Message{}, err
		}
	}
	var asst store.Message
	if cont != nil {
		if asst, err = s.db.ReopenMessage(ctx, user, cont.ID); err != nil {
			return store.Message{}, storeErr(err, "message")
		}
	} else {
		if asst, err = s.db.AddMessage(ctx, user, chatID, replyRow(tgt.model)); err != nil {
			return store.Message{}, storeErr(err, "chat")
		}
	}
	if err := s.start(ctx, user, chatID, asst, cont, tgt); err != nil {
		return store.Message{}, err
	}
	return asst, nil
}

// replyRow is the row a new reply from model streams into.
func replyRow(model store.Model) store.Message {
	return store.Message{Role: store.RoleAssistant, Status: store.StatusStreaming, ModelLabel: modelName(model)}
}

// start starts the reply that streams into asst, a row already committed,
// with tgt's request; cont is the message it continues, if any.
func (s *Service) start(ctx context.Context, user ids.UserID, chatID ids.ChatID, asst store.Message, cont *store.Message, tgt target) error {
	model, client, conn := tgt.model, tgt.client, tgt.conn
	// The caller's permissions, as the facade resolved them, travel with
	// the reply (auth.WithCaller); without them it may do only what
	// everyone may.
	caller, _ := auth.CallerFrom(ctx)
	caller.User = user
	job := generation.Job{
		User: user, Chat: chatID, Message: asst.ID, Caller: caller, Client: client, Request: tgt.req,
		ContextLength: int(model.ContextLength), OmittedTurns: tgt.omitted,
		Done: func(ctx context.Context, out generation.Outcome) {
			s.replyDone(ctx, out, client, model, conn)
		},
	}
	if cont != nil {
		job.Prefix = cont.Parts()
	}
	job.Producer = s.producer(ctx, tgt)
	if tgt.compactFirst && asst.ParentID != nil {
		job.Producer = &compactFirst{s: s, user: user, turn: *asst.ParentID, tgt: tgt, fallback: job.Producer}
		// No "N earlier turns were not sent" while they are being
		// summarised; the producer says what was sent once it knows.
		job.OmittedTurns = 0
	}
	if err := s.gen.Start(job); err != nil {
		// The row would otherwise stay "streaming" until the next restart.
		s.db.Checkpoint(ctx, []store.MessageUpdate{{ID: asst.ID, Content: asst.Content, Reasoning: asst.Reasoning,
			Status: store.StatusError, Error: "The reply could not start."}})
		return err
	}
	s.Notify(user, chatID, "updated")
	return nil
}

// producer runs the rounds of a reply to tgt's request. The tools were
// resolved once, with the request (offeredTools), and travel with the
// reply: what it may run is what it was offered. A model not flagged for
// tools gets an empty set, one plain round, and its requests no tools
// array.
func (s *Service) producer(ctx context.Context, tgt target) generation.Producer {
	set := tgt.tools
	if set.Len() == 0 {
		return generation.ChatRound{Client: tgt.client, Request: tgt.req}
	}
	loop := &tools.Loop{Client: tgt.client, Request: tgt.req, Tools: set,
		MaxRounds: s.tools.MaxRounds(ctx), Log: s.log}
	if a := tgt.agent; a != nil {
		// Every call of an agent chat's reply goes through its policy,
		// the built-ins' too; the mode was read once, with the request.
		loop.Policy, loop.AskTimeout = a.Policy, a.AskTimeout
		if a.MaxRounds > 0 {
			// The round after the last with tools must fit the reply.
			loop.MaxRounds = min(a.MaxRounds, generation.MaxRounds-1)
		}
	}
	return loop
}

// withRequest returns tgt with its request built: the one way every reply
// (Send, Regenerate, Continue, Edit) gets its history. pending, if set, is
// Send's turn, not stored yet, which the request ends with.
func (s *Service) withRequest(ctx context.Context, user ids.UserID, tgt target, from ids.MessageID, cont *store.Message, pending *newTurn) (target, error) {
	d, err := s.request(ctx, user, from, cont, pending, tgt)
	if err != nil {
		return target{}, err
	}
	tgt.built, tgt.req, tgt.omitted, tgt.tools, tgt.agent = true, d.req, d.omitted, d.tools, d.agent
	tgt.over = overWindow(d)
	return tgt, nil
}

// replyDone runs after a reply's final row is written.
func (s *Service) replyDone(ctx context.Context, out generation.Outcome, client *llm.Client, model store.Model, conn store.Connection) {
	if out.StreamOptionsRejected {
		s.conns.RefusesStreamOptions(ctx, conn)
	}
	// The final row marked the chat unread (generation.finish); say so.
	s.Notify(out.User, out.Chat, "unread")
	if out.Status == store.StatusFinal {
		s.bg.Add(1)
		go func() {
			defer s.bg.Done()
			defer func() {
				if p := recover(); p != nil {
					s.log.Error("panic making a title", "chat", out.Chat, "panic", p)
				}
			}()
			s.autoTitle(out.User, out.Chat, client, model)
		}()
	}
}

// autoTitle asks the model for a short title after the first reply, if the
// title is still automatic. Failure keeps the provisional title.
func (s *Service) autoTitle(user ids.UserID, chatID ids.ChatID, client *llm.Client, model store.Model) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	chat, err := s.db.ChatByID(ctx, user, chatID)
	if err != nil || !chat.TitleAuto {
		return
	}
	// Only after the first exchange; counted without reading a long
	// chat's every message.
	var first []ids.MessageID // newest first
	if err := s.db.WalkPath(ctx, user, chatID, func(e store.PathEntry) bool {
		first = append(first, e.ID)
		return len(first) <= 2
	}); err != nil || len(first) != 2 {
		return
	}
	path, err := s.db.PathMessages(ctx, user, chatID, []ids.MessageID{first[1], first[0]})
	if err != nil || len(path) != 2 {
		return
	}
	req := llm.ChatRequest{Model: model.UpstreamID, Params: map[string]any{"max_tokens": 24, "temperature": 0.2},
		Messages: []llm.Message{
			{Role: "system", Content: "You write titles. Answer with a title of at most six words for the conversation below, in its language, with no quotes and no punctuation at the end."},
			{Role: "user", Content: truncate(path[0].Content, 2000) + "\n\n---\n\n" + truncate(path[1].Content, 1000)},
		}}
	title, err := client.Complete(ctx, req)
	if err != nil {
		s.log.Debug("automatic title failed; keeping the provisional one", "chat", chatID, "err", err)
		return
	}
	title = cleanTitle(title)
	if title == "" {
		return
	}
	if ok, err := s.db.SetAutoTitle(ctx, user, chatID, title); err == nil && ok {
		s.Notify(user, chatID, "updated")
	}
}

func cleanTitle(t string) string {
	t = strings.TrimSpace(strings.SplitN(strings.TrimSpace(t), "\n", 2)[0])
	t = strings.Trim(t, "\"'`*#. ")
	return truncate(t, 80)
}

// provisionalTitle is the start of the first message, on one line.
func provisionalTitle(content string) string {
	return truncate(strings.Join(strings.Fields(content), " "), 60)
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// storeErr maps store errors to application errors.
func storeErr(err error, what string) error { return store.Kinded(err, what) }

// turnFile is an attachment of a turn, with its bytes when it is an image
// going to a vision model.
type turnFile struct {
	store.Attachment
	Data []byte
}

// checkFiles checks the attachments of one turn before anything changes:
// each must be the user's own (binding checks again, in the transaction
// that inserts the message), and there may not be too many. It returns
// their rows, in the order given.
func (s *Service) checkFiles(ctx context.Context, user ids.UserID, list []ids.AttachmentID, msg ids.MessageID) ([]store.Attachment, error) {
	seen := map[ids.AttachmentID]bool{}
	var out []store.Attachment
	for _, id := range list {
		a, err := s.db.AttachmentByID(ctx, user, id)
		if err == nil && a.MessageID != nil && *a.MessageID != msg {
			err = fmt.Errorf("attachment %d was sent with another message: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return nil, sendErr(err, "file", list)
		}
		if seen[id] {
			return nil, apperr.New(apperr.Invalid, "the same file is attached twice")
		}
		seen[id] = true
		out = append(out, a)
	}
	if len(list) > s.maxFiles {
		return nil, apperr.New(apperr.Invalid, "a message can carry at most %d files", s.maxFiles)
	}
	return out, nil
}

// sendErr maps a store error of a send or edit with attachments: an id
// that is not the caller's unsent upload is not_found with its own words.
func sendErr(err error, what string, list []ids.AttachmentID) error {
	if len(list) > 0 && errors.Is(err, store.ErrNotFound) && strings.Contains(err.Error(), "attachment ") {
		return apperr.Wrap(apperr.NotFound, err, "a file to send was not found among your uploads (removed, already sent, or not yours)")
	}
	if errors.Is(err, store.ErrNotFound) && strings.Contains(err.Error(), "knowledge base ") {
		// Unshared or deleted between the check and the write.
		return apperr.Wrap(apperr.Invalid, err, "a knowledge base chosen for this chat does not exist or is not shared with you")
	}
	return storeErr(err, what)
}

// turnFiles loads the attachments of the user turns in path; image bytes
// only for a vision model (the others never see them).
func (s *Service) turnFiles(ctx context.Context, user ids.UserID, path []store.Message, vision bool) (map[ids.MessageID][]turnFile, error) {
	var msgs []ids.MessageID
	for _, m := range path {
		if m.Role == store.RoleUser && m.ID != pendingID {
			msgs = append(msgs, m.ID)
		}
	}
	if len(msgs) == 0 {
		return nil, nil
	}
	by, err := s.db.AttachmentsOf(ctx, user, msgs)
	if err != nil {
		return nil, err
	}
	out := map[ids.MessageID][]turnFile{}
	for id, list := range by {
		for _, a := range list {
			f, err := s.turnFile(a, vision)
			if err != nil {
				return nil, err
			}
			out[id] = append(out[id], f)
		}
	}
	return out, nil
}

// turnFile is attachment a as a request carries it: with its bytes when it
// is an image going to a vision model.
func (s *Service) turnFile(a store.Attachment, vision bool) (turnFile, error) {
	f := turnFile{Attachment: a}
	if a.Kind == "image" && vision {
		if s.readFile == nil {
			return turnFile{}, apperr.New(apperr.Unavailable, "images cannot be sent from here")
		}
		var err error
		if f.Data, err = s.readFile(a.StorageName); err != nil {
			return turnFile{}, apperr.Wrap(apperr.KindOf(err), err, "the image %s cannot be read", a.DisplayName)
		}
	}
	return f, nil
}
