package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/llembas/lembas/backend/ids"
)

// hashFor stands in for a real password hash: the store never looks inside.
const hashFor = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA"

func TestCreateUserAndLookUpByNameIgnoringCase(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	u, err := db.CreateUser(ctx, NewUser{Username: "Frodo", DisplayName: "Frodo Baggins", PasswordHash: hashFor})
	if err != nil {
		t.Fatal(err)
	}
	if u.Status != StatusActive || u.IsAdmin || u.Username != "Frodo" {
		t.Errorf("created %+v, want an active non-admin named Frodo", u)
	}
	for _, name := range []string{"frodo", "FRODO", "Frodo"} {
		got, err := db.UserByName(ctx, name)
		if err != nil || got.ID != u.ID {
			t.Errorf("UserByName(%q) = %+v, %v; want user %d", name, got, err, u.ID)
		}
	}
	_, hash, err := db.Credentials(ctx, "fRoDo")
	if err != nil || hash != hashFor {
		t.Errorf("Credentials hash = %q, %v; want the stored hash", hash, err)
	}
	if _, err := db.CreateUser(ctx, NewUser{Username: "FRODO"}); !errors.Is(err, ErrConflict) {
		t.Errorf("second Frodo in other case: err = %v, want ErrConflict", err)
	}
	_, err = db.UserByName(ctx, "sam")
	wantNotFound(t, "UserByName(sam)", err)
	_, _, err = db.Credentials(ctx, "sam")
	wantNotFound(t, "Credentials(sam)", err)
	if _, err := db.CreateUser(ctx, NewUser{Username: "x", Status: "banished"}); err == nil {
		t.Error("an unknown status was accepted")
	}

	if err := db.SetPassword(ctx, ids.UserID(u.ID), "new"); err != nil {
		t.Fatal(err)
	}
	if h, err := db.PasswordHash(ctx, ids.UserID(u.ID)); err != nil || h != "new" {
		t.Errorf("PasswordHash after SetPassword = %q, %v", h, err)
	}
	wantNotFound(t, "SetPassword(missing)", db.SetPassword(ctx, 9999, "x"))
	_, err = db.PasswordHash(ctx, 9999)
	wantNotFound(t, "PasswordHash(missing)", err)
}

func TestCreateAccountMakesTheFirstAdminAndThenFollowsTheMode(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	// The desktop owner is an admin without a password: it cannot sign in,
	// so it does not stop the first sign-up from becoming the admin.
	if _, err := db.EnsureOwner(ctx, "owner", "Owner"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := db.HasSignInAdmin(ctx); ok {
		t.Fatal("HasSignInAdmin with only a password-less owner = true")
	}
	// Even with sign-up closed (empty status) the first account is made.
	first, err := db.CreateAccount(ctx, NewUser{Username: "gandalf", PasswordHash: hashFor})
	if err != nil {
		t.Fatal(err)
	}
	if !first.IsAdmin || first.Status != StatusActive {
		t.Errorf("first account = %+v, want an active admin", first)
	}
	if ok, _ := db.HasSignInAdmin(ctx); !ok {
		t.Error("HasSignInAdmin after the first account = false")
	}
	second, err := db.CreateAccount(ctx, NewUser{Username: "pippin", PasswordHash: hashFor, Status: StatusPending, IsAdmin: true})
	if err != nil {
		t.Fatal(err)
	}
	if second.IsAdmin || second.Status != StatusPending {
		t.Errorf("second account = %+v, want a pending non-admin (IsAdmin is ignored)", second)
	}
	if _, err := db.CreateAccount(ctx, NewUser{Username: "merry", PasswordHash: hashFor}); !errors.Is(err, ErrForbidden) {
		t.Errorf("closed sign-up: err = %v, want ErrForbidden", err)
	}
	if _, err := db.UserByName(ctx, "merry"); !errors.Is(err, ErrNotFound) {
		t.Errorf("refused sign-up left a row: %v", err)
	}
}

func TestConcurrentFirstSignUpsMakeExactlyOneAdmin(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	const n = 20
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			_, errs[i] = db.CreateAccount(ctx, NewUser{Username: fmt.Sprintf("hobbit%d", i), PasswordHash: hashFor, Status: StatusActive})
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("sign-up %d: %v", i, err)
		}
	}
	var admins, users int
	if err := db.Read().QueryRow(`SELECT COUNT(*) FILTER (WHERE is_admin = 1), COUNT(*) FROM users`).Scan(&admins, &users); err != nil {
		t.Fatal(err)
	}
	if admins != 1 || users != n {
		t.Errorf("%d admins among %d users, want exactly 1 among %d", admins, users, n)
	}
}

func TestTheLastAdminStays(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	a, _ := db.CreateUser(ctx, NewUser{Username: "aragorn", PasswordHash: hashFor, IsAdmin: true})
	b, _ := db.CreateUser(ctx, NewUser{Username: "boromir", PasswordHash: hashFor})
	aid, bid := ids.UserID(a.ID), ids.UserID(b.ID)

	if err := db.SetAdmin(ctx, aid, false); !errors.Is(err, ErrLastAdmin) {
		t.Errorf("demote the only admin: err = %v, want ErrLastAdmin", err)
	}
	if err := db.SetStatus(ctx, aid, StatusDisabled); !errors.Is(err, ErrLastAdmin) {
		t.Errorf("disable the only admin: err = %v, want ErrLastAdmin", err)
	}
	if err := db.SetAdmin(ctx, bid, true); err != nil {
		t.Fatal(err)
	}
	if err := db.SetAdmin(ctx, aid, false); err != nil {
		t.Errorf("demote with another admin left: %v", err)
	}
	if err := db.SetStatus(ctx, bid, StatusPending); !errors.Is(err, ErrLastAdmin) {
		t.Errorf("park the now only admin: err = %v, want ErrLastAdmin", err)
	}
	// A non-admin can be disabled and enabled freely.
	if err := db.SetStatus(ctx, aid, StatusDisabled); err != nil {
		t.Error(err)
	}
	if u, _ := db.UserByID(ctx, a.ID); u.Status != StatusDisabled || u.IsAdmin {
		t.Errorf("after demote and disable: %+v", u)
	}
	if err := db.SetStatus(ctx, aid, StatusActive); err != nil {
		t.Error(err)
	}
	if err := db.SetStatus(ctx, aid, "gone"); err == nil {
		t.Error("an unknown status was accepted")
	}
	// An admin without a password (the owner row) is no stand-in: nobody
	// can sign in as it.
	o, _ := db.CreateUser(ctx, NewUser{Username: "owner", IsAdmin: true})
	if err := db.SetAdmin(ctx, bid, false); !errors.Is(err, ErrLastAdmin) {
		t.Errorf("demote the only admin with a password beside a password-less one: err = %v, want ErrLastAdmin", err)
	}
	if err := db.SetAdmin(ctx, ids.UserID(o.ID), false); err != nil {
		t.Errorf("demote the password-less admin: %v", err)
	}
	wantNotFound(t, "SetStatus(missing)", db.SetStatus(ctx, 9999, StatusActive))
	wantNotFound(t, "SetAdmin(missing)", db.SetAdmin(ctx, 9999, true))
}

func TestListUsersPagesAndFilters(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	for i := range 7 {
		st := StatusActive
		if i%3 == 0 {
			st = StatusPending
		}
		if _, err := db.CreateUser(ctx, NewUser{Username: fmt.Sprintf("u%d", i), Status: st}); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	for off := 0; ; off += 3 {
		page, total, err := db.ListUsers(ctx, UserFilter{Offset: off, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if total != 7 {
			t.Errorf("total = %d, want 7", total)
		}
		if len(page) == 0 {
			break
		}
		for _, u := range page {
			seen = append(seen, u.Username)
		}
	}
	if want := []string{"u0", "u1", "u2", "u3", "u4", "u5", "u6"}; !slices.Equal(seen, want) {
		t.Errorf("pages = %v, want %v", seen, want)
	}
	pending, total, err := db.ListUsers(ctx, UserFilter{Status: StatusPending})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, u := range pending {
		names = append(names, u.Username)
	}
	if total != 3 || !slices.Equal(names, []string{"u0", "u3", "u6"}) {
		t.Errorf("pending = %v (total %d), want u0 u3 u6", names, total)
	}
}

func TestGroupsAndMembers(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	sam := addUser(t, db, "sam")
	rosie := addUser(t, db, "rosie")
	g, err := db.CreateGroup(ctx, "Gardeners", []string{"chat.create"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateGroup(ctx, "gardeners", nil); !errors.Is(err, ErrConflict) {
		t.Errorf("duplicate group name: err = %v, want ErrConflict", err)
	}
	h, err := db.CreateGroup(ctx, "Cooks", nil)
	if err != nil {
		t.Fatal(err)
	}
	if h.Permissions == nil || len(h.Permissions) != 0 {
		t.Errorf("nil permissions read back as %#v, want an empty list", h.Permissions)
	}
	if err := db.UpdateGroup(ctx, h.ID, "GARDENERS", nil); !errors.Is(err, ErrConflict) {
		t.Errorf("rename onto another group's name: err = %v, want ErrConflict", err)
	}
	if err := db.UpdateGroup(ctx, h.ID, "Cooks", []string{"models.view_all", "chat.params"}); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.GroupByID(ctx, h.ID); !slices.Equal(got.Permissions, []string{"models.view_all", "chat.params"}) {
		t.Errorf("updated permissions = %v", got.Permissions)
	}
	wantNotFound(t, "UpdateGroup(missing)", db.UpdateGroup(ctx, 9999, "x", nil))

	for _, gid := range []int64{g.ID, h.ID} {
		if err := db.AddGroupMember(ctx, gid, sam); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.AddGroupMember(ctx, g.ID, sam); err != nil {
		t.Errorf("adding a member twice: %v", err)
	}
	if err := db.AddGroupMember(ctx, g.ID, rosie); err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, "AddGroupMember(missing group)", db.AddGroupMember(ctx, 9999, sam))
	wantNotFound(t, "AddGroupMember(missing user)", db.AddGroupMember(ctx, g.ID, 9999))

	gs, err := db.UserGroups(ctx, sam)
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 2 || gs[0].Name != "Cooks" || gs[1].Name != "Gardeners" {
		t.Errorf("sam's groups = %+v, want Cooks and Gardeners", gs)
	}
	members, _ := db.GroupMembers(ctx, g.ID)
	if len(members) != 2 {
		t.Errorf("gardeners = %+v, want sam and rosie", members)
	}
	if err := db.RemoveGroupMember(ctx, g.ID, rosie); err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, "RemoveGroupMember twice", db.RemoveGroupMember(ctx, g.ID, rosie))
	if err := db.DeleteGroup(ctx, g.ID); err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, "DeleteGroup twice", db.DeleteGroup(ctx, g.ID))
	_, err = db.GroupByID(ctx, g.ID)
	wantNotFound(t, "GroupByID(deleted)", err)
	if gs, _ := db.UserGroups(ctx, sam); len(gs) != 1 || gs[0].ID != h.ID {
		t.Errorf("after deleting Gardeners sam is in %+v, want only Cooks", gs)
	}
	all, _ := db.Groups(ctx)
	if len(all) != 1 {
		t.Errorf("Groups = %+v, want one", all)
	}
}

// The first sign-up takes over the password-less owner row only while it
// holds nothing: otherwise the first stranger would inherit its data.
func TestFirstSignUpClaimsOnlyAnEmptyOwner(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		give  func(db *DB, owner ids.UserID) error
		claim bool
	}{
		{"empty", func(*DB, ids.UserID) error { return nil }, true},
		{"a folder", func(db *DB, o ids.UserID) error { _, err := db.CreateFolder(ctx, o, "mine"); return err }, false},
		{"voice servers", func(db *DB, o ids.UserID) error {
			return db.SetAudioSettings(ctx, AudioSettings{UserID: &o, TTSURL: "http://tts.lan/v1", TTSKeyEnc: "gAAAA-token"})
		}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := syncedTemp(t)
			owner, err := db.EnsureOwner(ctx, "owner", "Owner")
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.give(db, ids.UserID(owner.ID)); err != nil {
				t.Fatal(err)
			}
			first, err := db.CreateAccount(ctx, NewUser{Username: "stranger", PasswordHash: hashFor})
			if err != nil {
				t.Fatal(err)
			}
			if claimed := first.ID == owner.ID; claimed != tt.claim {
				t.Errorf("owner row claimed = %v, want %v", claimed, tt.claim)
			}
			if !first.IsAdmin {
				t.Error("the first account is not the administrator")
			}
		})
	}
}
