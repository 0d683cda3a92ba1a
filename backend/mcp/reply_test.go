package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/config"
	"github.com/llembas/lembas/backend/connections"
	"github.com/llembas/lembas/backend/core"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/generation"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/mcp"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/tools"
	"github.com/llembas/lembas/backend/web"
	"github.com/llembas/lembas/frontend"
)

// everythingVersion is the reference server build/mcp-everything.sh pins.
const everythingVersion = "2026.8.31"

// everything starts the reference MCP server with node over streamable
// HTTP on a loopback port and returns its endpoint. It skips when node or
// the package is missing, except under CI=true, where it fails.
func everything(t testing.TB) string {
	t.Helper()
	missing := func(what string) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s (make test installs it: build/deps.sh test, build/mcp-everything.sh)", what)
		}
		t.Skipf("%s; run build/mcp-everything.sh", what)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed")
	}
	dir := os.Getenv("LEMBAS_MCP_CACHE")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			missing("no cache directory")
		}
		dir = filepath.Join(cache, "lembas", "mcp-everything-"+everythingVersion)
	}
	entry := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(entry); err != nil {
		missing("the MCP reference server is not installed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(node, entry, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the reference server did not listen: %s", log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}

type env struct {
	t     testing.TB
	c     *core.Core
	llm   *fakellm.Server
	user  ids.UserID
	model ids.ModelID
}

// newEnv opens an instance with a model flagged for tools on the fake
// endpoint, MCP tools on, and 127.0.0.1 in the allowed ranges.
func newEnv(t testing.TB, opt mcp.Options) *env {
	t.Helper()
	cfg, _ := config.Load(func(string) (string, bool) { return "", false })
	cfg.DataDir = t.TempDir()
	cfg.NoKeychain = true
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	c, err := core.Open(context.Background(), cfg, core.Options{Mode: core.Serve, Files: frontend.FS(),
		Log:        slog.New(slog.DiscardHandler),
		LLM:        llm.Options{FirstTokenTimeout: 10 * time.Second, StallTimeout: 10 * time.Second},
		Generation: generation.Options{FrameEvery: 5 * time.Millisecond, CheckpointEvery: 20 * time.Millisecond, KeepFinished: time.Second},
		MCP:        opt,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	e := &env{t: t, c: c, llm: fakellm.New(t), user: ids.UserID(c.Owner.ID)}
	ctx := context.Background()
	actor := store.Actor{User: e.user, Admin: true}
	if _, err := c.Connections.Create(ctx, actor, connections.Input{Name: "fake", BaseURL: e.llm.URL()}); err != nil {
		t.Fatal(err)
	}
	models, _, err := c.DB.ListModels(ctx, e.user, store.ModelFilter{})
	if err != nil || len(models) != 1 {
		t.Fatalf("models %v %v", models, err)
	}
	e.model = models[0].ID
	if _, err := c.DB.UpdateModel(ctx, actor, e.model, store.ModelSettings{DisplayName: models[0].DisplayName, Enabled: true,
		Capabilities: store.Capabilities{Tools: true}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Tools.SetSettings(ctx, tools.SettingsPatch{Families: map[tools.Family]bool{tools.GateMCP: true}}); err != nil {
		t.Fatal(err)
	}
	allow := []string{"127.0.0.1/32"}
	if _, err := c.Web.Set(ctx, web.SettingsInput{Allow: &allow}); err != nil {
		t.Fatal(err)
	}
	return e
}

// reply sends content as a member holding tools.mcp and returns the
// finished reply and the request that followed the tool round.
func (e *env) reply(content string) (store.Message, map[string]any) {
	e.t.Helper()
	ctx := auth.WithCaller(context.Background(), auth.Caller{User: e.user, Perms: auth.NewSet(false, auth.ChatCreate, auth.ToolsMCP)})
	turn, err := e.c.Chat.Send(ctx, e.user, chat.SendInput{ModelID: e.model, Content: content})
	if err != nil {
		e.t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := e.c.Gen.Wait(wctx, turn.Chat.ID); err != nil {
		e.t.Fatalf("reply did not finish: %v", err)
	}
	msgs, _, err := e.c.DB.MessagesPage(context.Background(), e.user, turn.Chat.ID, 0, 100)
	if err != nil {
		e.t.Fatal(err)
	}
	return msgs[len(msgs)-1], e.request(`"role":"tool"`)
}

// request is the newest request to the endpoint whose body holds s (a
// title request may come after a reply's last one).
func (e *env) request(s string) map[string]any {
	e.t.Helper()
	reqs := e.llm.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if strings.Contains(string(reqs[i].Body), s) {
			return reqs[i].JSON
		}
	}
	e.t.Fatalf("no request holds %s", s)
	return nil
}

// toolTurn is the content of the tool message in a request.
func toolTurn(req map[string]any) string {
	for _, m := range req["messages"].([]any) {
		if mm := m.(map[string]any); mm["role"] == "tool" {
			s, _ := mm["content"].(string)
			return s
		}
	}
	return ""
}

// A reply calls the reference server's echo tool and answers from its
// result.
func TestReplyCallsTheReferenceServer(t *testing.T) {
	endpoint := everything(t)
	e := newEnv(t, mcp.Options{})
	srv, err := e.c.MCP.Save(context.Background(), mcp.Input{Name: "Everything", URL: endpoint, Enabled: true,
		Guidance: "Repeat words with everything_echo."})
	if err != nil {
		t.Fatal(err)
	}
	if srv.RefreshError != "" {
		t.Fatalf("refresh: %s", srv.RefreshError)
	}
	found := false
	for _, tv := range srv.Tools {
		found = found || tv.Offered == "everything_echo"
	}
	if !found {
		t.Fatalf("no everything_echo among %+v", srv.Tools)
	}
	e.llm.Enqueue(fakellm.NewStream().ToolCall(0, "c1", "everything_echo", `{"message":"mellon"}`).Finish("tool_calls").Reply(),
		fakellm.Stream("The server said mellon."))
	m, req := e.reply("Say the word")
	if got := toolTurn(req); got != "Echo: mellon" {
		t.Errorf("tool turn %q, want the server's echo", got)
	}
	if m.Status != store.StatusFinal || m.Content != "The server said mellon." {
		t.Errorf("reply %s %q", m.Status, m.Content)
	}
	// The offered tools went out with the request, under their lowered names.
	b, _ := json.Marshal(e.request(`"tools":`)["tools"])
	if !strings.Contains(string(b), `"everything_echo"`) || !strings.Contains(string(b), `"everything_get-sum"`) {
		t.Errorf("tools sent: %.400s", b)
	}
	// The server's guidance is in the system message, because its tools
	// were offered.
	sys, _ := req["messages"].([]any)[0].(map[string]any)["content"].(string)
	if !strings.Contains(sys, "Repeat words with everything_echo.") {
		t.Errorf("system message %q lacks the server's guidance", sys)
	}
}

// A reply calling a server that hangs ends with a clear tool error within
// the limit, and the model answers from it.
func TestReplyWithAHangingServer(t *testing.T) {
	release := make(chan struct{})
	srv := sdk.NewServer(&sdk.Implementation{Name: "slow", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "wait", Description: "Never answers.", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			<-release
			return &sdk.CallToolResult{}, nil
		})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(func() { close(release); hs.Close() })
	e := newEnv(t, mcp.Options{CallTimeout: 2 * time.Second})
	if v, err := e.c.MCP.Save(context.Background(), mcp.Input{Name: "Slow", URL: hs.URL, Enabled: true}); err != nil || len(v.Tools) != 1 {
		t.Fatalf("save: %+v %v", v, err)
	}
	e.llm.Enqueue(fakellm.NewStream().ToolCall(0, "c1", "slow_wait", `{}`).Finish("tool_calls").Reply(),
		fakellm.Stream("The server did not answer."))
	m, req := e.reply("Wait for it")
	if got := toolTurn(req); !strings.Contains(got, "did not answer within 2s") {
		t.Errorf("tool turn %q", got)
	}
	if m.Status != store.StatusFinal || m.Content != "The server did not answer." {
		t.Errorf("reply %s %q", m.Status, m.Content)
	}
}

// A server's tool whose name would be a built-in's is renamed, on the
// page as in the reply's tools array, and the built-in keeps its name.
func TestRenamedLikeTheReply(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "web", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "search", Description: "Not the real one.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "server results"}}}, nil
		})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	e := newEnv(t, mcp.Options{})
	v, err := e.c.MCP.Save(context.Background(), mcp.Input{Name: "Web", Slug: "web", URL: hs.URL, Enabled: true})
	if err != nil || len(v.Tools) != 1 {
		t.Fatalf("save: %+v %v", v, err)
	}
	if v.Tools[0].Offered != "web_search_2" {
		t.Errorf("the page shows %q, want web_search_2", v.Tools[0].Offered)
	}
	e.llm.Enqueue(fakellm.NewStream().ToolCall(0, "c1", "web_search_2", `{}`).Finish("tool_calls").Reply(), fakellm.Stream("Done."))
	_, req := e.reply("Search")
	if got := toolTurn(req); got != "server results" {
		t.Errorf("tool turn %q", got)
	}
	b, _ := json.Marshal(e.request(`"tools":`)["tools"])
	if !strings.Contains(string(b), `"web_search_2"`) {
		t.Errorf("tools sent: %s", b)
	}
}
