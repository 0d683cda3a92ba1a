package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/llembas/lembas/backend/ids"
)

// The queries of notes, memories, skills and shares (issue 14). Every read
// of a note or a skill goes through Visible; every write names the owner in
// its WHERE, so a row that is not the caller's own is never changed
// whatever the service checked before. backend/library owns the rules
// (lengths, caps, messages).

// ErrNoGrantee is returned by SetShares for a grantee that is not an active
// person other than the owner, nor a group.
var ErrNoGrantee = errors.New("no such person or group")

// ownerName is the name shown for a row's owner (users aliased u).
const ownerName = `COALESCE(NULLIF(u.display_name, ''), u.username)`

// LibraryOwner returns who owns the item of kind with id; ErrNotFound when
// there is none.
func (db *DB) LibraryOwner(ctx context.Context, kind LibraryKind, id int64) (ids.UserID, error) {
	table, ok := libraryTables[kind]
	if !ok {
		return 0, fmt.Errorf("library kind %q: %w", kind, ErrNotFound)
	}
	var owner ids.UserID
	err := db.r.QueryRowContext(ctx, `SELECT owner_id FROM `+table+` WHERE id = ?`, id).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("%s %d: %w", kind, id, ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("read %s %d: %w", kind, id, err)
	}
	return owner, nil
}

// LibraryVisible reports whether user may read the item of kind with id
// (Visible); false for one that does not exist.
func (db *DB) LibraryVisible(ctx context.Context, user ids.UserID, kind LibraryKind, id int64) (bool, error) {
	table, ok := libraryTables[kind]
	if !ok {
		return false, nil
	}
	cond, args := Visible(kind, "t", user)
	var seen bool
	err := db.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM `+table+` t WHERE t.id = ? AND `+cond+`)`,
		append([]any{id}, args...)...).Scan(&seen)
	if err != nil {
		return false, fmt.Errorf("read %s %d: %w", kind, id, err)
	}
	return seen, nil
}

// --- notes ---

const noteColumns = `n.id, n.owner_id, ` + ownerName + `, n.title, n.body, n.created_at, n.updated_at, ` + noteShares

// noteShares, baseShares and skillShares count an item's grantees in the
// query that lists it (one query for a list, not one per row).
const (
	noteShares  = `(SELECT COUNT(*) FROM library_shares s WHERE s.kind = 'note' AND s.item_id = n.id)`
	baseShares  = `(SELECT COUNT(*) FROM library_shares s WHERE s.kind = 'base' AND s.item_id = kb.id)`
	skillShares = `(SELECT COUNT(*) FROM library_shares s WHERE s.kind = 'skill' AND s.item_id = k.id)`
)

func scanNote(row interface{ Scan(...any) error }) (Note, error) {
	var n Note
	err := row.Scan(&n.ID, &n.OwnerID, &n.OwnerName, &n.Title, &n.Body, &n.CreatedAt, &n.UpdatedAt, &n.SharedWith)
	return n, err
}

// noteExcerpt is how much of a note's body a listing carries (as Snippet).
const noteExcerpt = 240

// ListNotes returns the notes user can see, most recently changed first,
// at most limit. Body is left empty; Snippet is the start of the body as
// plain text, escaped HTML.
func (db *DB) ListNotes(ctx context.Context, user ids.UserID, limit int) ([]Note, error) {
	cond, args := Visible(KindNote, "n", user)
	rows, err := db.r.QueryContext(ctx, `
		SELECT n.id, n.owner_id, `+ownerName+`, n.title, substr(n.body, 1, ?), n.created_at, n.updated_at, `+noteShares+`
		FROM notes n JOIN users u ON u.id = n.owner_id
		WHERE `+cond+` ORDER BY n.updated_at DESC, n.id DESC LIMIT ?`,
		append(append([]any{noteExcerpt}, args...), limit)...)
	if err != nil {
		return nil, fmt.Errorf("list notes: %w", err)
	}
	defer rows.Close()
	out := []Note{}
	for rows.Next() {
		n, err := scanNote(rows)
		if err != nil {
			return nil, fmt.Errorf("list notes: %w", err)
		}
		n.Snippet, n.Body = markHTML(plainSnippet(n.Body)), ""
		out = append(out, n)
	}
	return out, rows.Err()
}

// noteSearch is the FTS side of SearchNotes: the snippet is cut from the
// body (column 1), Markdown shown as plain text.
var noteSearch = ftsSearch{table: "notes_fts", mark: `snippet(notes_fts, 1, ?, ?, '…', 24)`, plain: true}

// SearchNotes finds query (what a person or the model typed: never FTS
// syntax, see parseQuery) in the titles and bodies of the notes user can
// see, ranked by bm25 with a title match weighing ten times a body match,
// at most limit. Body is left empty; Snippet is escaped HTML with the
// matches in <mark>. Unlike message search, it always ranks: notes are
// written one at a time, by hand or by a reply's tool call, and an
// instance holds far fewer of them than the rankedMax that makes ranking
// messages costly.
func (db *DB) SearchNotes(ctx context.Context, user ids.UserID, query string, limit int) ([]Note, error) {
	q := parseQuery(query)
	if q.match == "" {
		return []Note{}, nil
	}
	cond, args := Visible(KindNote, "n", user)
	rows, err := db.r.QueryContext(ctx, `
		SELECT n.id, n.owner_id, `+ownerName+`, n.title, '', n.created_at, n.updated_at, `+noteShares+`
		FROM notes_fts f JOIN notes n ON n.id = f.rowid JOIN users u ON u.id = n.owner_id
		WHERE notes_fts MATCH ? AND `+cond+`
		ORDER BY bm25(notes_fts, 10.0, 1.0), n.updated_at DESC, n.id DESC LIMIT ?`,
		append(append([]any{q.match}, args...), limit)...)
	if err != nil {
		return nil, fmt.Errorf("search notes: %w", err)
	}
	defer rows.Close()
	out := []Note{}
	for rows.Next() {
		n, err := scanNote(rows)
		if err != nil {
			return nil, fmt.Errorf("search notes: %w", err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search notes: %w", err)
	}
	if len(out) == 0 {
		return out, nil
	}
	rowids := make([]int64, len(out))
	for i, n := range out {
		rowids[i] = int64(n.ID)
	}
	marked, err := db.marked(ctx, noteSearch, q.match, rowids)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Snippet = marked[rowids[i]]
	}
	return out, nil
}

// NoteByID returns a note user can see; ErrNotFound for one they cannot,
// exactly as for one that does not exist.
func (db *DB) NoteByID(ctx context.Context, user ids.UserID, id ids.NoteID) (Note, error) {
	return noteByID(ctx, db.r, user, id)
}

func noteByID(ctx context.Context, q queryRower, user ids.UserID, id ids.NoteID) (Note, error) {
	cond, args := Visible(KindNote, "n", user)
	n, err := scanNote(q.QueryRowContext(ctx, `SELECT `+noteColumns+`
		FROM notes n JOIN users u ON u.id = n.owner_id
		WHERE n.id = ? AND `+cond, append([]any{id}, args...)...))
	if errors.Is(err, sql.ErrNoRows) {
		return Note{}, fmt.Errorf("note %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Note{}, fmt.Errorf("read note %d: %w", id, err)
	}
	return n, nil
}

// CreateNote adds a note owned by owner.
func (db *DB) CreateNote(ctx context.Context, owner ids.UserID, title, body string) (Note, error) {
	var n Note
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		now := nowMillis()
		res, err := tx.ExecContext(ctx, `INSERT INTO notes (owner_id, title, body, created_at, updated_at) VALUES (?, ?, ?, ?, ?)`,
			owner, title, body, now, now)
		if err != nil {
			return fmt.Errorf("insert note: %w", err)
		}
		id, _ := res.LastInsertId()
		n, err = noteByID(ctx, tx, owner, ids.NoteID(id))
		return err
	})
	return n, err
}

// UpdateNote sets the title and body of a note of owner's own (nil leaves
// a field as it is); ErrNotFound when owner does not own it.
func (db *DB) UpdateNote(ctx context.Context, owner ids.UserID, id ids.NoteID, title, body *string) (Note, error) {
	var n Note
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE notes SET title = COALESCE(?, title), body = COALESCE(?, body), updated_at = ?
			WHERE id = ? AND owner_id = ?`, title, body, nowMillis(), id, owner)
		if err != nil {
			return fmt.Errorf("update note %d: %w", id, err)
		}
		if k, _ := res.RowsAffected(); k == 0 {
			return fmt.Errorf("note %d: %w", id, ErrNotFound)
		}
		n, err = noteByID(ctx, tx, owner, id)
		return err
	})
	return n, err
}

// DeleteNote deletes a note of owner's own and its shares; ErrNotFound
// when owner does not own it.
func (db *DB) DeleteNote(ctx context.Context, owner ids.UserID, id ids.NoteID) error {
	return db.deleteItem(ctx, KindNote, owner, int64(id))
}

// deleteItem deletes a shareable item of owner's own with its shares.
func (db *DB) deleteItem(ctx context.Context, kind LibraryKind, owner ids.UserID, id int64) error {
	return db.WriteTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM `+libraryTables[kind]+` WHERE id = ? AND owner_id = ?`, id, owner)
		if err != nil {
			return fmt.Errorf("delete %s %d: %w", kind, id, err)
		}
		if k, _ := res.RowsAffected(); k == 0 {
			return fmt.Errorf("%s %d: %w", kind, id, ErrNotFound)
		}
		return deleteSharesOf(ctx, tx, kind, id)
	})
}

// deleteSharesOf removes the shares of an item being deleted: the shares
// table has no foreign key to the three item tables, and a share left
// behind would grant the next row to reuse the id.
func deleteSharesOf(ctx context.Context, tx *sql.Tx, kind LibraryKind, id int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM library_shares WHERE kind = ? AND item_id = ?`, string(kind), id); err != nil {
		return fmt.Errorf("delete shares of %s %d: %w", kind, id, err)
	}
	return nil
}

// --- memories ---

const memoryColumns = `id, owner_id, text, source, created_at`

func scanMemory(row interface{ Scan(...any) error }) (Memory, error) {
	var m Memory
	err := row.Scan(&m.ID, &m.OwnerID, &m.Text, &m.Source, &m.CreatedAt)
	return m, err
}

// Memories returns owner's memories, oldest first.
func (db *DB) Memories(ctx context.Context, owner ids.UserID) ([]Memory, error) {
	return memories(ctx, db.r, owner)
}

func memories(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, owner ids.UserID) ([]Memory, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+memoryColumns+` FROM memories WHERE owner_id = ? ORDER BY id`, owner)
	if err != nil {
		return nil, fmt.Errorf("list memories: %w", err)
	}
	defer rows.Close()
	out := []Memory{}
	for rows.Next() {
		m, err := scanMemory(rows)
		if err != nil {
			return nil, fmt.Errorf("list memories: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// AddMemory stores a memory of owner's. admit sees owner's memories inside
// the write transaction, so two additions at once cannot both pass a cap:
// it returns an error to refuse, or a memory to return instead of storing
// text (the same fact, already there).
func (db *DB) AddMemory(ctx context.Context, owner ids.UserID, text, source string, admit func(have []Memory) (*Memory, error)) (Memory, error) {
	var m Memory
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		have, err := memories(ctx, tx, owner)
		if err != nil {
			return err
		}
		same, err := admit(have)
		if err != nil {
			return err
		}
		if same != nil {
			m = *same
			return nil
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO memories (owner_id, text, source, created_at) VALUES (?, ?, ?, ?)`,
			owner, text, source, nowMillis())
		if err != nil {
			return fmt.Errorf("insert memory: %w", err)
		}
		id, _ := res.LastInsertId()
		m, err = scanMemory(tx.QueryRowContext(ctx, `SELECT `+memoryColumns+` FROM memories WHERE id = ?`, id))
		return err
	})
	return m, err
}

// UpdateMemory changes the text of a memory of owner's; ErrNotFound when
// owner has no such memory. admit sees owner's other memories inside the
// write transaction and returns an error to refuse.
func (db *DB) UpdateMemory(ctx context.Context, owner ids.UserID, id ids.MemoryID, text string, admit func(others []Memory) error) (Memory, error) {
	var m Memory
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		have, err := memories(ctx, tx, owner)
		if err != nil {
			return err
		}
		var others []Memory
		found := false
		for _, h := range have {
			if h.ID == id {
				found = true
			} else {
				others = append(others, h)
			}
		}
		if !found {
			return fmt.Errorf("memory %d: %w", id, ErrNotFound)
		}
		if err := admit(others); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE memories SET text = ? WHERE id = ? AND owner_id = ?`, text, id, owner); err != nil {
			return fmt.Errorf("update memory %d: %w", id, err)
		}
		m, err = scanMemory(tx.QueryRowContext(ctx, `SELECT `+memoryColumns+` FROM memories WHERE id = ?`, id))
		return err
	})
	return m, err
}

// DeleteMemory forgets a memory of owner's; ErrNotFound when owner has no
// such memory.
func (db *DB) DeleteMemory(ctx context.Context, owner ids.UserID, id ids.MemoryID) error {
	res, err := db.w.ExecContext(ctx, `DELETE FROM memories WHERE id = ? AND owner_id = ?`, id, owner)
	if err != nil {
		return fmt.Errorf("delete memory %d: %w", id, err)
	}
	if k, _ := res.RowsAffected(); k == 0 {
		return fmt.Errorf("memory %d: %w", id, ErrNotFound)
	}
	return nil
}

// --- skills ---

const skillColumns = `k.id, k.owner_id, ` + ownerName + `, k.name, k.description, k.body, k.created_at, k.updated_at, ` + skillShares

func scanSkill(row interface{ Scan(...any) error }) (Skill, error) {
	var k Skill
	err := row.Scan(&k.ID, &k.OwnerID, &k.OwnerName, &k.Name, &k.Description, &k.Body, &k.CreatedAt, &k.UpdatedAt, &k.SharedWith)
	return k, err
}

// ListSkills returns the skills user can see, by name (their own first
// among equal names).
func (db *DB) ListSkills(ctx context.Context, user ids.UserID) ([]Skill, error) {
	cond, args := Visible(KindSkill, "k", user)
	rows, err := db.r.QueryContext(ctx, `SELECT `+skillColumns+`
		FROM skills k JOIN users u ON u.id = k.owner_id
		WHERE `+cond+` ORDER BY k.name COLLATE NOCASE, k.owner_id != ?, k.id`, append(args, user)...)
	if err != nil {
		return nil, fmt.Errorf("list skills: %w", err)
	}
	defer rows.Close()
	out := []Skill{}
	for rows.Next() {
		k, err := scanSkill(rows)
		if err != nil {
			return nil, fmt.Errorf("list skills: %w", err)
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// SkillByID returns a skill user can see; ErrNotFound for one they cannot.
func (db *DB) SkillByID(ctx context.Context, user ids.UserID, id ids.SkillID) (Skill, error) {
	return skillWhere(ctx, db.r, user, `k.id = ?`, id)
}

// SkillByName returns the skill named name (in any letter case, Unicode
// folded) that user can see: their own if they have one, else the oldest
// shared with them. SQLite's NOCASE folds ASCII only, so the names are
// compared here; a person sees tens of skills, not thousands.
func (db *DB) SkillByName(ctx context.Context, user ids.UserID, name string) (Skill, error) {
	cond, args := Visible(KindSkill, "k", user)
	rows, err := db.r.QueryContext(ctx, `SELECT k.id, k.name FROM skills k WHERE `+cond+`
		ORDER BY k.owner_id != ?, k.id`, append(args, user)...)
	if err != nil {
		return Skill{}, fmt.Errorf("find skill %q: %w", name, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id ids.SkillID
		var n string
		if err := rows.Scan(&id, &n); err != nil {
			return Skill{}, fmt.Errorf("find skill %q: %w", name, err)
		}
		if strings.EqualFold(n, name) {
			rows.Close()
			return db.SkillByID(ctx, user, id)
		}
	}
	if err := rows.Err(); err != nil {
		return Skill{}, fmt.Errorf("find skill %q: %w", name, err)
	}
	return Skill{}, fmt.Errorf("skill %q: %w", name, ErrNotFound)
}

// skillWhere reads the first visible skill matching where (which may end in
// ORDER BY and LIMIT) with its arguments.
func skillWhere(ctx context.Context, q queryRower, user ids.UserID, where string, whereArgs ...any) (Skill, error) {
	cond, args := Visible(KindSkill, "k", user)
	k, err := scanSkill(q.QueryRowContext(ctx, `SELECT `+skillColumns+`
		FROM skills k JOIN users u ON u.id = k.owner_id
		WHERE `+cond+` AND `+where, append(args, whereArgs...)...))
	if errors.Is(err, sql.ErrNoRows) {
		return Skill{}, fmt.Errorf("skill %v: %w", whereArgs[0], ErrNotFound)
	}
	if err != nil {
		return Skill{}, fmt.Errorf("read skill %v: %w", whereArgs[0], err)
	}
	return k, nil
}

// skillNameFree is ErrConflict when owner has another skill (not except)
// called name in any letter case. The unique index folds ASCII only; this
// folds Unicode too (Écrire and écrire are one name).
func skillNameFree(ctx context.Context, tx *sql.Tx, owner ids.UserID, name string, except ids.SkillID) error {
	rows, err := tx.QueryContext(ctx, `SELECT name FROM skills WHERE owner_id = ? AND id != ?`, owner, except)
	if err != nil {
		return fmt.Errorf("check skill name: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return fmt.Errorf("check skill name: %w", err)
		}
		if strings.EqualFold(n, name) {
			return fmt.Errorf("skill %q: %w", name, ErrConflict)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("check skill name: %w", err)
	}
	return nil
}

// CreateSkill adds a skill owned by owner. A name owner already uses, in
// any letter case, is ErrConflict.
func (db *DB) CreateSkill(ctx context.Context, owner ids.UserID, name, description, body string) (Skill, error) {
	var k Skill
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		if err := skillNameFree(ctx, tx, owner, name, 0); err != nil {
			return err
		}
		now := nowMillis()
		res, err := tx.ExecContext(ctx, `INSERT INTO skills (owner_id, name, description, body, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
			owner, name, description, body, now, now)
		if err != nil {
			return fmt.Errorf("insert skill: %w", err)
		}
		id, _ := res.LastInsertId()
		k, err = skillWhere(ctx, tx, owner, `k.id = ?`, id)
		return err
	})
	return k, err
}

// UpdateSkill sets the fields of a skill of owner's own that are not nil;
// ErrNotFound when owner does not own it, ErrConflict when the new name is
// another of owner's skills'.
func (db *DB) UpdateSkill(ctx context.Context, owner ids.UserID, id ids.SkillID, name, description, body *string) (Skill, error) {
	var k Skill
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		if name != nil {
			if err := skillNameFree(ctx, tx, owner, *name, id); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, `UPDATE skills SET name = COALESCE(?, name), description = COALESCE(?, description),
			body = COALESCE(?, body), updated_at = ? WHERE id = ? AND owner_id = ?`, name, description, body, nowMillis(), id, owner)
		if err != nil {
			return fmt.Errorf("update skill %d: %w", id, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("skill %d: %w", id, ErrNotFound)
		}
		k, err = skillWhere(ctx, tx, owner, `k.id = ?`, id)
		return err
	})
	return k, err
}

// DeleteSkill deletes a skill of owner's own and its shares; ErrNotFound
// when owner does not own it.
func (db *DB) DeleteSkill(ctx context.Context, owner ids.UserID, id ids.SkillID) error {
	return db.deleteItem(ctx, KindSkill, owner, int64(id))
}

// --- shares ---

// Shares lists who the item of kind with id is shared with, by name.
func (db *DB) Shares(ctx context.Context, kind LibraryKind, id int64) ([]Grantee, error) {
	rows, err := db.r.QueryContext(ctx, `
		SELECT COALESCE(s.user_id, 0), COALESCE(s.group_id, 0),
			COALESCE(`+ownerName+`, g.name, '')
		FROM library_shares s LEFT JOIN users u ON u.id = s.user_id LEFT JOIN groups g ON g.id = s.group_id
		WHERE s.kind = ? AND s.item_id = ?`, string(kind), id)
	if err != nil {
		return nil, fmt.Errorf("list shares of %s %d: %w", kind, id, err)
	}
	return scanGrantees(rows)
}

func scanGrantees(rows *sql.Rows) ([]Grantee, error) {
	defer rows.Close()
	out := []Grantee{}
	for rows.Next() {
		var g Grantee
		if err := rows.Scan(&g.UserID, &g.GroupID, &g.Name); err != nil {
			return nil, fmt.Errorf("read grantees: %w", err)
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read grantees: %w", err)
	}
	sortGrantees(out)
	return out, nil
}

// sortGrantees orders by name in any letter case, people before groups of
// the same name.
func sortGrantees(gs []Grantee) {
	slices.SortStableFunc(gs, func(a, b Grantee) int {
		if c := strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)); c != 0 {
			return c
		}
		return cmp.Compare(a.GroupID, b.GroupID)
	})
}

// SetShares replaces who the item of kind with id, owned by owner, is
// shared with, in one transaction. Each grantee must be an active person
// other than owner, or a group; otherwise nothing changes and the error
// is ErrNoGrantee. ErrNotFound when owner does not own the item.
func (db *DB) SetShares(ctx context.Context, owner ids.UserID, kind LibraryKind, id int64, to []Grantee) error {
	table, ok := libraryTables[kind]
	if !ok {
		return fmt.Errorf("library kind %q: %w", kind, ErrNotFound)
	}
	return db.WriteTx(ctx, func(tx *sql.Tx) error {
		var mine bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM `+table+` WHERE id = ? AND owner_id = ?)`, id, owner).Scan(&mine); err != nil {
			return fmt.Errorf("read %s %d: %w", kind, id, err)
		}
		if !mine {
			return fmt.Errorf("%s %d: %w", kind, id, ErrNotFound)
		}
		if err := deleteSharesOf(ctx, tx, kind, id); err != nil {
			return err
		}
		now := nowMillis()
		seen := map[Grantee]bool{}
		for _, g := range to {
			g.Name = ""
			if seen[g] {
				continue
			}
			seen[g] = true
			var exists bool
			var err error
			switch {
			case g.UserID != 0 && g.GroupID == 0:
				err = tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM users WHERE id = ? AND id != ? AND status = ?)`,
					g.UserID, owner, StatusActive).Scan(&exists)
			case g.GroupID != 0 && g.UserID == 0:
				err = tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM groups WHERE id = ?)`, g.GroupID).Scan(&exists)
			}
			if err != nil {
				return fmt.Errorf("check grantee: %w", err)
			}
			if !exists {
				return fmt.Errorf("grantee user %d group %d: %w", g.UserID, g.GroupID, ErrNoGrantee)
			}
			var user, group any
			if g.UserID != 0 {
				user = g.UserID
			} else {
				group = g.GroupID
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO library_shares (kind, item_id, user_id, group_id, created_at) VALUES (?, ?, ?, ?, ?)`,
				string(kind), id, user, group, now); err != nil {
				return fmt.Errorf("insert share: %w", err)
			}
		}
		return nil
	})
}

// LibraryReaders lists the people other than its owner who may read the
// item of kind with id through a share: the people it is shared with and
// the members of the groups it is shared with. A change to the item is
// theirs to hear about too.
func (db *DB) LibraryReaders(ctx context.Context, kind LibraryKind, id int64) ([]ids.UserID, error) {
	rows, err := db.r.QueryContext(ctx, `
		SELECT s.user_id FROM library_shares s WHERE s.kind = ? AND s.item_id = ? AND s.user_id IS NOT NULL
		UNION
		SELECT gm.user_id FROM library_shares s JOIN group_members gm ON gm.group_id = s.group_id
		WHERE s.kind = ? AND s.item_id = ?`, string(kind), id, string(kind), id)
	if err != nil {
		return nil, fmt.Errorf("list readers of %s %d: %w", kind, id, err)
	}
	defer rows.Close()
	var out []ids.UserID
	for rows.Next() {
		var u ids.UserID
		if err := rows.Scan(&u); err != nil {
			return nil, fmt.Errorf("list readers of %s %d: %w", kind, id, err)
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// ShareTargets lists who user can share with: every other active person
// and every group, by name.
func (db *DB) ShareTargets(ctx context.Context, user ids.UserID) ([]Grantee, error) {
	rows, err := db.r.QueryContext(ctx, `
		SELECT u.id, 0, `+ownerName+` FROM users u WHERE u.id != ? AND u.status = ?
		UNION ALL
		SELECT 0, g.id, g.name FROM groups g`, user, StatusActive)
	if err != nil {
		return nil, fmt.Errorf("list share targets: %w", err)
	}
	return scanGrantees(rows)
}

// --- counts ---

// LibraryCounts is how many items of each kind one person owns.
type LibraryCounts struct {
	Bases, Documents, Notes, Skills int
}

// OwnedCounts counts owner's bases, documents, notes and skills, for the
// service's caps (a row costs disk whatever its size).
func (db *DB) OwnedCounts(ctx context.Context, owner ids.UserID) (LibraryCounts, error) {
	var c LibraryCounts
	err := db.r.QueryRowContext(ctx, `SELECT
		(SELECT COUNT(*) FROM knowledge_bases WHERE owner_id = ?1),
		(SELECT COUNT(*) FROM documents WHERE owner_id = ?1),
		(SELECT COUNT(*) FROM notes WHERE owner_id = ?1),
		(SELECT COUNT(*) FROM skills WHERE owner_id = ?1)`, owner).Scan(&c.Bases, &c.Documents, &c.Notes, &c.Skills)
	if err != nil {
		return LibraryCounts{}, fmt.Errorf("count library items: %w", err)
	}
	return c, nil
}
