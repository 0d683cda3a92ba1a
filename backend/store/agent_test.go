package store

import (
	"context"
	"errors"
	"testing"
)

func TestSSHProfilesArePrivateAndPinsBelongToAnAddress(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	a, b := addUser(t, db, "a"), addUser(t, db, "b")
	p, err := db.CreateSSHProfile(ctx, a, SSHProfile{Name: "box", Host: "box.lan", Port: 22, Username: "me", Auth: AuthKey, SecretEnc: "tok", PublicKey: "ssh-ed25519 AAAA lembas"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if p.UserID != a || p.Pinned() != "" || p.CreatedAt == 0 {
		t.Fatalf("created %+v", p)
	}
	// Another person's profile is none, for every query.
	_, err = db.SSHProfile(ctx, b, p.ID)
	wantNotFound(t, "read as b", err)
	moved := p
	moved.Host = "evil"
	_, err = db.UpdateSSHProfile(ctx, b, moved)
	wantNotFound(t, "update as b", err)
	wantNotFound(t, "secret as b", db.SetSSHProfileSecret(ctx, b, p.ID, AuthPassword, "x", ""))
	wantNotFound(t, "pin as b", db.PinSSHHostKey(ctx, b, p.ID, "ssh-ed25519 KEY", "box.lan", 22))
	wantNotFound(t, "forget as b", db.ForgetSSHHostKey(ctx, b, p.ID))
	wantNotFound(t, "delete as b", db.DeleteSSHProfile(ctx, b, p.ID))
	if list, err := db.SSHProfiles(ctx, b); err != nil || len(list) != 0 {
		t.Fatalf("b's list: %v %v", list, err)
	}
	if got, err := db.SSHProfile(ctx, a, p.ID); err != nil || got.Host != "box.lan" || got.SecretEnc != "tok" {
		t.Fatalf("a's profile after b's attempts: %+v %v", got, err)
	}

	// A pin holds for its host and port; renaming keeps it, moving forgets it.
	if err := db.PinSSHHostKey(ctx, a, p.ID, "ssh-ed25519 KEY", "box.lan", 22); err != nil {
		t.Fatal(err)
	}
	renamed := p
	renamed.Name = "the box"
	got, err := db.UpdateSSHProfile(ctx, a, renamed)
	if err != nil || got.Pinned() != "ssh-ed25519 KEY" || got.Name != "the box" {
		t.Fatalf("renamed: %+v %v", got, err)
	}
	renamed.Port = 2222
	got, err = db.UpdateSSHProfile(ctx, a, renamed)
	if err != nil || got.Pinned() != "" || got.HostKey != "" {
		t.Fatalf("moved to another port, the pin stays: %+v %v", got, err)
	}
	// Moving back does not bring the old pin back.
	renamed.Port = 22
	if got, _ = db.UpdateSSHProfile(ctx, a, renamed); got.Pinned() != "" {
		t.Fatalf("moved back, an old pin returned: %+v", got)
	}
	// A pin captured from another address than the profile's is no pin.
	if err := db.PinSSHHostKey(ctx, a, p.ID, "ssh-ed25519 KEY", "other", 22); err != nil {
		t.Fatal(err)
	}
	if got, _ = db.SSHProfile(ctx, a, p.ID); got.Pinned() != "" {
		t.Fatalf("a pin for another host counts: %+v", got)
	}
	if err := db.SetSSHProfileSecret(ctx, a, p.ID, AuthPassword, "pw", ""); err != nil {
		t.Fatal(err)
	}
	if got, _ = db.SSHProfile(ctx, a, p.ID); got.Auth != AuthPassword || got.SecretEnc != "pw" || got.PublicKey != "" {
		t.Fatalf("secret: %+v", got)
	}

	// The cap counts per person.
	if _, err := db.CreateSSHProfile(ctx, a, SSHProfile{Name: "2", Host: "h", Port: 22, Username: "u", Auth: AuthKey}, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateSSHProfile(ctx, a, SSHProfile{Name: "3", Host: "h", Port: 22, Username: "u", Auth: AuthKey}, 2); !errors.Is(err, ErrTooMany) {
		t.Fatalf("third profile over a cap of 2: %v", err)
	}
	if _, err := db.CreateSSHProfile(ctx, b, SSHProfile{Name: "b's", Host: "h", Port: 22, Username: "u", Auth: AuthKey}, 2); err != nil {
		t.Fatalf("b's first profile: %v", err)
	}

	// Deleting a profile leaves its chats without a host.
	ch, _, err := db.CreateChat(ctx, a, NewChat{Kind: ChatAgent, Agent: AgentChat{Profile: &p.ID, Dir: "/srv", Mode: ModeEdit}}, Message{Content: "go"})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteSSHProfile(ctx, a, p.ID); err != nil {
		t.Fatal(err)
	}
	c, err := db.ChatByID(ctx, a, ch.ID)
	if err != nil || c.Agent.Profile != nil || c.Kind != ChatAgent || c.Agent.Dir != "/srv" {
		t.Fatalf("chat after its profile was deleted: %+v %v", c, err)
	}
}
