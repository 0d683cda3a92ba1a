package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Schema is the declared shape of the database. Sync makes the database match
// it by adding what is missing; it never renames, retypes or drops.
type Schema struct {
	Tables []Table
	FTS    []FTS
}

// Table declares one table. Columns are only ever appended: a column added
// later must be nullable or carry a DEFAULT, since existing rows need a value.
type Table struct {
	Name        string
	Columns     []Column
	Constraints []string // table constraints, e.g. "PRIMARY KEY (user_id, key)"
	Indexes     []Index
}

// Column declares one column. Type is the rest of the column definition
// ("TEXT NOT NULL DEFAULT ”"). Secret marks a column holding encrypted
// values, so the key ledger can tell whether anything is encrypted yet.
// Fill, if set, is an UPDATE run once, in the same transaction, right after
// the column is added to an existing table: it gives the rows that existed
// before the column the value the code now expects of them.
type Column struct {
	Name   string
	Type   string
	Secret bool
	Fill   string
}

// Index declares an index; On is "table(columns)".
type Index struct {
	Name   string
	On     string
	Unique bool
}

// FTS declares an external-content FTS5 index over Table. Only rows matching
// When (an expression over the row's columns, written without a prefix) are
// indexed; the triggers apply it symmetrically on insert, update and delete so
// that a row is removed exactly as it was added.
type FTS struct {
	Name    string
	Table   string
	RowID   string // the content table's integer key
	Columns []string
	When    string // e.g. "status = 'final'"; empty means every row
	Options string // extra fts5 options, e.g. "tokenize='unicode61 remove_diacritics 2'"
}

// SyncReport says what Sync did.
type SyncReport struct {
	Snapshot string   // the pre-change backup, if one was taken
	Applied  []string // human descriptions of each change
	Extra    []string // things in the database the schema does not declare (left alone)
}

// ManualError lists changes that Sync will not make by itself (renames,
// retypes, drops). Each step says what to do by hand.
type ManualError struct{ Steps []string }

func (e *ManualError) Error() string {
	return "the database needs changes that are not additive; do these by hand (after `lembas backup`):\n  - " +
		strings.Join(e.Steps, "\n  - ")
}

type step struct{ desc, sql string }

// Sync brings the database up to the declared schema: missing tables,
// columns, indexes, FTS tables and triggers are created. Before changing a
// database that already has tables it takes a VACUUM INTO snapshot in
// backupDir. Running it again on a current database changes nothing.
func (db *DB) Sync(ctx context.Context, s Schema, backupDir string) (SyncReport, error) {
	var rep SyncReport
	steps, extra, err := db.plan(ctx, s)
	rep.Extra = extra
	if err != nil {
		return rep, err
	}
	if len(steps) == 0 {
		return rep, nil
	}
	existing, err := db.userTables(ctx)
	if err != nil {
		return rep, err
	}
	if len(existing) > 0 {
		rep.Snapshot = filepath.Join(backupDir, "before-schema-"+time.Now().UTC().Format("20060102T150405.000000000Z")+".db")
		if err := db.Backup(ctx, rep.Snapshot); err != nil {
			return rep, fmt.Errorf("snapshot before schema change: %w", err)
		}
	}
	err = db.WriteTx(ctx, func(tx *sql.Tx) error {
		for _, st := range steps {
			if _, err := tx.ExecContext(ctx, st.sql); err != nil {
				return fmt.Errorf("%s: %w", st.desc, err)
			}
		}
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("schema sync: %w", err)
	}
	for _, st := range steps {
		rep.Applied = append(rep.Applied, st.desc)
	}
	return rep, nil
}

func (db *DB) userTables(ctx context.Context) ([]string, error) {
	return queryStrings(ctx, db.w, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
}

type colInfo struct {
	name, typ string
}

func (db *DB) plan(ctx context.Context, s Schema) (steps []step, extra []string, err error) {
	tables, err := db.userTables(ctx)
	if err != nil {
		return nil, nil, err
	}
	indexes, err := queryStrings(ctx, db.w, `SELECT name FROM sqlite_master WHERE type = 'index'`)
	if err != nil {
		return nil, nil, err
	}
	triggers := map[string]string{}
	rows, err := db.w.QueryContext(ctx, `SELECT name, sql FROM sqlite_master WHERE type = 'trigger'`)
	if err != nil {
		return nil, nil, err
	}
	for rows.Next() {
		var n, q string
		if err := rows.Scan(&n, &q); err != nil {
			rows.Close()
			return nil, nil, err
		}
		triggers[n] = q
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}

	var manual []string
	declared := map[string]bool{}
	for _, t := range s.Tables {
		declared[t.Name] = true
		if !slices.Contains(tables, t.Name) {
			steps = append(steps, step{"create table " + t.Name, createTableSQL(t)})
		} else {
			have, err := db.columns(ctx, t.Name)
			if err != nil {
				return nil, nil, err
			}
			haveNames := map[string]string{}
			for _, c := range have {
				haveNames[c.name] = c.typ
			}
			for _, c := range t.Columns {
				typ, ok := haveNames[c.Name]
				if !ok {
					if msg := addable(c); msg != "" {
						manual = append(manual, fmt.Sprintf("column %s.%s: %s", t.Name, c.Name, msg))
						continue
					}
					steps = append(steps, step{
						fmt.Sprintf("add column %s.%s", t.Name, c.Name),
						fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s %s", quoteIdent(t.Name), quoteIdent(c.Name), c.Type),
					})
					if c.Fill != "" {
						// Sorted after every ALTER and CREATE (stepOrder), so
						// it may read columns added in the same sync.
						steps = append(steps, step{fmt.Sprintf("fill column %s.%s", t.Name, c.Name), c.Fill})
					}
					continue
				}
				if want := baseType(c.Type); want != baseType(typ) {
					manual = append(manual, fmt.Sprintf("column %s.%s is %s in the database but %s in the schema: copy it to a new column and update the code", t.Name, c.Name, typ, want))
				}
			}
			for _, c := range have {
				if !slices.ContainsFunc(t.Columns, func(d Column) bool { return d.Name == c.name }) {
					extra = append(extra, fmt.Sprintf("column %s.%s", t.Name, c.name))
				}
			}
		}
		for _, ix := range t.Indexes {
			if !slices.Contains(indexes, ix.Name) {
				u := ""
				if ix.Unique {
					u = "UNIQUE "
				}
				steps = append(steps, step{"create index " + ix.Name,
					fmt.Sprintf("CREATE %sINDEX IF NOT EXISTS %s ON %s", u, quoteIdent(ix.Name), ix.On)})
			}
		}
	}
	for _, f := range s.FTS {
		declared[f.Name] = true
		newFTS := !slices.Contains(tables, f.Name)
		if newFTS {
			steps = append(steps, step{"create full-text index " + f.Name, createFTSSQL(f)})
		}
		drifted := false
		for name, q := range ftsTriggers(f) {
			cur, ok := triggers[name]
			switch {
			case !ok:
				steps = append(steps, step{"create trigger " + name, q})
				drifted = drifted || !newFTS
			case normalizeSQL(cur) != normalizeSQL(q):
				steps = append(steps,
					step{"replace trigger " + name + " (drop)", "DROP TRIGGER " + quoteIdent(name)},
					step{"replace trigger " + name, q})
				drifted = true
			}
		}
		switch {
		case newFTS && slices.Contains(tables, f.Table):
			// Index rows that existed before the index did.
			steps = append(steps, step{"fill full-text index " + f.Name, ftsFillSQL(f)})
		case drifted:
			// The index holds what the old triggers put in it; the new
			// delete trigger would remove rows that were never indexed
			// (and corrupt the index), so rebuild it under the new rule.
			steps = append(steps,
				step{"rebuild full-text index " + f.Name + " (clear)", fmt.Sprintf("INSERT INTO %s(%s) VALUES('delete-all')", quoteIdent(f.Name), quoteIdent(f.Name))},
				step{"rebuild full-text index " + f.Name, ftsFillSQL(f)})
		}
		if !newFTS {
			have, err := db.columns(ctx, f.Name)
			if err != nil {
				return nil, nil, err
			}
			var names []string
			for _, c := range have {
				names = append(names, c.name)
			}
			if strings.Join(names, ",") != strings.Join(f.Columns, ",") {
				manual = append(manual, fmt.Sprintf("full-text index %s has columns %v but the schema declares %v: drop it (DROP TABLE %s) and restart, and it is rebuilt", f.Name, names, f.Columns, f.Name))
			}
		}
	}
	for _, t := range tables {
		if !declared[t] && !isFTSShadow(t, s.FTS) {
			extra = append(extra, "table "+t)
		}
	}
	if len(manual) > 0 {
		return nil, extra, &ManualError{Steps: manual}
	}
	slices.SortStableFunc(steps, func(a, b step) int { return stepOrder(a) - stepOrder(b) })
	return steps, extra, nil
}

// stepOrder keeps tables before indexes and FTS tables before their
// triggers and fill, whatever order the plan found them in.
func stepOrder(s step) int {
	for i, prefix := range []string{"CREATE TABLE", "ALTER TABLE", "CREATE VIRTUAL TABLE", "CREATE INDEX", "CREATE UNIQUE INDEX", "DROP TRIGGER", "CREATE TRIGGER", "INSERT"} {
		if strings.HasPrefix(s.sql, prefix) {
			return i
		}
	}
	return 10
}

func (db *DB) columns(ctx context.Context, table string) ([]colInfo, error) {
	rows, err := db.w.QueryContext(ctx, "SELECT name, type FROM pragma_table_info(?)", table)
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", table, err)
	}
	defer rows.Close()
	var out []colInfo
	for rows.Next() {
		var c colInfo
		if err := rows.Scan(&c.name, &c.typ); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// addable says why a column cannot be added with ALTER TABLE, or "".
func addable(c Column) string {
	up := strings.ToUpper(c.Type)
	switch {
	case strings.Contains(up, "PRIMARY KEY"), strings.Contains(up, "UNIQUE"):
		return "ALTER TABLE cannot add a PRIMARY KEY or UNIQUE column; add it without the constraint and a unique index"
	case strings.Contains(up, "NOT NULL") && !strings.Contains(up, "DEFAULT"):
		return "a NOT NULL column added to an existing table needs a DEFAULT"
	}
	return ""
}

func baseType(t string) string {
	f := strings.Fields(strings.ToUpper(t))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

func createTableSQL(t Table) string {
	var parts []string
	for _, c := range t.Columns {
		parts = append(parts, quoteIdent(c.Name)+" "+c.Type)
	}
	parts = append(parts, t.Constraints...)
	return fmt.Sprintf("CREATE TABLE %s (\n  %s\n)", quoteIdent(t.Name), strings.Join(parts, ",\n  "))
}

func createFTSSQL(f FTS) string {
	cols := strings.Join(f.Columns, ", ")
	opts := fmt.Sprintf("content=%s, content_rowid=%s", quoteString(f.Table), quoteString(f.RowID))
	if f.Options != "" {
		opts += ", " + f.Options
	}
	return fmt.Sprintf("CREATE VIRTUAL TABLE %s USING fts5(%s, %s)", quoteIdent(f.Name), cols, opts)
}

func ftsCond(f FTS, row string) string {
	if f.When == "" {
		return ""
	}
	return " WHERE " + prefixColumns(f.When, f, row)
}

// prefixColumns rewrites bare column names in the When expression to
// new.col or old.col. It only touches whole identifiers that are columns of
// the content table mentioned in the FTS declaration or its row id, which is
// all a When clause should refer to.
func prefixColumns(expr string, f FTS, row string) string {
	var b strings.Builder
	isIdent := func(r byte) bool {
		return r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
	}
	inStr := false
	for i := 0; i < len(expr); {
		ch := expr[i]
		if ch == '\'' {
			inStr = !inStr
			b.WriteByte(ch)
			i++
			continue
		}
		if !inStr && isIdent(ch) && (i == 0 || !isIdent(expr[i-1]) && expr[i-1] != '.') {
			j := i
			for j < len(expr) && isIdent(expr[j]) {
				j++
			}
			word := expr[i:j]
			if !(word[0] >= '0' && word[0] <= '9') && !isKeyword(word) {
				b.WriteString(row + ".")
			}
			b.WriteString(word)
			i = j
			continue
		}
		b.WriteByte(ch)
		i++
	}
	return b.String()
}

func isKeyword(w string) bool {
	switch strings.ToUpper(w) {
	case "AND", "OR", "NOT", "IS", "NULL", "IN", "LIKE", "GLOB", "BETWEEN", "TRUE", "FALSE":
		return true
	}
	return false
}

func ftsTriggers(f FTS) map[string]string {
	cols := strings.Join(f.Columns, ", ")
	vals := func(row string) string {
		v := []string{row + "." + f.RowID}
		for _, c := range f.Columns {
			v = append(v, row+"."+c)
		}
		return strings.Join(v, ", ")
	}
	ins := func(row string) string {
		return fmt.Sprintf("INSERT INTO %s(rowid, %s) SELECT %s%s;", quoteIdent(f.Name), cols, vals(row), ftsCond(f, row))
	}
	del := func(row string) string {
		return fmt.Sprintf("INSERT INTO %s(%s, rowid, %s) SELECT 'delete', %s%s;", quoteIdent(f.Name), quoteIdent(f.Name), cols, vals(row), ftsCond(f, row))
	}
	name := func(suffix string) string { return f.Name + "_" + suffix }
	return map[string]string{
		name("ai"): fmt.Sprintf("CREATE TRIGGER %s AFTER INSERT ON %s BEGIN %s END", quoteIdent(name("ai")), quoteIdent(f.Table), ins("new")),
		name("ad"): fmt.Sprintf("CREATE TRIGGER %s AFTER DELETE ON %s BEGIN %s END", quoteIdent(name("ad")), quoteIdent(f.Table), del("old")),
		// Only changes to indexed or condition columns touch the index: a
		// chat's updated_at moving must not re-index its title.
		name("au"): fmt.Sprintf("CREATE TRIGGER %s AFTER UPDATE OF %s ON %s BEGIN %s %s END", quoteIdent(name("au")), strings.Join(updateColumns(f), ", "), quoteIdent(f.Table), del("old"), ins("new")),
	}
}

// updateColumns are the columns whose change can alter the index: the
// indexed ones and those the When condition reads.
func updateColumns(f FTS) []string {
	cols := append([]string(nil), f.Columns...)
	marked := prefixColumns(f.When, f, "\x00")
	for _, part := range strings.Split(marked, "\x00.")[1:] {
		end := 0
		for end < len(part) && (part[end] == '_' || part[end] >= 'a' && part[end] <= 'z' || part[end] >= 'A' && part[end] <= 'Z' || part[end] >= '0' && part[end] <= '9') {
			end++
		}
		if c := part[:end]; c != "" && !slices.Contains(cols, c) {
			cols = append(cols, c)
		}
	}
	return cols
}

func ftsFillSQL(f FTS) string {
	cols := strings.Join(f.Columns, ", ")
	where := ""
	if f.When != "" {
		where = " WHERE " + f.When
	}
	return fmt.Sprintf("INSERT INTO %s(rowid, %s) SELECT %s, %s FROM %s%s",
		quoteIdent(f.Name), cols, f.RowID, cols, quoteIdent(f.Table), where)
}

func isFTSShadow(table string, fts []FTS) bool {
	for _, f := range fts {
		if strings.HasPrefix(table, f.Name+"_") {
			return true
		}
	}
	return false
}

func normalizeSQL(s string) string { return strings.Join(strings.Fields(s), " ") }

func quoteIdent(s string) string  { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
func quoteString(s string) string { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }

func queryStrings(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// IsManual reports whether err is a ManualError.
func IsManual(err error) bool {
	var m *ManualError
	return errors.As(err, &m)
}
