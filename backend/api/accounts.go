package api

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/files"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// require returns Forbidden unless the caller has permission p. Admins (and
// the desktop owner, who is one) pass without a lookup.
func (d Deps) require(ctx context.Context, p auth.Permission) error {
	c := CallerFrom(ctx)
	if c.Admin {
		return nil
	}
	if rc, ok := auth.CallerFrom(ctx); ok {
		return rc.Perms.Require(p)
	}
	if d.Perms == nil {
		return apperr.New(apperr.Forbidden, "You are not allowed to do this (%s); ask an administrator.", p)
	}
	set, err := d.Perms.Resolve(ctx, store.User{ID: c.UserID})
	if err != nil {
		return err
	}
	return set.Require(p)
}

// withCaller returns ctx carrying the caller's permissions, resolved once
// (auth.Caller): a reply started with it carries them, so each of its
// steps decides what it may do where it acts; require reads them too.
func (d Deps) withCaller(ctx context.Context) (context.Context, error) {
	c := CallerFrom(ctx)
	rc := auth.Caller{User: ids.UserID(c.UserID), Perms: auth.NewSet(c.Admin)}
	if !c.Admin && d.Perms != nil {
		set, err := d.Perms.Resolve(ctx, store.User{ID: c.UserID})
		if err != nil {
			return ctx, err
		}
		rc.Perms = set
	}
	return auth.WithCaller(ctx, rc), nil
}

// accountErr maps the store's account errors to kinds.
func accountErr(err error, what string) error {
	if errors.Is(err, store.ErrLastAdmin) {
		return apperr.New(apperr.Conflict, "That would leave no administrator who can sign in; make someone else an administrator first.")
	}
	return store.Kinded(err, what)
}

// Account is the facade for the caller's own account.
type Account struct{ deps Deps }

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
	u, err := a.deps.DB.UserByID(ctx, c.UserID)
	if err != nil {
		return Me{}, accountErr(err, "user")
	}
	hash, err := a.deps.DB.PasswordHash(ctx, ids.UserID(u.ID))
	if err != nil {
		return Me{}, err
	}
	perms := auth.AllPermissions
	if !c.Admin {
		set, err := a.deps.Perms.Resolve(ctx, u)
		if err != nil {
			return Me{}, err
		}
		perms = set.List()
	}
	return Me{ID: ids.UserID(u.ID), Username: u.Username, DisplayName: u.DisplayName, Admin: c.Admin, Owner: c.Owner,
		HasPassword: hash != "", Permissions: append([]string{}, perms...)}, nil
}

// SetDisplayName changes the name the caller is shown by.
func (a *Account) SetDisplayName(ctx context.Context, name string) error {
	return accountErr(a.deps.Accounts.SetDisplayName(ctx, user(ctx), name), "user")
}

// ChangePassword sets the caller's password after checking the current one
// (not asked when none was set yet: the desktop owner turning on sharing).
// Every other session of the caller ends; this one stays.
func (a *Account) ChangePassword(ctx context.Context, current, next string) error {
	c := CallerFrom(ctx)
	if a.deps.Limiter != nil && !AtTheDesktop(c) {
		if wait := a.deps.Limiter.AttemptAccount(c.UserID); wait > 0 {
			return apperr.New(apperr.RateLimited, "Too many attempts; try again in %d seconds.", int(wait.Seconds())+1)
		}
	}
	return accountErr(a.deps.Accounts.ChangePassword(ctx, user(ctx), current, next, c.Session), "user")
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
	list, err := a.deps.DB.UserSessions(ctx, user(ctx))
	if err != nil {
		return nil, err
	}
	out := make([]SessionView, 0, len(list))
	for _, s := range list {
		out = append(out, SessionView{ID: ids.SessionID(s.TokenHash[:sessionIDLen]), CreatedAt: s.CreatedAt, LastSeenAt: s.LastSeenAt,
			UserAgent: s.UserAgent, IP: s.IP, Current: s.TokenHash == c.Session})
	}
	return out, nil
}

// RevokeSession signs one of the caller's sessions out.
func (a *Account) RevokeSession(ctx context.Context, id ids.SessionID) error {
	if len(id) != sessionIDLen {
		return apperr.New(apperr.NotFound, "no such session")
	}
	return store.Kinded(a.deps.DB.DeleteUserSessionByPrefix(ctx, user(ctx), string(id)), "session")
}

// SignOutEverywhere ends every session of the caller, this one included.
func (a *Account) SignOutEverywhere(ctx context.Context) (int64, error) {
	return a.deps.Sessions.RevokeAll(ctx, user(ctx))
}

// Admin is the facade for administrators: users, groups, permissions,
// instance settings and model access. Every method requires an admin.
type Admin struct{ deps Deps }

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
	if q.Status != "" && q.Status != store.StatusActive && q.Status != store.StatusPending && q.Status != store.StatusDisabled {
		return UserList{}, apperr.New(apperr.Invalid, "status is active, pending or disabled")
	}
	rows, total, err := a.deps.DB.UserRows(ctx, store.UserFilter{Status: q.Status, Offset: q.Offset, Limit: q.Limit}, q.Query)
	if err != nil {
		return UserList{}, err
	}
	out := UserList{Users: make([]UserView, 0, len(rows)), Total: total}
	for _, r := range rows {
		out.Users = append(out.Users, userView(r))
	}
	return out, nil
}

func (a *Admin) userView(ctx context.Context, id ids.UserID) (UserView, error) {
	u, err := a.deps.DB.UserByID(ctx, int64(id))
	if err != nil {
		return UserView{}, accountErr(err, "user")
	}
	rows, _, err := a.deps.DB.UserRows(ctx, store.UserFilter{Limit: 500}, u.Username)
	if err != nil {
		return UserView{}, err
	}
	for _, r := range rows {
		if r.ID == u.ID {
			return userView(r), nil
		}
	}
	return UserView{}, apperr.New(apperr.NotFound, "user not found")
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
	u, err := a.deps.Accounts.Create(ctx, auth.SignUpRequest{Username: in.Username, DisplayName: in.DisplayName, Password: in.Password}, in.Admin)
	if err != nil {
		return UserView{}, accountErr(err, "user")
	}
	return a.userView(ctx, ids.UserID(u.ID))
}

// SetStatus approves (active), disables or parks (pending) a user. Leaving
// active signs the user out everywhere at once.
func (a *Admin) SetStatus(ctx context.Context, id ids.UserID, status string) (UserView, error) {
	if id == user(ctx) && status != store.StatusActive {
		return UserView{}, apperr.New(apperr.Invalid, "You cannot disable your own account.")
	}
	if status != store.StatusActive && status != store.StatusPending && status != store.StatusDisabled {
		return UserView{}, apperr.New(apperr.Invalid, "status is active, pending or disabled, not %q", status)
	}
	if err := a.deps.DB.SetStatus(ctx, id, status); err != nil {
		return UserView{}, accountErr(err, "user")
	}
	return a.userView(ctx, id)
}

// SetAdmin promotes or demotes a user.
func (a *Admin) SetAdmin(ctx context.Context, id ids.UserID, admin bool) (UserView, error) {
	if err := a.deps.DB.SetAdmin(ctx, id, admin); err != nil {
		return UserView{}, accountErr(err, "user")
	}
	return a.userView(ctx, id)
}

// ResetPassword sets a user's password and signs them out everywhere.
func (a *Admin) ResetPassword(ctx context.Context, id ids.UserID, password string) error {
	return accountErr(a.deps.Accounts.ResetPassword(ctx, id, password), "user")
}

// GroupView is a group with its permissions and members.
type GroupView struct {
	ID          ids.GroupID  `json:"id"`
	Name        string       `json:"name"`
	Permissions []string     `json:"permissions"`
	Members     []ids.UserID `json:"members"`
}

// Groups lists every group.
func (a *Admin) Groups(ctx context.Context) ([]GroupView, error) {
	gs, err := a.deps.DB.Groups(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]GroupView, 0, len(gs))
	for _, g := range gs {
		v, err := a.groupView(ctx, g)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func (a *Admin) groupView(ctx context.Context, g store.Group) (GroupView, error) {
	members, err := a.deps.DB.GroupMembers(ctx, g.ID)
	if err != nil {
		return GroupView{}, err
	}
	v := GroupView{ID: ids.GroupID(g.ID), Name: g.Name, Permissions: append([]string{}, g.Permissions...), Members: []ids.UserID{}}
	for _, m := range members {
		v.Members = append(v.Members, ids.UserID(m.ID))
	}
	return v, nil
}

// checkGroup checks what an administrator typed for a group: the name,
// trimmed, and the permissions.
func checkGroup(name string, permissions []string) (string, []auth.Permission, error) {
	name = strings.TrimSpace(name)
	if name == "" || !utf8.ValidString(name) || utf8.RuneCountInString(name) > 64 {
		return "", nil, apperr.New(apperr.Invalid, "A group name is 1 to 64 characters.")
	}
	perms, err := auth.CheckPermissions(permissions)
	return name, perms, err
}

// CreateGroup adds a group granting permissions.
func (a *Admin) CreateGroup(ctx context.Context, name string, permissions []string) (GroupView, error) {
	name, perms, err := checkGroup(name, permissions)
	if err != nil {
		return GroupView{}, err
	}
	g, err := a.deps.DB.CreateGroup(ctx, name, perms)
	if err != nil {
		return GroupView{}, groupErr(err, name)
	}
	return a.groupView(ctx, g)
}

func groupErr(err error, name string) error {
	if errors.Is(err, store.ErrConflict) {
		return apperr.New(apperr.Conflict, "A group called %s exists already.", name)
	}
	return store.Kinded(err, "group")
}

// UpdateGroup renames a group and replaces its permissions.
func (a *Admin) UpdateGroup(ctx context.Context, id ids.GroupID, name string, permissions []string) (GroupView, error) {
	name, perms, err := checkGroup(name, permissions)
	if err != nil {
		return GroupView{}, err
	}
	if err := a.deps.DB.UpdateGroup(ctx, int64(id), name, perms); err != nil {
		return GroupView{}, groupErr(err, name)
	}
	g, err := a.deps.DB.GroupByID(ctx, int64(id))
	if err != nil {
		return GroupView{}, groupErr(err, name)
	}
	return a.groupView(ctx, g)
}

// DeleteGroup removes a group; its members keep their accounts.
func (a *Admin) DeleteGroup(ctx context.Context, id ids.GroupID) error {
	return groupErr(a.deps.DB.DeleteGroup(ctx, int64(id)), "")
}

// SetMembers replaces a group's members.
func (a *Admin) SetMembers(ctx context.Context, id ids.GroupID, users []ids.UserID) (GroupView, error) {
	if err := a.deps.DB.SetGroupMembers(ctx, int64(id), users); err != nil {
		return GroupView{}, store.Kinded(err, "group or user")
	}
	g, err := a.deps.DB.GroupByID(ctx, int64(id))
	if err != nil {
		return GroupView{}, groupErr(err, "")
	}
	return a.groupView(ctx, g)
}

// PermissionList is every permission with its description, and the
// baseline every user has.
type PermissionList struct {
	All      []auth.Info `json:"all"`
	Baseline []string    `json:"baseline"`
}

// Permissions lists the permissions and the baseline.
func (a *Admin) Permissions(ctx context.Context) (PermissionList, error) {
	base, err := a.deps.Perms.Baseline(ctx)
	if err != nil {
		return PermissionList{}, err
	}
	return PermissionList{All: auth.Describe(), Baseline: append([]string{}, base...)}, nil
}

// SetBaseline replaces what every user may do.
func (a *Admin) SetBaseline(ctx context.Context, names []string) (PermissionList, error) {
	if err := a.deps.Perms.SetBaseline(ctx, names); err != nil {
		return PermissionList{}, err
	}
	return a.Permissions(ctx)
}

// The instance settings the admin page edits (besides the sign-up mode,
// which backend/auth owns).
const (
	SettingInstanceName = "instance_name"
	SettingDefaultModel = "default_model"
)

// InstanceSettings are the instance-wide settings.
type InstanceSettings struct {
	InstanceName string          `json:"instanceName"`
	SignUpMode   auth.SignUpMode `json:"signUpMode"`
	DefaultModel ids.ModelID     `json:"defaultModel"`
	// FilesQuotaMB caps what each person's files may take; 0: no cap.
	FilesQuotaMB int64 `json:"filesQuotaMB"`
}

// InstancePatch changes the settings that are set.
type InstancePatch struct {
	InstanceName *string          `json:"instanceName,omitempty"`
	SignUpMode   *auth.SignUpMode `json:"signUpMode,omitempty"`
	DefaultModel *ids.ModelID     `json:"defaultModel,omitempty"`
	FilesQuotaMB *int64           `json:"filesQuotaMB,omitempty"`
}

// Settings reads the instance settings.
func (a *Admin) Settings(ctx context.Context) (InstanceSettings, error) {
	return a.settings(ctx)
}

func (a *Admin) settings(ctx context.Context) (InstanceSettings, error) {
	name, _, err := a.deps.DB.Setting(ctx, SettingInstanceName)
	if err != nil {
		return InstanceSettings{}, err
	}
	mode, err := a.deps.Accounts.SignUpMode(ctx)
	if err != nil {
		return InstanceSettings{}, err
	}
	var quota int64
	if a.deps.Files != nil {
		quota = a.deps.Files.Quota(ctx) >> 20
	}
	return InstanceSettings{InstanceName: name, SignUpMode: mode, DefaultModel: instanceDefaultModel(ctx, a.deps.DB),
		FilesQuotaMB: quota}, nil
}

func instanceDefaultModel(ctx context.Context, db *store.DB) ids.ModelID {
	v, _, _ := db.Setting(ctx, SettingDefaultModel)
	n, _ := strconv.ParseInt(v, 10, 64)
	return ids.ModelID(n)
}

// SetSettings changes the instance settings that are set in the patch.
func (a *Admin) SetSettings(ctx context.Context, p InstancePatch) (InstanceSettings, error) {
	if p.InstanceName != nil {
		name := strings.TrimSpace(*p.InstanceName)
		if name == "" || !utf8.ValidString(name) || utf8.RuneCountInString(name) > 64 {
			return InstanceSettings{}, apperr.New(apperr.Invalid, "The instance name is 1 to 64 characters.")
		}
		if err := a.deps.DB.SetSetting(ctx, SettingInstanceName, name); err != nil {
			return InstanceSettings{}, err
		}
	}
	if p.SignUpMode != nil {
		if err := a.deps.Accounts.SetSignUpMode(ctx, *p.SignUpMode); err != nil {
			return InstanceSettings{}, err
		}
	}
	if p.DefaultModel != nil {
		if *p.DefaultModel != 0 {
			m, err := a.deps.DB.ModelByID(ctx, user(ctx), *p.DefaultModel)
			if err != nil {
				return InstanceSettings{}, store.Kinded(err, "model")
			}
			if m.OwnerID != nil {
				return InstanceSettings{}, apperr.New(apperr.Invalid, "The default model must be one of the shared connections' models.")
			}
		}
		if err := a.deps.DB.SetSetting(ctx, SettingDefaultModel, strconv.FormatInt(int64(*p.DefaultModel), 10)); err != nil {
			return InstanceSettings{}, err
		}
	}
	if p.FilesQuotaMB != nil {
		if *p.FilesQuotaMB < 0 || *p.FilesQuotaMB > 1<<30 {
			return InstanceSettings{}, apperr.New(apperr.Invalid, "The storage for each person is a number of MB, 0 for no limit.")
		}
		if err := a.deps.DB.SetSetting(ctx, files.SettingQuotaMB, strconv.FormatInt(*p.FilesQuotaMB, 10)); err != nil {
			return InstanceSettings{}, err
		}
	}
	return a.settings(ctx)
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
	acc, err := a.deps.DB.ModelAccessOf(ctx, id)
	if err != nil {
		return AccessView{}, store.Kinded(err, "model")
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
	if err := a.deps.DB.SetModelAccess(ctx, id, acc); err != nil {
		return AccessView{}, store.Kinded(err, "model, user or group")
	}
	return a.ModelAccess(ctx, id)
}
