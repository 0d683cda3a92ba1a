package api

import (
	"context"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/connections"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/settings"
	"github.com/llembas/lembas/backend/store"
)

// Account is the facade for the caller's own account.
type Account struct {
	accounts *auth.Accounts
	sessions *auth.Sessions
	perms    *auth.Permissions
	// limiter bounds password checks (changing a password from a
	// session); nil: unbounded.
	limiter *auth.LoginLimiter
}

// NewAccount returns the Account facade.
func NewAccount(accounts *auth.Accounts, sessions *auth.Sessions, perms *auth.Permissions, limiter *auth.LoginLimiter) *Account {
	return &Account{accounts: accounts, sessions: sessions, perms: perms, limiter: limiter}
}

// Me is the caller's account as the frontend needs it.
type Me struct {
	ID          ids.UserID `json:"id"`
	Username    string     `json:"username"`
	DisplayName string     `json:"displayName"`
	Admin       bool       `json:"admin"`
	Owner       bool       `json:"owner"`
	HasPassword bool       `json:"hasPassword"`
	Permissions []string   `json:"permissions"`
}

// Me describes the caller: who they are and what they may do.
func (a *Account) Me(ctx context.Context) (Me, error) {
	c := CallerFrom(ctx)
	u, hasPassword, err := a.accounts.Profile(ctx, user(ctx))
	if err != nil {
		return Me{}, err
	}
	perms := auth.AllPermissions
	if !c.Admin {
		set, err := a.perms.Resolve(ctx, u)
		if err != nil {
			return Me{}, err
		}
		perms = set.List()
	}
	return Me{ID: ids.UserID(u.ID), Username: u.Username, DisplayName: u.DisplayName, Admin: c.Admin, Owner: c.Owner,
		HasPassword: hasPassword, Permissions: append([]string{}, perms...)}, nil
}

// SetDisplayName changes the name the caller is shown by.
func (a *Account) SetDisplayName(ctx context.Context, name string) error {
	return auth.AccountErr(a.accounts.SetDisplayName(ctx, user(ctx), name), "user")
}

// ChangePassword sets the caller's password after checking the current one
// (not asked when none was set yet: the desktop owner turning on sharing).
// Every other session of the caller ends; this one stays.
func (a *Account) ChangePassword(ctx context.Context, current, next string) error {
	c := CallerFrom(ctx)
	if a.limiter != nil && !AtTheDesktop(c) {
		if wait := a.limiter.AttemptAccount(c.UserID); wait > 0 {
			return apperr.New(apperr.RateLimited, "Too many attempts; try again in %d seconds.", int(wait.Seconds())+1)
		}
	}
	return auth.AccountErr(a.accounts.ChangePassword(ctx, user(ctx), current, next, c.Session), "user")
}

// SessionView is one sign-in as its owner sees it.
type SessionView struct {
	ID         ids.SessionID `json:"id"`
	CreatedAt  int64         `json:"createdAt"`
	LastSeenAt int64         `json:"lastSeenAt"`
	UserAgent  string        `json:"userAgent"`
	IP         string        `json:"ip"`
	Current    bool          `json:"current"`
}

// sessionIDLen is how much of a token hash names a session publicly: 64
// bits, enough to be unique among one user's sessions, and useless for
// signing in.
const sessionIDLen = 16

// Sessions lists the caller's sign-ins, newest first.
func (a *Account) Sessions(ctx context.Context) ([]SessionView, error) {
	c := CallerFrom(ctx)
	list, err := a.sessions.List(ctx, user(ctx))
	if err != nil {
		return nil, err
	}
	return views(list, func(s store.Session) SessionView {
		return SessionView{ID: ids.SessionID(s.TokenHash[:sessionIDLen]), CreatedAt: s.CreatedAt, LastSeenAt: s.LastSeenAt,
			UserAgent: s.UserAgent, IP: s.IP, Current: s.TokenHash == c.Session}
	}), nil
}

// RevokeSession signs one of the caller's sessions out.
func (a *Account) RevokeSession(ctx context.Context, id ids.SessionID) error {
	if len(id) != sessionIDLen {
		return apperr.New(apperr.NotFound, "no such session")
	}
	return a.sessions.RevokeByPrefix(ctx, user(ctx), string(id))
}

// SignOutEverywhere ends every session of the caller, this one included.
func (a *Account) SignOutEverywhere(ctx context.Context) (int64, error) {
	return a.sessions.RevokeAll(ctx, user(ctx))
}

// Admin is the facade for administrators: users, groups, permissions,
// instance settings and model access. Every method requires an admin.
type Admin struct {
	accounts *auth.Accounts
	perms    *auth.Permissions
	instance *settings.Instance
	conns    *connections.Service
}

// NewAdmin returns the Admin facade.
func NewAdmin(accounts *auth.Accounts, perms *auth.Permissions, instance *settings.Instance, conns *connections.Service) *Admin {
	return &Admin{accounts: accounts, perms: perms, instance: instance, conns: conns}
}

// UserQuery selects a page of users.
type UserQuery struct {
	Query  string `json:"query"`
	Status string `json:"status"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

// UserView is a user on the admin page.
type UserView struct {
	ID          ids.UserID    `json:"id"`
	Username    string        `json:"username"`
	DisplayName string        `json:"displayName"`
	Admin       bool          `json:"admin"`
	Owner       bool          `json:"owner"`
	Status      string        `json:"status"`
	HasPassword bool          `json:"hasPassword"`
	CreatedAt   int64         `json:"createdAt"`
	Groups      []ids.GroupID `json:"groups"`
}

// UserList is a page of users and how many match in all.
type UserList struct {
	Users []UserView `json:"users"`
	Total int        `json:"total"`
}

func userView(r store.UserRow) UserView {
	v := UserView{ID: ids.UserID(r.ID), Username: r.Username, DisplayName: r.DisplayName, Admin: r.IsAdmin, Owner: r.IsOwner,
		Status: r.Status, HasPassword: r.HasPassword, CreatedAt: r.CreatedAt, Groups: []ids.GroupID{}}
	for _, g := range r.Groups {
		v.Groups = append(v.Groups, ids.GroupID(g))
	}
	return v
}

// Users lists users, filtered by status and by a text in the name.
func (a *Admin) Users(ctx context.Context, q UserQuery) (UserList, error) {
	rows, total, err := a.accounts.Users(ctx, q.Status, q.Query, q.Offset, q.Limit)
	if err != nil {
		return UserList{}, err
	}
	return UserList{Users: views(rows, userView), Total: total}, nil
}

// userResult is a changed user as the admin page gets it back.
func userResult(r store.UserRow, err error) (UserView, error) {
	if err != nil {
		return UserView{}, err
	}
	return userView(r), nil
}

// NewUserInput is an account an admin creates.
type NewUserInput struct {
	Username    string `json:"username"`
	DisplayName string `json:"displayName"`
	Password    string `json:"password"`
	Admin       bool   `json:"admin"`
}

// CreateUser creates an active account (whatever the sign-up mode).
func (a *Admin) CreateUser(ctx context.Context, in NewUserInput) (UserView, error) {
	u, err := a.accounts.Create(ctx, auth.SignUpRequest{Username: in.Username, DisplayName: in.DisplayName, Password: in.Password}, in.Admin)
	if err != nil {
		return UserView{}, auth.AccountErr(err, "user")
	}
	return userResult(a.accounts.User(ctx, ids.UserID(u.ID)))
}

// SetStatus approves (active), disables or parks (pending) a user. Leaving
// active signs the user out everywhere at once.
func (a *Admin) SetStatus(ctx context.Context, id ids.UserID, status string) (UserView, error) {
	return userResult(a.accounts.SetStatus(ctx, user(ctx), id, status))
}

// SetAdmin promotes or demotes a user.
func (a *Admin) SetAdmin(ctx context.Context, id ids.UserID, admin bool) (UserView, error) {
	return userResult(a.accounts.SetAdmin(ctx, id, admin))
}

// ResetPassword sets a user's password and signs them out everywhere.
func (a *Admin) ResetPassword(ctx context.Context, id ids.UserID, password string) error {
	return auth.AccountErr(a.accounts.ResetPassword(ctx, id, password), "user")
}

// GroupView is a group with its permissions and members.
type GroupView struct {
	ID          ids.GroupID  `json:"id"`
	Name        string       `json:"name"`
	Permissions []string     `json:"permissions"`
	Members     []ids.UserID `json:"members"`
}

func groupView(g auth.Group) GroupView {
	return GroupView{ID: ids.GroupID(g.ID), Name: g.Name, Permissions: append([]string{}, g.Permissions...), Members: g.Members}
}

// groupResult is a changed group as the admin page gets it back.
func groupResult(g auth.Group, err error) (GroupView, error) {
	if err != nil {
		return GroupView{}, err
	}
	return groupView(g), nil
}

// Groups lists every group.
func (a *Admin) Groups(ctx context.Context) ([]GroupView, error) {
	gs, err := a.perms.Groups(ctx)
	if err != nil {
		return nil, err
	}
	return views(gs, groupView), nil
}

// CreateGroup adds a group granting permissions.
func (a *Admin) CreateGroup(ctx context.Context, name string, permissions []string) (GroupView, error) {
	return groupResult(a.perms.CreateGroup(ctx, name, permissions))
}

// UpdateGroup renames a group and replaces its permissions.
func (a *Admin) UpdateGroup(ctx context.Context, id ids.GroupID, name string, permissions []string) (GroupView, error) {
	return groupResult(a.perms.UpdateGroup(ctx, id, name, permissions))
}

// DeleteGroup removes a group; its members keep their accounts.
func (a *Admin) DeleteGroup(ctx context.Context, id ids.GroupID) error {
	return a.perms.DeleteGroup(ctx, id)
}

// SetMembers replaces a group's members.
func (a *Admin) SetMembers(ctx context.Context, id ids.GroupID, users []ids.UserID) (GroupView, error) {
	return groupResult(a.perms.SetMembers(ctx, id, users))
}

// PermissionList is every permission with its description, and the
// baseline every user has.
type PermissionList struct {
	All      []auth.Info `json:"all"`
	Baseline []string    `json:"baseline"`
}

// Permissions lists the permissions and the baseline.
func (a *Admin) Permissions(ctx context.Context) (PermissionList, error) {
	base, err := a.perms.Baseline(ctx)
	if err != nil {
		return PermissionList{}, err
	}
	return PermissionList{All: auth.Describe(), Baseline: append([]string{}, base...)}, nil
}

// SetBaseline replaces what every user may do.
func (a *Admin) SetBaseline(ctx context.Context, names []string) (PermissionList, error) {
	if err := a.perms.SetBaseline(ctx, names); err != nil {
		return PermissionList{}, err
	}
	return a.Permissions(ctx)
}

// InstanceSettings are the instance-wide settings (backend/settings).
type InstanceSettings = settings.InstanceSettings

// InstancePatch changes the settings that are set.
type InstancePatch = settings.InstancePatch

// Settings reads the instance settings.
func (a *Admin) Settings(ctx context.Context) (InstanceSettings, error) {
	return a.instance.Get(ctx)
}

// SetSettings changes the instance settings that are set in the patch.
func (a *Admin) SetSettings(ctx context.Context, p InstancePatch) (InstanceSettings, error) {
	return a.instance.Set(ctx, user(ctx), p)
}

// AccessView is who may use a model. Everyone false with no users and no
// groups is administrators only: the groups it was shared with were
// deleted, and it stays closed until an administrator chooses again.
type AccessView struct {
	Everyone bool          `json:"everyone"`
	Users    []ids.UserID  `json:"users"`
	Groups   []ids.GroupID `json:"groups"`
}

// AccessInput replaces who may use a model; both empty means everyone.
type AccessInput struct {
	Users  []ids.UserID  `json:"users"`
	Groups []ids.GroupID `json:"groups"`
}

// ModelAccess reads who may use a shared model.
func (a *Admin) ModelAccess(ctx context.Context, id ids.ModelID) (AccessView, error) {
	return accessView(a.conns.ModelAccess(ctx, id))
}

func accessView(acc store.ModelAccess, err error) (AccessView, error) {
	if err != nil {
		return AccessView{}, err
	}
	v := AccessView{Everyone: acc.Everyone(), Users: acc.Users, Groups: []ids.GroupID{}}
	for _, g := range acc.Groups {
		v.Groups = append(v.Groups, ids.GroupID(g))
	}
	return v, nil
}

// SetModelAccess replaces who may use a shared model.
func (a *Admin) SetModelAccess(ctx context.Context, id ids.ModelID, in AccessInput) (AccessView, error) {
	acc := store.ModelAccess{Users: in.Users}
	for _, g := range in.Groups {
		acc.Groups = append(acc.Groups, int64(g))
	}
	return accessView(a.conns.SetModelAccess(ctx, id, acc))
}
