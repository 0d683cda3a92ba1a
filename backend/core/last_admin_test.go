package core

import (
	"context"
	"strings"
	"testing"
)

// create-admin on a fresh --serve directory leaves the password-less owner
// row (an admin nobody can sign in as) beside the new administrator. That
// row must not count as "another administrator": removing the last one who
// can sign in would hand the instance to the next stranger who signs up.
func TestAdminsWhoCanSignInAreKept(t *testing.T) {
	w := newWeb(t, webOptions{})
	ctx := context.Background()
	alice, _, err := w.c.Accounts.EnsureAdmin(ctx, "alice", "a-long-enough-password")
	if err != nil {
		t.Fatal(err)
	}
	c := newClient()
	if code, body := w.login(c, "alice", "a-long-enough-password"); code != 200 {
		t.Fatalf("login: %d %s", code, body)
	}
	code, body := w.call(c, "Admin.SetAdmin", alice.ID, false)
	if code != 409 || !strings.Contains(body, `"conflict"`) {
		t.Errorf("demoting the only admin who can sign in: %d %s, want 409 conflict", code, body)
	}
	if need, _ := w.c.Accounts.NeedsFirstUser(ctx); need {
		t.Fatal("no administrator can sign in any more: the next sign-up becomes one")
	}
	// The password-less owner row itself may still be demoted.
	if code, body := w.call(c, "Admin.SetAdmin", w.c.Owner.ID, false); code != 200 {
		t.Errorf("demoting the password-less owner beside alice: %d %s", code, body)
	}
}
