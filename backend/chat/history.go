package chat

import (
	"context"
	"fmt"
	"slices"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// How much history a request carries. Estimates are deliberately
// conservative (bytes/3, where the figure under a reply uses chars/4):
// tokenisers give code and non-Latin scripts more tokens per byte, and a
// request that overflows the context fails outright.
const (
	bytesPerToken = 3
	// turnTokens is what a chat template adds around each turn.
	turnTokens = 8
	// imagePatch is the pixels one vision token covers (28 × 28, as
	// Qwen-VL tiles an image); minImageTokens is the least an image costs.
	imagePatch     = 28 * 28
	minImageTokens = 256
	// replyReserve is what is kept for the reply when neither the chat
	// nor the model sets max_tokens (at most a quarter of the context).
	replyReserve = 4096
	// continueTokens is kept for the nudge that ends a Continue request.
	continueTokens = 32
	// MaxRequestBytes bounds the text and image data of one request
	// whatever the context length, known or not: turns beyond it are not
	// sent, so building a request never holds a whole long chat.
	MaxRequestBytes = 16 << 20
)

// tokens estimates the tokens of n bytes of text.
func tokens(n int64) int64 { return (n + bytesPerToken - 1) / bytesPerToken }

// budget is what the history of one request may take.
type budget struct {
	// context is the model's context length; 0 when unknown (then only
	// MaxRequestBytes bounds the history).
	context int64
	// tokens is what is left for the turns once the reply, the system
	// prompt and the continue nudge have their room.
	tokens int64
}

// requestBudget computes the budget of a request to model from chat.
func requestBudget(chat store.Chat, model store.Model, system string, cont bool) budget {
	b := budget{context: model.ContextLength}
	if b.context <= 0 {
		b.context = 0
		return b
	}
	reserve := min(int64(replyReserve), b.context/4)
	for _, p := range []*int64{model.Params.MaxTokens, chat.Params.MaxTokens} {
		if p != nil && *p > 0 {
			reserve = *p
		}
	}
	b.tokens = b.context - reserve - tokens(int64(len(system))) - turnTokens
	if cont {
		b.tokens -= continueTokens
	}
	return b
}

// sendable says whether the turns contributor would send the path entry.
func sendable(e store.PathEntry) bool {
	switch e.Role {
	case store.RoleUser:
		return true
	case store.RoleAssistant:
		return e.Status != store.StatusStreaming && e.Bytes > 0
	}
	return false
}

// cost is what a path entry adds to a request: estimated tokens, and
// bytes in memory (images travel as base64 data URIs, for vision models
// only).
func cost(e store.PathEntry, vision bool) (tok, bytes int64) {
	bytes = e.Bytes + e.DocBytes
	tok = tokens(bytes) + turnTokens
	if e.Images > 0 {
		if vision {
			tok += max(int64(e.Images)*minImageTokens, e.ImagePixels/imagePatch)
			bytes += (e.ImageBytes+2)/3*4 + int64(e.Images)*64
		} else {
			tok += int64(e.Images) * 32 // "[An image … cannot see images.]"
		}
	}
	return tok, bytes
}

// newTurn is Send's user turn before it is stored: its request is built
// first, so that the turn and the reply row are written in one transaction
// and a turn that cannot fit is refused with nothing stored.
type newTurn struct {
	content string
	files   []store.Attachment
}

// pendingID stands for the newTurn in a built history (no stored message
// has id 0).
const pendingID ids.MessageID = 0

// entry describes the turn as WalkPath describes a stored one.
func (n *newTurn) entry() store.PathEntry {
	e := fileEntry(n.files)
	e.ID, e.Role, e.Status, e.Bytes = pendingID, store.RoleUser, store.StatusFinal, int64(len(n.content))
	return e
}

// history is the part of a chat's path a request carries.
type history struct {
	msgs    []store.Message // oldest first
	omitted int             // earlier turns left out
}

// selectHistory reads the chat's path from message from back (0: from the
// newest) and keeps the turns that fit b, stopping at the first that does
// not; the rest are counted, not read. The newest message must fit: if it
// does not, the error says so. The kept history starts with a user turn
// (chat templates expect one first).
//
// pending, if set, is a turn not stored yet that comes after the path: it
// is the newest, and the history ends with it (its id is pendingID). A new
// chat (chatID 0) has no path.
func (s *Service) selectHistory(ctx context.Context, user ids.UserID, chatID ids.ChatID, from ids.MessageID, b budget, vision bool, pending *newTurn) (history, error) {
	var (
		keep           []ids.MessageID // newest first
		roles          []store.Role
		usedTok, usedB int64
		stop           ids.MessageID // the first message left out
		tooBig         error
	)
	add := func(e store.PathEntry) bool {
		if !sendable(e) {
			return true
		}
		tok, by := cost(e, vision)
		if (b.context > 0 && usedTok+tok > b.tokens) || usedB+by > MaxRequestBytes {
			if len(keep) == 0 {
				tooBig = turnTooLarge(e, tok, by, b, vision)
			}
			stop = e.ID
			return false
		}
		usedTok, usedB = usedTok+tok, usedB+by
		keep = append(keep, e.ID)
		roles = append(roles, e.Role)
		return true
	}
	more := true
	if pending != nil {
		more = add(pending.entry())
	}
	if more && chatID != 0 {
		if err := s.db.WalkPathFrom(ctx, user, chatID, from, add); err != nil {
			return history{}, storeErr(err, "chat")
		}
	}
	if tooBig != nil {
		return history{}, tooBig
	}
	var h history
	if stop != 0 {
		var err error
		if h.omitted, err = s.db.CountTurns(ctx, user, chatID, stop); err != nil {
			return history{}, err
		}
		// A reply whose question was left out goes too (never the newest
		// message: it is what the request is about).
		for len(keep) > 1 && roles[len(roles)-1] != store.RoleUser {
			keep, roles = keep[:len(keep)-1], roles[:len(roles)-1]
			h.omitted++
		}
	}
	slices.Reverse(keep)
	stored := keep
	if pending != nil {
		stored = keep[:len(keep)-1]
	}
	if len(stored) > 0 {
		var err error
		if h.msgs, err = s.db.PathMessages(ctx, user, chatID, stored); err != nil {
			return history{}, storeErr(err, "chat")
		}
	}
	if pending != nil {
		h.msgs = append(h.msgs, store.Message{ID: pendingID, ChatID: chatID, Role: store.RoleUser,
			Content: pending.content, Status: store.StatusFinal})
	}
	return h, nil
}

// turnTooLarge is the error for a newest turn e that cannot fit on its
// own (tok and by its cost), with the share of its files when it has any.
func turnTooLarge(e store.PathEntry, tok, by int64, b budget, vision bool) error {
	what := "This message"
	if e.Role == store.RoleAssistant {
		what = "The reply to continue"
	}
	bare := e
	bare.DocBytes, bare.Images, bare.ImageBytes, bare.ImagePixels = 0, 0, 0, 0
	textTok, textBy := cost(bare, vision)
	if b.context > 0 && by <= MaxRequestBytes {
		with := "with its files"
		if tok > textTok {
			with = fmt.Sprintf("%d of them its files", tok-textTok)
		}
		return apperr.New(apperr.Invalid,
			"%s is too long for the model: about %d tokens, %s, and the model's context of %d tokens leaves %d once the reply and the system prompt have their room. Shorten it or attach less.",
			what, tok, with, b.context, max(b.tokens, 0))
	}
	with := "with its files"
	if by > textBy {
		with = fmt.Sprintf("%s of it its files", sizeMB(by-textBy))
	}
	return apperr.New(apperr.Invalid, "%s is too large to send: %s, %s; the limit is %s.",
		what, sizeMB(by), with, sizeMB(MaxRequestBytes))
}

func sizeMB(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }

// checkFits refuses, before anything is stored, a user turn whose text
// and files (estimated as the request will count them, by fileEntry)
// cannot fit the model's context on their own.
func (s *Service) checkFits(ctx context.Context, chat store.Chat, model store.Model, content string, files []store.Attachment) error {
	instancePrompt, _, err := s.db.Setting(ctx, "system_prompt")
	if err != nil {
		return err
	}
	b := requestBudget(chat, model, firstNonEmpty(chat.SystemPrompt, model.SystemPrompt, instancePrompt), false)
	e := fileEntry(files)
	e.Role, e.Bytes = store.RoleUser, int64(len(content))
	vision := model.Capabilities.Vision
	if tok, by := cost(e, vision); (b.context > 0 && tok > b.tokens) || by > MaxRequestBytes {
		return turnTooLarge(e, tok, by, b, vision)
	}
	return nil
}

// fileEntry is a path entry carrying files' sizes as the store's path walk
// sums them (store.PathEntry): the text of documents, the stored size and
// pixels of images.
func fileEntry(files []store.Attachment) store.PathEntry {
	var e store.PathEntry
	for _, a := range files {
		if a.Kind == "image" {
			e.Images++
			e.ImageBytes += a.Size
			e.ImagePixels += int64(a.Width) * int64(a.Height)
		} else {
			e.DocBytes += int64(len(a.Text))
		}
	}
	return e
}
