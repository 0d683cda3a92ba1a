package chat

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// The export formats.
const (
	ExportMarkdown = "markdown"
	ExportJSON     = "json"
)

// ExportVersion is the version of the JSON export's shape (docs/API.md):
// raised when a field changes meaning or goes; new fields may appear
// without it.
const ExportVersion = 1

// exportBatch is how many messages an export reads at a time.
const exportBatch = 64

// Export is one chat ready to be written out: checked (the chat is the
// caller's, the format known) before anything is written, so that an
// error can still be an error response; Write then streams it.
type Export struct {
	// Name is a file name for it, made from the title (no path
	// characters), with the format's extension.
	Name string
	// MIME is the file's content type.
	MIME string

	s      *Service
	user   ids.UserID
	format string
	chat   store.Chat
	model  string
	path   []ids.MessageID
	now    time.Time
}

// Export prepares the export of one of the user's chats in format
// (ExportMarkdown or ExportJSON). Only the chosen path (chats.leaf_id) is
// exported, and the real turns, never the compaction's summary in their
// place. Another person's chat is NotFound.
func (s *Service) Export(ctx context.Context, user ids.UserID, chatID ids.ChatID, format string) (*Export, error) {
	e := &Export{s: s, user: user, format: format, now: time.Now().UTC()}
	switch format {
	case ExportMarkdown:
		e.MIME = "text/markdown; charset=utf-8"
	case ExportJSON:
		e.MIME = "application/json"
	default:
		return nil, apperr.New(apperr.Invalid, "export as %q: use %s or %s", format, ExportMarkdown, ExportJSON)
	}
	ch, err := s.db.ChatByID(ctx, user, chatID)
	if err != nil {
		return nil, storeErr(err, "chat")
	}
	e.chat = ch
	if ch.ModelID != nil {
		if m, err := s.db.ModelByID(ctx, user, *ch.ModelID); err == nil {
			e.model = modelName(m)
		}
	}
	if e.path, err = s.db.PathIDs(ctx, user, chatID); err != nil {
		return nil, storeErr(err, "chat")
	}
	e.Name = ExportName(ch.Title, format)
	return e, nil
}

// ExportName is a file name for an export of a chat titled title: the
// title without path characters, control characters or leading dots,
// shortened, "chat" when nothing is left, and the format's extension.
func ExportName(title, format string) string {
	ext := ".md"
	if format == ExportJSON {
		ext = ".json"
	}
	title = strings.ToValidUTF8(title, "")
	title = strings.Map(func(r rune) rune {
		switch {
		case strings.ContainsRune(`/\:*?"<>|`, r):
			return '-'
		case unicode.IsSpace(r):
			return ' '
		case unicode.IsControl(r), unicode.Is(unicode.Bidi_Control, r), r == '\uFEFF':
			return -1
		}
		return r
	}, title)
	title = strings.Join(strings.Fields(title), " ")
	title = strings.TrimLeft(title, ". -")
	title = strings.TrimRight(title, ". ")
	const max = 80
	if len(title) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(title[cut]) {
			cut--
		}
		title = strings.TrimRight(title[:cut], ". ")
	}
	if title == "" {
		title = "chat"
	}
	return title + ext
}

// Write writes the export to w, reading the path's messages a batch at a
// time: memory does not grow with the chat. A message deleted since
// Export was called is left out.
func (e *Export) Write(ctx context.Context, w io.Writer) error {
	bw := bufio.NewWriterSize(w, 32<<10)
	var err error
	if e.format == ExportJSON {
		err = e.writeJSON(ctx, bw)
	} else {
		err = e.writeMarkdown(ctx, bw)
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

// each calls fn for every message of the path, oldest first, with the
// files of the user turns.
func (e *Export) each(ctx context.Context, fn func(store.Message, []store.Attachment) error) error {
	for start := 0; start < len(e.path); start += exportBatch {
		msgs, err := e.s.db.MessagesByIDs(ctx, e.user, e.chat.ID, e.path[start:min(start+exportBatch, len(e.path))])
		if err != nil {
			return err
		}
		var turns []ids.MessageID
		for _, m := range msgs {
			if m.Role == store.RoleUser {
				turns = append(turns, m.ID)
			}
		}
		files, err := e.s.db.AttachmentsOf(ctx, e.user, turns)
		if err != nil {
			return err
		}
		for _, m := range msgs {
			if err := fn(m, files[m.ID]); err != nil {
				return err
			}
		}
	}
	return nil
}

func exportTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format(time.RFC3339)
}

// ---------- JSON ----------

// ExportedChat is the JSON export's head (docs/API.md, "Chat export").
type ExportedChat struct {
	Format     string `json:"format"` // always "lembas.chat"
	Version    int    `json:"version"`
	ExportedAt string `json:"exportedAt"`
	Chat       struct {
		ID           ids.ChatID `json:"id"`
		Title        string     `json:"title"`
		Kind         string     `json:"kind"`
		Model        string     `json:"model"`
		SystemPrompt string     `json:"systemPrompt"`
		CreatedAt    string     `json:"createdAt"`
		UpdatedAt    string     `json:"updatedAt"`
	} `json:"chat"`
	Messages []ExportedMessage `json:"messages"`
}

// ExportedMessage is one message of the JSON export.
type ExportedMessage struct {
	ID       ids.MessageID  `json:"id"`
	ParentID *ids.MessageID `json:"parentId"`
	Role     store.Role     `json:"role"`
	// Model is the model's name when the reply was made (replies only).
	Model     string       `json:"model,omitempty"`
	Status    store.Status `json:"status"`
	Error     string       `json:"error,omitempty"`
	CreatedAt string       `json:"createdAt"`
	// Content is the message's text (a reply's text parts as one
	// Markdown text), Reasoning the model's reasoning.
	Content     string         `json:"content"`
	Reasoning   string         `json:"reasoning,omitempty"`
	Parts       []store.Part   `json:"parts"`
	Attachments []ExportedFile `json:"attachments"`
}

// ExportedFile is a file attached to a user turn, by name (the bytes are
// not in the export).
type ExportedFile struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	MIME string `json:"mime"`
	Size int64  `json:"size"`
}

func (e *Export) writeJSON(ctx context.Context, w io.Writer) error {
	var head ExportedChat
	head.Format, head.Version, head.ExportedAt = "lembas.chat", ExportVersion, e.now.Format(time.RFC3339)
	c := &head.Chat
	c.ID, c.Title, c.Model, c.SystemPrompt = e.chat.ID, e.chat.Title, e.model, e.chat.SystemPrompt
	c.Kind = string(e.chat.Kind)
	if c.Kind == "" {
		c.Kind = string(store.ChatPlain)
	}
	c.CreatedAt, c.UpdatedAt = exportTime(e.chat.CreatedAt), exportTime(e.chat.UpdatedAt)
	b, err := json.Marshal(head)
	if err != nil {
		return err
	}
	// The head without its closing brace and empty list, then the
	// messages one at a time.
	open := strings.TrimSuffix(string(b), `"messages":null}`)
	if _, err := io.WriteString(w, open+"\"messages\":[\n"); err != nil {
		return err
	}
	first := true
	err = e.each(ctx, func(m store.Message, files []store.Attachment) error {
		parts := m.Parts()
		x := ExportedMessage{ID: m.ID, ParentID: m.ParentID, Role: m.Role, Status: m.Status, Error: m.Error,
			CreatedAt: exportTime(m.CreatedAt), Content: m.Content, Reasoning: m.Reasoning, Parts: parts,
			Attachments: []ExportedFile{}}
		if m.Role == store.RoleAssistant {
			x.Model = m.ModelLabel
			x.Content = store.ReplyText(parts)
		}
		for _, f := range files {
			x.Attachments = append(x.Attachments, ExportedFile{Name: f.DisplayName, Kind: f.Kind, MIME: f.MIME, Size: f.Size})
		}
		b, err := json.Marshal(x)
		if err != nil {
			return err
		}
		if !first {
			if _, err := io.WriteString(w, ",\n"); err != nil {
				return err
			}
		}
		first = false
		_, err = w.Write(b)
		return err
	})
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, "\n]}\n")
	return err
}

// ---------- Markdown ----------

// writeMarkdown writes the chat for reading: the title, model and dates,
// then each turn under its role's heading. Reasoning is left out (it is
// in the JSON export), tool calls are one line each, files are listed by
// name.
func (e *Export) writeMarkdown(ctx context.Context, w io.Writer) error {
	var b strings.Builder
	b.WriteString("# " + mdText(oneLine(e.chat.Title, "Chat")) + "\n\n")
	if e.model != "" {
		b.WriteString("- Model: " + mdText(oneLine(e.model, "")) + "\n")
	}
	b.WriteString("- Created: " + mdTime(e.chat.CreatedAt) + "\n")
	b.WriteString("- Exported: " + e.now.Format("2006-01-02 15:04 UTC") + "\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return e.each(ctx, func(m store.Message, files []store.Attachment) error {
		var b strings.Builder
		b.WriteString("\n---\n\n## ")
		switch m.Role {
		case store.RoleUser:
			b.WriteString("User")
		case store.RoleAssistant:
			b.WriteString("Assistant")
			if m.ModelLabel != "" {
				b.WriteString(" (" + mdText(oneLine(m.ModelLabel, "")) + ")")
			}
		case store.RoleSystem:
			b.WriteString("System")
		default:
			b.WriteString("Tool")
		}
		b.WriteString("\n\n")
		if m.Role == store.RoleAssistant {
			replyMarkdown(&b, m.Parts())
		} else {
			writeBlock(&b, m.Content)
		}
		if len(files) > 0 {
			names := make([]string, len(files))
			for i, f := range files {
				names[i] = codeSpan(oneLine(f.DisplayName, "file"))
			}
			b.WriteString("Attached: " + strings.Join(names, ", ") + "\n\n")
		}
		if note := statusNote(m); note != "" {
			b.WriteString("*" + note + "*\n\n")
		}
		s := strings.TrimRight(b.String(), "\n") + "\n"
		_, err := io.WriteString(w, s)
		return err
	})
}

// replyMarkdown writes a reply's parts in order: its text, a line per tool
// call (the name, its arguments shortened) and per result (its size, or
// why it failed), pauses and notices as quotes; reasoning is left out.
func replyMarkdown(b *strings.Builder, parts []store.Part) {
	for _, p := range parts {
		switch p.Kind {
		case store.PartText:
			writeBlock(b, p.Text)
		case store.PartToolCall:
			b.WriteString("> Tool call: " + codeSpan(oneLine(p.Name, "tool")))
			if args := shorten(oneLine(p.Text, ""), 160); args != "" && args != "{}" {
				b.WriteString(" " + codeSpan(args))
			}
			b.WriteString("\n\n")
		case store.PartToolResult:
			if p.Error {
				b.WriteString("> Tool failed: " + mdEscape(shorten(oneLine(p.Text, ""), 160)) + "\n\n")
			} else {
				fmt.Fprintf(b, "> Tool result: %d characters\n\n", utf8.RuneCountInString(p.Text))
			}
		case store.PartPause, store.PartNotice:
			if t := oneLine(p.Text, ""); t != "" {
				b.WriteString("> " + mdEscape(t) + "\n\n")
			}
		}
	}
}

// writeBlock writes Markdown text as a block of its own.
func writeBlock(b *strings.Builder, text string) {
	text = strings.Trim(text, "\n")
	if strings.TrimSpace(text) == "" {
		return
	}
	b.WriteString(text)
	if fence := openFence(text); fence != "" {
		// A reply stopped inside a code block: close it, or every turn
		// after it would read as code.
		b.WriteString("\n" + fence)
	}
	b.WriteString("\n\n")
}

// openFence returns the fence that closes a code block text leaves open
// (CommonMark: a line of three or more backticks or tildes, indented at
// most three spaces, closed by a longer or equal run of the same
// character with nothing after it), or "".
func openFence(text string) string {
	open := ""
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimLeft(line, " ")
		if len(line)-len(t) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
			continue
		}
		n := len(t) - len(strings.TrimLeft(t, t[:1]))
		if n < 3 {
			continue
		}
		run, rest := t[:n], t[n:]
		if open == "" {
			if t[0] == '`' && strings.Contains(rest, "`") {
				continue // not a fence: backticks in the info string
			}
			open = run
		} else if run[0] == open[0] && n >= len(open) && strings.TrimSpace(rest) == "" {
			open = ""
		}
	}
	return open
}

func statusNote(m store.Message) string {
	switch m.Status {
	case store.StatusStopped:
		return "Stopped before the end."
	case store.StatusLength:
		return "Cut off at the length limit."
	case store.StatusInterrupted:
		return "Interrupted."
	case store.StatusStreaming:
		return "Still being written when this was exported."
	case store.StatusError:
		if m.Error != "" {
			return "Failed: " + mdEscape(shorten(oneLine(m.Error, ""), 200))
		}
		return "Failed."
	}
	return ""
}

func mdTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02 15:04 UTC")
}

// oneLine is s on one line (runs of white space one space), or def when
// nothing is left.
func oneLine(s, def string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return def
	}
	return s
}

// shorten cuts s to at most n characters, marking the cut.
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// codeSpan is s as a Markdown code span, whatever backticks it holds.
func codeSpan(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if longest > 0 || strings.HasPrefix(s, " ") || strings.HasSuffix(s, " ") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// mdText keeps a name (a title, a model's) plain in Markdown without
// cluttering it: what could start a link, an image, emphasis, code or raw
// HTML is escaped; other punctuation stays as it is.
func mdText(s string) string { return backslashed(s, "\\`*_[]<>&!") }

// mdEscape makes plain text read as text in Markdown: its punctuation
// escaped, so a tool's error cannot open a link, an image or raw HTML.
func mdEscape(s string) string { return backslashed(s, "\\`*_{}[]()<>#+-.!|~&") }

// backslashed puts a backslash before each rune of s that is in set.
func backslashed(s, set string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(set, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
