//go:build desktop

package main

import (
	"context"
	"log/slog"
	"testing"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/apperr"
)

// TestDesktopFacadeGuards registers the Desktop facade behind
// api.Table["Desktop"] (Register panics on a method without an entry) and
// checks that a browser, even the owner's, is refused by every method.
func TestDesktopFacadeGuards(t *testing.T) {
	d := api.NewDispatcher(slog.New(slog.DiscardHandler))
	d.Register("Desktop", &DesktopFacade{}, api.Table["Desktop"])
	browser := api.Caller{UserID: 1, Admin: true, Owner: true, Session: "s", Via: "http"}
	n := 0
	for _, m := range d.Methods() {
		n++
		r := d.Call(context.Background(), browser, m.Name, nil)
		if r.Error == nil || r.Error.Kind != apperr.Forbidden || r.Error.Message != "only the desktop window can change itself" {
			t.Errorf("%s from the owner's browser: %+v, want forbidden", m.Name, r.Error)
		}
	}
	if n != len(api.Table["Desktop"]) {
		t.Errorf("%d Desktop methods registered, api.Table lists %d", n, len(api.Table["Desktop"]))
	}
}
