package mcp_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/mcp"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/tools"
)

// BenchmarkCallReferenceServer measures one tool call with a session of
// its own (initialize, call, close) against the reference server, beside
// a call on a session kept open: the price of a session per call.
func BenchmarkCallReferenceServer(b *testing.B) {
	endpoint := everything(b)
	e := newEnv(b, mcp.Options{})
	if _, err := e.c.MCP.Save(context.Background(), mcp.Input{Name: "Everything", URL: endpoint, Enabled: true}); err != nil {
		b.Fatal(err)
	}
	caller := auth.Caller{User: e.user, Perms: auth.NewSet(true)}
	list, _, err := e.c.MCP.Tools(context.Background(), caller, store.Chat{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	var echo tools.Tool
	for _, tl := range list {
		if tl.Name == "everything_echo" {
			echo = tl
		}
	}
	b.Run("session_per_call", func(b *testing.B) {
		for b.Loop() {
			if r := echo.Run(context.Background(), tools.Call{Arguments: json.RawMessage(`{"message":"x"}`)}); r.Failed {
				b.Fatal(r.Text)
			}
		}
	})
	b.Run("kept_session", func(b *testing.B) {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(),
			&sdk.StreamableClientTransport{Endpoint: endpoint, DisableStandaloneSSE: true}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		for b.Loop() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "x"}}); err != nil {
				b.Fatal(err)
			}
			cancel()
		}
	})
}
