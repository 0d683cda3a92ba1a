package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/llembas/lembas/backend/ids"
)

// Chat is one conversation of a user. DeletedAt is set while it is in the
// trash.
type Chat struct {
	ID           ids.ChatID
	UserID       ids.UserID
	FolderID     *ids.FolderID
	Title        string
	TitleAuto    bool // the title is (or will be) generated, not typed
	ModelID      *ids.ModelID
	Params       Params
	SystemPrompt string
	Draft        string
	Pinned       bool
	Unread       bool
	// ToolsOff: the chat's replies are offered no tools.
	ToolsOff bool
	// Knowledge is the knowledge scope of a new chat while Send builds
	// its first request, before the chat is stored (NewChat.Knowledge);
	// nil for a chat read from the database, whose scope the library
	// reads (library.Service.ChatScope).
	Knowledge *KnowledgeScope
	// Agent is set for an agent chat (Kind ChatAgent): its host, its
	// project directory and its mode. Kind, Profile and Dir never change
	// after creation; Mode does.
	Kind      ChatKind
	Agent     AgentChat
	CreatedAt int64
	UpdatedAt int64
	DeletedAt *int64
	// LastStatus is the status of the chat's last message ("" when it has
	// none), so a list can mark the chats whose reply is still streaming.
	LastStatus Status
}

// NewChat is what a chat starts with. A non-empty Title turns automatic
// titles off.
type NewChat struct {
	FolderID     *ids.FolderID
	ModelID      *ids.ModelID
	Title        string
	Params       Params
	SystemPrompt string
	ToolsOff     bool
	// Kind and Agent make an agent chat (ChatAgent): Agent.Profile must be
	// one of user's SSH profiles, else nothing is stored (ErrNotFound).
	Kind  ChatKind
	Agent AgentChat
	// Knowledge, when set, limits the chat's knowledge search to these
	// bases from its first reply (chats.knowledge_scoped and
	// chat_knowledge_bases, written with the chat). Every base must be one
	// user can see (Visible), else nothing is stored (ErrNotFound).
	Knowledge *KnowledgeScope
}

// KnowledgeScope is which knowledge bases a chat's search may read:
// Scoped false, every base its person can see; Scoped, only Bases (none:
// nothing, never everything).
type KnowledgeScope struct {
	Scoped bool
	Bases  []ids.BaseID
}

// Optional is a change to a nullable field: the zero value leaves the field
// as it is, Some sets it and Null clears it. Decoded from JSON, an absent
// key leaves the field and null clears it.
type Optional[T any] struct {
	Set   bool
	Value *T
}

// Some is an Optional that sets the field to v.
func Some[T any](v T) Optional[T] { return Optional[T]{Set: true, Value: &v} }

// Null is an Optional that clears the field.
func Null[T any]() Optional[T] { return Optional[T]{Set: true} }

// UnmarshalJSON is only called for a key that is present, which is what
// tells "clear" (null) from "leave" (absent).
func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		o.Value = nil
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	o.Value = &v
	return nil
}

// ChatPatch changes some fields of a chat; nil pointers and unset Optionals
// leave their field alone. Setting Title turns automatic titles off, and
// setting it to "" turns them back on.
type ChatPatch struct {
	Title        *string
	Folder       Optional[ids.FolderID]
	Model        Optional[ids.ModelID]
	Params       *Params
	SystemPrompt *string
	Pinned       *bool
	Draft        *string
	ToolsOff     *bool
	// AgentMode changes an agent chat's mode (the only agent field that
	// may change).
	AgentMode *AgentMode
	// Rewound stamps chats.rewound_at with the patch's time (an edit or
	// a regeneration in an agent chat).
	Rewound bool
}

// ChatKind is what a chat is: a conversation, or an agent working on a
// host over SSH.
type ChatKind string

// The chat kinds ("" reads as ChatPlain).
const (
	ChatPlain ChatKind = "chat"
	ChatAgent ChatKind = "agent"
)

// AgentMode decides what an agent chat's replies may do without asking
// (backend/agent's policy table): Manual asks before everything, Plan
// only looks and proposes, Edit changes files but asks before commands,
// Auto runs everything.
type AgentMode string

// The agent modes.
const (
	ModeManual AgentMode = "manual"
	ModePlan   AgentMode = "plan"
	ModeEdit   AgentMode = "edit"
	ModeAuto   AgentMode = "auto"
)

// Valid reports whether m is one of the four modes.
func (m AgentMode) Valid() bool {
	return m == ModeManual || m == ModePlan || m == ModeEdit || m == ModeAuto
}

// AgentChat is an agent chat's fixed host and directory, its mode, and
// when its transcript was last rewound.
type AgentChat struct {
	// Profile is the SSH profile; nil once the profile was deleted (the
	// chat can no longer act).
	Profile   *ids.ProfileID
	Dir       string
	Mode      AgentMode
	RewoundAt *int64
}

// ChatFilter selects chats for ListChats. With neither FolderID nor
// NoFolder every chat is listed. Limit 0 means no limit.
type ChatFilter struct {
	FolderID *ids.FolderID // only the chats in this folder
	NoFolder bool          // only the chats in no folder
	Offset   int
	Limit    int
}

const chatColumns = `c.id, c.user_id, c.folder_id, c.title, c.title_auto, c.model_id, c.params, c.system_prompt,
	c.draft, c.pinned, c.unread, c.created_at, c.updated_at, c.deleted_at, c.tools_off,
	c.kind, c.ssh_profile_id, c.project_dir, c.agent_mode, c.rewound_at,
	COALESCE((SELECT status FROM messages WHERE chat_id = c.id ORDER BY id DESC LIMIT 1), '')`

func scanChat(row interface{ Scan(...any) error }) (Chat, error) {
	var c Chat
	var folder, model, deleted, profile, rewound sql.NullInt64
	var params string
	err := row.Scan(&c.ID, &c.UserID, &folder, &c.Title, &c.TitleAuto, &model, &params, &c.SystemPrompt,
		&c.Draft, &c.Pinned, &c.Unread, &c.CreatedAt, &c.UpdatedAt, &deleted, &c.ToolsOff,
		&c.Kind, &profile, &c.Agent.Dir, &c.Agent.Mode, &rewound, &c.LastStatus)
	if err != nil {
		return c, err
	}
	if profile.Valid {
		p := ids.ProfileID(profile.Int64)
		c.Agent.Profile = &p
	}
	if rewound.Valid {
		r := rewound.Int64
		c.Agent.RewoundAt = &r
	}
	if folder.Valid {
		f := ids.FolderID(folder.Int64)
		c.FolderID = &f
	}
	if model.Valid {
		m := ids.ModelID(model.Int64)
		c.ModelID = &m
	}
	if deleted.Valid {
		c.DeletedAt = &deleted.Int64
	}
	if err := json.Unmarshal([]byte(params), &c.Params); err != nil {
		return c, fmt.Errorf("params of chat %d: %w", c.ID, err)
	}
	return c, nil
}

func chatByID(ctx context.Context, q queryRower, user ids.UserID, id ids.ChatID) (Chat, error) {
	c, err := scanChat(q.QueryRowContext(ctx, `SELECT `+chatColumns+` FROM chats c WHERE c.id = ? AND c.user_id = ?`, id, user))
	if errors.Is(err, sql.ErrNoRows) {
		return Chat{}, fmt.Errorf("chat %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Chat{}, fmt.Errorf("read chat %d: %w", id, err)
	}
	return c, nil
}

// CreateChat creates a chat for user together with its first message, in
// one transaction: chats are created lazily when the first message is sent,
// so a chat never exists without one. The folder and model must be ones
// user may use.
func (db *DB) CreateChat(ctx context.Context, user ids.UserID, nc NewChat, first Message) (Chat, Message, error) {
	params, err := jsonText(nc.Params)
	if err != nil {
		return Chat{}, Message{}, err
	}
	var chat Chat
	var msg Message
	err = db.WriteTx(ctx, func(tx *sql.Tx) error {
		now := nowMillis()
		id, err := insertChat(ctx, tx, user, nc, params, nc.Title, nc.Title == "", now)
		if err != nil {
			return err
		}
		if msg, err = insertMessage(ctx, tx, user, id, first, now); err != nil {
			return err
		}
		chat, err = chatByID(ctx, tx, user, id)
		return err
	})
	return chat, msg, err
}

// insertChat inserts a chat for user after checking that its folder and
// model are ones user may use.
func insertChat(ctx context.Context, tx *sql.Tx, user ids.UserID, nc NewChat, params, title string, titleAuto bool, now int64) (ids.ChatID, error) {
	if nc.FolderID != nil {
		if err := ownsFolder(ctx, tx, user, *nc.FolderID); err != nil {
			return 0, err
		}
	}
	if nc.ModelID != nil {
		if err := canSeeModel(ctx, tx, user, *nc.ModelID); err != nil {
			return 0, err
		}
	}
	kind := nc.Kind
	if kind == "" {
		kind = ChatPlain
	}
	var agent AgentChat
	if kind == ChatAgent {
		if nc.Agent.Profile == nil || !nc.Agent.Mode.Valid() {
			return 0, fmt.Errorf("agent chat without a profile or a mode: %w", ErrNotFound)
		}
		if err := ownsProfile(ctx, tx, user, *nc.Agent.Profile); err != nil {
			return 0, err
		}
		agent = nc.Agent
	} else if kind != ChatPlain {
		return 0, fmt.Errorf("chat kind %q: %w", kind, ErrNotFound)
	}
	scoped := nc.Knowledge != nil && nc.Knowledge.Scoped
	res, err := tx.ExecContext(ctx, `
		INSERT INTO chats (user_id, folder_id, title, title_auto, model_id, params, system_prompt, tools_off, knowledge_scoped,
			kind, ssh_profile_id, project_dir, agent_mode, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		user, nullable(nc.FolderID), title, titleAuto, nullable(nc.ModelID), params, nc.SystemPrompt, nc.ToolsOff, scoped,
		kind, nullable(agent.Profile), agent.Dir, agent.Mode, now, now)
	if err != nil {
		return 0, fmt.Errorf("insert chat: %w", err)
	}
	id, _ := res.LastInsertId()
	if scoped {
		if err := insertChatBases(ctx, tx, user, ids.ChatID(id), nc.Knowledge.Bases); err != nil {
			return 0, err
		}
	}
	return ids.ChatID(id), nil
}

// insertChatBases scopes a new chat to bases, each one user can see
// (store.Visible): a base that is not is ErrNotFound, and the whole send
// rolls back.
func insertChatBases(ctx context.Context, tx *sql.Tx, user ids.UserID, chat ids.ChatID, bases []ids.BaseID) error {
	vis, vargs := Visible(KindBase, "b", user)
	for _, b := range bases {
		var ok bool
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM knowledge_bases b WHERE b.id = ? AND `+vis, append([]any{b}, vargs...)...).Scan(&ok)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("knowledge base %d: %w", b, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read knowledge base %d: %w", b, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO chat_knowledge_bases (chat_id, base_id) VALUES (?, ?)`, chat, b); err != nil {
			return fmt.Errorf("scope chat %d: %w", chat, err)
		}
	}
	return nil
}

// ChatByID reads one of user's chats, trashed or not.
func (db *DB) ChatByID(ctx context.Context, user ids.UserID, id ids.ChatID) (Chat, error) {
	return chatByID(ctx, prepared{db}, user, id)
}

// ListChats returns user's chats that are not in the trash, pinned first,
// then the most recently active.
func (db *DB) ListChats(ctx context.Context, user ids.UserID, f ChatFilter) ([]Chat, error) {
	q := `SELECT ` + chatColumns + ` FROM chats c WHERE c.user_id = ? AND c.deleted_at IS NULL`
	args := []any{user}
	switch {
	case f.FolderID != nil:
		q += ` AND c.folder_id = ?`
		args = append(args, *f.FolderID)
	case f.NoFolder:
		q += ` AND c.folder_id IS NULL`
	}
	q += ` ORDER BY c.pinned DESC, c.updated_at DESC, c.id DESC`
	if f.Limit > 0 || f.Offset > 0 {
		limit := f.Limit
		if limit <= 0 {
			limit = -1
		}
		q += ` LIMIT ? OFFSET ?`
		args = append(args, limit, max(f.Offset, 0))
	}
	return db.listChats(ctx, q, args...)
}

// ListTrash returns user's trashed chats, most recently trashed first.
func (db *DB) ListTrash(ctx context.Context, user ids.UserID) ([]Chat, error) {
	return db.listChats(ctx, `SELECT `+chatColumns+` FROM chats c
		WHERE c.user_id = ? AND c.deleted_at IS NOT NULL ORDER BY c.deleted_at DESC, c.id DESC`, user)
}

func (db *DB) listChats(ctx context.Context, q string, args ...any) ([]Chat, error) {
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list chats: %w", err)
	}
	defer rows.Close()
	var out []Chat
	for rows.Next() {
		c, err := scanChat(rows)
		if err != nil {
			return nil, fmt.Errorf("list chats: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// UpdateChat applies p to one of user's chats and returns the result. It
// does not change updated_at, which orders the list by conversation
// activity: typing a draft or renaming must not move a chat to the top.
func (db *DB) UpdateChat(ctx context.Context, user ids.UserID, id ids.ChatID, p ChatPatch) (Chat, error) {
	var sets []string
	var args []any
	if p.Title != nil {
		sets = append(sets, `title = ?`, `title_auto = ?`)
		args = append(args, *p.Title, *p.Title == "")
	}
	if p.Folder.Set {
		sets = append(sets, `folder_id = ?`)
		args = append(args, nullable(p.Folder.Value))
	}
	if p.Model.Set {
		sets = append(sets, `model_id = ?`)
		args = append(args, nullable(p.Model.Value))
	}
	if p.Params != nil {
		params, err := jsonText(p.Params)
		if err != nil {
			return Chat{}, err
		}
		sets = append(sets, `params = ?`)
		args = append(args, params)
	}
	if p.SystemPrompt != nil {
		sets = append(sets, `system_prompt = ?`)
		args = append(args, *p.SystemPrompt)
	}
	if p.Pinned != nil {
		sets = append(sets, `pinned = ?`)
		args = append(args, *p.Pinned)
	}
	if p.Draft != nil {
		sets = append(sets, `draft = ?`)
		args = append(args, *p.Draft)
	}
	if p.ToolsOff != nil {
		sets = append(sets, `tools_off = ?`)
		args = append(args, *p.ToolsOff)
	}
	if p.AgentMode != nil {
		if !p.AgentMode.Valid() {
			return Chat{}, fmt.Errorf("agent mode %q: %w", *p.AgentMode, ErrNotFound)
		}
		// Only an agent chat has a mode.
		sets = append(sets, `agent_mode = CASE WHEN kind = 'agent' THEN ? ELSE agent_mode END`)
		args = append(args, *p.AgentMode)
	}
	if p.Rewound {
		sets = append(sets, `rewound_at = CASE WHEN kind = 'agent' THEN ? ELSE rewound_at END`)
		args = append(args, nowMillis())
	}
	var out Chat
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		if err := ownsChat(ctx, tx, user, id); err != nil {
			return err
		}
		if p.Folder.Value != nil {
			if err := ownsFolder(ctx, tx, user, *p.Folder.Value); err != nil {
				return err
			}
		}
		if p.Model.Value != nil {
			if err := canSeeModel(ctx, tx, user, *p.Model.Value); err != nil {
				return err
			}
		}
		if len(sets) > 0 {
			q := `UPDATE chats SET ` + strings.Join(sets, ", ") + ` WHERE id = ?`
			if _, err := tx.ExecContext(ctx, q, append(args, id)...); err != nil {
				return fmt.Errorf("update chat %d: %w", id, err)
			}
		}
		var err error
		out, err = chatByID(ctx, tx, user, id)
		return err
	})
	return out, err
}

// SetAutoTitle sets a generated title on one of user's chats, unless the
// user has typed one since; it reports whether the title was set.
func (db *DB) SetAutoTitle(ctx context.Context, user ids.UserID, id ids.ChatID, title string) (bool, error) {
	res, err := db.w.ExecContext(ctx, `UPDATE chats SET title = ? WHERE id = ? AND user_id = ? AND title_auto = 1`, title, id, user)
	if err != nil {
		return false, fmt.Errorf("set title of chat %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		return true, nil
	}
	return false, ownsChat(ctx, db.r, user, id)
}

// MarkRead clears the unread mark of one of user's chats.
func (db *DB) MarkRead(ctx context.Context, user ids.UserID, id ids.ChatID) error {
	return db.updateOwnChat(ctx, user, id, `unread = 0`)
}

// MarkUnread sets the unread mark of one of user's chats (a reply finished
// while the user was elsewhere, or the user asked).
func (db *DB) MarkUnread(ctx context.Context, user ids.UserID, id ids.ChatID) error {
	return db.updateOwnChat(ctx, user, id, `unread = 1`)
}

// TrashChat moves one of user's chats to the trash. Trashing it again keeps
// the first time, so emptying by age counts from when it was first thrown
// away.
func (db *DB) TrashChat(ctx context.Context, user ids.UserID, id ids.ChatID) error {
	return db.updateOwnChat(ctx, user, id, `deleted_at = COALESCE(deleted_at, ?)`, nowMillis())
}

// RestoreChat takes one of user's chats out of the trash.
func (db *DB) RestoreChat(ctx context.Context, user ids.UserID, id ids.ChatID) error {
	return db.updateOwnChat(ctx, user, id, `deleted_at = NULL`)
}

// updateOwnChat runs one SET clause on a chat of user's, or says ErrNotFound.
func (db *DB) updateOwnChat(ctx context.Context, user ids.UserID, id ids.ChatID, set string, args ...any) error {
	res, err := db.w.ExecContext(ctx, `UPDATE chats SET `+set+` WHERE id = ? AND user_id = ?`, append(args, id, user)...)
	if err != nil {
		return fmt.Errorf("update chat %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("chat %d: %w", id, ErrNotFound)
	}
	return nil
}

// EmptyTrash deletes for good user's chats that were trashed at or before
// olderThan (unix milliseconds; pass the current time to empty the whole
// trash), with their messages, and returns how many chats went. The
// messages are deleted explicitly, newest first, rather than left to the
// cascade, so that each leaves the full-text index through its delete
// trigger exactly as it entered and none is re-indexed on the way out.
func (db *DB) EmptyTrash(ctx context.Context, user ids.UserID, olderThan int64) (int, error) {
	var n int
	var files []string
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		files = files[:0]
		if _, err := deleteMessagesNewestFirst(ctx, tx, &files, `
			SELECT m.id FROM chats c JOIN messages m ON m.chat_id = c.id
			WHERE c.user_id = ? AND c.deleted_at IS NOT NULL AND c.deleted_at <= ?
			ORDER BY m.id DESC`, user, olderThan); err != nil {
			return fmt.Errorf("empty trash: %w", err)
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM chats WHERE user_id = ? AND deleted_at IS NOT NULL AND deleted_at <= ?`, user, olderThan)
		if err != nil {
			return fmt.Errorf("empty trash: %w", err)
		}
		c, _ := res.RowsAffected()
		n = int(c)
		return nil
	})
	if err == nil {
		db.release(files)
	}
	return n, err
}

// ProfileLabel returns the name and the "user@host" (":port" when not 22)
// of user's SSH profile id, which an agent chat's view shows; another
// person's profile, or none, is ErrNotFound.
func (db *DB) ProfileLabel(ctx context.Context, user ids.UserID, id ids.ProfileID) (name, host string, err error) {
	var h, u string
	var port int
	err = db.r.QueryRowContext(ctx, `SELECT name, host, port, username FROM ssh_profiles WHERE id = ? AND user_id = ?`, id, user).
		Scan(&name, &h, &port, &u)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", fmt.Errorf("ssh profile %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return "", "", fmt.Errorf("read ssh profile %d: %w", id, err)
	}
	if port != 22 {
		if strings.Contains(h, ":") {
			h = "[" + h + "]" // an IPv6 address
		}
		h += ":" + strconv.Itoa(port)
	}
	host = u + "@" + h
	return name, host, nil
}
