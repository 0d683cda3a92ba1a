package api

import (
	"context"
	"testing"

	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/store/storetest"
)

// The facades that start a reply resolve the caller's permissions once and
// put them in ctx (auth.Caller), where the job takes them from; require
// reads them there too.
func TestWithCallerResolvesThePermissions(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	res, err := db.Write().Exec(`INSERT INTO users (username) VALUES ('sam')`)
	if err != nil {
		t.Fatal(err)
	}
	sam, _ := res.LastInsertId()
	perms := auth.NewPermissions(db)
	if err := perms.SetBaseline(ctx, []auth.Permission{auth.ChatCreate}); err != nil {
		t.Fatal(err)
	}
	d := NewPermits(perms)

	member, err := d.WithCaller(WithCaller(ctx, Caller{UserID: sam}))
	if err != nil {
		t.Fatal(err)
	}
	c, ok := auth.CallerFrom(member)
	if !ok || int64(c.User) != sam || !c.Perms.Has(auth.ChatCreate) || c.Perms.Has(auth.FilesUpload) || c.Perms.Admin() {
		t.Errorf("member's caller %+v (%v): want chat.create only", c, ok)
	}
	if err := d.Require(member, auth.FilesUpload); err == nil {
		t.Error("require passed files.upload for a member without it")
	}
	if err := d.Require(member, auth.ChatCreate); err != nil {
		t.Errorf("require refused chat.create: %v", err)
	}

	admin, err := d.WithCaller(WithCaller(ctx, Caller{UserID: 1, Admin: true}))
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := auth.CallerFrom(admin); !c.Perms.Admin() || !c.Perms.Has(auth.FilesUpload) {
		t.Errorf("admin's caller %+v", c)
	}
}
