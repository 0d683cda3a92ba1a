package library

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/tools"
)

// The library's tools, as offered to models. Their names are claimed
// (tools.Fixed): no custom tool or MCP tool takes one.
const (
	NameKnowledgeSearch = "knowledge_search"
	NameNotesSearch     = "notes_search"
	NameNotesRead       = "notes_read"
	NameNotesWrite      = "notes_write"
	NameMemoryAdd       = "memory_add"
	NameMemoryForget    = "memory_forget"
	NameSkillRead       = "skill_read"
)

// MaxNoteRead bounds the text of a note notes_read returns: a note may
// hold 256 KiB, which would fill most models' context in one result.
const MaxNoteRead = 48 << 10

// Knowledge search hits: how many a call gets unless it asks (and at
// most), and notes listed by notes_search.
const (
	defaultToolHits = 5
	maxToolHits     = 10
	toolNotes       = 10
)

// Sources returns the library as four tool sources, one per family
// (knowledge, notes, memory, skills), so that each is switched on and off
// by its own gate. Every tool acts for the call's caller only, through
// the service's methods, so store.Visible decides what it may read.
func (s *Service) Sources() []tools.Source {
	return []tools.Source{
		&source{gate: tools.FamilyKnowledge, tools: s.knowledgeTools, catalog: func() []tools.Tool { return s.knowledgeDefs(Scope{}) }},
		&source{gate: tools.FamilyNotes, tools: s.notesTools, catalog: s.notesDefs},
		&source{gate: tools.FamilyMemory, tools: s.memoryTools, catalog: s.memoryDefs},
		&source{gate: tools.FamilySkills, tools: s.skillTools, catalog: s.skillDefs},
	}
}

// source is one family of the library's tools: tools decides what caller
// is offered in chat; catalog is every tool of the family, as pages list
// them (and whose names are claimed).
type source struct {
	gate    tools.Family
	tools   func(ctx context.Context, caller auth.Caller, chat store.Chat) ([]tools.Tool, error)
	catalog func() []tools.Tool
}

var (
	_ tools.Source = (*source)(nil)
	_ tools.Fixed  = (*source)(nil)
)

func (src *source) Gate() tools.Family    { return src.gate }
func (src *source) Catalog() []tools.Tool { return src.catalog() }

// Tools returns the family's tools for caller in chat (none without
// library.use). The library's tools carry no guidance of their own: their
// harness fragments are built-in (backend/prompts).
func (src *source) Tools(ctx context.Context, caller auth.Caller, chat store.Chat, _ func(string) bool) ([]tools.Tool, []tools.Guidance, error) {
	if !caller.Perms.Has(auth.LibraryUse) {
		return nil, nil, nil
	}
	ts, err := src.tools(ctx, caller, chat)
	return ts, nil, err
}

// chatScope is the knowledge scope of a reply in chat: a new chat's from
// its settings (it is not stored yet), a stored one's from the database,
// and everything visible when there is no chat (a preview).
func (s *Service) chatScope(ctx context.Context, user ids.UserID, chat store.Chat) (Scope, error) {
	switch {
	case chat.Knowledge != nil:
		return Scope{Scoped: chat.Knowledge.Scoped, Bases: chat.Knowledge.Bases}, nil
	case chat.ID == 0:
		return Scope{}, nil
	}
	sc, _, err := s.ChatScope(ctx, user, chat.ID)
	return sc, err
}

// scopeBases returns the bases a search in scope reads that user can see,
// and the bases user can see at all.
func (s *Service) scopeBases(ctx context.Context, user ids.UserID, scope Scope) (in, all []store.KnowledgeBase, err error) {
	all, err = s.Bases(ctx, user)
	if err != nil {
		return nil, nil, err
	}
	if !scope.Scoped {
		return all, all, nil
	}
	for _, b := range all {
		for _, id := range scope.Bases {
			if b.ID == id {
				in = append(in, b)
				break
			}
		}
	}
	return in, all, nil
}

// knowledgeTools offers knowledge_search when caller can see any base:
// the harness says which of them the chat may search, so that the model
// can tell "nothing about this" from "not allowed to look".
func (s *Service) knowledgeTools(ctx context.Context, caller auth.Caller, chat store.Chat) ([]tools.Tool, error) {
	scope, err := s.chatScope(ctx, caller.User, chat)
	if err != nil {
		return nil, err
	}
	bases, err := s.Bases(ctx, caller.User)
	if err != nil || len(bases) == 0 {
		return nil, err
	}
	return s.knowledgeDefs(scope), nil
}

// knowledgeDefs is knowledge_search searching scope.
func (s *Service) knowledgeDefs(scope Scope) []tools.Tool {
	return []tools.Tool{{
		Name: NameKnowledgeSearch, Family: tools.FamilyKnowledge, Permission: auth.LibraryUse, Risk: tools.RiskRead,
		Description: "Search the documents in the person's knowledge bases that this chat may read (full-text, best match first). " +
			"Returns numbered passages, each headed by its document, its knowledge base and its part number.",
		Parameters: schema(`{"type":"object","properties":{` +
			`"query":{"type":"string","description":"Words to look for in the documents"},` +
			`"limit":{"type":"integer","minimum":1,"maximum":10,"description":"How many passages (1-10, default 5)"}},` +
			`"required":["query"],"additionalProperties":false}`),
		Activity: func(args json.RawMessage) string {
			var a struct{ Query string }
			_ = json.Unmarshal(args, &a)
			return "Searching the knowledge bases for “" + clip(a.Query, 80) + "”"
		},
		Run: func(ctx context.Context, c tools.Call) tools.Result {
			var a struct {
				Query *string `json:"query"`
				Limit *int    `json:"limit"`
			}
			if r, ok := decode(c.Arguments, &a, `"query" (text) and optionally "limit" (a number)`); !ok {
				return r
			}
			if a.Query == nil || strings.TrimSpace(*a.Query) == "" {
				return failed(`"query" must be non-empty text.`)
			}
			n := defaultToolHits
			if a.Limit != nil {
				if *a.Limit < 1 || *a.Limit > maxToolHits {
					return failed(fmt.Sprintf(`"limit" is 1 to %d.`, maxToolHits))
				}
				n = *a.Limit
			}
			return s.runKnowledgeSearch(ctx, c.Caller.User, scope, *a.Query, n)
		},
	}}
}

// runKnowledgeSearch searches scope for user and formats the passages.
func (s *Service) runKnowledgeSearch(ctx context.Context, user ids.UserID, scope Scope, query string, n int) tools.Result {
	in, _, err := s.scopeBases(ctx, user, scope)
	if err != nil {
		return s.failure(err, "search the knowledge bases")
	}
	if len(in) == 0 {
		if scope.Scoped {
			return tools.Result{Text: "The knowledge bases chosen for this chat are no longer available, so there is nothing to search."}
		}
		return tools.Result{Text: "There are no knowledge bases to search."}
	}
	hits, err := s.Search(ctx, user, scope, query, n)
	if err != nil {
		return s.failure(err, "search the knowledge bases")
	}
	if len(hits) == 0 {
		return tools.Result{Text: fmt.Sprintf("No results for “%s” in %s.", oneLine(query), baseNames(in))}
	}
	var b strings.Builder
	for i, h := range hits {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "[%d] %s — %s (part %d)\n%s", i+1, oneLine(h.DocumentName), oneLine(h.BaseName), h.Seq+1, strings.TrimSpace(h.Text))
	}
	return tools.Result{Text: b.String()}
}

// notesTools offers the notes tools: search (or list), read and write.
func (s *Service) notesTools(_ context.Context, _ auth.Caller, _ store.Chat) ([]tools.Tool, error) {
	return s.notesDefs(), nil
}

// notesDefs are the notes tools.
func (s *Service) notesDefs() []tools.Tool {
	return []tools.Tool{
		{
			Name: NameNotesSearch, Family: tools.FamilyNotes, Permission: auth.LibraryUse, Risk: tools.RiskRead,
			Description: "Search the person's notes (their own and those shared with them) by words in the title or text, best match first; " +
				"an empty query lists the most recently changed. Returns each note's id, title, owner and first lines.",
			Parameters: schema(`{"type":"object","properties":{` +
				`"query":{"type":"string","description":"Words to look for; empty lists the newest notes"}},` +
				`"required":["query"],"additionalProperties":false}`),
			Activity: func(args json.RawMessage) string {
				var a struct{ Query string }
				_ = json.Unmarshal(args, &a)
				if strings.TrimSpace(a.Query) == "" {
					return "Looking through the notes"
				}
				return "Searching the notes for “" + clip(a.Query, 80) + "”"
			},
			Run: func(ctx context.Context, c tools.Call) tools.Result {
				var a struct {
					Query *string `json:"query"`
				}
				if r, ok := decode(c.Arguments, &a, `"query" (text)`); !ok {
					return r
				}
				q := ""
				if a.Query != nil {
					q = strings.TrimSpace(*a.Query)
				}
				notes, err := s.Notes(ctx, c.Caller.User, q, toolNotes)
				if err != nil {
					return s.failure(err, "search the notes")
				}
				return tools.Result{Text: formatNotes(c.Caller.User, q, notes)}
			},
		},
		{
			Name: NameNotesRead, Family: tools.FamilyNotes, Permission: auth.LibraryUse, Risk: tools.RiskRead,
			Description: "Read one note whole by its id (from notes_search): its title, owner and Markdown text.",
			Parameters: schema(`{"type":"object","properties":{` +
				`"id":{"type":"integer","description":"The note's id"}},` +
				`"required":["id"],"additionalProperties":false}`),
			Activity: func(json.RawMessage) string { return "Reading a note" },
			Run: func(ctx context.Context, c tools.Call) tools.Result {
				id, r, ok := idArgument(c.Arguments, "note")
				if !ok {
					return r
				}
				n, err := s.Note(ctx, c.Caller.User, ids.NoteID(id))
				if err != nil {
					return s.noteFailure(err, id, "read")
				}
				body := n.Body
				if len(body) > MaxNoteRead {
					cut := MaxNoteRead
					for cut > 0 && !utf8.RuneStart(body[cut]) {
						cut--
					}
					body = body[:cut] + fmt.Sprintf("\n\n[The note goes on; it was cut here, at %d KB of %d KB.]", cut>>10, len(n.Body)>>10)
				}
				return tools.Result{Text: fmt.Sprintf("Note %d: %s\n%s\n\n%s", n.ID, oneLine(n.Title), ownership(c.Caller.User, n), body)}
			},
		},
		{
			Name: NameNotesWrite, Family: tools.FamilyNotes, Permission: auth.LibraryUse, Risk: tools.RiskWrite,
			Description: "Write a note. Without an id it creates a new note of the person's (title and body both required). " +
				"With an id it changes that note, which must be the person's own: a field left out is left as it is, " +
				"and body replaces the whole text. Notes shared by others are read-only. Returns the note's id.",
			Parameters: schema(`{"type":"object","properties":{` +
				`"id":{"type":"integer","description":"The note to change; leave out to create a note"},` +
				`"title":{"type":"string","description":"The title, one line"},` +
				`"body":{"type":"string","description":"The whole text, Markdown"}},` +
				`"additionalProperties":false}`),
			Activity: func(json.RawMessage) string { return "Writing a note" },
			Run: func(ctx context.Context, c tools.Call) tools.Result {
				var a struct {
					ID    *int64  `json:"id"`
					Title *string `json:"title"`
					Body  *string `json:"body"`
				}
				if r, ok := decode(c.Arguments, &a, `"id" (a number, to change a note), "title" and "body" (text)`); !ok {
					return r
				}
				return s.writeNote(ctx, c.Caller.User, a.ID, a.Title, a.Body)
			},
		},
	}
}

// writeNote creates a note (id nil) or changes one of user's own.
func (s *Service) writeNote(ctx context.Context, user ids.UserID, id *int64, title, body *string) tools.Result {
	if id == nil {
		if title == nil || strings.TrimSpace(*title) == "" || body == nil {
			return failed(`To create a note give "title" (non-empty) and "body"; to change a note give its "id".`)
		}
		n, err := s.CreateNote(ctx, user, *title, *body)
		if err != nil {
			return s.failure(err, "create the note")
		}
		return tools.Result{Text: fmt.Sprintf("Created note %d: %s.", n.ID, oneLine(n.Title))}
	}
	if *id <= 0 {
		return failed(`"id" must be a note's id, a positive number.`)
	}
	if title == nil && body == nil {
		return failed(`Give "title", "body" or both to change note ` + fmt.Sprint(*id) + ".")
	}
	n, err := s.Note(ctx, user, ids.NoteID(*id))
	if err != nil {
		return s.noteFailure(err, *id, "change")
	}
	if n.OwnerID != user {
		return failed(fmt.Sprintf("Note %d is shared with the person by %s for reading only; it cannot be changed. Write a new note instead.",
			n.ID, oneLine(n.OwnerName)))
	}
	n, err = s.UpdateNote(ctx, user, n.ID, NotePatch{Title: title, Body: body})
	if err != nil {
		return s.noteFailure(err, *id, "change")
	}
	return tools.Result{Text: fmt.Sprintf("Updated note %d: %s.", n.ID, oneLine(n.Title))}
}

// noteFailure is a failed result for a note that could not be read or
// changed; one the person cannot see reads as one that does not exist.
func (s *Service) noteFailure(err error, id int64, verb string) tools.Result {
	switch apperr.KindOf(err) {
	case apperr.NotFound:
		return failed(fmt.Sprintf("There is no note %d; notes_search lists the notes and their ids.", id))
	case apperr.Forbidden:
		return failed(fmt.Sprintf("Note %d is shared with the person for reading only; it cannot be changed. Write a new note instead.", id))
	}
	return s.failure(err, verb+" the note")
}

// memoryTools offers memory_add and memory_forget while the person's
// memory is on (off, memories are neither injected nor written).
func (s *Service) memoryTools(ctx context.Context, caller auth.Caller, _ store.Chat) ([]tools.Tool, error) {
	on, err := s.MemoryOn(ctx, caller.User)
	if err != nil || !on {
		return nil, err
	}
	return s.memoryDefs(), nil
}

// memoryDefs are the memory tools.
func (s *Service) memoryDefs() []tools.Tool {
	return []tools.Tool{
		{
			Name: NameMemoryAdd, Family: tools.FamilyMemory, Permission: auth.LibraryUse, Risk: tools.RiskWrite,
			Description: "Remember one short fact about the person for later conversations (at most 200 characters). " +
				"Every memory is shown to you in every chat, and the person can see and remove them. Returns the memory's id.",
			Parameters: schema(`{"type":"object","properties":{` +
				`"text":{"type":"string","description":"The fact, one short sentence"}},` +
				`"required":["text"],"additionalProperties":false}`),
			Activity: func(json.RawMessage) string { return "Remembering" },
			Run: func(ctx context.Context, c tools.Call) tools.Result {
				var a struct {
					Text *string `json:"text"`
				}
				if r, ok := decode(c.Arguments, &a, `"text" (text)`); !ok {
					return r
				}
				if a.Text == nil || strings.TrimSpace(*a.Text) == "" {
					return failed(`"text" must be non-empty text.`)
				}
				m, err := s.AddMemory(ctx, c.Caller.User, *a.Text, "model")
				if err != nil {
					return s.failure(err, "remember this")
				}
				return tools.Result{Text: fmt.Sprintf("Remembered as memory %d: %s", m.ID, oneLine(m.Text))}
			},
		},
		{
			Name: NameMemoryForget, Family: tools.FamilyMemory, Permission: auth.LibraryUse, Risk: tools.RiskWrite,
			Description: "Forget one of the person's memories by its id (the number in brackets before it in the list of memories).",
			Parameters: schema(`{"type":"object","properties":{` +
				`"id":{"type":"integer","description":"The memory's id"}},` +
				`"required":["id"],"additionalProperties":false}`),
			Activity: func(json.RawMessage) string { return "Forgetting a memory" },
			Run: func(ctx context.Context, c tools.Call) tools.Result {
				id, r, ok := idArgument(c.Arguments, "memory")
				if !ok {
					return r
				}
				if err := s.DeleteMemory(ctx, c.Caller.User, ids.MemoryID(id)); err != nil {
					if apperr.KindOf(err) == apperr.NotFound {
						return failed(fmt.Sprintf("There is no memory %d.", id))
					}
					return s.failure(err, "forget the memory")
				}
				return tools.Result{Text: fmt.Sprintf("Forgot memory %d.", id)}
			},
		},
	}
}

// skillTools offers skill_read when caller can see any skill (their
// index is in the harness).
func (s *Service) skillTools(ctx context.Context, caller auth.Caller, _ store.Chat) ([]tools.Tool, error) {
	skills, err := s.Skills(ctx, caller.User)
	if err != nil || len(skills) == 0 {
		return nil, err
	}
	return s.skillDefs(), nil
}

// skillDefs is skill_read.
func (s *Service) skillDefs() []tools.Tool {
	return []tools.Tool{{
		Name: NameSkillRead, Family: tools.FamilySkills, Permission: auth.LibraryUse, Risk: tools.RiskRead,
		Description: "Read a skill's full instructions by its name, as listed in the skills index.",
		Parameters: schema(`{"type":"object","properties":{` +
			`"name":{"type":"string","description":"The skill's name"}},` +
			`"required":["name"],"additionalProperties":false}`),
		Activity: func(args json.RawMessage) string {
			var a struct{ Name string }
			_ = json.Unmarshal(args, &a)
			return "Reading the skill “" + clip(a.Name, 80) + "”"
		},
		Run: func(ctx context.Context, c tools.Call) tools.Result {
			var a struct {
				Name *string `json:"name"`
			}
			if r, ok := decode(c.Arguments, &a, `"name" (text)`); !ok {
				return r
			}
			if a.Name == nil || strings.TrimSpace(*a.Name) == "" {
				return failed(`"name" must be a skill's name.`)
			}
			return s.readSkill(ctx, c.Caller.User, strings.TrimSpace(*a.Name))
		},
	}}
}

// readSkill returns the skill user can see named name (their own first).
func (s *Service) readSkill(ctx context.Context, user ids.UserID, name string) tools.Result {
	sk, err := s.SkillByName(ctx, user, name)
	if apperr.KindOf(err) == apperr.NotFound {
		all, lerr := s.Skills(ctx, user)
		if lerr != nil {
			return s.failure(lerr, "read the skill")
		}
		names := make([]string, 0, min(len(all), maxIndexSkills)+1)
		for _, k := range all[:min(len(all), maxIndexSkills)] {
			names = append(names, oneLine(k.Name))
		}
		if left := len(all) - len(names); left > 0 {
			names = append(names, fmt.Sprintf("and %d more", left))
		}
		return failed(fmt.Sprintf("There is no skill named “%s”. The skills are: %s.", clip(name, MaxSkillName), strings.Join(names, ", ")))
	}
	if err != nil {
		return s.failure(err, "read the skill")
	}
	return tools.Result{Text: fmt.Sprintf("Skill %s: %s\n\n%s", oneLine(sk.Name), oneLine(sk.Description), sk.Body)}
}

// formatNotes is notes_search's result: one entry per note with its id.
func formatNotes(user ids.UserID, query string, notes []store.Note) string {
	if len(notes) == 0 {
		if query == "" {
			return "There are no notes yet."
		}
		return fmt.Sprintf("No notes match “%s”.", oneLine(query))
	}
	var b strings.Builder
	for i, n := range notes {
		if i > 0 {
			b.WriteString("\n\n")
		}
		text := n.Body
		if text == "" {
			text = snippetText(n.Snippet)
		}
		fmt.Fprintf(&b, "Note %d: %s\n%s, changed %s\n%s", n.ID, oneLine(n.Title), ownership(user, n),
			time.UnixMilli(n.UpdatedAt).UTC().Format("2006-01-02"), excerpt(text, 200))
	}
	return b.String()
}

// ownership says whose a note is, as the model needs to know before
// changing it.
// unmark undoes the store's snippet HTML, which is escaped text with
// <mark> tags and nothing else.
var unmark = strings.NewReplacer("<mark>", "", "</mark>", "")

// snippetText is a note's snippet (a listing's or a search's; notes listed
// carry no body) as the plain text it was made from, for the model.
func snippetText(snippet string) string { return html.UnescapeString(unmark.Replace(snippet)) }

func ownership(user ids.UserID, n store.Note) string {
	if n.OwnerID == user {
		return "The person's own note."
	}
	return "Shared with the person by " + oneLine(n.OwnerName) + ", read-only."
}

// baseNames lists bases by name for a sentence: “A”, “B”.
// baseNames names bases for the model, at most maxNamedBases of them (the
// person's own come first in Bases' order), then how many more.
func baseNames(bases []store.KnowledgeBase) string {
	names := make([]string, 0, min(len(bases), maxNamedBases)+1)
	for _, b := range bases[:min(len(bases), maxNamedBases)] {
		names = append(names, "“"+oneLine(b.Name)+"”")
	}
	if left := len(bases) - len(names); left > 0 {
		names = append(names, fmt.Sprintf("and %d more", left))
	}
	return strings.Join(names, ", ")
}

// decode reads a call's arguments strictly: a JSON object with only the
// fields the schema names. want describes them for the failed result.
func decode(args json.RawMessage, into any, want string) (tools.Result, bool) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return failed("The arguments must be a JSON object with " + want + "."), false
	}
	return tools.Result{}, true
}

// idArgument reads arguments that are exactly {"id": n}, n the positive
// id of a what.
func idArgument(args json.RawMessage, what string) (int64, tools.Result, bool) {
	var a struct {
		ID *int64 `json:"id"`
	}
	if r, ok := decode(args, &a, `"id" (a number)`); !ok {
		return 0, r, false
	}
	if a.ID == nil || *a.ID <= 0 {
		return 0, failed(`"id" must be a ` + what + `'s id, a positive number.`), false
	}
	return *a.ID, tools.Result{}, true
}

// failure is a failed result from a service error: its message when it is
// one for people (a cap, a read-only item), a fixed sentence otherwise
// (logged), so SQL or paths never reach the model.
func (s *Service) failure(err error, doing string) tools.Result {
	if errors.Is(err, context.Canceled) {
		return failed("Stopped.")
	}
	kind, msg := apperr.Public(err)
	if kind == apperr.Internal {
		s.log.Error("library tool failed", "doing", doing, "err", err)
		return failed("Could not " + doing + ": something went wrong on the server.")
	}
	return failed(msg)
}

func failed(text string) tools.Result { return tools.Result{Text: text, Failed: true} }

// schema checks a tool's parameters are JSON at start (a typo panics in
// every test rather than reaching a model).
func schema(s string) json.RawMessage {
	if !json.Valid([]byte(s)) {
		panic("library: invalid tool schema: " + s)
	}
	return json.RawMessage(s)
}

// oneLine folds whitespace so a name or title cannot forge the next line
// of a result or of the harness.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// clip bounds s to n runes, on one line, for an activity line.
func clip(s string, n int) string {
	s = oneLine(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// excerpt is the start of a note's text on one line.
func excerpt(s string, n int) string {
	s = oneLine(s)
	if s == "" {
		return "(empty)"
	}
	return clip(s, n)
}
