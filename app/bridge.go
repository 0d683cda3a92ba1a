//go:build desktop

package main

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/llembas/lembas/backend/api"
)

// Bridge is the one struct bound to Wails. Its only exported method is Call,
// because Wails exposes every exported method of a bound struct to
// JavaScript: facades are reached through the dispatcher, which recovers
// panics and resolves the caller (Wails' own binding does neither).
type Bridge struct {
	dispatcher *api.Dispatcher
	// caller resolves the owner per call (their admin flag can change
	// while the app is shared).
	caller  func() api.Caller
	fixOnce sync.Once
}

// Call runs a facade method, e.g. Call("App.Info", []), as the desktop owner.
// It always resolves: errors travel in the result with their kind.
func (b *Bridge) Call(method string, args []json.RawMessage) api.Result {
	// WebKit may install its handlers after DOM ready; fixing once more on
	// the first call costs four syscalls.
	b.fixOnce.Do(restoreOnStack)
	raw, err := json.Marshal(args)
	if err != nil {
		return api.Result{Error: &api.ErrorBody{Kind: "invalid", Message: "arguments could not be encoded"}}
	}
	caller := b.caller()
	caller.Via = "bridge"
	return b.dispatcher.Call(context.Background(), caller, method, raw)
}
