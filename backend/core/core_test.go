package core

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/config"
	"github.com/llembas/lembas/backend/connections"
	"github.com/llembas/lembas/backend/customtools"
	"github.com/llembas/lembas/backend/events"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/httpapi"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/frontend"
)

// testConfig is a valid config for an instance in a temporary directory,
// with no keychain; selfTest adds the Diag facade.
func testConfig(t testing.TB, selfTest bool) config.Config {
	t.Helper()
	cfg, err := config.Load(func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = t.TempDir()
	cfg.NoKeychain = true
	cfg.SelfTest = selfTest
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// openBench opens an instance for a benchmark: no self-test, no logs,
// closed when the benchmark ends.
func openBench(b testing.TB) *Core {
	b.Helper()
	c, err := Open(context.Background(), testConfig(b, false), Options{Mode: Serve, Version: "bench", Files: frontend.FS(),
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

func openTest(t *testing.T, opened *[]string) *Core {
	t.Helper()
	c, err := Open(context.Background(), testConfig(t, true), Options{
		Mode:    Serve,
		Version: "test",
		Files:   frontend.FS(),
		Log:     slog.New(slog.DiscardHandler),
		OpenURL: func(u string) error { *opened = append(*opened, u); return nil },
		// Cheap hashing: these tests sign in often and test no hash.
		Password: auth.Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// world is what the facade calls need: a connection to a fake endpoint, a
// model, a chat with a finished reply.
type world struct {
	c     *Core
	llm   *fakellm.Server
	conn  ids.ConnectionID
	model ids.ModelID
	chat  ids.ChatID
}

func (w *world) idle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.c.Gen.Wait(ctx, w.chat); err != nil {
		t.Fatal(err)
	}
}

func (w *world) newChat(t *testing.T) ids.ChatID {
	t.Helper()
	turn, err := w.c.Chat.Send(context.Background(), ids.UserID(w.c.Owner.ID), chat.SendInput{ModelID: w.model, Content: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	w.c.Gen.Wait(ctx, turn.Chat.ID)
	return turn.Chat.ID
}

// facadeCall says how to call one facade method and what it should answer.
// prep runs before each of the two calls (dispatcher, HTTP), so methods that
// consume their target get a fresh one.
type facadeCall struct {
	name string
	prep func(t *testing.T, w *world) []any
	kind apperr.Kind // "" means success
}

func noArgs(*testing.T, *world) []any { return nil }

// facadeCalls lists every facade method. The test fails when a method is
// registered without an entry here, so a new method cannot go untested
// through both paths.
var facadeCalls = []facadeCall{
	{"App.Info", noArgs, ""},
	{"App.OpenURL", func(*testing.T, *world) []any { return []any{"https://example.org/"} }, ""},
	{"App.Notify", func(*testing.T, *world) []any {
		return []any{map[string]string{"title": "Done", "body": "The reply is ready."}}
	}, apperr.Unavailable},
	{"Prefs.Get", noArgs, ""},
	{"Prefs.Set", func(*testing.T, *world) []any { return []any{map[string]any{"theme": "shire"}} }, ""},
	{"Sharing.Status", noArgs, ""},
	{"Sharing.Start", noArgs, apperr.Unavailable},
	{"Sharing.Stop", noArgs, apperr.Unavailable},
	{"Account.Me", noArgs, ""},
	{"Account.SetDisplayName", func(*testing.T, *world) []any { return []any{"The Owner"} }, ""},
	{"Account.ChangePassword", func(*testing.T, *world) []any { return []any{"", "short"} }, apperr.Invalid},
	{"Account.Sessions", noArgs, ""},
	{"Account.RevokeSession", func(*testing.T, *world) []any { return []any{"00000000000000ff"} }, apperr.NotFound},
	{"Account.SignOutEverywhere", noArgs, ""},
	{"Admin.Users", func(*testing.T, *world) []any { return []any{map[string]any{"status": "active"}} }, ""},
	{"Admin.CreateUser", func(t *testing.T, w *world) []any {
		return []any{map[string]any{"username": fmt.Sprintf("made%d", seq.Add(1)), "password": "a-long-enough-password"}}
	}, ""},
	{"Admin.SetStatus", func(t *testing.T, w *world) []any { return []any{mkUser(t, w), "disabled"} }, ""},
	{"Admin.SetAdmin", func(t *testing.T, w *world) []any { return []any{mkUser(t, w), true} }, ""},
	{"Admin.ResetPassword", func(t *testing.T, w *world) []any { return []any{mkUser(t, w), "another-long-password"} }, ""},
	{"Admin.Groups", noArgs, ""},
	{"Admin.CreateGroup", func(t *testing.T, w *world) []any {
		return []any{fmt.Sprintf("Group %d", seq.Add(1)), []string{"models.view_all"}}
	}, ""},
	{"Admin.UpdateGroup", func(t *testing.T, w *world) []any {
		return []any{mkGroup(t, w), fmt.Sprintf("Renamed %d", seq.Add(1)), []string{"chat.params"}}
	}, ""},
	{"Admin.DeleteGroup", func(t *testing.T, w *world) []any { return []any{mkGroup(t, w)} }, ""},
	{"Admin.SetMembers", func(t *testing.T, w *world) []any { return []any{mkGroup(t, w), []ids.UserID{mkUser(t, w)}} }, ""},
	{"Admin.Permissions", noArgs, ""},
	{"Admin.SetBaseline", func(*testing.T, *world) []any { return []any{[]string{"chat.create", "chat.params", "files.upload"}} }, ""},
	{"Admin.Settings", noArgs, ""},
	{"Admin.SetSettings", func(t *testing.T, w *world) []any {
		return []any{map[string]any{"instanceName": "Bag End", "signUpMode": "approval", "defaultModel": w.model}}
	}, ""},
	{"Admin.ModelAccess", func(t *testing.T, w *world) []any { return []any{w.model} }, ""},
	{"Admin.SetModelAccess", func(t *testing.T, w *world) []any {
		return []any{w.model, map[string]any{"users": []ids.UserID{}, "groups": []int64{}}}
	}, ""},
	{"Diag.NilDeref", noArgs, apperr.Internal},
	{"Diag.Emit", func(*testing.T, *world) []any { return []any{"selftest", map[string]int{"n": 1}} }, ""},
	{"Diag.Report", func(*testing.T, *world) []any { return []any{"step", true, "detail"} }, ""},
	{"Connections.List", noArgs, ""},
	{"Connections.Create", func(t *testing.T, w *world) []any {
		return []any{map[string]any{"name": "second", "baseUrl": w.llm.URL()}}
	}, ""},
	{"Connections.Update", func(t *testing.T, w *world) []any {
		return []any{w.conn, map[string]any{"name": "renamed", "baseUrl": w.llm.URL()}}
	}, ""},
	{"Connections.Test", func(t *testing.T, w *world) []any { return []any{w.conn} }, ""},
	{"Connections.TestDraft", func(t *testing.T, w *world) []any { return []any{map[string]any{"baseUrl": w.llm.URL()}} }, ""},
	{"Connections.RefreshModels", func(t *testing.T, w *world) []any { return []any{w.conn} }, ""},
	{"Connections.Discover", noArgs, ""},
	{"Models.List", func(*testing.T, *world) []any { return []any{map[string]any{}} }, ""},
	{"Models.Picker", noArgs, ""},
	{"Models.Update", func(t *testing.T, w *world) []any {
		return []any{w.model, map[string]any{"description": "tiny", "capabilities": map[string]bool{"reasoning": true}}}
	}, ""},
	{"Models.Move", func(t *testing.T, w *world) []any { return []any{w.model, w.model} }, ""},
	{"Models.Efforts", noArgs, ""},
	{"Folders.List", noArgs, ""},
	{"Folders.Create", func(*testing.T, *world) []any { return []any{"Work"} }, ""},
	{"Folders.Rename", func(t *testing.T, w *world) []any { return []any{mkFolder(t, w), "Home"} }, ""},
	{"Folders.Move", func(t *testing.T, w *world) []any { return []any{mkFolder(t, w), 0} }, ""},
	{"Folders.Delete", func(t *testing.T, w *world) []any { return []any{mkFolder(t, w)} }, ""},
	{"Chats.List", noArgs, ""},
	{"Chats.Get", func(t *testing.T, w *world) []any { return []any{w.chat} }, ""},
	{"Chats.Messages", func(t *testing.T, w *world) []any { return []any{w.chat, 0, 20} }, ""},
	{"Chats.Send", func(t *testing.T, w *world) []any {
		w.idle(t)
		return []any{map[string]any{"chatId": w.chat, "content": "more"}}
	}, ""},
	{"Chats.Stop", func(t *testing.T, w *world) []any { return []any{w.chat} }, ""},
	{"Chats.Regenerate", func(t *testing.T, w *world) []any { w.idle(t); return []any{w.chat} }, ""},
	{"Chats.Continue", func(t *testing.T, w *world) []any { w.idle(t); return []any{w.chat} }, apperr.Conflict},
	{"Chats.Edit", func(t *testing.T, w *world) []any {
		w.idle(t)
		msgs, _, _ := w.c.DB.MessagesPage(context.Background(), ids.UserID(w.c.Owner.ID), w.chat, 0, 100)
		return []any{msgs[0].ID, "edited"}
	}, ""},
	{"Chats.SwitchVersion", func(t *testing.T, w *world) []any {
		w.idle(t)
		msgs, _, _ := w.c.DB.MessagesPage(context.Background(), ids.UserID(w.c.Owner.ID), w.chat, 0, 100)
		return []any{msgs[0].ID}
	}, ""},
	{"Chats.DeleteVersion", func(t *testing.T, w *world) []any {
		w.idle(t)
		msgs, _, _ := w.c.DB.MessagesPage(context.Background(), ids.UserID(w.c.Owner.ID), w.chat, 0, 100)
		return []any{msgs[0].ID} // the edited first turn: two versions
	}, ""},
	{"Chats.Update", func(t *testing.T, w *world) []any {
		return []any{w.chat, map[string]any{"title": "Named", "pinned": true}}
	}, ""},
	{"Chats.SaveDraft", func(t *testing.T, w *world) []any { return []any{w.chat, "draft"} }, ""},
	{"Chats.MarkRead", func(t *testing.T, w *world) []any { return []any{w.chat} }, ""},
	{"Chats.Search", func(*testing.T, *world) []any { return []any{"hello"} }, ""},
	{"Chats.Live", func(t *testing.T, w *world) []any { return []any{w.chat} }, ""},
	// A new chat is one exchange: nothing before the last two to summarise.
	// (Not the world's chat: with versions, the Edit above keeps its turns.)
	{"Chats.Compact", func(t *testing.T, w *world) []any { return []any{w.newChat(t)} }, apperr.Invalid},
	{"Chats.Uncompact", func(t *testing.T, w *world) []any { return []any{w.chat} }, ""},
	{"Chats.Trash", func(t *testing.T, w *world) []any { return []any{w.newChat(t)} }, ""},
	{"Chats.Restore", func(t *testing.T, w *world) []any {
		id := w.newChat(t)
		w.c.DB.TrashChat(context.Background(), ids.UserID(w.c.Owner.ID), id)
		return []any{id}
	}, ""},
	{"Chats.ListTrash", noArgs, ""},
	{"Files.Limits", noArgs, ""},
	{"Audio.Status", noArgs, ""},
	{"Audio.Voices", noArgs, ""},
	{"Audio.Mine", noArgs, ""},
	{"Audio.SetMine", func(*testing.T, *world) []any { return []any{map[string]any{"autoRead": true, "ttsVoice": "nova"}} }, ""},
	{"Tools.Settings", noArgs, ""},
	{"Tools.SetSettings", func(*testing.T, *world) []any {
		return []any{map[string]any{"families": map[string]bool{"web_search": true}, "maxRounds": 4}}
	}, ""},
	{"Tools.List", noArgs, ""},
	{"Tools.Available", noArgs, ""},
	{"Diag.ReleaseTools", noArgs, ""},
	{"Audio.Settings", noArgs, ""},
	{"Audio.SetSettings", func(t *testing.T, w *world) []any {
		return []any{map[string]any{"sttUrl": w.llm.URL(), "ttsUrl": w.llm.URL(), "ttsKey": "sk-audio-1234", "voices": []string{"nova"}}}
	}, ""},
	{"Web.Settings", noArgs, ""},
	{"Web.SetSettings", func(*testing.T, *world) []any { return []any{map[string]any{"results": 6}} }, ""},
	{"Web.TestSearch", func(*testing.T, *world) []any { return []any{map[string]any{"query": "lembas"}} }, apperr.Invalid},
	{"MCP.List", noArgs, ""},
	{"MCP.Save", func(*testing.T, *world) []any {
		return []any{map[string]any{"name": "Local", "url": "http://127.0.0.1:1/mcp", "enabled": true}} // loopback is not allowed
	}, apperr.Invalid},
	{"MCP.Refresh", func(*testing.T, *world) []any { return []any{map[string]any{"id": 999}} }, apperr.NotFound},
	{"MCP.SetTool", func(*testing.T, *world) []any { return []any{map[string]any{"id": 999, "name": "x", "on": false}} }, apperr.NotFound},
	{"MCP.Delete", func(*testing.T, *world) []any { return []any{map[string]any{"id": 999}} }, apperr.NotFound},
	{"Prompts.List", noArgs, ""},
	{"Prompts.Set", func(*testing.T, *world) []any {
		return []any{map[string]any{"fragments": map[string]string{"model": "You are {{model_name}}."}}}
	}, ""},
	{"Prompts.Reset", func(*testing.T, *world) []any { return []any{"model"} }, ""},
	{"Prompts.Preview", func(t *testing.T, w *world) []any { return []any{map[string]any{"modelId": w.model}} }, ""},
	{"Library.Bases", noArgs, ""},
	{"Library.CreateBase", func(*testing.T, *world) []any {
		return []any{map[string]any{"name": fmt.Sprintf("base-%d", seq.Add(1))}}
	}, ""},
	{"Library.UpdateBase", func(*testing.T, *world) []any { return []any{999, map[string]any{"name": "x"}} }, apperr.NotFound},
	{"Library.DeleteBase", func(*testing.T, *world) []any { return []any{999} }, apperr.NotFound},
	{"Library.Documents", func(*testing.T, *world) []any { return []any{999} }, apperr.NotFound},
	{"Library.Document", func(*testing.T, *world) []any { return []any{999} }, apperr.NotFound},
	{"Library.DeleteDocument", func(*testing.T, *world) []any { return []any{999} }, apperr.NotFound},
	{"Library.Search", func(*testing.T, *world) []any { return []any{map[string]any{"query": "lembas"}} }, ""},
	{"Library.AttachDocument", func(*testing.T, *world) []any { return []any{999} }, apperr.NotFound},
	{"Library.ChatScope", func(t *testing.T, w *world) []any { return []any{w.chat} }, ""},
	{"Library.SetChatScope", func(t *testing.T, w *world) []any { return []any{w.chat, map[string]any{"scoped": false}} }, ""},
	{"Library.Notes", func(*testing.T, *world) []any { return []any{map[string]any{}} }, ""},
	{"Library.Note", func(*testing.T, *world) []any { return []any{999} }, apperr.NotFound},
	{"Library.CreateNote", func(*testing.T, *world) []any { return []any{map[string]any{"title": "Facade note", "body": "*hi*"}} }, ""},
	{"Library.UpdateNote", func(*testing.T, *world) []any { return []any{999, map[string]any{"title": "x"}} }, apperr.NotFound},
	{"Library.DeleteNote", func(*testing.T, *world) []any { return []any{999} }, apperr.NotFound},
	{"Library.Preview", func(*testing.T, *world) []any { return []any{map[string]any{"markdown": "*hi*"}} }, ""},
	{"Library.Memories", noArgs, ""},
	{"Library.AddMemory", func(*testing.T, *world) []any { return []any{map[string]any{"text": "Likes tea."}} }, ""},
	{"Library.UpdateMemory", func(*testing.T, *world) []any { return []any{999, map[string]any{"text": "x"}} }, apperr.NotFound},
	{"Library.DeleteMemory", func(*testing.T, *world) []any { return []any{999} }, apperr.NotFound},
	{"Library.SetMemoryOn", func(*testing.T, *world) []any { return []any{map[string]any{"on": true}} }, ""},
	{"Library.Skills", noArgs, ""},
	{"Library.Skill", func(*testing.T, *world) []any { return []any{999} }, apperr.NotFound},
	{"Library.CreateSkill", func(*testing.T, *world) []any {
		return []any{map[string]any{"name": fmt.Sprintf("skill-%d", seq.Add(1)), "description": "A probe.", "body": "Do it."}}
	}, ""},
	{"Library.UpdateSkill", func(*testing.T, *world) []any { return []any{999, map[string]any{"name": "x"}} }, apperr.NotFound},
	{"Library.DeleteSkill", func(*testing.T, *world) []any { return []any{999} }, apperr.NotFound},
	// The world's chat is no agent chat; no viewer is named "nope".
	{"Agent.Profiles", noArgs, ""},
	{"Agent.CreateProfile", func(*testing.T, *world) []any {
		return []any{map[string]any{"name": "box", "host": "box.invalid", "port": 22, "username": "me", "auth": "key"}}
	}, ""},
	{"Agent.UpdateProfile", func(*testing.T, *world) []any { return []any{999, map[string]any{"name": "x"}} }, apperr.NotFound},
	{"Agent.DeleteProfile", func(*testing.T, *world) []any { return []any{999} }, apperr.NotFound},
	{"Agent.ScanHostKey", func(*testing.T, *world) []any { return []any{999} }, apperr.NotFound},
	{"Agent.AcceptHostKey", func(*testing.T, *world) []any { return []any{999, "SHA256:x"} }, apperr.NotFound},
	{"Agent.ForgetHostKey", func(*testing.T, *world) []any { return []any{999} }, apperr.NotFound},
	{"Agent.Test", func(*testing.T, *world) []any { return []any{999} }, apperr.NotFound},
	{"Agent.Browse", func(*testing.T, *world) []any { return []any{999, ""} }, apperr.NotFound},
	{"Agent.Settings", noArgs, ""},
	{"Agent.ProjectFiles", func(t *testing.T, w *world) []any { return []any{w.newChat(t), ""} }, apperr.Invalid},
	{"Agent.AttachFile", func(t *testing.T, w *world) []any { return []any{w.newChat(t), "a.txt"} }, apperr.Invalid},
	{"Suggestions.List", func(*testing.T, *world) []any { return []any{nil} }, ""},
	{"Suggestions.Admin", noArgs, ""},
	{"Suggestions.Create", func(*testing.T, *world) []any {
		return []any{map[string]any{"title": "Tea", "prompt": "How do I brew tea?"}}
	}, ""},
	{"Suggestions.Update", func(*testing.T, *world) []any {
		return []any{999, map[string]any{"title": "Tea", "prompt": "How do I brew tea?"}}
	}, apperr.NotFound},
	{"Suggestions.Delete", func(*testing.T, *world) []any { return []any{999} }, apperr.NotFound},
	{"Suggestions.Reorder", func(*testing.T, *world) []any { return []any{[]int64{2, 1}} }, ""},
	{"Agent.SetSettings", func(*testing.T, *world) []any { return []any{map[string]any{}} }, ""},
	{"Chats.Answer", func(*testing.T, *world) []any {
		return []any{999, map[string]any{"id": "x", "items": map[string]any{}}}
	}, apperr.NotFound},
	{"Chats.CarryOutPlan", func(*testing.T, *world) []any { return []any{999} }, apperr.NotFound},
	{"Terminal.Open", func(t *testing.T, w *world) []any { return []any{w.chat, 80, 24} }, apperr.NotFound},
	{"Terminal.Input", func(*testing.T, *world) []any { return []any{"nope", []byte("x")} }, apperr.NotFound},
	{"Terminal.Resize", func(*testing.T, *world) []any { return []any{"nope", 80, 24} }, apperr.NotFound},
	{"Terminal.Close", func(*testing.T, *world) []any { return []any{"nope"} }, ""},
	{"Terminal.LastCommand", func(t *testing.T, w *world) []any { return []any{w.chat} }, apperr.NotFound},
	{"Library.Shares", func(*testing.T, *world) []any { return []any{map[string]any{"kind": "base", "id": 999}} }, apperr.NotFound},
	{"Library.SetShares", func(*testing.T, *world) []any {
		return []any{map[string]any{"kind": "note", "id": 999, "to": []any{}}}
	}, apperr.NotFound},
	{"Library.People", noArgs, ""},
	{"CustomTools.List", noArgs, ""},
	{"CustomTools.Save", func(t *testing.T, w *world) []any {
		return []any{map[string]any{"name": fmt.Sprintf("probe%d", seq.Add(1)), "description": "A probe.", "url": "https://example.com/x"}}
	}, ""},
	{"CustomTools.Get", func(t *testing.T, w *world) []any { return []any{mkCustomTool(t, w)} }, ""},
	{"CustomTools.Try", func(t *testing.T, w *world) []any {
		return []any{map[string]any{"id": mkCustomTool(t, w), "arguments": map[string]any{}}}
	}, ""},
	{"CustomTools.Delete", func(t *testing.T, w *world) []any { return []any{mkCustomTool(t, w)} }, ""},
	{"Chats.EmptyTrash", noArgs, ""},
	{"Connections.Delete", func(t *testing.T, w *world) []any {
		v, err := w.c.Connections.Create(context.Background(), store.Actor{User: ids.UserID(w.c.Owner.ID), Admin: true},
			connections.Input{Name: "doomed", BaseURL: w.llm.URL()})
		if err != nil {
			t.Fatal(err)
		}
		return []any{v.ID}
	}, ""},
}

var seq atomic.Int64

func mkUser(t *testing.T, w *world) ids.UserID {
	u, err := w.c.Accounts.Create(context.Background(), auth.SignUpRequest{Username: fmt.Sprintf("user%d", seq.Add(1)), Password: "a-long-enough-password"}, false)
	if err != nil {
		t.Fatal(err)
	}
	return ids.UserID(u.ID)
}

func mkGroup(t *testing.T, w *world) ids.GroupID {
	g, err := w.c.DB.CreateGroup(context.Background(), fmt.Sprintf("g%d", seq.Add(1)), nil)
	if err != nil {
		t.Fatal(err)
	}
	return ids.GroupID(g.ID)
}

func mkFolder(t *testing.T, w *world) ids.FolderID {
	f, err := w.c.DB.CreateFolder(context.Background(), ids.UserID(w.c.Owner.ID), "tmp")
	if err != nil {
		t.Fatal(err)
	}
	return f.ID
}

func newWorld(t *testing.T) *world {
	var opened []string
	c := openTest(t, &opened)
	w := &world{c: c, llm: fakellm.New(t)}
	v, err := c.Connections.Create(context.Background(), store.Actor{User: ids.UserID(c.Owner.ID), Admin: true},
		connections.Input{Name: "fake", BaseURL: w.llm.URL()})
	if err != nil {
		t.Fatal(err)
	}
	w.conn = v.ID
	models, _, _ := c.DB.ListModels(context.Background(), ids.UserID(c.Owner.ID), store.ModelFilter{})
	if len(models) == 0 {
		t.Fatalf("no models: %+v", v)
	}
	w.model = models[0].ID
	w.chat = w.newChat(t)
	return w
}

func TestEveryFacadeMethodOverBothPaths(t *testing.T) {
	w := newWorld(t)
	c := w.c
	h, err := c.Handler(false)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	listed := map[string]bool{}
	for _, fc := range facadeCalls {
		listed[fc.name] = true
	}
	for _, m := range c.Dispatcher.Methods() {
		if !listed[m.Name] {
			t.Errorf("%s has no entry in facadeCalls: add one", m.Name)
		}
	}
	registered := map[string]bool{}
	for _, m := range c.Dispatcher.Methods() {
		registered[m.Name] = true
	}
	for _, fc := range facadeCalls {
		if !registered[fc.name] {
			t.Errorf("facadeCalls lists %s, which is not registered", fc.name)
			continue
		}
		t.Run(fc.name, func(t *testing.T) {
			encode := func() []byte {
				args := fc.prep(t, w)
				if args == nil {
					return []byte("[]")
				}
				b, _ := json.Marshal(args)
				return b
			}
			// The path the desktop bridge takes: straight into the dispatcher.
			res := c.Dispatcher.Call(context.Background(), c.OwnerCaller(), fc.name, encode())
			if fc.kind == "" && res.Error != nil {
				t.Fatalf("dispatcher: %+v", res.Error)
			}
			if fc.kind != "" && (res.Error == nil || res.Error.Kind != fc.kind) {
				t.Fatalf("dispatcher: %+v, want kind %s", res, fc.kind)
			}
			// Over HTTP, signed in as the owner (a new session each time:
			// Account.SignOutEverywhere ends them all).
			token, _, err := c.Sessions.Create(context.Background(), ids.UserID(c.Owner.ID), auth.Client{})
			if err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequest("POST", srv.URL+"/api/"+fc.name, strings.NewReader(string(encode())))
			req.Header.Set("Content-Type", "application/json")
			req.AddCookie(&http.Cookie{Name: httpapi.CookieName, Value: token})
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			wantStatus := http.StatusOK
			if fc.kind != "" {
				wantStatus = apperr.HTTPStatus(fc.kind)
			}
			// What acts on the desktop (its guard in api.Table) answers
			// only the window, never a browser session, even the owner's.
			if g, _ := api.GuardOf(fc.name); g.Kind() == api.GuardDesktopOwner {
				wantStatus = apperr.HTTPStatus(apperr.Forbidden)
			}
			if resp.StatusCode != wantStatus {
				t.Fatalf("HTTP %d %s, want %d", resp.StatusCode, body, wantStatus)
			}
		})
	}
	w.idle(t)
}

// TestGuardTableIsWhatIsRegistered checks api.Table against the running
// dispatcher: every method behind its table guard, no entry without a
// method (Desktop is registered by the desktop app, outside core).
func TestGuardTableIsWhatIsRegistered(t *testing.T) {
	c := newWorld(t).c
	registered := map[string]bool{}
	for _, m := range c.Dispatcher.Methods() {
		registered[m.Name] = true
		if g, ok := api.GuardOf(m.Name); !ok || g != m.Guard {
			t.Errorf("%s is registered behind %s; api.Table has %s (listed: %v)", m.Name, m.Guard, g, ok)
		}
	}
	for facade, guards := range api.Table {
		if facade == "Desktop" {
			continue
		}
		for name := range guards {
			if !registered[facade+"."+name] {
				t.Errorf("api.Table guards %s.%s, which is not registered", facade, name)
			}
		}
	}
}

func TestInfoDescribesInstance(t *testing.T) {
	var opened []string
	c := openTest(t, &opened)
	res := c.Dispatcher.Call(context.Background(), c.OwnerCaller(), "App.Info", nil)
	var info api.Info
	if err := json.Unmarshal(res.Result, &info); err != nil {
		t.Fatal(err, res.Error)
	}
	if info.DataDir != c.Config.DataDir || info.Mode != "serve" || info.Counts["users"] != 1 || info.InstanceName != "LLeMbas" {
		t.Errorf("info = %+v", info)
	}
	if !strings.Contains(info.KeySource, "key file") {
		t.Errorf("key source %q; with no keychain it should be the key file", info.KeySource)
	}
	if !c.Owner.IsAdmin || !c.Owner.IsOwner {
		t.Errorf("owner = %+v", c.Owner)
	}
}

func TestSecondOpenIsRefused(t *testing.T) {
	var opened []string
	c := openTest(t, &opened)
	_, err := Open(context.Background(), c.Config, Options{Mode: Desktop, Files: frontend.FS()})
	if !errors.Is(err, store.ErrLocked) {
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
}

func TestReopenKeepsOwnerAndKey(t *testing.T) {
	cfg := testConfig(t, true)
	opt := Options{Mode: Serve, Files: frontend.FS()}
	c1, err := Open(context.Background(), cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	k1, err := c1.Secrets()
	if err != nil {
		t.Fatal(err)
	}
	tok, err := k1.Encrypt("sk-test")
	if err != nil {
		t.Fatal(err)
	}
	owner := c1.Owner.ID
	c1.Close()
	c2, err := Open(context.Background(), cfg, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	k2, err := c2.Secrets()
	if err != nil {
		t.Fatal(err)
	}
	if got, err := k2.Decrypt(tok); err != nil || got != "sk-test" {
		t.Errorf("decrypt after reopen = %q, %v", got, err)
	}
	if c2.Owner.ID != owner {
		t.Errorf("owner changed: %d → %d", owner, c2.Owner.ID)
	}
}

func TestEventsReachTheCallerOverSSE(t *testing.T) {
	var opened []string
	c := openTest(t, &opened)
	h, _ := c.Handler(false)
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cookie := ownerCookie(t, c)
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/api/events", nil)
	req.AddCookie(cookie)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	// Wait until subscribed (the first comment is written after Subscribe).
	for sc.Scan() && sc.Text() != ": connected" {
	}
	// The stream names whose events it carries, before any of them: the
	// page's shared worker drops a stream that is someone else's.
	var hello []string
	for sc.Scan() && sc.Text() != "" {
		hello = append(hello, sc.Text())
	}
	if want := []string{"event: hello", fmt.Sprintf(`data: {"user":%d}`, c.Owner.ID)}; strings.Join(hello, "\n") != strings.Join(want, "\n") {
		t.Fatalf("stream starts with %q, want %q", hello, want)
	}
	// The desktop window's terminal output is not for browsers: the
	// first event the stream carries is the prefs one that follows.
	c.Bus.Publish(events.Event{Topic: api.TopicTerminal, UserID: c.Owner.ID, Data: api.TerminalEvent{Viewer: "x", Data: []byte("secret")}})
	post, _ := http.NewRequest("POST", srv.URL+"/api/Prefs.Set", strings.NewReader(`[{"theme":"moria"}]`))
	post.AddCookie(cookie)
	if resp, err := http.DefaultClient.Do(post); err != nil || resp.StatusCode != 200 {
		t.Fatalf("Prefs.Set: %v %v", resp, err)
	}
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "data: ") {
			if want := `data: {"topic":"prefs","data":{"theme":"moria","lastChat":0,`; !strings.HasPrefix(line, want) {
				t.Fatalf("got %s, want %s", line, want)
			}
			break
		}
	}
	c.StopStreams()
	for sc.Scan() {
	}
	if c.Bus.Followers() != 0 {
		t.Errorf("followers after stop = %d", c.Bus.Followers())
	}
}

// ownerCookie is a session cookie signing the owner in over HTTP.
func ownerCookie(t testing.TB, c *Core) *http.Cookie {
	t.Helper()
	token, _, err := c.Sessions.Create(context.Background(), ids.UserID(c.Owner.ID), auth.Client{})
	if err != nil {
		t.Fatal(err)
	}
	return &http.Cookie{Name: httpapi.CookieName, Value: token}
}

// BenchmarkHTTPCall is one facade call over loopback HTTP through the whole
// handler (security headers, cross-origin check, session check, dispatcher,
// SQLite read).
func BenchmarkHTTPCall(b *testing.B) {
	c := openBench(b)
	h, _ := c.Handler(false)
	srv := httptest.NewServer(signedIn(h, ownerCookie(b, c)))
	defer srv.Close()
	client := srv.Client()
	b.ReportAllocs()
	for b.Loop() {
		resp, err := client.Post(srv.URL+"/api/Prefs.Get", "application/json", strings.NewReader("[]"))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatal(resp.Status)
		}
	}
}

func TestTrashRestoreAndEmpty(t *testing.T) {
	w := newWorld(t)
	call := func(method string, args ...any) api.Result {
		b, _ := json.Marshal(args)
		if args == nil {
			b = []byte("[]")
		}
		return w.c.Dispatcher.Call(context.Background(), w.c.OwnerCaller(), method, b)
	}
	if r := call("Chats.Trash", w.chat); r.Error != nil {
		t.Fatal(r.Error)
	}
	if r := call("Chats.List"); string(r.Result) != "[]" {
		t.Errorf("trashed chat still listed: %s", r.Result)
	}
	if r := call("Chats.Restore", w.chat); r.Error != nil {
		t.Fatal(r.Error)
	}
	if r := call("Chats.Trash", w.chat); r.Error != nil {
		t.Fatal(r.Error)
	}
	if r := call("Chats.EmptyTrash"); string(r.Result) != "1" {
		t.Errorf("EmptyTrash = %s %+v, want 1", r.Result, r.Error)
	}
	if r := call("Chats.Get", w.chat); r.Error == nil || r.Error.Kind != apperr.NotFound {
		t.Errorf("emptied chat still there: %+v", r)
	}
}

// signedIn adds a session cookie to every request, as a signed-in browser
// would send it, so that benchmarks measure the session check too.
func signedIn(h http.Handler, ck *http.Cookie) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.AddCookie(ck)
		h.ServeHTTP(w, r)
	})
}

// mkCustomTool saves a custom tool with a required parameter (a Try
// without it is refused before any request: nothing reaches the network).
func mkCustomTool(t *testing.T, w *world) int64 {
	t.Helper()
	v, err := w.c.CustomTools.Save(context.Background(), customtools.Input{Name: fmt.Sprintf("tool%d", seq.Add(1)),
		Description: "A test tool.", URL: "https://tool.example/x?q={{q}}", Enabled: true,
		Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	return v.ID
}
