package api

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
)

// GuardKind is what a guard asks of the caller.
type GuardKind int

const (
	guardUnset GuardKind = iota
	// GuardSignedIn lets anyone the transport let in: a signed-in user, or
	// the desktop window.
	GuardSignedIn
	// GuardAdmin lets administrators only (the desktop owner is one).
	GuardAdmin
	// GuardDesktopOwner lets only the desktop window itself (AtTheDesktop):
	// not a browser, not even the owner's own while the app is shared.
	GuardDesktopOwner
	// GuardPerm lets callers who hold a permission (administrators hold
	// every one).
	GuardPerm
)

// Guard says who may call a facade method. The dispatcher checks it before
// the method runs, so a method body holds only the checks that depend on
// its data (whose chat, which fields a patch sets).
type Guard struct {
	kind GuardKind
	perm auth.Permission
	// msg is a DesktopOwner guard's refusal, which says what the method
	// does on the desktop.
	msg string
	// note adds to the guard in docs/API.md (checks the method makes on
	// top of it).
	note string
}

// SignedIn is the guard of methods anyone let in may call; the method acts
// as the caller and checks the ownership of every id itself.
var SignedIn = Guard{kind: GuardSignedIn}

// AdminOnly is the guard of methods for administrators.
var AdminOnly = Guard{kind: GuardAdmin}

// DesktopOwner is the guard of methods that act on the desktop; refusal is
// the forbidden message anyone else gets.
func DesktopOwner(refusal string) Guard { return Guard{kind: GuardDesktopOwner, msg: refusal} }

// Perm is the guard of methods that need permission p.
func Perm(p auth.Permission) Guard { return Guard{kind: GuardPerm, perm: p} }

// Note returns g with a remark for docs/API.md about the checks the method
// makes beyond its guard.
func (g Guard) Note(s string) Guard { g.note = s; return g }

// Kind says what the guard asks of the caller.
func (g Guard) Kind() GuardKind { return g.kind }

// Permission is the permission a GuardPerm guard asks for ("" otherwise).
func (g Guard) Permission() auth.Permission { return g.perm }

// String describes the guard for docs/API.md.
func (g Guard) String() string {
	var s string
	switch g.kind {
	case GuardSignedIn:
		s = "signed in"
	case GuardAdmin:
		s = "administrators"
	case GuardDesktopOwner:
		s = "desktop window"
	case GuardPerm:
		s = "`" + string(g.perm) + "` (and administrators)"
	default:
		s = "unset"
	}
	if g.note != "" {
		s += "; " + g.note
	}
	return s
}

// check refuses the caller in ctx unless the guard lets them in. require
// answers a GuardPerm guard.
func (g Guard) check(ctx context.Context, require func(context.Context, auth.Permission) error) error {
	c := CallerFrom(ctx)
	switch g.kind {
	case GuardSignedIn:
		return nil
	case GuardAdmin:
		if !c.Admin {
			return apperr.New(apperr.Forbidden, "only an administrator can do that")
		}
		return nil
	case GuardDesktopOwner:
		if !AtTheDesktop(c) {
			return apperr.New(apperr.Forbidden, "%s", g.msg)
		}
		return nil
	case GuardPerm:
		return require(ctx, g.perm)
	}
	return apperr.New(apperr.Internal, "no guard")
}

type guardKey struct{}

// passed reports whether the call in ctx came through guard g, for helpers
// that grant more than a signed-in caller has.
func passed(ctx context.Context, g Guard) bool {
	got, ok := ctx.Value(guardKey{}).(Guard)
	return ok && got.kind == g.kind && got.perm == g.perm
}

// Guards are one facade's guards, by method name.
type Guards map[string]Guard

// Table is every facade's guards, by facade name: the one list that the
// dispatcher enforces (Register refuses a facade whose methods and entries
// differ), that the authorization tests walk, and that build/apidoc prints
// into docs/API.md. Desktop is registered by app/ in the desktop app, Diag
// only under LEMBAS_SELFTEST.
var Table = map[string]Guards{
	"App": {
		"Info":    SignedIn.Note("paths, key and counts for administrators only"),
		"OpenURL": DesktopOwner("only the desktop window opens links on the desktop"),
		"Notify":  DesktopOwner("only the desktop window shows notifications on the desktop"),
	},
	"Prefs": {"Get": SignedIn, "Set": SignedIn},
	"Chats": {
		"List": SignedIn, "Get": SignedIn, "Messages": SignedIn,
		"Send":         Perm(auth.ChatCreate).Note("`files.upload` for attachments, `chat.params` for params or a system prompt, `agent.use` for a new agent chat"),
		"Stop":         SignedIn,
		"Regenerate":   Perm(auth.ChatCreate),
		"Continue":     Perm(auth.ChatCreate),
		"Edit":         Perm(auth.ChatCreate).Note("`files.upload` for files new to the turn"),
		"Update":       SignedIn.Note("`chat.params` for params or a system prompt, `agent.use` for an agent chat's mode"),
		"Answer":       Perm(auth.ChatCreate).Note("and `agent.use` in an agent chat"),
		"CarryOutPlan": Perm(auth.ChatCreate).Note("and `agent.use`"),
		"SaveDraft":    SignedIn, "MarkRead": SignedIn,
		"Trash": SignedIn, "Restore": SignedIn, "ListTrash": SignedIn, "EmptyTrash": SignedIn,
		"Search": SignedIn, "Live": SignedIn,
		"SwitchVersion": SignedIn, "DeleteVersion": SignedIn,
		"Compact": Perm(auth.ChatCreate), "Uncompact": SignedIn,
	},
	"Models": {
		"List":    Perm(auth.ConnectionsManage),
		"Picker":  SignedIn.Note("system prompts of shared models only with `connections.manage`"),
		"Update":  Perm(auth.ConnectionsManage),
		"Move":    Perm(auth.ConnectionsManage),
		"Efforts": SignedIn,
	},
	"Connections": {
		"List": Perm(auth.ConnectionsManage), "Create": Perm(auth.ConnectionsManage),
		"Update": Perm(auth.ConnectionsManage), "Delete": Perm(auth.ConnectionsManage),
		"Test": Perm(auth.ConnectionsManage), "TestDraft": Perm(auth.ConnectionsManage),
		"RefreshModels": Perm(auth.ConnectionsManage), "Discover": Perm(auth.ConnectionsManage),
	},
	"Folders": {"List": SignedIn, "Create": SignedIn, "Rename": SignedIn, "Delete": SignedIn, "Move": SignedIn},
	"Account": {
		"Me": SignedIn, "SetDisplayName": SignedIn, "ChangePassword": SignedIn,
		"Sessions": SignedIn, "RevokeSession": SignedIn, "SignOutEverywhere": SignedIn,
	},
	"Admin": {
		"Users": AdminOnly, "CreateUser": AdminOnly, "SetStatus": AdminOnly, "SetAdmin": AdminOnly,
		"ResetPassword": AdminOnly, "Groups": AdminOnly, "CreateGroup": AdminOnly, "UpdateGroup": AdminOnly,
		"DeleteGroup": AdminOnly, "SetMembers": AdminOnly, "Permissions": AdminOnly, "SetBaseline": AdminOnly,
		"Settings": AdminOnly, "SetSettings": AdminOnly, "ModelAccess": AdminOnly, "SetModelAccess": AdminOnly,
	},
	"Files": {"Limits": SignedIn},
	"Audio": {
		"Status": SignedIn, "Voices": SignedIn, "Mine": SignedIn, "SetMine": SignedIn,
		"Settings": AdminOnly, "SetSettings": AdminOnly,
	},
	"Web": {"Settings": AdminOnly, "SetSettings": AdminOnly, "TestSearch": AdminOnly},
	// Sharing answers the household server with "unavailable" (Status with
	// why) before it would refuse a browser, so its desktop check stays in
	// the methods.
	"Sharing": {
		"Status": SignedIn.Note("the desktop window only, in the desktop app"),
		"Start":  SignedIn.Note("the desktop window only, in the desktop app"),
		"Stop":   SignedIn.Note("the desktop window only, in the desktop app"),
	},
	"Tools": {
		"Settings": AdminOnly, "SetSettings": AdminOnly, "List": SignedIn, "Available": SignedIn,
	},
	"MCP":     {"List": AdminOnly, "Save": AdminOnly, "Delete": AdminOnly, "Refresh": AdminOnly, "SetTool": AdminOnly},
	"Prompts": {"List": AdminOnly, "Set": AdminOnly, "Reset": AdminOnly, "Preview": AdminOnly},
	"CustomTools": {
		"List": AdminOnly, "Get": AdminOnly, "Save": AdminOnly, "Delete": AdminOnly, "Try": AdminOnly,
	},
	// The library: what each method may reach is store.Visible's (the
	// caller's own items and those shared with them; administrators do not
	// bypass it), checked in the service.
	"Library": {
		"Bases": libraryUse, "CreateBase": libraryUse, "UpdateBase": libraryUse, "DeleteBase": libraryUse,
		"Documents": libraryUse, "Document": libraryUse, "DeleteDocument": libraryUse,
		"Search": libraryUse, "AttachDocument": libraryUse.Note("and `files.upload`"), "ChatScope": libraryUse, "SetChatScope": libraryUse,
		"Notes": libraryUse, "Note": libraryUse, "CreateNote": libraryUse, "UpdateNote": libraryUse,
		"DeleteNote": libraryUse, "Preview": libraryUse,
		"Memories": libraryUse, "AddMemory": libraryUse, "UpdateMemory": libraryUse, "DeleteMemory": libraryUse,
		"SetMemoryOn": libraryUse,
		"Skills":      libraryUse, "Skill": libraryUse, "CreateSkill": libraryUse, "UpdateSkill": libraryUse,
		"DeleteSkill": libraryUse,
		"Shares":      libraryUse, "SetShares": Perm(auth.LibraryShare), "People": libraryUse,
	},
	// Agent chats' SSH connections: each person's own (another's is not
	// found, for administrators too), checked in the service.
	"Agent": {
		"Profiles": agentUse, "CreateProfile": agentUse, "UpdateProfile": agentUse, "DeleteProfile": agentUse,
		"ScanHostKey": agentUse, "AcceptHostKey": agentUse, "ForgetHostKey": agentUse, "Test": agentUse, "Browse": agentUse,
		"ProjectFiles": agentUse, "AttachFile": agentUse.Note("and `files.upload`"),
		"Settings": agentUse, "SetSettings": AdminOnly,
	},
	// The terminal panel: in the desktop window through calls and events
	// (a browser uses the WebSocket route, GET /api/terminal/{chatID});
	// LastCommand in both.
	"Terminal": {
		"Open": terminalWindow, "Input": terminalWindow, "Resize": terminalWindow, "Close": terminalWindow,
		"LastCommand": agentUse,
	},
	// The new-chat screen's cards: everyone reads them, administrators
	// keep them.
	"Suggestions": {
		"List": SignedIn, "Admin": AdminOnly, "Create": AdminOnly, "Update": AdminOnly,
		"Delete": AdminOnly, "Reorder": AdminOnly,
	},
	"Desktop": {
		"State": desktopWindow, "Quick": desktopWindow, "Full": desktopWindow,
		"Hide": desktopWindow, "Shown": desktopWindow, "Mark": desktopWindow, "SaveExport": desktopWindow,
		"SaveDocument": desktopWindow,
	},
	"Diag": {"NilDeref": selfTest, "Emit": selfTest, "Report": selfTest, "ReleaseTools": selfTest},
}

var (
	desktopWindow = DesktopOwner("only the desktop window can change itself").Note("desktop app only")
	selfTest      = SignedIn.Note("registered only under LEMBAS_SELFTEST")
	libraryUse    = Perm(auth.LibraryUse)
	agentUse      = Perm(auth.AgentUse)
	// terminalWindow: a browser has the WebSocket route instead.
	terminalWindow = DesktopOwner("only the desktop window opens a terminal through calls; a browser uses its WebSocket")
)

// GuardOf returns the guard of "Facade.Method" in Table.
func GuardOf(method string) (Guard, bool) {
	facade, name, _ := strings.Cut(method, ".")
	g, ok := Table[facade][name]
	return g, ok
}

// GuardsMarkdown is the generated part of docs/API.md: every method in
// Table with who may call it.
func GuardsMarkdown() string {
	var names []string
	for facade, gs := range Table {
		for m := range gs {
			names = append(names, facade+"."+m)
		}
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("| Method | Who may call it |\n|---|---|\n")
	for _, n := range names {
		g, _ := GuardOf(n)
		fmt.Fprintf(&b, "| `%s` | %s |\n", n, g)
	}
	return b.String()
}

// The generated part of docs/API.md lies between these lines.
const (
	DocBegin = "<!-- BEGIN GENERATED guards (go run ./build/apidoc) -->"
	DocEnd   = "<!-- END GENERATED guards -->"
)

// UpdateDoc returns doc (docs/API.md) with its generated part replaced by
// GuardsMarkdown.
func UpdateDoc(doc string) (string, error) {
	before, rest, ok := strings.Cut(doc, DocBegin+"\n")
	if !ok {
		return "", fmt.Errorf("no %q line", DocBegin)
	}
	_, after, ok := strings.Cut(rest, DocEnd)
	if !ok {
		return "", fmt.Errorf("no %q line", DocEnd)
	}
	return before + DocBegin + "\n" + GuardsMarkdown() + DocEnd + after, nil
}
