package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/llembas/lembas/backend/attach"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/prompts"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/tools"
)

// draft is a request being built: what its reply is for, what the
// contributors found so far, and the request they add to.
type draft struct {
	user ids.UserID
	// caller is who the reply acts for, with their permissions (what
	// tools they are offered).
	caller auth.Caller
	chat   store.Chat
	model  store.Model
	// from is the message the history ends at (0: the chat's newest);
	// cont the reply being continued, if any; pending Send's turn, not
	// stored yet, which the request ends with.
	from    ids.MessageID
	cont    *store.Message
	pending *newTurn

	// system is the system message: the authored prompt (authoredPrompt)
	// after the harness (harness), sent as one message (systemMessage).
	system string
	// tools are what the reply is offered, resolved once (offeredTools):
	// the harness's gates read their families and the reply runs them.
	tools tools.ToolSet
	// library is the library's part of the harness (libraryContext).
	library prompts.Library
	// agent is an agent chat's reply, read once (agentContext): its
	// policy and limits go with the reply, its harness into the system
	// message; nil in a plain chat.
	agent *AgentReply
	// othersPreview: SystemPreview for another person than its viewer,
	// who sees stand-ins for that person's library (libraryContext).
	othersPreview bool
	// path is the history that fits, oldest first, and omitted the
	// earlier turns left out (fittingHistory).
	path    []store.Message
	omitted int
	// summarised: the chat's compaction summary stands for the turns
	// before path (compacted).
	summarised bool
	// files are the user turns' attachments by message (turnAttachments;
	// Send's turn under pendingID).
	files map[ids.MessageID][]turnFile
	// turnAt is where each turn of path went in req.Messages (turns).
	turnAt map[ids.MessageID]int

	req llm.ChatRequest
}

// contributor adds its part to a request. The ones that read the store are
// Service methods; the rest only look at the draft.
type contributor func(ctx context.Context, d *draft) error

// contributors are the steps that build every reply's request, in order:
// each may use what the ones before it found. A new part of a request
// (memories, tool schemas) is one more contributor with its own test, put
// where its part belongs: text for the system turn in systemContributors,
// before fittingHistory, which leaves room for d.system; tools beside
// parameters.
func (s *Service) contributors() []contributor {
	return append(s.systemContributors(),
		s.fittingHistory,
		s.compacted,
		s.turnAttachments,
		turns,
		attachments,
		continueNudge,
		parameters,
	)
}

// systemContributors build the system message: the prefix of every
// request, and all of SystemPreview's, so the preview is what is sent.
func (s *Service) systemContributors() []contributor {
	return []contributor{
		s.authoredPrompt,
		s.offeredTools,
		s.libraryContext,
		s.agentContext,
		s.harness,
		systemMessage,
	}
}

// request builds the request of the chat's next reply (see draft for its
// inputs) and says how many earlier turns it leaves out, with the tools
// the reply is offered. Memory here does not grow with the chat: only the
// turns that fit are read.
func (s *Service) request(ctx context.Context, user ids.UserID, from ids.MessageID, cont *store.Message, pending *newTurn, tgt target) (*draft, error) {
	// The caller's permissions, as the facade resolved them (auth.WithCaller);
	// without them the reply may do only what everyone may.
	caller, _ := auth.CallerFrom(ctx)
	caller.User = user
	d := &draft{user: user, caller: caller, chat: tgt.chat, model: tgt.model, from: from, cont: cont, pending: pending,
		agent: tgt.agent, req: llm.ChatRequest{Model: tgt.model.UpstreamID, Params: map[string]any{}}}
	for _, c := range s.contributors() {
		if err := c(ctx, d); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// authoredPrompt is the system prompt people wrote, with chat > model >
// instance precedence: the most specific wins outright, never stacked.
func (s *Service) authoredPrompt(ctx context.Context, d *draft) error {
	instance, _, err := s.db.Setting(ctx, "system_prompt")
	if err != nil {
		return err
	}
	systemTurn(d, instance)
	return nil
}

// systemTurn is authoredPrompt once the instance's prompt is read.
func systemTurn(d *draft, instancePrompt string) {
	d.system = firstNonEmpty(d.chat.SystemPrompt, d.model.SystemPrompt, instancePrompt)
}

// offeredTools resolves the tools the reply is offered, once (model flag,
// permissions, instance, model and chat switches): the harness's gates
// read their families, and the reply runs exactly these.
//
// An agent chat ignores the chat's tools switch: without tools it could
// not act, and the page offers no switch there; a flag set before (or by
// a call that went around the page) is not honoured.
func (s *Service) offeredTools(ctx context.Context, d *draft) error {
	ch := d.chat
	if ch.Kind == store.ChatAgent {
		ch.ToolsOff = false
	}
	set, err := s.tools.Resolve(ctx, d.caller, d.model, ch)
	if err != nil {
		return err
	}
	d.tools = set
	return nil
}

// libraryContext asks the library for its part of the harness (the
// memories, the skills index, the knowledge scope), for the tools offered.
func (s *Service) libraryContext(ctx context.Context, d *draft) error {
	if s.library == nil {
		return nil
	}
	lib, err := s.library.Harness(ctx, d.caller, d.chat, d.tools.Families())
	if err != nil {
		return err
	}
	if d.othersPreview {
		// An administrator previewing a member's request sees where the
		// member's memories, skills and bases go, never what they are:
		// the library has no administrator branch, the preview neither.
		for _, f := range []struct {
			v       *string
			standIn string
		}{
			{&lib.Memories, "- (this person's memories, one per line)"},
			{&lib.Skills, "- (this person's skills: name and description, one per line)"},
			{&lib.KnowledgeBases, "(A sentence naming the knowledge bases this person's chat may search.)"},
		} {
			if *f.v != "" {
				*f.v = f.standIn
			}
		}
	}
	d.library = lib
	return nil
}

// agentContext reads an agent chat's reply from the agent, unless the
// reply read it already (withAgent: once per reply), for the harness's
// agent variables (host, directory, mode, listing, rewind warning). The
// fragments they fill are gated on the agent's tools being offered.
func (s *Service) agentContext(ctx context.Context, d *draft) error {
	if d.chat.Kind != store.ChatAgent {
		return nil
	}
	tgt, err := s.withAgent(ctx, d.user, target{chat: d.chat, agent: d.agent})
	if err != nil {
		return err
	}
	d.agent = tgt.agent
	return nil
}

// harness puts the harness (backend/prompts: the date, the model's name,
// guidance for the tools offered) before the authored prompt. It is not a
// fourth layer of precedence: nobody authored it, it describes the
// machinery, and it goes with whichever prompt won.
func (s *Service) harness(ctx context.Context, d *draft) error {
	if s.prompts == nil {
		return nil
	}
	r := prompts.Request{ModelName: modelName(d.model), Families: d.tools.Families(),
		Guidance: d.tools.Guidance(), Library: d.library}
	if d.agent != nil {
		r.Agent = d.agent.Harness
	}
	h, err := s.prompts.Harness(ctx, r)
	if err != nil {
		return err
	}
	if strings.TrimSpace(h) == "" {
		return nil
	}
	if strings.TrimSpace(d.system) == "" {
		d.system = h
	} else {
		d.system = h + "\n\n" + d.system
	}
	return nil
}

// systemMessage sends the system text as one message (several endpoints
// refuse a second); a blank one sends no system turn.
func systemMessage(_ context.Context, d *draft) error {
	if strings.TrimSpace(d.system) != "" {
		d.req.Messages = append(d.req.Messages, llm.Message{Role: "system", Content: d.system})
	}
	return nil
}

// SystemPreview returns the system message a new chat with the model
// would send for caller now ("" for none): built by the request's own
// contributors, so it is byte for byte what the endpoint receives — except
// for a viewer other than caller (an administrator previewing a member's),
// who sees stand-ins where the member's memories, skills index and bases
// would be.
func (s *Service) SystemPreview(ctx context.Context, caller auth.Caller, model ids.ModelID, viewer ids.UserID) (string, error) {
	user := caller.User
	if _, err := s.db.UserByID(ctx, int64(user)); err != nil {
		return "", storeErr(err, "person")
	}
	m, err := s.usableModel(ctx, user, model)
	if err != nil {
		return "", err
	}
	d := &draft{user: user, caller: caller, model: m, req: llm.ChatRequest{Model: m.UpstreamID, Params: map[string]any{}},
		othersPreview: viewer != user}
	for _, c := range s.systemContributors() {
		if err := c(ctx, d); err != nil {
			return "", err
		}
	}
	if len(d.req.Messages) == 0 {
		return "", nil
	}
	return d.req.Messages[0].Content, nil
}

// fittingHistory selects the newest turns that fit the model's context
// once the reply, the system prompt and a continue nudge have their room
// (selectHistory).
func (s *Service) fittingHistory(ctx context.Context, d *draft) error {
	h, err := s.selectHistory(ctx, d.user, d.chat.ID, d.from, requestBudget(d.chat, d.model, d.system, d.cont != nil),
		d.model.Capabilities.Vision, d.pending)
	if err != nil {
		return err
	}
	d.path, d.omitted = h.msgs, h.omitted
	return nil
}

// turnAttachments loads the files of the user turns in the history, and
// of Send's turn; image bytes only for a vision model.
func (s *Service) turnAttachments(ctx context.Context, d *draft) error {
	vision := d.model.Capabilities.Vision
	files, err := s.turnFiles(ctx, d.user, d.path, vision)
	if err != nil {
		return err
	}
	if d.pending != nil && len(d.pending.files) > 0 {
		if files == nil {
			files = map[ids.MessageID][]turnFile{}
		}
		for _, a := range d.pending.files {
			f, err := s.turnFile(a, vision)
			if err != nil {
				return err
			}
			files[pendingID] = append(files[pendingID], f)
		}
	}
	d.files = files
	return nil
}

// turns makes the history's stored messages the request's turns. Reasoning
// is never replayed; a reply still streaming, or one that failed with
// nothing in it, is no context.
func turns(_ context.Context, d *draft) error {
	d.turnAt = make(map[ids.MessageID]int, len(d.path))
	for _, m := range d.path {
		if m.Role != store.RoleUser && m.Role != store.RoleAssistant {
			continue
		}
		if m.Role == store.RoleAssistant && (m.Status == store.StatusStreaming || m.Content == "") {
			continue
		}
		d.turnAt[m.ID] = len(d.req.Messages)
		if m.Role == store.RoleAssistant {
			// A reply replays as its text (replyMessages): its reasoning,
			// tool calls and tool results are never replayed.
			d.req.Messages = append(d.req.Messages, replyMessages(m)...)
			continue
		}
		d.req.Messages = append(d.req.Messages, llm.Message{Role: string(m.Role), Content: m.Content})
	}
	return nil
}

// attachments puts each user turn's files into its turn: documents before
// its text as delimited blocks naming each file; images as image_url parts
// (data URIs) only when the model is marked vision, and only then is the
// content an array of parts: a text-only turn stays a plain string, which
// every endpoint takes.
func attachments(_ context.Context, d *draft) error {
	for _, m := range d.path {
		i, ok := d.turnAt[m.ID]
		if !ok || m.Role != store.RoleUser || len(d.files[m.ID]) == 0 {
			continue
		}
		d.req.Messages[i] = userTurn(m.Content, d.files[m.ID], d.model.Capabilities.Vision)
	}
	return nil
}

// continueNudge ends a Continue's request: the model sees its own
// unfinished reply as the last assistant turn, plus a nudge, because most
// chat templates cannot resume a turn.
func continueNudge(_ context.Context, d *draft) error {
	if d.cont != nil {
		d.req.Messages = append(d.req.Messages, llm.Message{Role: "user", Content: "Continue exactly where your last reply stopped, without repeating anything."})
	}
	return nil
}

// parameters sets the sampling parameters with chat > model precedence.
// Params' JSON names are the request's; an empty effort means none.
func parameters(_ context.Context, d *draft) error {
	for k, v := range mergeParams(d.chat.Params, d.model.Params) {
		if k == "reasoning_effort" {
			if e, _ := v.(string); e != "" {
				d.req.ReasoningEffort = e
			}
			continue
		}
		d.req.Params[k] = v
	}
	return nil
}

// mergeParams takes each parameter from the chat, else the model, as the
// request fields they are named after.
func mergeParams(chat, model store.Params) map[string]any {
	out := map[string]any{}
	for _, p := range []store.Params{model, chat} {
		b, _ := json.Marshal(p)
		var m map[string]any
		json.Unmarshal(b, &m)
		maps.Copy(out, m)
	}
	return out
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

// userTurn builds a user message with attachments.
func userTurn(content string, files []turnFile, vision bool) llm.Message {
	var docs []string
	var images []llm.ContentPart
	for _, f := range files {
		switch f.Kind {
		case "image":
			if vision {
				images = append(images, llm.ContentPart{Type: "image_url", ImageURL: attach.ImageDataURI(f.MIME, f.Data)})
			} else {
				// The model is told an image was there, so it can say it
				// cannot see it instead of answering as if it had.
				docs = append(docs, fmt.Sprintf("[An image, %s, is attached here, but this model cannot see images.]",
					strings.NewReplacer("[", "(", "]", ")").Replace(f.DisplayName)))
			}
		default:
			docs = append(docs, attach.SourcedDocumentContext(f.DisplayName, f.SourcePath, f.SourceLabel, f.Text, f.Note))
		}
	}
	text := content
	if len(docs) > 0 {
		text = strings.Join(docs, "\n\n")
		if strings.TrimSpace(content) != "" {
			text += "\n\n" + content
		}
	}
	if len(images) == 0 {
		return llm.Message{Role: "user", Content: text}
	}
	parts := make([]llm.ContentPart, 0, len(images)+1)
	if strings.TrimSpace(text) != "" {
		parts = append(parts, llm.TextPart(text))
	}
	return llm.Message{Role: "user", Parts: append(parts, images...)}
}
