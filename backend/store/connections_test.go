package store

import (
	"context"
	"errors"
	"testing"
)

func TestConnectionsAreScopedByOwner(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	admin, frodo, sam := addUser(t, db, "admin"), addUser(t, db, "frodo"), addUser(t, db, "sam")
	asAdmin, asFrodo, asSam := Actor{User: admin, Admin: true}, Actor{User: frodo}, Actor{User: sam}

	shared, err := db.CreateConnection(ctx, asAdmin, Connection{Name: "Shared", BaseURL: "http://a", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	mine, err := db.CreateConnection(ctx, asFrodo, Connection{OwnerID: &frodo, Name: "Frodo's", APIKeyEnc: "tok-1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateConnection(ctx, asSam, Connection{OwnerID: &sam, Name: "Sam's"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateConnection(ctx, asFrodo, Connection{Name: "sneaky"}); !errors.Is(err, ErrForbidden) {
		t.Errorf("non-admin created an instance-wide connection: %v", err)
	}
	if _, err := db.CreateConnection(ctx, asFrodo, Connection{OwnerID: &sam, Name: "for sam"}); !errors.Is(err, ErrForbidden) {
		t.Errorf("created a connection for another user: %v", err)
	}

	list, err := db.ListConnections(ctx, frodo)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range list {
		names = append(names, c.Name)
	}
	if len(names) != 2 || names[0] != "Shared" || names[1] != "Frodo's" {
		t.Errorf("frodo sees %v, want [Shared Frodo's]", names)
	}
	if c, err := db.ConnectionByID(ctx, frodo, shared.ID); err != nil || c.OwnerID != nil {
		t.Errorf("instance-wide connection read by a user: %+v, %v", c, err)
	}

	_, err = db.ConnectionByID(ctx, sam, mine.ID)
	wantNotFound(t, "ConnectionByID of another user's", err)
	_, err = db.UpdateConnection(ctx, asSam, Connection{ID: mine.ID, Name: "taken"})
	wantNotFound(t, "UpdateConnection of another user's", err)
	wantNotFound(t, "SetConnectionSecrets of another user's", db.SetConnectionSecrets(ctx, asSam, mine.ID, ptr(""), nil))
	wantNotFound(t, "DeleteConnection of another user's", db.DeleteConnection(ctx, asSam, mine.ID))
	// Even an admin does not reach into a user's own connection.
	wantNotFound(t, "admin DeleteConnection of a user's", db.DeleteConnection(ctx, asAdmin, mine.ID))
	wantNotFound(t, "ConnectionByID of a missing one", func() error { _, err := db.ConnectionByID(ctx, frodo, 999); return err }())

	if _, err := db.UpdateConnection(ctx, asFrodo, Connection{ID: shared.ID, Name: "mine now"}); !errors.Is(err, ErrForbidden) {
		t.Errorf("non-admin changed an instance-wide connection: %v", err)
	}
	if err := db.DeleteConnection(ctx, asFrodo, mine.ID); err != nil {
		t.Errorf("owner cannot delete own connection: %v", err)
	}
}

func TestConnectionUpdateLeavesSecretsAndStatus(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	admin := addUser(t, db, "admin")
	a := Actor{User: admin, Admin: true}
	c, err := db.CreateConnection(ctx, a, Connection{Name: "x", APIKeyEnc: "key-1", HeadersEnc: "hdr-1", Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetConnectionStatus(ctx, c.ID, "", 1000, true); err != nil {
		t.Fatal(err)
	}
	c.Name, c.BaseURL, c.APIKeyEnc, c.InsecureTLS, c.Enabled = "renamed", "http://b", "", true, false
	got, err := db.UpdateConnection(ctx, a, c)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "renamed" || got.BaseURL != "http://b" || !got.InsecureTLS || got.Enabled {
		t.Errorf("editable fields not replaced: %+v", got)
	}
	if got.APIKeyEnc != "key-1" || got.HeadersEnc != "hdr-1" || !got.NoStreamOptions || got.ModelsRefreshedAt != 1000 {
		t.Errorf("update touched secrets or status: %+v", got)
	}

	if err := db.SetConnectionSecrets(ctx, a, c.ID, nil, ptr("hdr-2")); err != nil {
		t.Fatal(err)
	}
	got, _ = db.ConnectionByID(ctx, admin, c.ID)
	if got.APIKeyEnc != "key-1" || got.HeadersEnc != "hdr-2" {
		t.Errorf("secrets = %q, %q; want the key left and the headers replaced", got.APIKeyEnc, got.HeadersEnc)
	}
	if err := db.SetConnectionSecrets(ctx, a, c.ID, ptr(""), nil); err != nil {
		t.Fatal(err)
	}
	got, _ = db.ConnectionByID(ctx, admin, c.ID)
	if got.APIKeyEnc != "" || got.HeadersEnc != "hdr-2" {
		t.Errorf("secrets = %q, %q; want the key cleared", got.APIKeyEnc, got.HeadersEnc)
	}

	// A failed refresh records its error but keeps when the list was last good.
	if err := db.SetConnectionStatus(ctx, c.ID, "connection refused", 0, false); err != nil {
		t.Fatal(err)
	}
	got, _ = db.ConnectionByID(ctx, admin, c.ID)
	if got.LastError != "connection refused" || got.ModelsRefreshedAt != 1000 || got.NoStreamOptions {
		t.Errorf("status = %q %d %v", got.LastError, got.ModelsRefreshedAt, got.NoStreamOptions)
	}
	wantNotFound(t, "SetConnectionStatus of a missing one", db.SetConnectionStatus(ctx, 999, "", 0, false))
}
