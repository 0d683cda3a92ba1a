package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/llembas/lembas/backend/ids"
)

// The statuses a user can have. Only active users can sign in; a pending
// user waits for an administrator's approval.
const (
	StatusActive   = "active"
	StatusPending  = "pending"
	StatusDisabled = "disabled"
)

// ErrLastAdmin is returned when a change would leave the instance without an
// active administrator.
var ErrLastAdmin = errors.New("the last administrator cannot be removed")

func validStatus(s string) bool {
	return s == StatusActive || s == StatusPending || s == StatusDisabled
}

// signInAdmin is true when an administrator who can sign in (active, with a
// password) exists. Until one does, the first sign-up becomes the admin.
const signInAdmin = `SELECT EXISTS (SELECT 1 FROM users WHERE is_admin = 1 AND status = 'active' AND password_hash != '')`

// NewUser is what creating an account takes. PasswordHash is already hashed
// (backend/auth); the store never sees a password.
type NewUser struct {
	Username     string
	DisplayName  string
	PasswordHash string
	Status       string // active, pending or disabled; empty means active for CreateUser
	IsAdmin      bool
}

// CreateUser inserts an account as given. A username taken in any letter
// case is ErrConflict.
func (db *DB) CreateUser(ctx context.Context, nu NewUser) (User, error) {
	if nu.Status == "" {
		nu.Status = StatusActive
	}
	var u User
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		var err error
		u, err = insertUser(ctx, tx, nu)
		return err
	})
	return u, err
}

// CreateAccount inserts a signed-up account in one write transaction, which
// is what makes the first admin exactly once: when no administrator who can
// sign in exists, the account becomes an active admin whatever nu says.
// Otherwise it gets nu.Status, and an empty Status (sign-up closed) refuses
// with ErrForbidden. nu.IsAdmin is ignored.
func (db *DB) CreateAccount(ctx context.Context, nu NewUser) (User, error) {
	var u User
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		var exists bool
		if err := tx.QueryRowContext(ctx, signInAdmin).Scan(&exists); err != nil {
			return fmt.Errorf("look for an admin: %w", err)
		}
		nu.IsAdmin = !exists
		if nu.IsAdmin {
			nu.Status = StatusActive
			claimed, ok, err := claimEmptyOwner(ctx, tx, nu)
			if err != nil || ok {
				u = claimed
				return err
			}
		} else if nu.Status == "" {
			return fmt.Errorf("sign-up is closed: %w", ErrForbidden)
		}
		var err error
		u, err = insertUser(ctx, tx, nu)
		return err
	})
	return u, err
}

// claimEmptyOwner turns the password-less owner row into the first admin's
// account when it holds nothing of its own (no chats, folders, personal
// connections, uploads or voice servers with their keys): a fresh `--serve` data directory then has one admin, not a
// second, unusable one named after the service account. An owner with data
// (a desktop instance being shared) is never claimed, or the first stranger
// to sign up would read the owner's chats; that owner sets a password from
// the desktop or with `lembas create-admin` instead.
func claimEmptyOwner(ctx context.Context, tx *sql.Tx, nu NewUser) (User, bool, error) {
	var id int64
	err := tx.QueryRowContext(ctx, `
		SELECT u.id FROM users u WHERE u.is_owner = 1 AND u.password_hash = ''
		  AND NOT EXISTS (SELECT 1 FROM chats WHERE user_id = u.id)
		  AND NOT EXISTS (SELECT 1 FROM folders WHERE user_id = u.id)
		  AND NOT EXISTS (SELECT 1 FROM connections WHERE owner_id = u.id)
		  AND NOT EXISTS (SELECT 1 FROM attachments WHERE user_id = u.id)
		  AND NOT EXISTS (SELECT 1 FROM audio_settings WHERE user_id = u.id)
		ORDER BY u.id LIMIT 1`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, false, nil
	}
	if err != nil {
		return User{}, false, fmt.Errorf("find an empty owner: %w", err)
	}
	var taken bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE username = ? COLLATE NOCASE AND id != ?)`, nu.Username, id).Scan(&taken); err != nil {
		return User{}, false, fmt.Errorf("check username: %w", err)
	}
	if taken {
		return User{}, false, fmt.Errorf("username %q: %w", nu.Username, ErrConflict)
	}
	_, err = tx.ExecContext(ctx, `
		UPDATE users SET username = ?, display_name = ?, password_hash = ?, is_admin = 1, status = 'active', updated_at = ?
		WHERE id = ?`, nu.Username, nu.DisplayName, nu.PasswordHash, nowMillis(), id)
	if err != nil {
		return User{}, false, fmt.Errorf("claim the owner row: %w", err)
	}
	u, err := scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`, id))
	if err != nil {
		return User{}, false, fmt.Errorf("read claimed owner: %w", err)
	}
	return u, true, nil
}

// UserRow is a user as the admin list shows it.
type UserRow struct {
	User
	HasPassword bool
	Groups      []int64
}

// UserRows is ListUsers with whether each user has a password and their
// groups, and a case-insensitive filter on username and display name.
func (db *DB) UserRows(ctx context.Context, f UserFilter, query string) ([]UserRow, int, error) {
	if f.Limit <= 0 {
		f.Limit = 50
	}
	f.Limit = min(f.Limit, 500)
	f.Offset = max(f.Offset, 0)
	where, args := ` WHERE 1`, []any{}
	if f.Status != "" {
		where, args = where+` AND status = ?`, append(args, f.Status)
	}
	if q := strings.TrimSpace(query); q != "" {
		like := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(q) + "%"
		where += ` AND (username LIKE ? ESCAPE '\' OR display_name LIKE ? ESCAPE '\')`
		args = append(args, like, like)
	}
	var total int
	if err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM users`+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count users: %w", err)
	}
	rows, err := db.r.QueryContext(ctx, `SELECT `+userColumns+`, password_hash != '',
		(SELECT COALESCE(json_group_array(group_id), '[]') FROM group_members WHERE user_id = users.id)
		FROM users`+where+` ORDER BY id LIMIT ? OFFSET ?`, append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list users: %w", err)
	}
	defer rows.Close()
	out := []UserRow{}
	for rows.Next() {
		var r UserRow
		var groups string
		if err := rows.Scan(&r.ID, &r.Username, &r.DisplayName, &r.IsAdmin, &r.IsOwner, &r.Status, &r.CreatedAt, &r.HasPassword, &groups); err != nil {
			return nil, 0, err
		}
		if err := json.Unmarshal([]byte(groups), &r.Groups); err != nil || r.Groups == nil {
			r.Groups = []int64{}
		}
		out = append(out, r)
	}
	return out, total, rows.Err()
}

// SetGroupMembers replaces a group's members in one transaction; unknown
// users are ErrNotFound.
func (db *DB) SetGroupMembers(ctx context.Context, group int64, users []ids.UserID) error {
	return db.WriteTx(ctx, func(tx *sql.Tx) error {
		var ok bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM groups WHERE id = ?)`, group).Scan(&ok); err != nil {
			return fmt.Errorf("read group %d: %w", group, err)
		}
		if !ok {
			return fmt.Errorf("group %d: %w", group, ErrNotFound)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM group_members WHERE group_id = ?`, group); err != nil {
			return fmt.Errorf("clear group %d: %w", group, err)
		}
		for _, u := range uniq(users) {
			res, err := tx.ExecContext(ctx, `INSERT INTO group_members (group_id, user_id) SELECT ?, id FROM users WHERE id = ?`, group, u)
			if err != nil {
				return fmt.Errorf("add user %d to group %d: %w", u, group, err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return fmt.Errorf("user %d: %w", u, ErrNotFound)
			}
		}
		return nil
	})
}

// DeleteUserSessionByPrefix ends the session of user whose token hash starts
// with prefix (the short id the sessions list shows). ErrNotFound when none.
func (db *DB) DeleteUserSessionByPrefix(ctx context.Context, user ids.UserID, prefix string) error {
	if len(prefix) < 12 || strings.Trim(prefix, "0123456789abcdef") != "" {
		return fmt.Errorf("session %q: %w", prefix, ErrNotFound)
	}
	res, err := db.w.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ? AND substr(token_hash, 1, ?) = ?`, user, len(prefix), prefix)
	if err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("session %q: %w", prefix, ErrNotFound)
	}
	return nil
}

func insertUser(ctx context.Context, tx *sql.Tx, nu NewUser) (User, error) {
	if !validStatus(nu.Status) {
		return User{}, fmt.Errorf("user status %q is not active, pending or disabled", nu.Status)
	}
	var taken bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE username = ? COLLATE NOCASE)`, nu.Username).Scan(&taken); err != nil {
		return User{}, fmt.Errorf("check username: %w", err)
	}
	if taken {
		return User{}, fmt.Errorf("username %q: %w", nu.Username, ErrConflict)
	}
	now := nowMillis()
	res, err := tx.ExecContext(ctx, `
		INSERT INTO users (username, display_name, password_hash, is_admin, status, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`,
		nu.Username, nu.DisplayName, nu.PasswordHash, nu.IsAdmin, nu.Status, now, now)
	if err != nil {
		return User{}, fmt.Errorf("insert user: %w", err)
	}
	id, _ := res.LastInsertId()
	u, err := scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`, id))
	if err != nil {
		return User{}, fmt.Errorf("read new user: %w", err)
	}
	return u, nil
}

// HasSignInAdmin reports whether an administrator who can sign in exists
// (active, with a password). Until one does, the next sign-up becomes the
// admin.
func (db *DB) HasSignInAdmin(ctx context.Context) (bool, error) {
	var ok bool
	if err := db.r.QueryRowContext(ctx, signInAdmin).Scan(&ok); err != nil {
		return false, fmt.Errorf("look for an admin: %w", err)
	}
	return ok, nil
}

// UserByName reads a user by name, ignoring letter case (ASCII).
func (db *DB) UserByName(ctx context.Context, name string) (User, error) {
	u, err := scanUser(db.r.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE username = ? COLLATE NOCASE`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, fmt.Errorf("user %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return User{}, fmt.Errorf("read user %q: %w", name, err)
	}
	return u, nil
}

// Credentials reads a user by name (ignoring letter case) with the stored
// password hash, which is empty when no password was ever set.
func (db *DB) Credentials(ctx context.Context, name string) (User, string, error) {
	var u User
	var hash string
	err := db.r.QueryRowContext(ctx, `SELECT `+userColumns+`, password_hash FROM users WHERE username = ? COLLATE NOCASE`, name).
		Scan(&u.ID, &u.Username, &u.DisplayName, &u.IsAdmin, &u.IsOwner, &u.Status, &u.CreatedAt, &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, "", fmt.Errorf("user %q: %w", name, ErrNotFound)
	}
	if err != nil {
		return User{}, "", fmt.Errorf("read user %q: %w", name, err)
	}
	return u, hash, nil
}

// PasswordHash reads a user's stored password hash (empty: none set).
func (db *DB) PasswordHash(ctx context.Context, id ids.UserID) (string, error) {
	var hash string
	err := db.r.QueryRowContext(ctx, `SELECT password_hash FROM users WHERE id = ?`, id).Scan(&hash)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("user %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("read user %d: %w", id, err)
	}
	return hash, nil
}

// SetPassword stores a new password hash for a user. It does not touch the
// user's sessions; the caller decides which to end.
func (db *DB) SetPassword(ctx context.Context, id ids.UserID, hash string) error {
	return db.updateUser(ctx, id, `password_hash = ?`, hash)
}

// SetDisplayName changes the name a user is shown with.
func (db *DB) SetDisplayName(ctx context.Context, id ids.UserID, name string) error {
	return db.updateUser(ctx, id, `display_name = ?`, name)
}

func (db *DB) updateUser(ctx context.Context, id ids.UserID, set string, arg any) error {
	res, err := db.w.ExecContext(ctx, `UPDATE users SET `+set+`, updated_at = ? WHERE id = ?`, arg, nowMillis(), id)
	if err != nil {
		return fmt.Errorf("update user %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("user %d: %w", id, ErrNotFound)
	}
	return nil
}

// SetStatus approves (active), suspends (disabled) or parks (pending) a
// user. Leaving active ends every session of the user in the same
// transaction. Taking the last active admin out of active is ErrLastAdmin.
func (db *DB) SetStatus(ctx context.Context, id ids.UserID, status string) error {
	if !validStatus(status) {
		return fmt.Errorf("user status %q is not active, pending or disabled", status)
	}
	return db.WriteTx(ctx, func(tx *sql.Tx) error {
		if status != StatusActive {
			if err := keepAnAdmin(ctx, tx, id); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, `UPDATE users SET status = ?, updated_at = ? WHERE id = ?`, status, nowMillis(), id)
		if err != nil {
			return fmt.Errorf("set status of user %d: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("user %d: %w", id, ErrNotFound)
		}
		if status != StatusActive {
			if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ?`, id); err != nil {
				return fmt.Errorf("end sessions of user %d: %w", id, err)
			}
		}
		return nil
	})
}

// SetAdmin promotes or demotes a user. Demoting the last active admin is
// ErrLastAdmin.
func (db *DB) SetAdmin(ctx context.Context, id ids.UserID, admin bool) error {
	return db.WriteTx(ctx, func(tx *sql.Tx) error {
		if !admin {
			if err := keepAnAdmin(ctx, tx, id); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, `UPDATE users SET is_admin = ?, updated_at = ? WHERE id = ?`, admin, nowMillis(), id)
		if err != nil {
			return fmt.Errorf("set admin of user %d: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("user %d: %w", id, ErrNotFound)
		}
		return nil
	})
}

// keepAnAdmin refuses with ErrLastAdmin when id is an active admin and no
// other active admin who can sign in (with a password) exists. A
// password-less admin (the owner row beside an admin made by create-admin)
// does not count: without one who can sign in, the next sign-up becomes
// the admin (signInAdmin).
func keepAnAdmin(ctx context.Context, tx *sql.Tx, id ids.UserID) error {
	var last bool
	err := tx.QueryRowContext(ctx, `
		SELECT EXISTS (SELECT 1 FROM users WHERE id = ? AND is_admin = 1 AND status = 'active')
		   AND NOT EXISTS (SELECT 1 FROM users WHERE id != ? AND is_admin = 1 AND status = 'active' AND password_hash != '')`, id, id).Scan(&last)
	if err != nil {
		return fmt.Errorf("count admins: %w", err)
	}
	if last {
		return fmt.Errorf("user %d: %w", id, ErrLastAdmin)
	}
	return nil
}

// UserFilter selects a page of users. Status "" means every status; Limit 0
// means 50, and at most 500 are returned.
type UserFilter struct {
	Status string
	Offset int
	Limit  int
}

// ListUsers returns one page of users in the order they were created, and
// how many match the filter in all.
func (db *DB) ListUsers(ctx context.Context, f UserFilter) ([]User, int, error) {
	if f.Limit <= 0 {
		f.Limit = 50
	}
	f.Limit = min(f.Limit, 500)
	f.Offset = max(f.Offset, 0)
	where, args := "", []any{}
	if f.Status != "" {
		where, args = ` WHERE status = ?`, append(args, f.Status)
	}
	var total int
	if err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM users`+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count users: %w", err)
	}
	rows, err := db.r.QueryContext(ctx, `SELECT `+userColumns+` FROM users`+where+` ORDER BY id LIMIT ? OFFSET ?`,
		append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list users: %w", err)
	}
	defer rows.Close()
	out := []User{}
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, u)
	}
	return out, total, rows.Err()
}

// Group is a set of users granted extra permissions.
type Group struct {
	ID          int64
	Name        string
	Permissions []string
	CreatedAt   int64
}

const groupColumns = `id, name, permissions, created_at`

func scanGroup(row interface{ Scan(...any) error }) (Group, error) {
	var g Group
	var perms string
	if err := row.Scan(&g.ID, &g.Name, &perms, &g.CreatedAt); err != nil {
		return Group{}, err
	}
	if err := json.Unmarshal([]byte(perms), &g.Permissions); err != nil {
		return Group{}, fmt.Errorf("group %d permissions: %w", g.ID, err)
	}
	if g.Permissions == nil {
		g.Permissions = []string{}
	}
	return g, nil
}

func permsJSON(perms []string) string {
	if perms == nil {
		perms = []string{}
	}
	b, _ := json.Marshal(perms)
	return string(b)
}

// CreateGroup adds a group. A name taken in any letter case is ErrConflict.
func (db *DB) CreateGroup(ctx context.Context, name string, perms []string) (Group, error) {
	var g Group
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		if err := groupNameFree(ctx, tx, name, 0); err != nil {
			return err
		}
		now := nowMillis()
		res, err := tx.ExecContext(ctx, `INSERT INTO groups (name, permissions, created_at, updated_at) VALUES (?, ?, ?, ?)`,
			name, permsJSON(perms), now, now)
		if err != nil {
			return fmt.Errorf("insert group: %w", err)
		}
		id, _ := res.LastInsertId()
		g, err = scanGroup(tx.QueryRowContext(ctx, `SELECT `+groupColumns+` FROM groups WHERE id = ?`, id))
		return err
	})
	return g, err
}

func groupNameFree(ctx context.Context, tx *sql.Tx, name string, except int64) error {
	var taken bool
	if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM groups WHERE name = ? COLLATE NOCASE AND id != ?)`, name, except).Scan(&taken); err != nil {
		return fmt.Errorf("check group name: %w", err)
	}
	if taken {
		return fmt.Errorf("group %q: %w", name, ErrConflict)
	}
	return nil
}

// UpdateGroup renames a group and replaces its permissions.
func (db *DB) UpdateGroup(ctx context.Context, id int64, name string, perms []string) error {
	return db.WriteTx(ctx, func(tx *sql.Tx) error {
		if err := groupNameFree(ctx, tx, name, id); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE groups SET name = ?, permissions = ?, updated_at = ? WHERE id = ?`,
			name, permsJSON(perms), nowMillis(), id)
		if err != nil {
			return fmt.Errorf("update group %d: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("group %d: %w", id, ErrNotFound)
		}
		return nil
	})
}

// DeleteGroup removes a group; its members lose what it granted.
func (db *DB) DeleteGroup(ctx context.Context, id int64) error {
	res, err := db.w.ExecContext(ctx, `DELETE FROM groups WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("delete group %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("group %d: %w", id, ErrNotFound)
	}
	return nil
}

// GroupByID reads one group.
func (db *DB) GroupByID(ctx context.Context, id int64) (Group, error) {
	g, err := scanGroup(db.r.QueryRowContext(ctx, `SELECT `+groupColumns+` FROM groups WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Group{}, fmt.Errorf("group %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Group{}, fmt.Errorf("read group %d: %w", id, err)
	}
	return g, nil
}

// Groups lists every group by name.
func (db *DB) Groups(ctx context.Context) ([]Group, error) {
	return db.queryGroups(ctx, `SELECT `+groupColumns+` FROM groups ORDER BY name COLLATE NOCASE, id`)
}

// UserGroups lists the groups a user belongs to.
func (db *DB) UserGroups(ctx context.Context, user ids.UserID) ([]Group, error) {
	return db.queryGroups(ctx, `
		SELECT `+prefixed("g.", groupColumns)+` FROM groups g
		JOIN group_members m ON m.group_id = g.id
		WHERE m.user_id = ? ORDER BY g.name COLLATE NOCASE, g.id`, user)
}

func (db *DB) queryGroups(ctx context.Context, q string, args ...any) ([]Group, error) {
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list groups: %w", err)
	}
	defer rows.Close()
	out := []Group{}
	for rows.Next() {
		g, err := scanGroup(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// prefixed qualifies each column of a column list with p ("g.").
func prefixed(p, cols string) string {
	parts := strings.Split(cols, ", ")
	for i := range parts {
		parts[i] = p + parts[i]
	}
	return strings.Join(parts, ", ")
}

// AddGroupMember puts a user in a group; adding a member twice is not an
// error. A missing group or user is ErrNotFound.
func (db *DB) AddGroupMember(ctx context.Context, group int64, user ids.UserID) error {
	return db.WriteTx(ctx, func(tx *sql.Tx) error {
		var g, u bool
		err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM groups WHERE id = ?), EXISTS (SELECT 1 FROM users WHERE id = ?)`,
			group, user).Scan(&g, &u)
		if err != nil {
			return fmt.Errorf("check group member: %w", err)
		}
		if !g {
			return fmt.Errorf("group %d: %w", group, ErrNotFound)
		}
		if !u {
			return fmt.Errorf("user %d: %w", user, ErrNotFound)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO group_members (group_id, user_id) VALUES (?, ?) ON CONFLICT DO NOTHING`, group, user); err != nil {
			return fmt.Errorf("add user %d to group %d: %w", user, group, err)
		}
		return nil
	})
}

// RemoveGroupMember takes a user out of a group; ErrNotFound when the user
// was not in it.
func (db *DB) RemoveGroupMember(ctx context.Context, group int64, user ids.UserID) error {
	res, err := db.w.ExecContext(ctx, `DELETE FROM group_members WHERE group_id = ? AND user_id = ?`, group, user)
	if err != nil {
		return fmt.Errorf("remove user %d from group %d: %w", user, group, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("user %d in group %d: %w", user, group, ErrNotFound)
	}
	return nil
}

// GroupMembers lists the users in a group.
func (db *DB) GroupMembers(ctx context.Context, group int64) ([]User, error) {
	rows, err := db.r.QueryContext(ctx, `
		SELECT `+prefixed("u.", userColumns)+` FROM users u
		JOIN group_members m ON m.user_id = u.id
		WHERE m.group_id = ? ORDER BY u.id`, group)
	if err != nil {
		return nil, fmt.Errorf("list members of group %d: %w", group, err)
	}
	defer rows.Close()
	out := []User{}
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, rows.Err()
}
