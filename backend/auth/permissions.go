package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// Permission names a configuration ability that can be granted. Admins have
// every one; what belongs to other people (their chats, files, private
// connections) is not a permission, and admins do not bypass ownership.
type Permission = string

// The permissions. Each says what it lets a non-admin do.
const (
	// ChatCreate: start chats and send messages. Without it a user can
	// read their existing chats only.
	ChatCreate Permission = "chat.create"
	// ChatParams: set a chat's system prompt and sampling parameters
	// (temperature, reasoning effort, …) instead of the model's defaults.
	ChatParams Permission = "chat.params"
	// FilesUpload: attach files and images to messages.
	FilesUpload Permission = "files.upload"
	// ModelsViewAll: see and use every enabled model, ignoring model
	// access lists (which otherwise decide what a user sees).
	ModelsViewAll Permission = "models.view_all"
	// ConnectionsOwn: add personal connections (endpoints and API keys
	// that only this user sees and uses). Not offered yet: a non-admin's
	// endpoint must go through the SSRF-guarded client first, so it is
	// left out of AllPermissions and grants nothing.
	ConnectionsOwn Permission = "connections.own"
	// ConnectionsManage: add, edit and remove instance-wide connections and
	// edit their models' names, order and defaults.
	ConnectionsManage Permission = "connections.manage"
	// ToolsWebSearch: replies may search the web (when the instance has
	// web search on and the model is flagged for tools).
	ToolsWebSearch Permission = "tools.web_search"
	// ToolsFetch: replies may read web pages (when the instance has page
	// reading on and the model is flagged for tools).
	ToolsFetch Permission = "tools.fetch"
	// ToolsCustom: replies may use the custom HTTP tools an administrator
	// defined (each may narrow who uses it further).
	ToolsCustom Permission = "tools.custom"
	// ToolsMCP: replies may use the tools of remote MCP servers an
	// administrator added (each may narrow who uses it further).
	ToolsMCP Permission = "tools.mcp"
	// LibraryUse: keep a library (knowledge bases, notes, memories,
	// skills) and let replies use it. It never gives access to anyone
	// else's items; only sharing does.
	LibraryUse Permission = "library.use"
	// LibraryShare: share one's own knowledge bases, notes and skills with
	// other people or groups, for reading.
	LibraryShare Permission = "library.share"
	// AgentUse: keep SSH connections and start agent chats, whose replies
	// run commands and edit files on a host over SSH, and open the
	// terminal of such a chat. Not in the default baseline: an
	// administrator grants it.
	AgentUse Permission = "agent.use"
)

// AllPermissions lists every permission, in the order an admin page shows
// them.
var AllPermissions = []Permission{ChatCreate, ChatParams, FilesUpload, LibraryUse, LibraryShare, AgentUse, ToolsWebSearch, ToolsFetch, ToolsCustom, ToolsMCP, ModelsViewAll, ConnectionsManage}

// Info is a permission as an admin page shows it.
type Info struct {
	Name        Permission `json:"name"`
	Label       string     `json:"label"`
	Description string     `json:"description"`
}

// Describe lists AllPermissions with a label and a sentence each.
func Describe() []Info {
	return []Info{
		{ChatCreate, "Start chats", "Start chats and send messages. Without it a user can only read their existing chats."},
		{ChatParams, "Tune chats", "Set a chat's system prompt and sampling parameters instead of the model's defaults."},
		{FilesUpload, "Attach files", "Attach files and images to messages."},
		{LibraryUse, "Use the library", "Keep knowledge bases, notes, memories and skills, and let replies use them."},
		{LibraryShare, "Share from the library", "Share one's own knowledge bases, notes and skills with other people and groups, for reading."},
		{AgentUse, "Use agent chats", "Keep SSH connections and start agent chats, whose replies run commands and edit files on those hosts, and use their terminal."},
		{ToolsWebSearch, "Search the web", "Let replies search the web, when an administrator has turned web search on."},
		{ToolsFetch, "Read web pages", "Let replies read web pages, when an administrator has turned page reading on."},
		{ToolsCustom, "Use custom tools", "Let replies use the custom HTTP tools an administrator defined, when custom tools are on."},
		{ToolsMCP, "Use MCP tools", "Let replies use the tools of the MCP servers an administrator added, when MCP tools are on."},
		{ModelsViewAll, "See every model", "Use every enabled model, ignoring the per-model access lists."},
		{ConnectionsManage, "Manage connections", "Add, edit and remove the shared connections and edit their models."},
	}
}

// DefaultBaseline is what every user has while the instance setting is
// unset: using the app, not configuring it. The tools are in it because
// the instance's switches (off until an administrator turns a family on)
// are what decides whether they exist at all: turning web search on
// gives it to everyone, as the earlier version did.
var DefaultBaseline = []Permission{ChatCreate, ChatParams, FilesUpload, LibraryUse, LibraryShare, ToolsWebSearch, ToolsFetch, ToolsCustom, ToolsMCP}

// SettingBaseline is the instance setting holding the baseline, a JSON
// list of permission names.
const SettingBaseline = "default_permissions"

// Set is what one user may do.
type Set struct {
	admin bool
	names map[Permission]bool
}

// Has reports whether the set includes p. Admins have every permission.
func (s Set) Has(p Permission) bool { return s.admin || s.names[p] }

// Admin reports whether the set is an admin's.
func (s Set) Admin() bool { return s.admin }

// List is the set's permissions in AllPermissions order (all of them for an
// admin), for the frontend to hide what it cannot use.
func (s Set) List() []Permission {
	out := []Permission{}
	for _, p := range AllPermissions {
		if s.Has(p) {
			out = append(out, p)
		}
	}
	return out
}

// Require returns a Forbidden error unless the set includes p.
func (s Set) Require(p Permission) error {
	if s.Has(p) {
		return nil
	}
	return apperr.New(apperr.Forbidden, "You are not allowed to do this (%s); ask an administrator.", p)
}

// Permissions resolves what users may do: the instance baseline widened by
// every group the user is in. A group grants and never denies, so "why can
// this user not do X" is answered by reading the baseline and the user's
// groups, without simulating an order of rules.
type Permissions struct{ db *store.DB }

// NewPermissions returns the resolver over db.
func NewPermissions(db *store.DB) *Permissions { return &Permissions{db: db} }

// ResolveID returns the permissions of the user with that id.
func (p *Permissions) ResolveID(ctx context.Context, id ids.UserID) (Set, error) {
	u, err := p.db.UserByID(ctx, int64(id))
	if err != nil {
		return Set{}, store.Kinded(err, "person")
	}
	return p.Resolve(ctx, u)
}

// Resolve returns u's permissions. Unknown names (a permission since
// removed) are ignored.
func (p *Permissions) Resolve(ctx context.Context, u store.User) (Set, error) {
	if u.IsAdmin {
		return Set{admin: true}, nil
	}
	base, err := p.Baseline(ctx)
	if err != nil {
		return Set{}, err
	}
	s := Set{names: map[Permission]bool{}}
	grant := func(names []string) {
		for _, n := range names {
			if slices.Contains(AllPermissions, n) {
				s.names[n] = true
			}
		}
	}
	grant(base)
	groups, err := p.db.UserGroups(ctx, ids.UserID(u.ID))
	if err != nil {
		return Set{}, err
	}
	for _, g := range groups {
		grant(g.Permissions)
	}
	return s, nil
}

// Baseline is the instance's baseline (DefaultBaseline while unset).
func (p *Permissions) Baseline(ctx context.Context) ([]Permission, error) {
	v, ok, err := p.db.Setting(ctx, SettingBaseline)
	if err != nil {
		return nil, err
	}
	if !ok {
		return slices.Clone(DefaultBaseline), nil
	}
	var names []Permission
	if err := json.Unmarshal([]byte(v), &names); err != nil {
		return nil, fmt.Errorf("setting %s is not a JSON list of names: %w", SettingBaseline, err)
	}
	return names, nil
}

// SetBaseline stores the baseline; unknown names are Invalid.
func (p *Permissions) SetBaseline(ctx context.Context, names []Permission) error {
	clean, err := CheckPermissions(names)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(clean)
	return p.db.SetSetting(ctx, SettingBaseline, string(b))
}

// CheckPermissions returns names without duplicates, or Invalid naming the
// first unknown one. Use it before storing a group's permissions.
func CheckPermissions(names []Permission) ([]Permission, error) {
	out := []Permission{}
	for _, n := range names {
		if !slices.Contains(AllPermissions, n) {
			return nil, apperr.New(apperr.Invalid, "There is no permission called %q.", n)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}
