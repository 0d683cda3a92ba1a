package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/llembas/lembas/backend/ids"
)

// modelVisible is the one definition of "user may use model m" (with its
// connection c), taking the user id as its single parameter:
//
//   - a model of the user's own connection, or
//   - an instance-wide model that is open to everyone (not restricted),
//     lists the user or one of the user's groups, or is seen by an admin or
//     by a holder of models.view_all (from the baseline setting or a group).
//
// Access fails closed: a restricted model whose list has emptied (its only
// group deleted) is for admins alone. The NOT EXISTS is a second lock for a
// row written without the flag.
//
// The permission part mirrors auth.Permissions.Resolve for this one name, so
// that listing, reading, avatars and sending all filter in SQL; a test in
// backend/auth checks the two agree.
const modelVisible = `EXISTS (SELECT 1 FROM users v WHERE v.id = ? AND (
	c.owner_id = v.id OR (c.owner_id IS NULL AND (
		v.is_admin = 1
		OR (m.restricted = 0 AND NOT EXISTS (SELECT 1 FROM model_access a WHERE a.model_id = m.id))
		OR EXISTS (SELECT 1 FROM model_access a WHERE a.model_id = m.id AND (a.user_id = v.id
			OR a.group_id IN (SELECT gm.group_id FROM group_members gm WHERE gm.user_id = v.id)))
		OR EXISTS (SELECT 1 FROM settings s, json_each(s.value) j
			WHERE s.key = 'default_permissions' AND json_valid(s.value) AND j.value = 'models.view_all')
		OR EXISTS (SELECT 1 FROM group_members gm JOIN groups g ON g.id = gm.group_id, json_each(g.permissions) j
			WHERE gm.user_id = v.id AND json_valid(g.permissions) AND j.value = 'models.view_all')))))`

// ModelAccess lists who may use an instance-wide model. Restricted with
// both lists empty means administrators only (what is left when the groups
// it was shared with are deleted). SetModelAccess takes both lists empty as
// everyone.
type ModelAccess struct {
	Restricted bool         `json:"restricted"`
	Users      []ids.UserID `json:"users"`
	Groups     []int64      `json:"groups"`
}

// Everyone reports whether the model is open to every user.
func (a ModelAccess) Everyone() bool {
	return !a.Restricted && len(a.Users) == 0 && len(a.Groups) == 0
}

// ModelAccessOf reads the access list of model id (any model; callers check
// that the caller administers it).
func (db *DB) ModelAccessOf(ctx context.Context, id ids.ModelID) (ModelAccess, error) {
	var restricted bool
	err := db.r.QueryRowContext(ctx, `SELECT restricted FROM models WHERE id = ?`, id).Scan(&restricted)
	if errors.Is(err, sql.ErrNoRows) {
		return ModelAccess{}, fmt.Errorf("model %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return ModelAccess{}, fmt.Errorf("read model %d: %w", id, err)
	}
	rows, err := db.r.QueryContext(ctx, `SELECT user_id, group_id FROM model_access WHERE model_id = ? ORDER BY user_id, group_id`, id)
	if err != nil {
		return ModelAccess{}, fmt.Errorf("read access of model %d: %w", id, err)
	}
	defer rows.Close()
	out := ModelAccess{Restricted: restricted, Users: []ids.UserID{}, Groups: []int64{}}
	for rows.Next() {
		out.Restricted = true // rows without the flag: still closed
		var u, g sql.NullInt64
		if err := rows.Scan(&u, &g); err != nil {
			return ModelAccess{}, err
		}
		if u.Valid {
			out.Users = append(out.Users, ids.UserID(u.Int64))
		}
		if g.Valid {
			out.Groups = append(out.Groups, g.Int64)
		}
	}
	return out, rows.Err()
}

// SetModelAccess replaces the access list of an instance-wide model in one
// transaction: both lists empty opens it to everyone, anything else
// restricts it to the list. Unknown users or groups are ErrNotFound; a
// model of a personal connection is ErrForbidden (its owner is its only
// user).
func (db *DB) SetModelAccess(ctx context.Context, id ids.ModelID, acc ModelAccess) error {
	return db.WriteTx(ctx, func(tx *sql.Tx) error {
		var owner sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT c.owner_id`+modelFrom+` WHERE m.id = ?`, id).Scan(&owner)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("model %d: %w", id, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read model %d: %w", id, err)
		}
		if owner.Valid {
			return fmt.Errorf("model %d belongs to a personal connection: %w", id, ErrForbidden)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM model_access WHERE model_id = ?`, id); err != nil {
			return fmt.Errorf("clear access of model %d: %w", id, err)
		}
		restricted := len(acc.Users) > 0 || len(acc.Groups) > 0
		if _, err := tx.ExecContext(ctx, `UPDATE models SET restricted = ?, updated_at = ? WHERE id = ?`, restricted, nowMillis(), id); err != nil {
			return fmt.Errorf("restrict model %d: %w", id, err)
		}
		for _, u := range uniq(acc.Users) {
			res, err := tx.ExecContext(ctx, `INSERT INTO model_access (model_id, user_id) SELECT ?, id FROM users WHERE id = ?`, id, u)
			if err != nil {
				return fmt.Errorf("grant model %d to user %d: %w", id, u, err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return fmt.Errorf("user %d: %w", u, ErrNotFound)
			}
		}
		for _, g := range uniq(acc.Groups) {
			res, err := tx.ExecContext(ctx, `INSERT INTO model_access (model_id, group_id) SELECT ?, id FROM groups WHERE id = ?`, id, g)
			if err != nil {
				return fmt.Errorf("grant model %d to group %d: %w", id, g, err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return fmt.Errorf("group %d: %w", g, ErrNotFound)
			}
		}
		return nil
	})
}

func uniq[T comparable](xs []T) []T {
	var out []T
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// CanSeeModel reports ErrNotFound unless user may use model id.
func (db *DB) CanSeeModel(ctx context.Context, user ids.UserID, id ids.ModelID) error {
	return canSeeModel(ctx, db.r, user, id)
}
