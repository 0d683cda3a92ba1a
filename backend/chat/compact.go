package chat

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/generation"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/store"
)

// Compaction (issue 16): the model summarises a chat's earlier turns, and
// requests then carry the summary instead of them. The turns stay stored
// and visible; Uncompact sends them again.
const (
	// keepExchanges is how many of the newest exchanges (a user turn and
	// what follows it) a compaction leaves as they are.
	keepExchanges = 2
	// autoCompactShare is the share of a known context window above which
	// a Send compacts first.
	autoCompactShare = 0.9
	// charsPerToken is the context meter's estimate (the figure shown
	// under a reply uses the same).
	charsPerToken = 4
	// compactTimeout bounds the summary's request.
	compactTimeout = 5 * time.Minute
	// summaryAsk is the user turn before the summary in a request.
	summaryAsk = "Summarise our conversation so far."
)

// Compact summarises the chat's turns before its last keepExchanges
// exchanges with the chat's model and stores the summary. Refused while
// a reply is being written, and when there is nothing before them.
//
// The chat's lock is held only for the checks: the summary can take
// minutes, and a Send meanwhile is fine (the summary reaches a message
// that stays where it is).
func (s *Service) Compact(ctx context.Context, user ids.UserID, chatID ids.ChatID) (store.Compaction, error) {
	unlock := s.lockChat(chatID)
	err := s.idle(ctx, user, chatID)
	var tgt target
	if err == nil {
		tgt, err = s.prepare(ctx, user, chatID)
	}
	unlock()
	if err != nil {
		return store.Compaction{}, err
	}
	c, err := s.compact(ctx, user, tgt, 0)
	if err != nil {
		return store.Compaction{}, err
	}
	s.Notify(user, chatID, "updated")
	return c, nil
}

// Uncompact drops the chat's summary: requests carry its full turns again.
func (s *Service) Uncompact(ctx context.Context, user ids.UserID, chatID ids.ChatID) error {
	defer s.lockChat(chatID)()
	if err := s.db.SetCompaction(ctx, user, chatID, nil); err != nil {
		return storeErr(err, "chat")
	}
	s.Notify(user, chatID, "updated")
	return nil
}

// Compaction returns the chat's compaction when its message is still on
// the chosen path (nil otherwise).
func (s *Service) Compaction(ctx context.Context, user ids.UserID, chatID ids.ChatID) (*store.Compaction, error) {
	c, err := s.db.ChatCompaction(ctx, user, chatID)
	if err != nil {
		return nil, storeErr(err, "chat")
	}
	return c, nil
}

// errCompacting: a summary of the chat is being written already.
var errCompacting = apperr.New(apperr.Conflict, "a summary of this chat is being written already")

// errNothingToCompact: the chat is no longer than what a compaction keeps.
var errNothingToCompact = apperr.New(apperr.Invalid, "Nothing to compact yet: the last %d exchanges are always sent as they are.", keepExchanges)

// compact is Compact holding the chat's lock, with its target. A
// newest message other than 0 (an automatic compaction's new turn) and
// what follows it are neither counted among the kept exchanges nor
// summarised.
func (s *Service) compact(ctx context.Context, user ids.UserID, tgt target, newest ids.MessageID) (store.Compaction, error) {
	chatID := tgt.chat.ID
	if _, busy := s.compacting.LoadOrStore(chatID, struct{}{}); busy {
		return store.Compaction{}, errCompacting
	}
	defer s.compacting.Delete(chatID)
	// What the summary is stored against (SetCompactionIf): the chat's
	// compaction as it is now, and the message it reaches as it is when
	// the turns are read.
	was, err := s.db.CompactionStamp(ctx, user, chatID)
	if err != nil {
		return store.Compaction{}, storeErr(err, "chat")
	}
	prev, err := s.db.ChatCompaction(ctx, user, chatID)
	if err != nil {
		return store.Compaction{}, storeErr(err, "chat")
	}
	// The path from the newest back: the first keepExchanges user turns
	// met are kept with what follows them; the message before the last of
	// them is where the summary reaches. The turns to summarise are read
	// back to the previous summary, within the model's context.
	b := requestBudget(tgt.chat, tgt.model, "", false)
	var (
		users   int
		through ids.MessageID
		picked  []ids.MessageID // newest first
		usedTok int64
		usedB   int64
	)
	err = s.db.WalkPath(ctx, user, chatID, func(e store.PathEntry) bool {
		if newest != 0 && e.ID >= newest {
			return true
		}
		if through == 0 {
			if users >= keepExchanges {
				through = e.ID
			} else {
				if e.Role == store.RoleUser {
					users++
				}
				return true
			}
		}
		if prev != nil && e.ID <= prev.Through {
			return false
		}
		if !sendable(e) {
			return true
		}
		tok, by := cost(e, false)
		if (b.context > 0 && usedTok+tok > b.tokens) || usedB+by > MaxRequestBytes {
			return false
		}
		usedTok, usedB = usedTok+tok, usedB+by
		picked = append(picked, e.ID)
		return true
	})
	if err != nil {
		return store.Compaction{}, storeErr(err, "chat")
	}
	if through == 0 || len(picked) == 0 {
		return store.Compaction{}, errNothingToCompact
	}
	made, err := s.db.MessageMade(ctx, user, chatID, through)
	if err != nil {
		return store.Compaction{}, storeErr(err, "message")
	}
	slices.Reverse(picked)
	msgs, err := s.db.PathMessages(ctx, user, chatID, picked)
	if err != nil {
		return store.Compaction{}, storeErr(err, "chat")
	}
	instruction, err := s.compactInstruction(ctx)
	if err != nil {
		return store.Compaction{}, err
	}
	var turns []llm.Message
	for _, m := range msgs {
		if m.Role == store.RoleAssistant {
			turns = append(turns, replyMessages(m)...)
			continue
		}
		turns = append(turns, llm.Message{Role: string(m.Role), Content: m.Content})
	}
	// Several templates refuse two user turns in a row, or a conversation
	// (or what follows the previous summary's pair) that starts with the
	// assistant: a leading reply is dropped (its question went before),
	// and the instruction joins a last user turn.
	for len(turns) > 0 && turns[0].Role != "user" {
		turns = turns[1:]
	}
	req := llm.ChatRequest{Model: tgt.model.UpstreamID, Params: map[string]any{}}
	if prev != nil {
		req.Messages = append(req.Messages, summaryTurns(prev.Summary)...)
	}
	req.Messages = append(req.Messages, turns...)
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == "user" {
		req.Messages[n-1].Content += "\n\n---\n\n" + instruction
	} else {
		req.Messages = append(req.Messages, llm.Message{Role: "user", Content: instruction})
	}
	cctx, cancel := context.WithTimeout(ctx, compactTimeout)
	defer cancel()
	summary, res, err := tgt.client.CompleteResult(cctx, req)
	if err != nil {
		return store.Compaction{}, err
	}
	summary = strings.TrimSpace(summary)
	if summary == "" {
		return store.Compaction{}, apperr.New(apperr.Unavailable, "the model answered with an empty summary; nothing was changed")
	}
	if err := summaryFits(summary, res.FinishReason, b.context); err != nil {
		return store.Compaction{}, err
	}
	c := store.Compaction{Summary: summary, Through: through, At: time.Now().UnixMilli()}
	if err := s.db.SetCompactionIf(ctx, user, chatID, c, was, made); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return store.Compaction{}, apperr.Wrap(apperr.Conflict, err,
				"the chat changed while its summary was written (another summary, an undo or a deleted version); nothing was changed")
		}
		return store.Compaction{}, storeErr(err, "chat")
	}
	return c, nil
}

// maxSummaryBytes bounds a summary: it stands for the earlier turns in
// every request and is drawn on every read of the chat, so an endpoint's
// answer that runs on (garbage, a loop) is refused, not stored.
const maxSummaryBytes = 64 << 10

// summaryFits refuses a summary the chat should not carry instead of its
// turns: one the model was cut off in (the length limit: its end, the
// newest of what it summarised, is missing), one past maxSummaryBytes, or
// one taking more than a quarter of a known context window.
func summaryFits(summary, finish string, window int64) error {
	switch {
	case finish == "length":
		return apperr.New(apperr.Unavailable, "the model's summary was cut off by its length limit; nothing was changed")
	case len(summary) > maxSummaryBytes || (window > 0 && tokens(int64(len(summary))) > window/4):
		return apperr.New(apperr.Unavailable, "the model's summary is longer than a summary can be (%d KB); nothing was changed", len(summary)>>10)
	}
	return nil
}

// compactInstruction is the summarising instruction: the prompts
// fragment "compact" (Settings → Prompts), or its default without them.
func (s *Service) compactInstruction(ctx context.Context) (string, error) {
	if s.prompts == nil {
		return "Summarise the conversation above so that it can continue from your summary alone. Answer with the summary only.", nil
	}
	return s.prompts.Text(ctx, "compact")
}

// summaryTurns carry a summary in a request: a user turn and an
// assistant turn, never one. A leading assistant turn breaks templates
// that want a user turn first, and a lone user turn makes user, user with
// the kept turns, which start with a user turn.
func summaryTurns(summary string) []llm.Message {
	return []llm.Message{{Role: "user", Content: summaryAsk}, {Role: "assistant", Content: summary}}
}

// compacted puts the chat's summary in place of the turns it covers: the
// history's turns up to its message go, the summary's pair comes first.
// A compaction whose message is not on the chosen path (a version switch,
// a delete) is ignored; one older than the history that fits is sent too.
func (s *Service) compacted(ctx context.Context, d *draft) error {
	if d.chat.ID == 0 {
		return nil
	}
	c, err := s.db.ChatCompaction(ctx, d.user, d.chat.ID)
	if err != nil || c == nil {
		return err
	}
	// The compaction is on the chosen path (ChatCompaction): every turn up
	// to its message goes, Send's pending turn (pendingID) never.
	cut := 0
	for cut < len(d.path) && d.path[cut].ID != pendingID && d.path[cut].ID <= c.Through {
		cut++
	}
	if cut == len(d.path) {
		// Nothing after it (a Regenerate or Continue from before it): the
		// summary would stand for the turn the request is about.
		return nil
	}
	if cut > 0 {
		// The turns left out for the window are older still: covered.
		d.path, d.omitted = d.path[cut:], 0
	} else if d.omitted > 0 {
		// The window left out turns back past the summary's message: the
		// ones up to it are covered (every turn older than the history is
		// left out, so they are all among the omitted), the rest between
		// it and the history are not. Counted, or an automatic compaction
		// would see turns left out after every compaction and run again.
		covered, err := s.db.CountTurns(ctx, d.user, d.chat.ID, c.Through)
		if err != nil {
			return storeErr(err, "chat")
		}
		d.omitted = max(d.omitted-covered, 0)
	}
	// The kept turns start with a user turn (the summary's pair ends with
	// the assistant).
	for len(d.path) > 1 && d.path[0].Role != store.RoleUser {
		d.path = d.path[1:]
	}
	d.req.Messages = append(d.req.Messages, summaryTurns(c.Summary)...)
	d.summarised = true
	return nil
}

// Context is what the chat's next request will take: the last reply's
// token count when the endpoint gave one and nothing changed since, else
// an estimate (4 characters a token); Limit 0 when the window is unknown.
type Context struct {
	Used      int64 `json:"used"`
	Limit     int64 `json:"limit"`
	Estimated bool  `json:"estimated"`
}

// ContextUse estimates the chat's next request from its chosen path,
// without reading its text: the turns back to the compaction's message
// (or the request's byte bound), its summary and the system prompt.
//
// After a compaction that no reply followed, the last reply's exact
// count is scaled by the estimate's share that the compaction left
// rather than replaced by the bare estimate: the two are not on one
// scale (a tokenizer is not 4 characters a token), and the meter's
// "before → after" went up (99 → ~432) after a compaction that shrank
// the request.
func (s *Service) ContextUse(ctx context.Context, user ids.UserID, chat store.Chat, c *store.Compaction) (Context, error) {
	var out Context
	if chat.ModelID != nil {
		if m, err := s.db.ModelByID(ctx, user, *chat.ModelID); err == nil {
			out.Limit = max(m.ContextLength, 0)
			chat.SystemPrompt = firstNonEmpty(chat.SystemPrompt, m.SystemPrompt)
		}
	}
	// chars is the request as sent (after the compaction), full as it
	// would be without it.
	chars := int64(len(chat.SystemPrompt))
	full := chars
	if c != nil {
		chars += int64(len(summaryAsk) + len(c.Summary))
	}
	var newest store.PathEntry
	err := s.db.WalkPath(ctx, user, chat.ID, func(e store.PathEntry) bool {
		if newest.ID == 0 {
			newest = e
		}
		var n int64
		if sendable(e) {
			n = e.Bytes + e.DocBytes
		}
		covered := c != nil && e.ID <= c.Through
		if !covered && chars < MaxRequestBytes {
			chars += n
		}
		if full < MaxRequestBytes {
			full += n
		}
		return full < MaxRequestBytes || (!covered && chars < MaxRequestBytes)
	})
	if err != nil {
		return Context{}, storeErr(err, "chat")
	}
	out.Used, out.Estimated = (chars+charsPerToken-1)/charsPerToken, true
	n, at, ok := s.lastUsage(ctx, user, chat.ID, newest)
	switch {
	case ok && (c == nil || at > c.At):
		out.Used, out.Estimated = n, false
	case ok && full > 0:
		out.Used = (n*chars + full - 1) / full
	}
	return out, nil
}

// lastUsage is the token count the endpoint gave for the chat's newest
// message, a finished reply, and when it was written: its prompt and its
// answer are what the next request starts from.
func (s *Service) lastUsage(ctx context.Context, user ids.UserID, chatID ids.ChatID, newest store.PathEntry) (int64, int64, bool) {
	if newest.Role != store.RoleAssistant || newest.Status != store.StatusFinal {
		return 0, 0, false
	}
	msgs, err := s.db.PathMessages(ctx, user, chatID, []ids.MessageID{newest.ID})
	if err != nil || len(msgs) != 1 {
		return 0, 0, false
	}
	var m struct {
		PromptTokens     *int64 `json:"promptTokens"`
		CompletionTokens *int64 `json:"completionTokens"`
		Estimated        bool   `json:"estimated"`
	}
	if json.Unmarshal(msgs[0].Metrics, &m) != nil || m.Estimated || m.PromptTokens == nil || m.CompletionTokens == nil {
		return 0, 0, false
	}
	return *m.PromptTokens + *m.CompletionTokens, msgs[0].UpdatedAt, true
}

// overWindow says whether d's request is near a known context window:
// it had to leave earlier turns out, or its turns (estimated as the
// history counts them) take more than autoCompactShare of the window. An
// unknown window (0) never is. The left-out test matters for small
// windows: the history is cut to what fits first and the reply keeps
// min(4096, a quarter) of the window, so below about 40,000 tokens the
// share alone is never reached, and an 8k local model would only ever
// drop its oldest turns.
func overWindow(d *draft) bool {
	limit := d.model.ContextLength
	if limit <= 0 {
		return false
	}
	if d.omitted > 0 {
		return true
	}
	var n int64
	for _, m := range d.req.Messages {
		b := int64(len(m.Content))
		for _, p := range m.Parts {
			b += int64(len(p.Text))
		}
		n += tokens(b) + turnTokens
	}
	return float64(n) > autoCompactShare*float64(limit)
}

// autoCompactNotice opens a reply that a compaction came before.
const autoCompactNotice = "The conversation was near the model's context limit, so its earlier turns were summarised first (Undo on the summary sends them again)."

// compactFirst is the producer of a Send's reply whose request would
// fill a known window: before its first round it summarises the turns
// before turn (the new user turn, which it never counts or covers) and
// builds the request again, then hands every round to the producer of
// that request. A compaction that fails (or finds nothing to summarise)
// leaves the reply to fallback, the request as Send built it: the newest
// turns that fit. It runs in the reply, so Stop ends the summary too, and
// neither Send nor the chat's lock waits on it.
type compactFirst struct {
	s        *Service
	user     ids.UserID
	turn     ids.MessageID
	tgt      target
	fallback generation.Producer
	next     generation.Producer
}

// compactActivity is the reply's activity line while the summary is written.
const compactActivity = "Summarising the earlier turns first…"

func (p *compactFirst) Round(ctx context.Context, out *generation.Output) (generation.Round, error) {
	if p.next == nil {
		p.next = p.fallback
		out.SetActivity(compactActivity)
		next, err := p.compact(ctx)
		out.SetActivity("")
		switch {
		case ctx.Err() != nil:
			return generation.Round{}, ctx.Err()
		case err == nil:
			// The chat's views draw the summary block (Chats.Get).
			p.s.Notify(p.user, p.tgt.chat.ID, "updated")
			if err := out.Add(store.Part{Kind: store.PartNotice, Text: autoCompactNotice}); err != nil {
				return generation.Round{}, err
			}
			out.Retarget(next.req, next.omitted)
			p.next = p.s.producer(ctx, next)
		default:
			if err != errNothingToCompact {
				p.s.log.Warn("automatic compaction failed; sending the newest turns that fit", "chat", p.tgt.chat.ID, "err", err)
			}
			// The turns left out are left out after all: the reply says so.
			out.Retarget(p.tgt.req, p.tgt.omitted)
		}
	}
	return p.next.Round(ctx, out)
}

// compact summarises and returns the target with its request built again
// from the new turn back.
func (p *compactFirst) compact(ctx context.Context) (target, error) {
	if _, err := p.s.compact(ctx, p.user, p.tgt, p.turn); err != nil {
		return target{}, err
	}
	return p.s.withRequest(ctx, p.user, p.tgt, p.turn, nil, nil)
}
