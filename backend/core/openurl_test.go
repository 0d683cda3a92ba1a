package core

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/store"
)

// App.OpenURL opens a browser on the desktop's screen. With sharing on, the
// same dispatcher serves the household: a member signed in from another
// device must not be able to open pages on the owner's desktop.
func TestOpenURLIsTheOwnersOnly(t *testing.T) {
	var opened []string
	c := openTest(t, &opened)
	ctx := context.Background()
	u, err := c.DB.CreateUser(ctx, store.NewUser{Username: "pippin", PasswordHash: "x"})
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal([]any{"https://example.org/"})
	res := c.Dispatcher.Call(ctx, api.Caller{UserID: u.ID, Session: "abc", Via: "http"}, "App.OpenURL", args)
	if res.Error == nil || res.Error.Kind != apperr.Forbidden {
		t.Errorf("a member's App.OpenURL: %+v, want forbidden", res.Error)
	}
	if len(opened) != 0 {
		t.Errorf("a member opened %v on the owner's desktop", opened)
	}
	// Nor the owner's own phone while the app is shared: a browser opens
	// links itself.
	phone := c.OwnerCaller()
	phone.Session, phone.Via = "def", "http"
	if res := c.Dispatcher.Call(ctx, phone, "App.OpenURL", args); res.Error == nil || res.Error.Kind != apperr.Forbidden || len(opened) != 0 {
		t.Errorf("the owner's browser session: %+v, opened %v; want forbidden", res.Error, opened)
	}
	if res := c.Dispatcher.Call(ctx, c.OwnerCaller(), "App.OpenURL", args); res.Error != nil || len(opened) != 1 {
		t.Errorf("the owner's App.OpenURL: %+v, opened %v", res.Error, opened)
	}
}
