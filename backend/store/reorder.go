package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/llembas/lembas/backend/ids"
)

// An orderedList is a list whose rows carry a position a person sets:
// folders and models today, notes, tools and knowledge bases next. Its SQL is
// written here, once; callers pick a list by value and never pass a table or
// column name, so nothing a caller says reaches a query's text. A new list is
// a new value, not a new copy of the reordering code.
type orderedList struct {
	noun string // names a row in errors: "folder %d: not found"
	// rows selects, in order, every row that one numbering covers, as (id,
	// position, seen); its one argument is the user, and seen says whether
	// that user sees the row. Models are one order for the whole instance,
	// of which each user sees the instance-wide models and their own.
	rows string
	// setPosition is UPDATE … SET position = ? WHERE id = ?.
	setPosition string
}

var (
	folderOrder = orderedList{
		noun:        "folder",
		rows:        `SELECT id, position, 1 FROM folders WHERE user_id = ? ORDER BY position, id`,
		setPosition: `UPDATE folders SET position = ? WHERE id = ?`,
	}
	modelOrder = orderedList{
		noun:        "model",
		rows:        `SELECT m.id, m.position, c.owner_id IS NULL OR c.owner_id = ?` + modelFrom + ` ORDER BY m.position, m.id`,
		setPosition: `UPDATE models SET position = ? WHERE id = ?`,
	}
)

// orderRow is one row of an ordered list as reorder reads it.
type orderRow struct {
	id   int64
	pos  int64
	seen bool
}

// reorder moves row id of list to index of the rows user sees, in tx, and
// renumbers the whole list densely from 0 (rows already in place are not
// written). The request is one row and its new place, not a whole list, so it
// cannot name a row twice or leave one out, and it says nothing about rows
// the user does not see: those keep their places relative to each other, and
// the row goes just before the seen row now at index (after the last seen
// row when index is past the end; a negative index means first). A row user
// does not see, of another list or of nobody, is ErrNotFound. Whether user
// may move that row is the caller's rule, checked in the same tx.
//
// Both reading and writing happen in tx, and the store's writes are
// serialised (one write connection, BEGIN IMMEDIATE), so two moves at once
// each see the other's result whole: the order stays a permutation, dense.
func reorder(ctx context.Context, tx *sql.Tx, list orderedList, user ids.UserID, id int64, index int) error {
	rows, err := readOrder(ctx, tx, list, user)
	if err != nil {
		return err
	}
	next, ok := moved(rows, id, index)
	if !ok {
		return fmt.Errorf("%s %d: %w", list.noun, id, ErrNotFound)
	}
	stmt, err := tx.PrepareContext(ctx, list.setPosition)
	if err != nil {
		return fmt.Errorf("renumber %ss: %w", list.noun, err)
	}
	defer stmt.Close()
	for i, r := range next {
		if r.pos == int64(i) {
			continue
		}
		if _, err := stmt.ExecContext(ctx, i, r.id); err != nil {
			return fmt.Errorf("renumber %s %d: %w", list.noun, r.id, err)
		}
	}
	return nil
}

func readOrder(ctx context.Context, tx *sql.Tx, list orderedList, user ids.UserID) ([]orderRow, error) {
	rows, err := tx.QueryContext(ctx, list.rows, user)
	if err != nil {
		return nil, fmt.Errorf("read %s order: %w", list.noun, err)
	}
	defer rows.Close()
	var out []orderRow
	for rows.Next() {
		var r orderRow
		if err := rows.Scan(&r.id, &r.pos, &r.seen); err != nil {
			return nil, fmt.Errorf("read %s order: %w", list.noun, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// moved returns rows with the seen row id taken out and put back before the
// seen row now at index (see reorder), or false when no seen row is id. The
// moved row's pos becomes -1 so that it is always written.
func moved(rows []orderRow, id int64, index int) ([]orderRow, bool) {
	rest := make([]orderRow, 0, len(rows))
	found := false
	for _, r := range rows {
		if r.id == id && r.seen {
			found = true
			continue
		}
		rest = append(rest, r)
	}
	if !found {
		return nil, false
	}
	at, seen, lastSeen := -1, 0, -1
	for i, r := range rest {
		if !r.seen {
			continue
		}
		if seen == max(index, 0) {
			at = i
			break
		}
		seen++
		lastSeen = i
	}
	if at < 0 {
		at = lastSeen + 1
		if lastSeen < 0 {
			at = len(rest)
		}
	}
	out := make([]orderRow, 0, len(rows))
	out = append(out, rest[:at]...)
	out = append(out, orderRow{id: id, pos: -1, seen: true})
	return append(out, rest[at:]...), true
}
