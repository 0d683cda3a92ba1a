package core

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/agent"
	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/events"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/httpapi"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/frontend"
)

// The authorization test: a second, non-admin user B calls every facade
// method with the owner A's ids, and must be refused without A's data
// changing or showing up anywhere B can see it.

// authzIDs is one id of each kind, to fill a method's id slots.
type authzIDs struct {
	Chat     ids.ChatID
	UserMsg  ids.MessageID // a user turn of Chat
	ReplyMsg ids.MessageID // a finished reply of Chat
	Folder   ids.FolderID
	Conn     ids.ConnectionID
	Model    ids.ModelID
	User     ids.UserID
	Group    ids.GroupID
	Session  ids.SessionID
	// Attachment is an unsent upload (a sent one in the trash set).
	Attachment ids.AttachmentID
	// The library's: a knowledge base and one of its documents, a note, a
	// memory and a skill.
	Base     ids.BaseID
	Document ids.DocumentID
	Note     ids.NoteID
	Memory   ids.MemoryID
	Skill    ids.SkillID
	// Profile is an SSH profile (agent chats).
	Profile ids.ProfileID
}

// authzCall says how to call one method with the ids in s, and valid
// harmless values elsewhere.
type authzCall struct {
	args func(s authzIDs) []any
	// cursor lists id kinds that only bound a read of the caller's own rows
	// (a paging cursor): another user's id there, next to the caller's own
	// other ids, may succeed, but must not return anything of theirs.
	cursor []reflect.Type
	// filters: the method leaves out what the caller cannot see instead
	// of refusing it (a search over chosen bases), so it may succeed; the
	// leak check on its answer is what holds (the query is A's word).
	filters bool
	// invalid: an id of A's inside the request's body may be refused as
	// invalid, with a message that says what is wrong (a base the chat
	// cannot use, a grantee who cannot be one) and nothing of A's.
	invalid bool
}

// refusedOK says whether r is a refusal call allows besides not_found and
// forbidden (which refused checks), or a success of a filtering method.
func (call authzCall) refusedOK(r api.Result, barred bool) bool {
	if barred {
		return false
	}
	return (call.filters && r.Error == nil) || (call.invalid && r.Error != nil && r.Error.Kind == apperr.Invalid)
}

var (
	idsPkg        = reflect.TypeFor[ids.ChatID]().PkgPath()
	chatIDType    = reflect.TypeFor[ids.ChatID]()
	messageIDType = reflect.TypeFor[ids.MessageID]()
	folderIDType  = reflect.TypeFor[ids.FolderID]()
	connIDType    = reflect.TypeFor[ids.ConnectionID]()
	modelIDType   = reflect.TypeFor[ids.ModelID]()
	userIDType    = reflect.TypeFor[ids.UserID]()
	groupIDType   = reflect.TypeFor[ids.GroupID]()
	sessionIDType = reflect.TypeFor[ids.SessionID]()
	attachIDType  = reflect.TypeFor[ids.AttachmentID]()
	baseIDType    = reflect.TypeFor[ids.BaseID]()
	docIDType     = reflect.TypeFor[ids.DocumentID]()
	noteIDType    = reflect.TypeFor[ids.NoteID]()
	memoryIDType  = reflect.TypeFor[ids.MemoryID]()
	skillIDType   = reflect.TypeFor[ids.SkillID]()
	profileIDType = reflect.TypeFor[ids.ProfileID]()
)

func authzNone(authzIDs) []any { return nil }

// authzCalls lists every facade method. The test fails when a registered
// method has no entry, so a new method cannot skip the authorization check.
func authzCalls(llmURL string) map[string]authzCall {
	return map[string]authzCall{
		"App.Info":         {args: authzNone},
		"App.OpenURL":      {args: func(authzIDs) []any { return []any{"https://example.org/"} }},
		"App.Notify":       {args: func(authzIDs) []any { return []any{map[string]any{"title": "B", "body": "hello"}} }},
		"Prefs.Get":        {args: authzNone},
		"Diag.NilDeref":    {args: authzNone},
		"Diag.Emit":        {args: func(authzIDs) []any { return []any{"selftest", map[string]int{"n": 1}} }},
		"Diag.Report":      {args: func(authzIDs) []any { return []any{"authz", true, "probe"} }},
		"Models.Picker":    {args: authzNone},
		"Models.Efforts":   {args: authzNone},
		"Folders.List":     {args: authzNone},
		"Folders.Create":   {args: func(authzIDs) []any { return []any{"B's other folder"} }},
		"Chats.List":       {args: authzNone},
		"Chats.ListTrash":  {args: authzNone},
		"Chats.EmptyTrash": {args: authzNone},
		"Chats.Search":     {args: func(authzIDs) []any { return []any{authzSecretWord} }},

		"Connections.List":      {args: authzNone},
		"Connections.Discover":  {args: authzNone},
		"Connections.Create":    {args: func(authzIDs) []any { return []any{map[string]any{"name": "pwned", "baseUrl": llmURL}} }},
		"Connections.TestDraft": {args: func(authzIDs) []any { return []any{map[string]any{"baseUrl": llmURL}} }},
		"Connections.Update": {args: func(s authzIDs) []any {
			return []any{s.Conn, map[string]any{"name": "pwned", "baseUrl": llmURL, "apiKey": "", "headers": map[string]string{}, "enabled": false}}
		}},
		"Connections.Delete":        {args: func(s authzIDs) []any { return []any{s.Conn} }},
		"Connections.Test":          {args: func(s authzIDs) []any { return []any{s.Conn} }},
		"Connections.RefreshModels": {args: func(s authzIDs) []any { return []any{s.Conn} }},
		"Models.List":               {args: func(s authzIDs) []any { return []any{map[string]any{"connectionId": s.Conn}} }},
		"Models.Update": {args: func(s authzIDs) []any {
			return []any{s.Model, map[string]any{"displayName": "pwned", "enabled": false, "systemPrompt": "pwned"}}
		}},
		"Models.Move": {args: func(s authzIDs) []any { return []any{s.Model, s.Model} }},

		"Folders.Rename": {args: func(s authzIDs) []any { return []any{s.Folder, "pwned"} }},
		"Folders.Move":   {args: func(s authzIDs) []any { return []any{s.Folder, 5} }},
		"Folders.Delete": {args: func(s authzIDs) []any { return []any{s.Folder} }},
		"Chats.Get":      {args: func(s authzIDs) []any { return []any{s.Chat} }},
		"Chats.Messages": {args: func(s authzIDs) []any { return []any{s.Chat, s.ReplyMsg, 20} },
			cursor: []reflect.Type{messageIDType}},
		"Chats.Send": {args: func(s authzIDs) []any {
			return []any{map[string]any{"chatId": s.Chat, "modelId": s.Model, "content": "pwned", "attachments": []ids.AttachmentID{s.Attachment},
				"knowledge": map[string]any{"scoped": true, "bases": []ids.BaseID{s.Base}},
				"agent":     map[string]any{"profile": s.Profile, "dir": "/", "mode": "auto"}}}
		}, invalid: true}, // a scope or an agent sent with an existing chat is refused as invalid
		"Chats.Answer": {args: func(s authzIDs) []any {
			return []any{s.ReplyMsg, map[string]any{"id": "pwned", "items": map[string]any{"c0": map[string]any{"approve": true}}}}
		}},
		"Chats.CarryOutPlan": {args: func(s authzIDs) []any {
			return []any{s.ReplyMsg}
		}},
		"Chats.Stop":       {args: func(s authzIDs) []any { return []any{s.Chat} }},
		"Chats.Regenerate": {args: func(s authzIDs) []any { return []any{s.Chat} }},
		"Chats.Continue":   {args: func(s authzIDs) []any { return []any{s.Chat} }},
		"Chats.Edit": {args: func(s authzIDs) []any {
			return []any{s.UserMsg, "pwned", []ids.AttachmentID{s.Attachment}}
		}},
		"Chats.SwitchVersion": {args: func(s authzIDs) []any { return []any{s.UserMsg} }},
		"Chats.DeleteVersion": {args: func(s authzIDs) []any { return []any{s.ReplyMsg} }},
		"Files.Limits":        {args: authzNone},
		"Web.Settings":        {args: authzNone},
		"Web.SetSettings":     {args: func(authzIDs) []any { return []any{map[string]any{"allow": []string{"10.0.0.0/8"}}} }},
		"Web.TestSearch":      {args: func(authzIDs) []any { return []any{map[string]any{"query": "pwned"}} }},
		"MCP.List":            {args: authzNone},
		"MCP.Save":            {args: func(authzIDs) []any { return []any{map[string]any{"name": "pwned", "url": "https://example.org/mcp"}} }},
		"MCP.Delete":          {args: func(authzIDs) []any { return []any{map[string]any{"id": 1}} }},
		"MCP.Refresh":         {args: func(authzIDs) []any { return []any{map[string]any{"id": 1}} }},
		"MCP.SetTool":         {args: func(authzIDs) []any { return []any{map[string]any{"id": 1, "name": "x", "on": false}} }},
		"Audio.Status":        {args: authzNone},
		"Audio.Voices":        {args: authzNone},
		"Audio.Mine":          {args: authzNone},
		"Audio.SetMine":       {args: func(authzIDs) []any { return []any{map[string]any{"autoRead": true, "ttsVoice": "B's voice"}} }},
		"Tools.Settings":      {args: authzNone},
		"Tools.SetSettings":   {args: func(authzIDs) []any { return []any{map[string]any{"maxRounds": 3}} }},
		"Tools.List":          {args: authzNone},
		"Tools.Available":     {args: authzNone},
		"Diag.ReleaseTools":   {args: authzNone},
		"Audio.Settings":      {args: authzNone},
		"Audio.SetSettings":   {args: func(authzIDs) []any { return []any{map[string]any{"sttUrl": "http://pwned.example/v1"}} }},
		"Chats.Update": {args: func(s authzIDs) []any {
			return []any{s.Chat, map[string]any{"title": "pwned", "folderId": s.Folder, "modelId": s.Model,
				"pinned": true, "systemPrompt": "pwned", "params": map[string]any{"temperature": 1.5}}}
		}},
		"Chats.SaveDraft": {args: func(s authzIDs) []any { return []any{s.Chat, "pwned"} }},
		"Chats.MarkRead":  {args: func(s authzIDs) []any { return []any{s.Chat} }},
		"Prefs.Set": {args: func(s authzIDs) []any {
			return []any{map[string]any{"lastChat": s.Chat, "defaultModel": s.Model, "quickChat": s.Chat}}
		}},

		"Sharing.Status":            {args: authzNone},
		"Sharing.Start":             {args: authzNone},
		"Sharing.Stop":              {args: authzNone},
		"Account.Me":                {args: authzNone},
		"Account.Sessions":          {args: authzNone},
		"Account.SignOutEverywhere": {args: authzNone},
		"Account.SetDisplayName":    {args: func(authzIDs) []any { return []any{"B renamed"} }},
		"Account.ChangePassword":    {args: func(authzIDs) []any { return []any{"", "b-has-a-long-password"} }},
		"Account.RevokeSession":     {args: func(s authzIDs) []any { return []any{s.Session} }},

		"Admin.Users":       {args: func(authzIDs) []any { return []any{map[string]any{}} }},
		"Admin.Groups":      {args: authzNone},
		"Admin.Permissions": {args: authzNone},
		"Admin.Settings":    {args: authzNone},
		"Admin.SetBaseline": {args: func(authzIDs) []any { return []any{[]string{"models.view_all"}} }},
		"Admin.CreateUser": {args: func(authzIDs) []any {
			return []any{map[string]any{"username": "pwned", "password": "pwned-password-long", "admin": true}}
		}},
		"Admin.CreateGroup":   {args: func(authzIDs) []any { return []any{"pwned", []string{"models.view_all"}} }},
		"Admin.SetStatus":     {args: func(s authzIDs) []any { return []any{s.User, "disabled"} }},
		"Admin.SetAdmin":      {args: func(s authzIDs) []any { return []any{s.User, true} }},
		"Admin.ResetPassword": {args: func(s authzIDs) []any { return []any{s.User, "pwned-password-long"} }},
		"Admin.UpdateGroup":   {args: func(s authzIDs) []any { return []any{s.Group, "pwned", []string{"models.view_all"}} }},
		"Admin.DeleteGroup":   {args: func(s authzIDs) []any { return []any{s.Group} }},
		"Admin.SetMembers":    {args: func(s authzIDs) []any { return []any{s.Group, []ids.UserID{s.User}} }},
		"Admin.SetSettings":   {args: func(s authzIDs) []any { return []any{map[string]any{"instanceName": "pwned", "defaultModel": s.Model}} }},
		"Admin.ModelAccess":   {args: func(s authzIDs) []any { return []any{s.Model} }},
		"Admin.SetModelAccess": {args: func(s authzIDs) []any {
			return []any{s.Model, map[string]any{"users": []ids.UserID{s.User}, "groups": []ids.GroupID{s.Group}}}
		}},
		"CustomTools.List":   {args: authzNone},
		"CustomTools.Get":    {args: func(authzIDs) []any { return []any{1} }},
		"CustomTools.Delete": {args: func(authzIDs) []any { return []any{1} }},
		"CustomTools.Try":    {args: func(authzIDs) []any { return []any{map[string]any{"id": 1, "arguments": map[string]any{}}} }},
		"CustomTools.Save": {args: func(authzIDs) []any {
			return []any{map[string]any{"name": "pwned", "description": "pwned", "url": "https://pwned.example/"}}
		}},
		"Prompts.List":  {args: authzNone},
		"Prompts.Set":   {args: func(authzIDs) []any { return []any{map[string]any{"fragments": map[string]string{"date": "pwned"}}} }},
		"Prompts.Reset": {args: func(authzIDs) []any { return []any{"date"} }},
		"Prompts.Preview": {args: func(s authzIDs) []any {
			return []any{map[string]any{"modelId": s.Model, "userId": s.User}}
		}},
		"Chats.Live":      {args: func(s authzIDs) []any { return []any{s.Chat} }},
		"Chats.Compact":   {args: func(s authzIDs) []any { return []any{s.Chat} }},
		"Chats.Uncompact": {args: func(s authzIDs) []any { return []any{s.Chat} }},
		"Chats.Trash":     {args: func(s authzIDs) []any { return []any{s.Chat} }},
		"Chats.Restore":   {args: func(s authzIDs) []any { return []any{s.Chat} }},

		"Library.Bases":          {args: authzNone},
		"Library.CreateBase":     {args: func(authzIDs) []any { return []any{map[string]any{"name": "B's other base"}} }},
		"Library.UpdateBase":     {args: func(s authzIDs) []any { return []any{s.Base, map[string]any{"name": "pwned", "description": "pwned"}} }},
		"Library.DeleteBase":     {args: func(s authzIDs) []any { return []any{s.Base} }},
		"Library.Documents":      {args: func(s authzIDs) []any { return []any{s.Base} }},
		"Library.Document":       {args: func(s authzIDs) []any { return []any{s.Document} }},
		"Library.DeleteDocument": {args: func(s authzIDs) []any { return []any{s.Document} }},
		"Library.Search": {args: func(s authzIDs) []any {
			return []any{map[string]any{"query": authzSecretWord, "bases": []ids.BaseID{s.Base}}}
		}, filters: true},
		"Library.AttachDocument": {args: func(s authzIDs) []any { return []any{s.Document} }},
		"Library.ChatScope":      {args: func(s authzIDs) []any { return []any{s.Chat} }},
		"Library.SetChatScope": {args: func(s authzIDs) []any {
			return []any{s.Chat, map[string]any{"scoped": true, "bases": []ids.BaseID{s.Base}}}
		}, invalid: true},
		"Library.Notes":       {args: func(authzIDs) []any { return []any{map[string]any{"query": authzSecretWord}} }},
		"Library.Note":        {args: func(s authzIDs) []any { return []any{s.Note} }},
		"Library.CreateNote":  {args: func(authzIDs) []any { return []any{map[string]any{"title": "B's note", "body": "otters"}} }},
		"Library.UpdateNote":  {args: func(s authzIDs) []any { return []any{s.Note, map[string]any{"title": "pwned", "body": "pwned"}} }},
		"Library.DeleteNote":  {args: func(s authzIDs) []any { return []any{s.Note} }},
		"Library.Preview":     {args: func(authzIDs) []any { return []any{map[string]any{"markdown": "*otters*"}} }},
		"Library.Memories":    {args: authzNone},
		"Library.AddMemory":   {args: func(authzIDs) []any { return []any{map[string]any{"text": "B likes otters."}} }},
		"Library.SetMemoryOn": {args: func(authzIDs) []any { return []any{map[string]any{"on": false}} }},
		"Library.UpdateMemory": {args: func(s authzIDs) []any {
			return []any{s.Memory, map[string]any{"text": "pwned"}}
		}},
		"Library.DeleteMemory": {args: func(s authzIDs) []any { return []any{s.Memory} }},
		"Library.Skills":       {args: authzNone},
		"Library.Skill":        {args: func(s authzIDs) []any { return []any{s.Skill} }},
		"Library.CreateSkill": {args: func(authzIDs) []any {
			return []any{map[string]any{"name": "b-skill", "description": "B's skill", "body": "Be B."}}
		}},
		"Library.UpdateSkill": {args: func(s authzIDs) []any {
			return []any{s.Skill, map[string]any{"name": "pwned", "description": "pwned", "body": "pwned"}}
		}},
		"Library.DeleteSkill": {args: func(s authzIDs) []any { return []any{s.Skill} }},

		"Terminal.Open":        {args: func(s authzIDs) []any { return []any{s.Chat, 80, 24} }},
		"Terminal.Input":       {args: func(authzIDs) []any { return []any{"nope", []byte("x")} }},
		"Terminal.Resize":      {args: func(authzIDs) []any { return []any{"nope", 80, 24} }},
		"Terminal.Close":       {args: func(authzIDs) []any { return []any{"nope"} }},
		"Terminal.LastCommand": {args: func(s authzIDs) []any { return []any{s.Chat} }},
		// The item's id is a plain number beside its kind (no ids type), so
		// the library subtest below probes each kind with A's items; here B
		// reads and changes the shares of B's own base. Sharing one's own
		// base with A, or a group, is allowed: those slots may pass.
		"Library.Shares": {args: func(s authzIDs) []any { return []any{map[string]any{"kind": "base", "id": s.Base}} }},
		"Library.SetShares": {args: func(s authzIDs) []any {
			return []any{map[string]any{"kind": "base", "id": s.Base,
				"to": []map[string]any{{"userId": s.User}, {"groupId": s.Group}}}}
		}, cursor: []reflect.Type{userIDType, groupIDType}, invalid: true},
		"Library.People": {args: authzNone},

		"Agent.Profiles": {args: authzNone},
		"Agent.CreateProfile": {args: func(authzIDs) []any {
			return []any{map[string]any{"name": "B's box", "host": "b.example", "username": "b", "auth": "password", "password": "b-pw"}}
		}},
		"Agent.UpdateProfile": {args: func(s authzIDs) []any {
			return []any{s.Profile, map[string]any{"name": "pwned", "host": "pwned.example", "password": "pwned"}}
		}},
		"Agent.DeleteProfile": {args: func(s authzIDs) []any { return []any{s.Profile} }},
		"Agent.ScanHostKey":   {args: func(s authzIDs) []any { return []any{s.Profile} }},
		"Agent.AcceptHostKey": {args: func(s authzIDs) []any { return []any{s.Profile, "SHA256:pwned"} }},
		"Agent.ForgetHostKey": {args: func(s authzIDs) []any { return []any{s.Profile} }},
		"Agent.Test":          {args: func(s authzIDs) []any { return []any{s.Profile} }},
		"Agent.Browse":        {args: func(s authzIDs) []any { return []any{s.Profile, "/"} }},
		"Agent.Settings":      {args: authzNone},
		"Suggestions.List":    {args: func(s authzIDs) []any { return []any{s.Model} }, filters: true},
		"Suggestions.Admin":   {args: authzNone},
		"Suggestions.Create": {args: func(s authzIDs) []any {
			return []any{map[string]any{"title": "pwned", "prompt": "pwned", "modelId": s.Model}}
		}},
		"Suggestions.Update": {args: func(s authzIDs) []any {
			return []any{1, map[string]any{"title": "pwned", "prompt": "pwned", "modelId": s.Model}}
		}},
		"Suggestions.Delete":  {args: func(authzIDs) []any { return []any{1} }},
		"Suggestions.Reorder": {args: func(authzIDs) []any { return []any{[]int64{2, 1}} }},
		"Agent.ProjectFiles":  {args: func(s authzIDs) []any { return []any{s.Chat, ""} }},
		"Agent.AttachFile":    {args: func(s authzIDs) []any { return []any{s.Chat, "/etc/passwd"} }},
		"Agent.SetSettings":   {args: func(authzIDs) []any { return []any{map[string]any{"enabled": false}} }},
	}
}

// Words that appear only in A's data: none may reach B.
const authzSecretWord = "quokkaflux"

var authzMarkers = []string{authzSecretWord, "xyzzyfolder", "plughconn", "frobozzmodel", "sk-aprivate"}

// idSlot is one place in a method's parameters that holds an id.
type idSlot struct {
	path string
	typ  reflect.Type
}

// idSlots finds every ids-typed value reachable from t: directly, through
// pointers, slices, arrays, maps, and the exported fields of structs
// (generic ones such as store.Optional[ids.FolderID] included).
func idSlots(t reflect.Type, path string, onPath map[reflect.Type]bool, out *[]idSlot) {
	if t.PkgPath() == idsPkg {
		*out = append(*out, idSlot{path, t})
		return
	}
	if onPath[t] {
		return
	}
	onPath[t] = true
	defer delete(onPath, t)
	switch t.Kind() {
	case reflect.Pointer:
		idSlots(t.Elem(), path, onPath, out)
	case reflect.Slice, reflect.Array:
		idSlots(t.Elem(), path+"[]", onPath, out)
	case reflect.Map:
		idSlots(t.Key(), path+"{key}", onPath, out)
		idSlots(t.Elem(), path+"{}", onPath, out)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			idSlots(f.Type, path+"."+f.Name, onPath, out)
		}
	}
}

// idValues collects the ids-typed values in v by the same paths as idSlots.
func idValues(v reflect.Value, path string, out map[string][]any) {
	t := v.Type()
	if t.PkgPath() == idsPkg {
		if t.Kind() == reflect.String {
			out[path] = append(out[path], v.String())
		} else {
			out[path] = append(out[path], v.Int())
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			idValues(v.Elem(), path, out)
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			idValues(v.Index(i), path+"[]", out)
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			idValues(it.Key(), path+"{key}", out)
			idValues(it.Value(), path+"{}", out)
		}
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if t.Field(i).IsExported() {
				idValues(v.Field(i), path+"."+t.Field(i).Name, out)
			}
		}
	}
}

// withKind returns base with the ids of kind k taken from other.
func (base authzIDs) withKind(k reflect.Type, other authzIDs) authzIDs {
	switch k {
	case chatIDType:
		base.Chat = other.Chat
	case messageIDType:
		base.UserMsg, base.ReplyMsg = other.UserMsg, other.ReplyMsg
	case folderIDType:
		base.Folder = other.Folder
	case connIDType:
		base.Conn = other.Conn
	case modelIDType:
		base.Model = other.Model
	case userIDType:
		base.User = other.User
	case groupIDType:
		base.Group = other.Group
	case sessionIDType:
		base.Session = other.Session
	case attachIDType:
		base.Attachment = other.Attachment
	case baseIDType:
		base.Base = other.Base
	case docIDType:
		base.Document = other.Document
	case noteIDType:
		base.Note = other.Note
	case memoryIDType:
		base.Memory = other.Memory
	case skillIDType:
		base.Skill = other.Skill
	case profileIDType:
		base.Profile = other.Profile
	}
	return base
}

func (s authzIDs) has(k reflect.Type, val any) bool {
	if k == sessionIDType {
		return val == string(s.Session)
	}
	v, _ := val.(int64)
	switch k {
	case userIDType:
		return v == int64(s.User)
	case groupIDType:
		return v == int64(s.Group)
	case chatIDType:
		return v == int64(s.Chat)
	case messageIDType:
		return v == int64(s.UserMsg) || v == int64(s.ReplyMsg)
	case folderIDType:
		return v == int64(s.Folder)
	case connIDType:
		return v == int64(s.Conn)
	case modelIDType:
		return v == int64(s.Model)
	case attachIDType:
		return v == int64(s.Attachment)
	case baseIDType:
		return v == int64(s.Base)
	case docIDType:
		return v == int64(s.Document)
	case noteIDType:
		return v == int64(s.Note)
	case memoryIDType:
		return v == int64(s.Memory)
	case skillIDType:
		return v == int64(s.Skill)
	case profileIDType:
		return v == int64(s.Profile)
	}
	return false
}

func encodeArgs(args []any) []byte {
	if args == nil {
		return []byte("[]")
	}
	b, _ := json.Marshal(args)
	return b
}

// authzSnapshot is everything of A's that B could try to change, read
// through the store as A.
type authzSnapshot map[string]string

func TestAuthzNoCrossUserAccess(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	c := w.c
	A := ids.UserID(c.Owner.ID)
	adminA := store.Actor{User: A, Admin: true}
	ownerCall := func(method string, args ...any) api.Result {
		return c.Dispatcher.Call(ctx, c.OwnerCaller(), method, encodeArgs(args))
	}
	waitChat := func(id ids.ChatID) {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := c.Gen.Wait(wctx, id); err != nil {
			t.Fatalf("reply in chat %d did not finish: %v", id, err)
		}
	}
	send := func(u ids.UserID, chatID ids.ChatID, content string) (ids.ChatID, ids.MessageID, ids.MessageID) {
		t.Helper()
		res := c.Dispatcher.Call(ctx, api.Caller{UserID: int64(u), Admin: u == A}, "Chats.Send",
			encodeArgs([]any{map[string]any{"chatId": chatID, "modelId": w.model, "content": content}}))
		if res.Error != nil {
			t.Fatalf("send as user %d: %+v", u, res.Error)
		}
		var turn api.TurnView
		json.Unmarshal(res.Result, &turn)
		waitChat(turn.Chat.ID)
		return turn.Chat.ID, turn.User.ID, turn.Assistant.ID
	}

	// ---- A's world: an instance-wide connection and model (newWorld), a
	// personal connection and model with a secret and an avatar, a folder, a
	// chat with a finished reply in that folder, a trashed chat, prefs.
	keeper, err := c.Secrets()
	if err != nil {
		t.Fatal(err)
	}
	keyTok, err := keeper.Encrypt("sk-aprivate-4242")
	if err != nil {
		t.Fatal(err)
	}
	pconn, err := c.DB.CreateConnection(ctx, adminA, store.Connection{OwnerID: &A, Name: "A plughconn",
		BaseURL: w.llm.URL(), APIKeyEnc: keyTok, Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Connections.RefreshModels(ctx, A, pconn.ID); err != nil {
		t.Fatal(err)
	}
	pmodels, _, err := c.DB.ListModels(ctx, A, store.ModelFilter{ConnectionID: pconn.ID})
	if err != nil || len(pmodels) == 0 {
		t.Fatalf("personal models: %v %v", pmodels, err)
	}
	pmodel := pmodels[0]
	if _, err := c.DB.UpdateModel(ctx, adminA, pmodel.ID, store.ModelSettings{DisplayName: "A frobozzmodel",
		Description: "A frobozzmodel", Enabled: true, SystemPrompt: "frobozzmodel prompt"}); err != nil {
		t.Fatal(err)
	}
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0}, 32)...)
	if err := c.DB.SetModelAvatar(ctx, adminA, pmodel.ID, png, "image/png"); err != nil {
		t.Fatal(err)
	}
	if err := c.DB.SetModelAvatar(ctx, adminA, w.model, png, "image/png"); err != nil {
		t.Fatal(err)
	}
	folderA, err := c.DB.CreateFolder(ctx, A, "A xyzzyfolder")
	if err != nil {
		t.Fatal(err)
	}
	chatA, userMsgA, replyA := send(A, 0, "tell me about "+authzSecretWord)
	trashA, trashUserA, trashReplyA := send(A, 0, "an old "+authzSecretWord+" chat")
	// A's files: one sent with a turn of the trashed chat, one not sent yet.
	upload := func(u ids.UserID, name, text string) ids.AttachmentID {
		t.Helper()
		a, err := c.Files.Upload(ctx, u, name, strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		return a.ID
	}
	sentAttA := upload(A, authzSecretWord+"-sent.txt", "the "+authzSecretWord+" file")
	if r := ownerCall("Chats.Send", map[string]any{"chatId": trashA, "content": "see the file", "attachments": []ids.AttachmentID{sentAttA}}); r.Error != nil {
		t.Fatal(r.Error)
	}
	waitChat(trashA)
	attA := upload(A, authzSecretWord+"-draft.txt", "the unsent "+authzSecretWord+" file")
	if r := ownerCall("Chats.Trash", trashA); r.Error != nil {
		t.Fatal(r.Error)
	}
	if r := ownerCall("Prefs.Set", map[string]any{"theme": "moria"}); r.Error != nil {
		t.Fatal(r.Error)
	}

	// ---- B: a non-admin user made directly in the database, with a chat
	// and a folder of their own.
	now := time.Now().UnixMilli()
	res, err := c.DB.Write().ExecContext(ctx, `INSERT INTO users (username, display_name, is_admin, is_owner, status, created_at, updated_at)
		VALUES (?, 'B', 0, 0, 'active', ?, ?)`, fmt.Sprintf("authz-b-%d", time.Now().UnixNano()), now, now)
	if err != nil {
		t.Fatal(err)
	}
	bID, _ := res.LastInsertId()
	B := ids.UserID(bID)
	callerB := api.Caller{UserID: bID, Admin: false, Via: "authz-test"}
	folderB, err := c.DB.CreateFolder(ctx, B, "B folder")
	if err != nil {
		t.Fatal(err)
	}
	chatB, userMsgB, replyB := send(B, 0, "B asks about otters")
	attB := upload(B, "otters.txt", "B's otter notes")

	// The library of each: a base with a document, a note, a memory, a
	// skill. A's carry the secret word, so a leak shows.
	type libItems struct {
		base  ids.BaseID
		doc   ids.DocumentID
		note  ids.NoteID
		mem   ids.MemoryID
		skill ids.SkillID
	}
	mkLibrary := func(u ids.UserID, word string) libItems {
		t.Helper()
		b, err := c.Library.CreateBase(ctx, u, word+" base", "the "+word+" papers")
		if err != nil {
			t.Fatal(err)
		}
		d, err := c.Library.Ingest(ctx, u, b.ID, word+".md", strings.NewReader("# "+word+"\n\nThe "+word+" document says the harvest is in May.\n"))
		if err != nil {
			t.Fatal(err)
		}
		n, err := c.Library.CreateNote(ctx, u, word+" note", "The "+word+" note body.")
		if err != nil {
			t.Fatal(err)
		}
		m, err := c.Library.AddMemory(ctx, u, "Keeps "+word+" in the cellar.", "person")
		if err != nil {
			t.Fatal(err)
		}
		sk, err := c.Library.CreateSkill(ctx, u, word+"-skill", "How to "+word, "Do the "+word+" thing.")
		if err != nil {
			t.Fatal(err)
		}
		return libItems{b.ID, d.ID, n.ID, m.ID, sk.ID}
	}
	libA, libB := mkLibrary(A, authzSecretWord), mkLibrary(B, "otter")
	// C: another administrator, who is no grantee of A's: administrators
	// do not bypass the library's rule (store.Visible).
	res, err = c.DB.Write().ExecContext(ctx, `INSERT INTO users (username, display_name, is_admin, is_owner, status, created_at, updated_at)
		VALUES (?, 'C', 1, 0, 'active', ?, ?)`, fmt.Sprintf("authz-c-%d", time.Now().UnixNano()), now, now)
	if err != nil {
		t.Fatal(err)
	}
	cID, _ := res.LastInsertId()
	callerC := api.Caller{UserID: cID, Admin: true, Via: "authz-test"}

	// Sessions for both, a group of A's admin making, and a restricted
	// model B may not use.
	sessionID := func(u ids.UserID) ids.SessionID {
		t.Helper()
		tok, _, err := c.Sessions.Create(ctx, u, auth.Client{})
		if err != nil {
			t.Fatal(err)
		}
		return ids.SessionID(auth.HashToken(tok)[:16])
	}
	sessA, sessB := sessionID(A), sessionID(B)
	// SSH profiles: A's (its host key pinned, so forgetting it shows) and
	// B's. B holds agent.use (a group), so the Agent methods are not
	// barred by their guard: what refuses A's profile is its ownership.
	agents, err := c.DB.CreateGroup(ctx, "agent users", []string{string(auth.AgentUse)})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.DB.AddGroupMember(ctx, agents.ID, B); err != nil {
		t.Fatal(err)
	}
	profA, err := c.Agent.CreateProfile(ctx, A, agent.ProfileInput{Name: "A " + authzSecretWord + " box", Host: authzSecretWord + ".lan",
		Username: "a", Auth: store.AuthPassword, Password: "sk-aprivate-ssh"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.DB.PinSSHHostKey(ctx, A, profA.ID, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIquokkaflux", authzSecretWord+".lan", 22); err != nil {
		t.Fatal(err)
	}
	profB, err := c.Agent.CreateProfile(ctx, B, agent.ProfileInput{Name: "B's box", Host: "b.lan", Username: "b",
		Auth: store.AuthPassword, Password: "b-pw"})
	if err != nil {
		t.Fatal(err)
	}
	groupA, err := c.DB.CreateGroup(ctx, "A's xyzzyfolder group", []string{"chat.params"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.DB.AddGroupMember(ctx, groupA.ID, A); err != nil {
		t.Fatal(err)
	}

	aChats := []ids.ChatID{chatA, trashA}
	allChats := func() []ids.ChatID { return append(slices.Clone(aChats), chatB) }

	// ---- A's state, read through the store as A.
	snapshot := func() authzSnapshot {
		s := authzSnapshot{}
		put := func(k string, v any, err error) {
			if err != nil {
				t.Fatalf("snapshot %s: %v", k, err)
			}
			b, _ := json.Marshal(v)
			s[k] = string(b)
		}
		for _, id := range aChats {
			ch, err := c.DB.ChatByID(ctx, A, id)
			put(fmt.Sprintf("chat %d", id), ch, err)
			msgs, _, err := c.DB.MessagesPage(ctx, A, id, 0, 1000)
			put(fmt.Sprintf("messages of chat %d", id), msgs, err)
		}
		list, err := c.DB.ListChats(ctx, A, store.ChatFilter{})
		put("chat list", list, err)
		trash, err := c.DB.ListTrash(ctx, A)
		put("trash", trash, err)
		folders, err := c.DB.ListFolders(ctx, A)
		put("folders", folders, err)
		conns, err := c.DB.ListConnections(ctx, A)
		put("connections", conns, err)
		models, _, err := c.DB.ListModels(ctx, A, store.ModelFilter{})
		put("models", models, err)
		for _, id := range []ids.ModelID{w.model, pmodel.ID} {
			data, typ, err := c.DB.ModelAvatar(ctx, A, id)
			put(fmt.Sprintf("avatar of model %d", id), map[string]any{"type": typ, "data": data}, err)
		}
		prefs, err := c.DB.Prefs(ctx, int64(A))
		put("prefs", prefs, err)
		for _, id := range []ids.AttachmentID{attA, sentAttA} {
			a, data, err := c.Files.Get(ctx, A, id)
			put(fmt.Sprintf("attachment %d", id), map[string]any{"row": a, "data": data}, err)
		}
		audioA, err := c.DB.AudioSettings(ctx, &A)
		put("audio settings", audioA, err)
		audioI, err := c.DB.AudioSettings(ctx, nil)
		put("instance audio settings", audioI, err)
		// What admin methods would change: A's account and sessions, A's
		// group, model access, the instance settings.
		userA, err := c.DB.UserByID(ctx, int64(A))
		put("user", userA, err)
		hash, err := c.DB.PasswordHash(ctx, A)
		put("password", hash, err)
		sessions, err := c.DB.UserSessions(ctx, A)
		put("sessions", sessions, err)
		groups, err := c.DB.Groups(ctx)
		put("groups", groups, err)
		members, err := c.DB.GroupMembers(ctx, int64(groupA.ID))
		put("group members", members, err)
		users, _, err := c.DB.ListUsers(ctx, store.UserFilter{})
		users = slices.DeleteFunc(users, func(u store.User) bool { return u.ID == int64(B) })
		put("users but B", users, err)
		access, err := c.DB.ModelAccessOf(ctx, w.model)
		put("model access", access, err)
		for _, k := range []string{"instance_name", "signup_mode", "default_model", "default_permissions"} {
			v, _, err := c.DB.Setting(ctx, k)
			put("setting "+k, v, err)
		}
		// A's library, A's own items only (what is shared with A may
		// change: B may share B's own with A). An error is kept as the
		// value, so a deletion shows as a change, not a failed snapshot.
		putLib := func(k string, v any, err error) {
			if err != nil {
				v = "error: " + err.Error()
			}
			b, _ := json.Marshal(v)
			s[k] = string(b)
		}
		bases, err := c.Library.Bases(ctx, A)
		putLib("library bases", slices.DeleteFunc(bases, func(b store.KnowledgeBase) bool { return b.OwnerID != A }), err)
		docs, err := c.Library.Documents(ctx, A, libA.base)
		putLib("documents", docs, err)
		doc, err := c.Library.Document(ctx, A, libA.doc)
		putLib("document", doc, err)
		notes, err := c.Library.Notes(ctx, A, "", 1000)
		putLib("notes", slices.DeleteFunc(notes, func(n store.Note) bool { return n.OwnerID != A }), err)
		note, err := c.Library.Note(ctx, A, libA.note)
		putLib("note", note, err)
		mems, err := c.Library.Memories(ctx, A)
		putLib("memories", mems, err)
		on, err := c.Library.MemoryOn(ctx, A)
		putLib("memory on", on, err)
		skills, err := c.Library.Skills(ctx, A)
		putLib("skills", slices.DeleteFunc(skills, func(k store.Skill) bool { return k.OwnerID != A }), err)
		for kind, id := range map[store.LibraryKind]int64{store.KindBase: int64(libA.base), store.KindNote: int64(libA.note), store.KindSkill: int64(libA.skill)} {
			g, err := c.Library.Shares(ctx, A, kind, id)
			putLib("shares of "+string(kind), g, err)
		}
		profiles, err := c.DB.SSHProfiles(ctx, A)
		put("ssh profiles", profiles, err)
		scope, scoped, err := c.Library.ChatScope(ctx, A, chatA)
		putLib("chat scope", map[string]any{"scope": scope, "bases": scoped}, err)
		return s
	}
	// settle waits until no reply runs and background work (titles, unread
	// marks) has stopped changing A's data.
	settle := func() authzSnapshot {
		for _, id := range allChats() {
			waitChat(id)
		}
		prev := snapshot()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
			c.Chat.Wait()
			time.Sleep(40 * time.Millisecond)
			c.Chat.Wait()
			cur := snapshot()
			if reflect.DeepEqual(prev, cur) {
				return cur
			}
			prev = cur
		}
		t.Fatal("A's data keeps changing; cannot take a stable snapshot")
		return nil
	}
	settle()
	// A manual title with the secret word, and the chat in A's folder.
	if r := ownerCall("Chats.Update", chatA, map[string]any{"title": "The " + authzSecretWord + " plan", "folderId": folderA.ID}); r.Error != nil {
		t.Fatal(r.Error)
	}
	base := settle()
	if !strings.Contains(base["messages of chat "+fmt.Sprint(chatA)], `"Status":"final"`) ||
		!strings.Contains(base["chat "+fmt.Sprint(chatA)], `"Unread":true`) {
		t.Fatalf("A's chat is not as expected (a finished, unread reply): %s", base["chat "+fmt.Sprint(chatA)])
	}
	if r := ownerCall("Chats.Search", authzSecretWord); !strings.Contains(string(r.Result), fmt.Sprintf(`"chatId":%d`, chatA)) {
		t.Fatalf("A's own search for %q does not find A's chat (%s %+v): the search probe would prove nothing", authzSecretWord, r.Result, r.Error)
	}

	// Every event B receives from here on is checked at the end.
	subB := c.Bus.Subscribe(int64(B), 1<<14)
	defer subB.Close()
	subA := c.Bus.Subscribe(int64(A), 1<<14)
	defer subA.Close()

	idsA := authzIDs{Chat: chatA, UserMsg: userMsgA, ReplyMsg: replyA, Folder: folderA.ID, Conn: pconn.ID, Model: pmodel.ID,
		User: A, Group: ids.GroupID(groupA.ID), Session: sessA, Attachment: attA,
		Base: libA.base, Document: libA.doc, Note: libA.note, Memory: libA.mem, Skill: libA.skill, Profile: profA.ID}
	// The same with the instance-wide connection and model, which B may
	// use but not change.
	idsAShared := idsA
	idsAShared.Conn, idsAShared.Model = w.conn, w.model
	idsATrash := idsA
	idsATrash.Chat, idsATrash.UserMsg, idsATrash.ReplyMsg = trashA, trashUserA, trashReplyA
	idsATrash.Attachment = sentAttA
	idsB := authzIDs{Chat: chatB, UserMsg: userMsgB, ReplyMsg: replyB, Folder: folderB.ID, Conn: w.conn, Model: w.model,
		User: B, Group: ids.GroupID(groupA.ID), Session: sessB, Attachment: attB,
		Base: libB.base, Document: libB.doc, Note: libB.note, Memory: libB.mem, Skill: libB.skill, Profile: profB.ID}
	aIDSets := []authzIDs{idsA, idsAShared, idsATrash}

	leaks := func(b []byte) string {
		s := string(b)
		for _, m := range authzMarkers {
			if strings.Contains(strings.ToLower(s), m) {
				return m
			}
		}
		return ""
	}
	callB := func(method string, args []byte) api.Result {
		return c.Dispatcher.Call(ctx, callerB, method, args)
	}
	// barred says, from the method's guard in api.Table, whether B is
	// refused whatever the ids: administrators' methods, the desktop
	// window's, and those needing a permission B lacks.
	permsB, err := c.Perms.Resolve(ctx, store.User{ID: int64(B)})
	if err != nil {
		t.Fatal(err)
	}
	barred := func(g api.Guard) bool {
		switch g.Kind() {
		case api.GuardAdmin, api.GuardDesktopOwner:
			return true
		case api.GuardPerm:
			return permsB.Require(g.Permission()) != nil
		}
		return false
	}
	var adminGuarded int
	// after checks that A's data is what it was; a change is reported and
	// becomes the new baseline, so each method is blamed only for its own.
	after := func(t *testing.T, what string) {
		t.Helper()
		cur := settle()
		var keys []string
		for k := range base {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if base[k] != cur[k] {
				t.Errorf("CROSS-USER CHANGE: %s changed A's %s\n before: %.600s\n after:  %.600s", what, k, base[k], cur[k])
			}
		}
		base = cur
	}
	checkResult := func(t *testing.T, what string, r api.Result) {
		t.Helper()
		result := r.Result
		if strings.HasPrefix(what, "Library.") {
			// Groups are named to everyone who may share (Library.People):
			// the group's name is not A's data there.
			result = bytes.ReplaceAll(result, []byte(groupA.Name), nil)
		}
		if m := leaks(result); m != "" {
			t.Errorf("CROSS-USER READ: %s returned A's data (%q): %.600s", what, m, r.Result)
		}
		if r.Error != nil {
			if m := leaks([]byte(r.Error.Message)); m != "" {
				t.Errorf("CROSS-USER READ: %s's error message shows A's data (%q): %s", what, m, r.Error.Message)
			}
		}
	}
	refused := func(t *testing.T, what string, r api.Result, barred bool) {
		t.Helper()
		switch {
		case r.Error == nil:
			t.Errorf("CROSS-USER ACCESS: %s succeeded for B: %.600s", what, r.Result)
		case barred && r.Error.Kind != apperr.Forbidden:
			t.Errorf("%s: B (barred by its guard) got %s %q, want forbidden", what, r.Error.Kind, r.Error.Message)
		case r.Error.Kind != apperr.NotFound && r.Error.Kind != apperr.Forbidden:
			t.Errorf("%s: B got %s %q, want not_found or forbidden", what, r.Error.Kind, r.Error.Message)
		}
	}

	calls := authzCalls(w.llm.URL())
	var withIDs, withoutIDs, variants int
	registered := map[string]bool{}
	for _, m := range c.Dispatcher.Methods() {
		registered[m.Name] = true
		var slots []idSlot
		for i, p := range m.Params {
			idSlots(p, fmt.Sprintf("arg%d", i+1), map[reflect.Type]bool{}, &slots)
		}
		call, ok := calls[m.Name]
		if !ok {
			if len(slots) > 0 {
				t.Errorf("%s takes ids (%s) but has no entry in authzCalls: add one, so its ownership checks are tested", m.Name, slotNames(slots))
			} else {
				t.Errorf("%s has no entry in authzCalls: add one, so it is called as another user", m.Name)
			}
			continue
		}
		if tg, _ := api.GuardOf(m.Name); m.Guard != tg {
			t.Errorf("%s is registered behind %s, but api.Table says %s", m.Name, m.Guard, tg)
		}
		bar := barred(m.Guard)
		if m.Guard.Kind() == api.GuardAdmin {
			adminGuarded++
		}
		t.Run(m.Name, func(t *testing.T) {
			if len(slots) == 0 {
				withoutIDs++
				what := m.Name + " (no ids)"
				r := callB(m.Name, encodeArgs(call.args(idsB)))
				checkResult(t, what, r)
				if bar && (r.Error == nil || r.Error.Kind != apperr.Forbidden) {
					t.Errorf("%s is guarded (%s) but B got %+v %.300s, want forbidden", what, m.Guard, r.Error, r.Result)
				}
				checkOwnOnly(t, m.Name, r, aChats, folderA.ID, pmodel.ID, chatB, folderB.ID)
				after(t, what)
				return
			}
			withIDs++
			// The builder must put A's ids in every id slot.
			b := encodeArgs(call.args(idsA))
			var raw []json.RawMessage
			json.Unmarshal(b, &raw)
			got := map[string][]any{}
			for i, p := range m.Params {
				v := reflect.New(p)
				if i < len(raw) {
					if err := json.Unmarshal(raw[i], v.Interface()); err != nil {
						t.Fatalf("authzCalls[%s] builds arguments that do not decode: %v", m.Name, err)
					}
				}
				idValues(v.Elem(), fmt.Sprintf("arg%d", i+1), got)
			}
			for _, s := range slots {
				vals := got[s.path]
				if strings.Contains(s.path, "[]") {
					// In a list of one-of entries (a grantee is a person or
					// a group) the other kind's field is zero.
					vals = slices.DeleteFunc(slices.Clone(vals), func(v any) bool { return v == int64(0) || v == "" })
				}
				if len(vals) == 0 {
					t.Errorf("authzCalls[%s] leaves the id slot %s (%s) empty: fill it from the ids it is given", m.Name, s.path, s.typ.Name())
				}
				for _, v := range vals {
					if !idsA.has(s.typ, v) {
						t.Errorf("authzCalls[%s] puts %v in %s (%s), not the %s it was given", m.Name, v, s.path, s.typ.Name(), s.typ.Name())
					}
				}
			}
			try := func(what string, args []byte, mayPass bool) {
				variants++
				r := callB(m.Name, args)
				checkResult(t, what, r)
				switch {
				case mayPass && r.Error == nil:
					checkOwnOnly(t, m.Name, r, aChats, folderA.ID, pmodel.ID, chatB, folderB.ID)
				case call.refusedOK(r, bar):
				default:
					refused(t, what, r, bar)
				}
				after(t, what)
			}
			// A's ids in every slot.
			for i, set := range aIDSets {
				try(fmt.Sprintf("%s with A's ids (set %d) %s", m.Name, i+1, args(call.args(set))), encodeArgs(call.args(set)), false)
			}
			// One kind of A's, the rest B's own (or zero): the check must be
			// on every id, not just the first.
			kinds := map[reflect.Type]bool{}
			for _, s := range slots {
				kinds[s.typ] = true
			}
			for k := range kinds {
				for _, baseSet := range []authzIDs{idsB, {}} {
					if len(kinds) == 1 && baseSet == idsB {
						continue // the same as A's ids in every slot
					}
					set := baseSet.withKind(k, idsA)
					mayPass := baseSet == idsB && slices.Contains(call.cursor, k)
					try(fmt.Sprintf("%s with A's %s among B's own ids %s", m.Name, k.Name(), args(call.args(set))), encodeArgs(call.args(set)), mayPass)
				}
			}
			// Guarded methods refuse B even with ids B may see.
			if bar {
				variants++
				what := m.Name + " with instance-wide ids " + args(call.args(idsB))
				r := callB(m.Name, encodeArgs(call.args(idsB)))
				checkResult(t, what, r)
				if r.Error == nil || r.Error.Kind != apperr.Forbidden {
					t.Errorf("%s is guarded (%s) but B got %+v %.300s, want forbidden", what, m.Guard, r.Error, r.Result)
				}
				after(t, what)
			}
		})
	}
	for name := range calls {
		if !registered[name] {
			t.Errorf("authzCalls lists %s, which is not registered", name)
		}
	}
	if adminGuarded == 0 {
		t.Error("no method is guarded for administrators: api.Table was not read")
	}

	// Control: B is a working user, so the refusals above are about A's ids.
	for _, probe := range []struct {
		method string
		args   []any
	}{
		{"Chats.Get", []any{chatB}},
		{"Chats.Messages", []any{chatB}},
		{"Folders.Rename", []any{folderB.ID, "B folder"}},
		{"Models.Picker", nil},
		{"Agent.Profiles", nil},
		{"Agent.UpdateProfile", []any{profB.ID, map[string]any{"name": "B's box"}}},
	} {
		if r := callB(probe.method, encodeArgs(probe.args)); r.Error != nil {
			t.Errorf("control: B's own %s failed: %+v", probe.method, r.Error)
		}
	}

	// ---- Avatar routes, as B over HTTP.
	t.Run("avatars", func(t *testing.T) {
		h, err := httpapi.New(httpapi.Options{Dispatcher: c.Dispatcher, Bus: c.Bus, Files: frontend.FS(),
			Log: slog.New(slog.DiscardHandler), Caller: func(*http.Request) (api.Caller, error) { return callerB, nil },
			Avatars: api.NewAvatarStore(c.Connections)})
		if err != nil {
			t.Fatal(err)
		}
		do := func(method string, id ids.ModelID) (int, string) {
			var body bytes.Buffer
			req := httptest.NewRequest(method, fmt.Sprintf("/api/models/%d/avatar", id), nil)
			if method == http.MethodPost {
				mw := multipart.NewWriter(&body)
				fw, _ := mw.CreateFormFile("file", "a.png")
				fw.Write(png)
				mw.Close()
				req = httptest.NewRequest(method, fmt.Sprintf("/api/models/%d/avatar", id), &body)
				req.Header.Set("Content-Type", mw.FormDataContentType())
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			return rec.Code, rec.Body.String()
		}
		for _, id := range []ids.ModelID{w.model, pmodel.ID} {
			for _, method := range []string{http.MethodPost, http.MethodDelete} {
				if code, body := do(method, id); code != http.StatusForbidden {
					t.Errorf("CROSS-USER ACCESS: %s /api/models/%d/avatar as B: %d %s, want 403 forbidden", method, id, code, body)
				}
				after(t, method+" avatar")
			}
		}
		if code, body := do(http.MethodGet, pmodel.ID); code != http.StatusNotFound {
			t.Errorf("CROSS-USER READ: GET the avatar of A's personal model %d as B: %d %.100q, want 404", pmodel.ID, code, body)
		}
	})

	// ---- File routes, as B over HTTP: A's files, sent or not, are not
	// found; B's own upload is, so the refusals are about ownership.
	t.Run("files", func(t *testing.T) {
		h, err := httpapi.New(httpapi.Options{Dispatcher: c.Dispatcher, Bus: c.Bus, Files: frontend.FS(),
			Log: slog.New(slog.DiscardHandler), Caller: func(*http.Request) (api.Caller, error) { return callerB, nil },
			Attachments: api.NewFileRoutes(c.Files, c.Audio, c.permits)})
		if err != nil {
			t.Fatal(err)
		}
		do := func(method string, id ids.AttachmentID) (int, string) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(method, fmt.Sprintf("/api/files/%d", id), nil))
			return rec.Code, rec.Body.String()
		}
		for _, id := range []ids.AttachmentID{attA, sentAttA} {
			for _, method := range []string{http.MethodGet, http.MethodDelete} {
				code, body := do(method, id)
				if code != http.StatusNotFound {
					t.Errorf("CROSS-USER ACCESS: %s /api/files/%d (A's) as B: %d %.200s, want 404", method, id, code, body)
				}
				if m := leaks([]byte(body)); m != "" {
					t.Errorf("CROSS-USER READ: %s /api/files/%d shows A's data (%q)", method, id, m)
				}
				after(t, method+" file")
			}
		}
		if code, body := do(http.MethodGet, attB); code != http.StatusOK || !strings.Contains(body, "otter") {
			t.Errorf("control: B's own file: %d %.100s", code, body)
		}
	})

	// ---- The library, as B and as administrator C: neither owns A's
	// items nor is a grantee, so every id of A's is refused (the shares'
	// item ids, plain numbers, by kind here), and no list or search shows
	// A's. Then the document routes over HTTP, and a grantee as control.
	// ---- SSH profiles, as administrator C: administrators do not reach
	// another person's profile either (B, holding agent.use, was probed
	// above with every id).
	t.Run("agent", func(t *testing.T) {
		for _, m := range c.Dispatcher.Methods() {
			if !strings.HasPrefix(m.Name, "Agent.") {
				continue
			}
			var slots []idSlot
			for i, p := range m.Params {
				idSlots(p, fmt.Sprintf("arg%d", i+1), map[reflect.Type]bool{}, &slots)
			}
			if len(slots) == 0 {
				continue
			}
			a := calls[m.Name].args(idsA)
			what := fmt.Sprintf("%s as administrator C with A's profile %s", m.Name, args(a))
			r := c.Dispatcher.Call(ctx, callerC, m.Name, encodeArgs(a))
			checkResult(t, what, r)
			refused(t, what, r, false)
			after(t, what)
		}
		if r := c.Dispatcher.Call(ctx, callerC, "Agent.Profiles", nil); r.Error != nil || leaks(r.Result) != "" {
			t.Errorf("Agent.Profiles as administrator C: %s %+v", r.Result, r.Error)
		}
	})

	t.Run("library", func(t *testing.T) {
		for _, who := range []struct {
			name   string
			caller api.Caller
		}{{"B", callerB}, {"administrator C", callerC}} {
			callAs := func(method string, args []byte) api.Result { return c.Dispatcher.Call(ctx, who.caller, method, args) }
			for _, m := range c.Dispatcher.Methods() {
				if !strings.HasPrefix(m.Name, "Library.") {
					continue
				}
				var slots []idSlot
				for i, p := range m.Params {
					idSlots(p, fmt.Sprintf("arg%d", i+1), map[reflect.Type]bool{}, &slots)
				}
				a := calls[m.Name].args(idsA)
				what := fmt.Sprintf("%s as %s with A's items %s", m.Name, who.name, args(a))
				r := callAs(m.Name, encodeArgs(a))
				checkResult(t, what, r)
				if (len(slots) > 0 || m.Name == "Library.Shares") && !calls[m.Name].refusedOK(r, false) {
					refused(t, what, r, false)
				}
				after(t, what)
			}
			for kind, id := range map[string]int64{"base": int64(libA.base), "note": int64(libA.note), "skill": int64(libA.skill)} {
				for _, method := range []string{"Library.Shares", "Library.SetShares"} {
					a := []any{map[string]any{"kind": kind, "id": id, "to": []map[string]any{{"userId": who.caller.UserID}}}}
					if method == "Library.Shares" {
						a = []any{map[string]any{"kind": kind, "id": id}}
					}
					what := fmt.Sprintf("%s as %s of A's %s", method, who.name, kind)
					r := callAs(method, encodeArgs(a))
					checkResult(t, what, r)
					refused(t, what, r, false)
					after(t, what)
				}
			}
			// Everything the caller can see: nothing of A's.
			for _, probe := range []struct {
				method string
				args   []any
			}{
				{"Library.Search", []any{map[string]any{"query": authzSecretWord}}},
				{"Library.Search", []any{map[string]any{"query": "harvest"}}},
				{"Library.Notes", []any{map[string]any{}}},
				{"Library.Bases", nil}, {"Library.Skills", nil}, {"Library.Memories", nil},
			} {
				what := fmt.Sprintf("%s as %s %s", probe.method, who.name, args(probe.args))
				r := callAs(probe.method, encodeArgs(probe.args))
				if r.Error != nil {
					t.Errorf("%s failed: %+v", what, r.Error)
				}
				checkResult(t, what, r)
			}
		}
		// Control: B's own search finds B's document, so the empty
		// answers above are about A's.
		if r := callB("Library.Search", encodeArgs([]any{map[string]any{"query": "harvest"}})); r.Error != nil ||
			!strings.Contains(string(r.Result), fmt.Sprintf(`"documentId":%d`, libB.doc)) {
			t.Errorf("control: B's search does not find B's own document: %s %+v", r.Result, r.Error)
		}

		docs := func(caller api.Caller) http.Handler {
			h, err := httpapi.New(httpapi.Options{Dispatcher: c.Dispatcher, Bus: c.Bus, Files: frontend.FS(),
				Log: slog.New(slog.DiscardHandler), Caller: func(*http.Request) (api.Caller, error) { return caller, nil },
				Documents: api.NewLibraryRoutes(c.Library, c.permits)})
			if err != nil {
				t.Fatal(err)
			}
			return h
		}
		get := func(h http.Handler, id ids.DocumentID) (int, string) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, fmt.Sprintf("/api/library/documents/%d", id), nil))
			return rec.Code, rec.Body.String()
		}
		post := func(h http.Handler, base ids.BaseID) (int, string) {
			var body bytes.Buffer
			mw := multipart.NewWriter(&body)
			mw.WriteField("base", fmt.Sprint(base))
			fw, _ := mw.CreateFormFile("file", "pwned.md")
			fw.Write([]byte("pwned"))
			mw.Close()
			req := httptest.NewRequest(http.MethodPost, "/api/library/documents", &body)
			req.Header.Set("Content-Type", mw.FormDataContentType())
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			return rec.Code, rec.Body.String()
		}
		for _, who := range []struct {
			name   string
			caller api.Caller
		}{{"B", callerB}, {"administrator C", callerC}} {
			h := docs(who.caller)
			if code, body := get(h, libA.doc); code != http.StatusNotFound || leaks([]byte(body)) != "" {
				t.Errorf("CROSS-USER READ: GET A's document %d as %s: %d %.200s, want 404", libA.doc, who.name, code, body)
			}
			if code, body := post(h, libA.base); code != http.StatusNotFound && code != http.StatusForbidden {
				t.Errorf("CROSS-USER ACCESS: POST a document into A's base %d as %s: %d %.200s, want 404", libA.base, who.name, code, body)
			}
			after(t, "document routes as "+who.name)
		}
		// A chat's export is its owner's alone, the administrator's
		// included (chatA is A's).
		for _, who := range []struct {
			name   string
			caller api.Caller
		}{{"B", callerB}, {"administrator C", callerC}} {
			eh, err := httpapi.New(httpapi.Options{Dispatcher: c.Dispatcher, Bus: c.Bus, Files: frontend.FS(),
				Log: slog.New(slog.DiscardHandler), Caller: func(*http.Request) (api.Caller, error) { return who.caller, nil },
				Exports: api.NewExportRoutes(c.Chat)})
			if err != nil {
				t.Fatal(err)
			}
			for _, format := range []string{"markdown", "json"} {
				rec := httptest.NewRecorder()
				eh.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, fmt.Sprintf("/api/chats/%d/export?format=%s", chatA, format), nil))
				if rec.Code != http.StatusNotFound || leaks(rec.Body.Bytes()) != "" {
					t.Errorf("CROSS-USER READ: export of A's chat %d as %s (%s): %d %.200s, want 404", chatA, who.name, format, rec.Code, rec.Body.String())
				}
			}
		}
		if code, body := get(docs(callerB), libB.doc); code != http.StatusOK || !strings.Contains(body, "otter") {
			t.Errorf("control: B's own document: %d %.100s", code, body)
		}

		// Control: a grantee reads what is shared with them, and only that.
		if _, err := c.Library.SetShares(ctx, A, store.KindBase, int64(libA.base), []store.Grantee{{UserID: ids.UserID(cID)}}); err != nil {
			t.Fatal(err)
		}
		if code, body := get(docs(callerC), libA.doc); code != http.StatusOK || !strings.Contains(body, authzSecretWord) {
			t.Errorf("control: C, a grantee of A's base, cannot download its document: %d %.100s", code, body)
		}
		if r := c.Dispatcher.Call(ctx, callerC, "Library.Note", encodeArgs([]any{libA.note})); r.Error == nil {
			t.Errorf("CROSS-USER READ: C, a grantee of A's base only, reads A's note: %s", r.Result)
		}
		if r := c.Dispatcher.Call(ctx, callerC, "Library.DeleteDocument", encodeArgs([]any{libA.doc})); r.Error == nil {
			t.Errorf("CROSS-USER CHANGE: C, a grantee (reading only), deleted A's document")
		}
		if _, err := c.Library.SetShares(ctx, A, store.KindBase, int64(libA.base), nil); err != nil {
			t.Fatal(err)
		}
		after(t, "the grantee control")
	})

	// ---- Events: A's chat streams a reply; B must hear nothing of it, and
	// B's calls on the running reply must be refused.
	t.Run("events", func(t *testing.T) {
		w.llm.Enqueue(fakellm.Fixture("stream-no-reasoning").FirstByteAfter(300 * time.Millisecond))
		r := ownerCall("Chats.Send", map[string]any{"chatId": chatA, "content": "more about " + authzSecretWord})
		if r.Error != nil {
			t.Fatal(r.Error)
		}
		if !c.Gen.Running(chatA) {
			t.Log("A's reply finished before B's calls on it; the streaming probes ran on a finished reply")
		}
		for _, method := range []string{"Chats.Stop", "Chats.Live", "Chats.Messages", "Chats.Trash", "Chats.Continue"} {
			r := callB(method, encodeArgs([]any{chatA}))
			checkResult(t, method+" on A's streaming chat", r)
			refused(t, method+" on A's streaming chat", r, false)
		}
		if r := ownerCall("Chats.Update", chatA, map[string]any{"pinned": true}); r.Error != nil {
			t.Fatal(r.Error)
		}
		settle()
		msgs, _, err := c.DB.MessagesPage(ctx, A, chatA, 0, 1000)
		if err != nil || len(msgs) == 0 {
			t.Fatalf("A's messages: %v", err)
		}
		if last := msgs[len(msgs)-1]; last.Role != store.RoleAssistant || last.Status != store.StatusFinal {
			t.Errorf("CROSS-USER CHANGE: A's streamed reply ended %s (%q), not final: did B's Stop reach it?", last.Status, last.Error)
		}
		isA := map[ids.ChatID]bool{}
		for _, id := range aChats {
			isA[id] = true
		}
		drain := func(s *events.Sub) (evs []events.Event) {
			for {
				select {
				case ev, ok := <-s.C():
					if !ok {
						return evs
					}
					evs = append(evs, ev)
				default:
					return evs
				}
			}
		}
		if subB.Overflows() > 0 {
			t.Fatal("B's subscription fell behind; cannot tell what B received")
		}
		for _, ev := range drain(subB) {
			b, _ := json.Marshal(ev.Data)
			var d struct {
				ChatID ids.ChatID `json:"chatId"`
			}
			json.Unmarshal(b, &d)
			if (ev.Topic == "gen" || ev.Topic == "chat") && isA[d.ChatID] {
				t.Errorf("CROSS-USER EVENT: B received %s for A's chat %d: %.300s", ev.Topic, d.ChatID, b)
			} else if m := leaks(b); m != "" {
				t.Errorf("CROSS-USER EVENT: B received %s carrying A's data (%q): %.300s", ev.Topic, m, b)
			}
		}
		var gen, chatEv int
		for _, ev := range drain(subA) {
			b, _ := json.Marshal(ev.Data)
			if strings.Contains(string(b), fmt.Sprintf(`"chatId":%d`, chatA)) {
				switch ev.Topic {
				case "gen":
					gen++
				case "chat":
					chatEv++
				}
			}
		}
		if gen == 0 || chatEv == 0 {
			t.Errorf("control: A received %d gen and %d chat events for its chat; the event check proves nothing", gen, chatEv)
		}
	})

	t.Logf("authz: %d methods checked with ids (%d calls as B), %d without ids", withIDs, variants, withoutIDs)
}

// checkOwnOnly decodes the results of the list-like methods and fails on any
// of A's rows; for the main lists it also checks B's own rows are there.
func checkOwnOnly(t *testing.T, method string, r api.Result, aChats []ids.ChatID, aFolder ids.FolderID, aModel ids.ModelID, bChat ids.ChatID, bFolder ids.FolderID) {
	t.Helper()
	mustWork := func() bool {
		if r.Error != nil {
			t.Errorf("%s failed for B: %+v", method, r.Error)
			return false
		}
		return true
	}
	switch method {
	case "Chats.List", "Chats.ListTrash":
		if !mustWork() {
			return
		}
		var list []api.ChatSummary
		json.Unmarshal(r.Result, &list)
		seenB := false
		for _, s := range list {
			if slices.Contains(aChats, s.ID) || (s.FolderID != nil && *s.FolderID == aFolder) {
				t.Errorf("CROSS-USER READ: %s as B lists A's chat %d", method, s.ID)
			}
			seenB = seenB || s.ID == bChat
		}
		if method == "Chats.List" && !seenB {
			t.Errorf("control: Chats.List as B does not list B's own chat %d: %s", bChat, r.Result)
		}
	case "Chats.Search":
		if !mustWork() {
			return
		}
		var hits []api.SearchHit
		json.Unmarshal(r.Result, &hits)
		for _, h := range hits {
			if slices.Contains(aChats, h.ChatID) {
				t.Errorf("CROSS-USER READ: Chats.Search as B finds A's chat %d: %+v", h.ChatID, h)
			}
		}
		if len(hits) > 0 {
			t.Errorf("CROSS-USER READ: Chats.Search for a word only A wrote gives B %d hits: %s", len(hits), r.Result)
		}
	case "Chats.Messages":
		if !mustWork() {
			return
		}
		var page api.MessagesPage
		json.Unmarshal(r.Result, &page)
		for _, m := range page.Messages {
			if m.ChatID != bChat {
				t.Errorf("CROSS-USER READ: Chats.Messages as B returns message %d of chat %d", m.ID, m.ChatID)
			}
		}
	case "Folders.List":
		if !mustWork() {
			return
		}
		var list []api.FolderView
		json.Unmarshal(r.Result, &list)
		seenB := false
		for _, f := range list {
			if f.ID == aFolder {
				t.Errorf("CROSS-USER READ: Folders.List as B lists A's folder %d", f.ID)
			}
			seenB = seenB || f.ID == bFolder
		}
		if !seenB {
			t.Errorf("control: Folders.List as B does not list B's own folder %d: %s", bFolder, r.Result)
		}
	case "Models.Picker":
		if !mustWork() {
			return
		}
		var list []api.ModelView
		json.Unmarshal(r.Result, &list)
		for _, m := range list {
			if m.ID == aModel {
				t.Errorf("CROSS-USER READ: Models.Picker as B offers A's personal model %d", m.ID)
			}
		}
	case "Agent.Profiles":
		if !mustWork() {
			return
		}
		var list []api.SSHProfile
		json.Unmarshal(r.Result, &list)
		for _, p := range list {
			if p.Name != "B's box" {
				t.Errorf("CROSS-USER READ: Agent.Profiles as B lists a profile that is not B's: %+v", p)
			}
		}
	case "Prefs.Get":
		mustWork()
	}
}

func slotNames(slots []idSlot) string {
	var s []string
	for _, x := range slots {
		s = append(s, x.path+" "+x.typ.Name())
	}
	return strings.Join(s, ", ")
}

func args(a []any) string {
	b, _ := json.Marshal(a)
	return string(b)
}
