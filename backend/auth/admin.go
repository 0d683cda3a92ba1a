package auth

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// What administrators and each person do with accounts, groups and
// sessions, beyond signing up and in.

// AccountErr maps the store's account errors to kinds: leaving no
// administrator who can sign in is a conflict in plain words.
func AccountErr(err error, what string) error {
	if errors.Is(err, store.ErrLastAdmin) {
		return apperr.New(apperr.Conflict, "That would leave no administrator who can sign in; make someone else an administrator first.")
	}
	return store.Kinded(err, what)
}

// Profile is a user with whether they have a password to sign in with.
func (a *Accounts) Profile(ctx context.Context, id ids.UserID) (store.User, bool, error) {
	u, err := a.db.UserByID(ctx, int64(id))
	if err != nil {
		return store.User{}, false, AccountErr(err, "user")
	}
	hash, err := a.db.PasswordHash(ctx, id)
	if err != nil {
		return store.User{}, false, err
	}
	return u, hash != "", nil
}

// Users lists users, filtered by status and by a text in the name.
func (a *Accounts) Users(ctx context.Context, status string, query string, offset, limit int) ([]store.UserRow, int, error) {
	if status != "" && status != store.StatusActive && status != store.StatusPending && status != store.StatusDisabled {
		return nil, 0, apperr.New(apperr.Invalid, "status is active, pending or disabled")
	}
	return a.db.UserRows(ctx, store.UserFilter{Status: status, Offset: offset, Limit: limit}, query)
}

// User returns one user's row as the admin page lists it.
func (a *Accounts) User(ctx context.Context, id ids.UserID) (store.UserRow, error) {
	u, err := a.db.UserByID(ctx, int64(id))
	if err != nil {
		return store.UserRow{}, AccountErr(err, "user")
	}
	rows, _, err := a.db.UserRows(ctx, store.UserFilter{Limit: 500}, u.Username)
	if err != nil {
		return store.UserRow{}, err
	}
	for _, r := range rows {
		if r.ID == u.ID {
			return r, nil
		}
	}
	return store.UserRow{}, apperr.New(apperr.NotFound, "user not found")
}

// SetStatus approves (active), disables or parks (pending) user id, as
// administrator admin, who cannot disable themselves, and returns the
// user's row. Leaving active signs the user out everywhere at once (the
// store does it in the same write).
func (a *Accounts) SetStatus(ctx context.Context, admin, id ids.UserID, status string) (store.UserRow, error) {
	if id == admin && status != store.StatusActive {
		return store.UserRow{}, apperr.New(apperr.Invalid, "You cannot disable your own account.")
	}
	if status != store.StatusActive && status != store.StatusPending && status != store.StatusDisabled {
		return store.UserRow{}, apperr.New(apperr.Invalid, "status is active, pending or disabled, not %q", status)
	}
	if err := a.db.SetStatus(ctx, id, status); err != nil {
		return store.UserRow{}, AccountErr(err, "user")
	}
	return a.User(ctx, id)
}

// SetAdmin promotes or demotes a user and returns the user's row.
func (a *Accounts) SetAdmin(ctx context.Context, id ids.UserID, admin bool) (store.UserRow, error) {
	if err := a.db.SetAdmin(ctx, id, admin); err != nil {
		return store.UserRow{}, AccountErr(err, "user")
	}
	return a.User(ctx, id)
}

// List returns a user's sessions, newest first.
func (s *Sessions) List(ctx context.Context, user ids.UserID) ([]store.Session, error) {
	return s.db.UserSessions(ctx, user)
}

// RevokeByPrefix signs out the user's session whose token hash starts with
// prefix (how a session is named to its owner).
func (s *Sessions) RevokeByPrefix(ctx context.Context, user ids.UserID, prefix string) error {
	return store.Kinded(s.db.DeleteUserSessionByPrefix(ctx, user, prefix), "session")
}

// Group is a group with its members.
type Group struct {
	store.Group
	Members []ids.UserID
}

func (p *Permissions) group(ctx context.Context, g store.Group) (Group, error) {
	members, err := p.db.GroupMembers(ctx, g.ID)
	if err != nil {
		return Group{}, err
	}
	out := Group{Group: g, Members: []ids.UserID{}}
	for _, m := range members {
		out.Members = append(out.Members, ids.UserID(m.ID))
	}
	return out, nil
}

// Groups lists every group with its members.
func (p *Permissions) Groups(ctx context.Context) ([]Group, error) {
	gs, err := p.db.Groups(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Group, 0, len(gs))
	for _, g := range gs {
		v, err := p.group(ctx, g)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// checkGroup checks what an administrator typed for a group: the name,
// trimmed, and the permissions.
func checkGroup(name string, permissions []string) (string, []Permission, error) {
	name = strings.TrimSpace(name)
	if name == "" || !utf8.ValidString(name) || utf8.RuneCountInString(name) > 64 {
		return "", nil, apperr.New(apperr.Invalid, "A group name is 1 to 64 characters.")
	}
	perms, err := CheckPermissions(permissions)
	return name, perms, err
}

func groupErr(err error, name string) error {
	if errors.Is(err, store.ErrConflict) {
		return apperr.New(apperr.Conflict, "A group called %s exists already.", name)
	}
	return store.Kinded(err, "group")
}

// byID returns a group with its members after a change; name is the
// group's name in an error.
func (p *Permissions) byID(ctx context.Context, id ids.GroupID, name string) (Group, error) {
	g, err := p.db.GroupByID(ctx, int64(id))
	if err != nil {
		return Group{}, groupErr(err, name)
	}
	return p.group(ctx, g)
}

// CreateGroup adds a group granting permissions.
func (p *Permissions) CreateGroup(ctx context.Context, name string, permissions []string) (Group, error) {
	name, perms, err := checkGroup(name, permissions)
	if err != nil {
		return Group{}, err
	}
	g, err := p.db.CreateGroup(ctx, name, perms)
	if err != nil {
		return Group{}, groupErr(err, name)
	}
	return p.group(ctx, g)
}

// UpdateGroup renames a group and replaces its permissions.
func (p *Permissions) UpdateGroup(ctx context.Context, id ids.GroupID, name string, permissions []string) (Group, error) {
	name, perms, err := checkGroup(name, permissions)
	if err != nil {
		return Group{}, err
	}
	if err := p.db.UpdateGroup(ctx, int64(id), name, perms); err != nil {
		return Group{}, groupErr(err, name)
	}
	return p.byID(ctx, id, name)
}

// DeleteGroup removes a group; its members keep their accounts.
func (p *Permissions) DeleteGroup(ctx context.Context, id ids.GroupID) error {
	return groupErr(p.db.DeleteGroup(ctx, int64(id)), "")
}

// SetMembers replaces a group's members.
func (p *Permissions) SetMembers(ctx context.Context, id ids.GroupID, users []ids.UserID) (Group, error) {
	if err := p.db.SetGroupMembers(ctx, int64(id), users); err != nil {
		return Group{}, store.Kinded(err, "group or user")
	}
	return p.byID(ctx, id, "")
}
