package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/llembas/lembas/backend/ids"
)

// Knowledge bases and their documents (issue 14). Every read goes through
// Visible(KindBase, …); writing is for the base's owner: a base the caller
// cannot see is ErrNotFound, one shared with them ErrForbidden.

// ErrUnseenBase is the refusal of a base id the caller cannot see where a
// list of bases is given (a chat's scope).
var ErrUnseenBase = errors.New("knowledge base not visible")

const baseColumns = `kb.id, kb.owner_id, COALESCE(NULLIF(u.display_name, ''), u.username), kb.name, kb.description,
	(SELECT COUNT(*) FROM documents d WHERE d.base_id = kb.id),
	(SELECT COALESCE(SUM(d.size), 0) FROM documents d WHERE d.base_id = kb.id),
	kb.created_at, kb.updated_at, ` + baseShares

func scanBase(row interface{ Scan(...any) error }) (KnowledgeBase, error) {
	var b KnowledgeBase
	err := row.Scan(&b.ID, &b.OwnerID, &b.OwnerName, &b.Name, &b.Description, &b.Documents, &b.Bytes,
		&b.CreatedAt, &b.UpdatedAt, &b.SharedWith)
	return b, err
}

type querier interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
	QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error)
}

// KnowledgeBases lists the bases user can see: their own first, then those
// shared with them, each by name.
func (db *DB) KnowledgeBases(ctx context.Context, user ids.UserID) ([]KnowledgeBase, error) {
	vis, args := Visible(KindBase, "kb", user)
	rows, err := db.r.QueryContext(ctx, `SELECT `+baseColumns+`
		FROM knowledge_bases kb JOIN users u ON u.id = kb.owner_id
		WHERE `+vis+`
		ORDER BY kb.owner_id != ?, kb.name COLLATE NOCASE, kb.id`, append(args, user)...)
	if err != nil {
		return nil, fmt.Errorf("list knowledge bases: %w", err)
	}
	defer rows.Close()
	var out []KnowledgeBase
	for rows.Next() {
		b, err := scanBase(rows)
		if err != nil {
			return nil, fmt.Errorf("list knowledge bases: %w", err)
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// KnowledgeBase reads one base user can see; any other is ErrNotFound.
func (db *DB) KnowledgeBase(ctx context.Context, user ids.UserID, id ids.BaseID) (KnowledgeBase, error) {
	return knowledgeBase(ctx, db.r, user, id)
}

func knowledgeBase(ctx context.Context, q querier, user ids.UserID, id ids.BaseID) (KnowledgeBase, error) {
	vis, args := Visible(KindBase, "kb", user)
	b, err := scanBase(q.QueryRowContext(ctx, `SELECT `+baseColumns+`
		FROM knowledge_bases kb JOIN users u ON u.id = kb.owner_id
		WHERE kb.id = ? AND `+vis, append([]any{id}, args...)...))
	if errors.Is(err, sql.ErrNoRows) {
		return KnowledgeBase{}, fmt.Errorf("knowledge base %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return KnowledgeBase{}, fmt.Errorf("read knowledge base %d: %w", id, err)
	}
	return b, nil
}

// ownBase checks that user may change base id: ErrNotFound when they
// cannot see it, ErrForbidden when it was only shared with them.
func ownBase(ctx context.Context, q querier, user ids.UserID, id ids.BaseID) error {
	vis, args := Visible(KindBase, "kb", user)
	var owner ids.UserID
	err := q.QueryRowContext(ctx, `SELECT kb.owner_id FROM knowledge_bases kb WHERE kb.id = ? AND `+vis,
		append([]any{id}, args...)...).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("knowledge base %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("read knowledge base %d: %w", id, err)
	}
	if owner != user {
		return fmt.Errorf("knowledge base %d is shared for reading: %w", id, ErrForbidden)
	}
	return nil
}

// baseNameTaken reports whether owner has another base called name
// (case-insensitively).
func baseNameTaken(ctx context.Context, tx *sql.Tx, owner ids.UserID, name string, except ids.BaseID) (bool, error) {
	var taken bool
	err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM knowledge_bases
		WHERE owner_id = ? AND name = ? COLLATE NOCASE AND id != ?)`, owner, name, except).Scan(&taken)
	return taken, err
}

// CreateKnowledgeBase adds a base owned by owner. A name owner already
// uses (case-insensitively) is ErrConflict.
func (db *DB) CreateKnowledgeBase(ctx context.Context, owner ids.UserID, name, description string) (KnowledgeBase, error) {
	var out KnowledgeBase
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		taken, err := baseNameTaken(ctx, tx, owner, name, 0)
		if err != nil {
			return fmt.Errorf("create knowledge base: %w", err)
		}
		if taken {
			return fmt.Errorf("knowledge base %q: %w", name, ErrConflict)
		}
		now := nowMillis()
		res, err := tx.ExecContext(ctx, `INSERT INTO knowledge_bases (owner_id, name, description, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?)`, owner, name, description, now, now)
		if err != nil {
			return fmt.Errorf("create knowledge base: %w", err)
		}
		id, _ := res.LastInsertId()
		out, err = knowledgeBase(ctx, tx, owner, ids.BaseID(id))
		return err
	})
	return out, err
}

// UpdateKnowledgeBase changes the name and description of a base of
// owner's that are not nil. See ownBase for the refusals; a name taken is
// ErrConflict.
func (db *DB) UpdateKnowledgeBase(ctx context.Context, owner ids.UserID, id ids.BaseID, name, description *string) (KnowledgeBase, error) {
	var out KnowledgeBase
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		if err := ownBase(ctx, tx, owner, id); err != nil {
			return err
		}
		if name != nil {
			taken, err := baseNameTaken(ctx, tx, owner, *name, id)
			if err != nil {
				return fmt.Errorf("update knowledge base %d: %w", id, err)
			}
			if taken {
				return fmt.Errorf("knowledge base %q: %w", *name, ErrConflict)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE knowledge_bases SET name = ? WHERE id = ?`, *name, id); err != nil {
				return fmt.Errorf("update knowledge base %d: %w", id, err)
			}
		}
		if description != nil {
			if _, err := tx.ExecContext(ctx, `UPDATE knowledge_bases SET description = ? WHERE id = ?`, *description, id); err != nil {
				return fmt.Errorf("update knowledge base %d: %w", id, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE knowledge_bases SET updated_at = ? WHERE id = ?`, nowMillis(), id); err != nil {
			return fmt.Errorf("update knowledge base %d: %w", id, err)
		}
		var err error
		out, err = knowledgeBase(ctx, tx, owner, id)
		return err
	})
	return out, err
}

// DeleteKnowledgeBase deletes a base of owner's with its documents, their
// chunks, its shares and the chats' scopes naming it, and returns the
// documents' storage names for the caller to remove after the commit.
func (db *DB) DeleteKnowledgeBase(ctx context.Context, owner ids.UserID, id ids.BaseID) ([]string, error) {
	var names []string
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		names = names[:0]
		if err := ownBase(ctx, tx, owner, id); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT storage_name FROM documents WHERE base_id = ?`, id)
		if err != nil {
			return fmt.Errorf("delete knowledge base %d: %w", id, err)
		}
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				rows.Close()
				return err
			}
			names = append(names, n)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		// Chunks first (their FTS triggers), then the documents; the
		// shares by hand: a rowid may be used again by the next base, and
		// it must not inherit this one's readers.
		for _, q := range []string{
			`DELETE FROM document_chunks WHERE base_id = ?`,
			`DELETE FROM documents WHERE base_id = ?`,
			`DELETE FROM chat_knowledge_bases WHERE base_id = ?`,
			`DELETE FROM library_shares WHERE kind = 'base' AND item_id = ?`,
			`DELETE FROM knowledge_bases WHERE id = ?`,
		} {
			if _, err := tx.ExecContext(ctx, q, id); err != nil {
				return fmt.Errorf("delete knowledge base %d: %w", id, err)
			}
		}
		return nil
	})
	return names, err
}

const documentColumns = `d.id, d.base_id, d.owner_id, d.kind, d.mime, d.display_name, d.storage_name, d.size, d.note,
	(SELECT COUNT(*) FROM document_chunks c WHERE c.document_id = d.id), d.created_at`

func scanDocument(row interface{ Scan(...any) error }, text *string) (Document, error) {
	var d Document
	dest := []any{&d.ID, &d.BaseID, &d.OwnerID, &d.Kind, &d.MIME, &d.DisplayName, &d.StorageName, &d.Size, &d.Note,
		&d.Chunks, &d.CreatedAt}
	if text != nil {
		dest = append(dest, text)
	}
	err := row.Scan(dest...)
	return d, err
}

// Documents lists the documents of a base user can see, newest first,
// without their text.
func (db *DB) Documents(ctx context.Context, user ids.UserID, base ids.BaseID) ([]Document, error) {
	if _, err := db.KnowledgeBase(ctx, user, base); err != nil {
		return nil, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT `+documentColumns+` FROM documents d
		WHERE d.base_id = ? ORDER BY d.created_at DESC, d.id DESC`, base)
	if err != nil {
		return nil, fmt.Errorf("list documents: %w", err)
	}
	defer rows.Close()
	var out []Document
	for rows.Next() {
		d, err := scanDocument(rows, nil)
		if err != nil {
			return nil, fmt.Errorf("list documents: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// Document reads one document of a base user can see; with its text when
// withText. Any other is ErrNotFound.
func (db *DB) Document(ctx context.Context, user ids.UserID, id ids.DocumentID, withText bool) (Document, error) {
	vis, args := Visible(KindBase, "kb", user)
	cols := documentColumns
	var text *string
	if withText {
		cols += `, d.text`
		text = new(string)
	}
	d, err := scanDocument(db.r.QueryRowContext(ctx, `SELECT `+cols+` FROM documents d
		JOIN knowledge_bases kb ON kb.id = d.base_id
		WHERE d.id = ? AND `+vis, append([]any{id}, args...)...), text)
	if errors.Is(err, sql.ErrNoRows) {
		return Document{}, fmt.Errorf("document %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Document{}, fmt.Errorf("read document %d: %w", id, err)
	}
	if text != nil {
		d.Text = *text
	}
	return d, nil
}

// AddDocument files d (its file already stored under d.StorageName) into a
// base of owner's with its text split into chunks, in one transaction.
// Refusals: see ownBase; ErrQuota when owner's files would come to more
// than quota bytes (0: no limit).
func (db *DB) AddDocument(ctx context.Context, owner ids.UserID, d Document, chunks []string, quota int64) (Document, error) {
	var out Document
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		if err := ownBase(ctx, tx, owner, d.BaseID); err != nil {
			return err
		}
		if quota > 0 {
			var used int64
			if err := tx.QueryRowContext(ctx, userBytes, owner, owner).Scan(&used); err != nil {
				return fmt.Errorf("sum files: %w", err)
			}
			if used+d.Size > quota {
				return fmt.Errorf("%d of %d bytes used: %w", used, quota, ErrQuota)
			}
		}
		now := nowMillis()
		res, err := tx.ExecContext(ctx, `
			INSERT INTO documents (base_id, owner_id, kind, mime, display_name, storage_name, size, text, note, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			d.BaseID, owner, d.Kind, d.MIME, d.DisplayName, d.StorageName, d.Size, d.Text, d.Note, now)
		if err != nil {
			return fmt.Errorf("insert document: %w", err)
		}
		id, _ := res.LastInsertId()
		if err := insertChunks(ctx, tx, ids.DocumentID(id), d.BaseID, chunks); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE knowledge_bases SET updated_at = ? WHERE id = ?`, now, d.BaseID); err != nil {
			return fmt.Errorf("insert document: %w", err)
		}
		out, err = scanDocument(tx.QueryRowContext(ctx, `SELECT `+documentColumns+` FROM documents d WHERE d.id = ?`, id), nil)
		return err
	})
	return out, err
}

// chunkBatch is how many chunks one INSERT writes. FTS5 flushes its
// pending terms to a new segment at the end of every statement (a
// statement savepoint), so a statement per chunk wrote a segment per chunk
// and spent most of an ingest merging them (BenchmarkLibraryIngest: 1.8
// MB/s with 65 % of the CPU in fts5IndexFlush and its merges; 2.2 MB/s
// with 256 a statement, 2.8–4.5 with 2,048, on a loaded machine). 2,048
// rows are 8,192 variables, under SQLite's 32,766.
const chunkBatch = 2048

// insertChunks adds a document's chunks (their FTS rows come from the
// triggers). base_id is copied onto each so that a search filters on
// visible bases without joining documents.
func insertChunks(ctx context.Context, tx *sql.Tx, doc ids.DocumentID, base ids.BaseID, chunks []string) error {
	args := make([]any, 0, 4*min(len(chunks), chunkBatch))
	for start := 0; start < len(chunks); start += chunkBatch {
		part := chunks[start:min(start+chunkBatch, len(chunks))]
		args = args[:0]
		for i, c := range part {
			args = append(args, doc, base, start+i, c)
		}
		q := `INSERT INTO document_chunks (document_id, base_id, seq, text) VALUES (?, ?, ?, ?)` +
			strings.Repeat(`, (?, ?, ?, ?)`, len(part)-1)
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("insert chunks: %w", err)
		}
	}
	return nil
}

// AddDocumentRows files a document with its chunks without the checks
// AddDocument makes, for building large test and benchmark databases.
func (db *DB) AddDocumentRows(ctx context.Context, tx *sql.Tx, d Document, chunks []string) (ids.DocumentID, error) {
	res, err := tx.ExecContext(ctx, `
		INSERT INTO documents (base_id, owner_id, kind, mime, display_name, storage_name, size, text, note, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.BaseID, d.OwnerID, d.Kind, d.MIME, d.DisplayName, d.StorageName, d.Size, d.Text, d.Note, nowMillis())
	if err != nil {
		return 0, fmt.Errorf("insert document: %w", err)
	}
	id, _ := res.LastInsertId()
	return ids.DocumentID(id), insertChunks(ctx, tx, ids.DocumentID(id), d.BaseID, chunks)
}

// DeleteDocument deletes a document of a base of owner's with its chunks
// and returns its storage name, for the caller to remove after the commit.
func (db *DB) DeleteDocument(ctx context.Context, owner ids.UserID, id ids.DocumentID) (string, error) {
	var name string
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		vis, args := Visible(KindBase, "kb", owner)
		var base ids.BaseID
		err := tx.QueryRowContext(ctx, `SELECT d.base_id, d.storage_name FROM documents d
			JOIN knowledge_bases kb ON kb.id = d.base_id WHERE d.id = ? AND `+vis,
			append([]any{id}, args...)...).Scan(&base, &name)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("document %d: %w", id, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read document %d: %w", id, err)
		}
		if err := ownBase(ctx, tx, owner, base); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM document_chunks WHERE document_id = ?`, id); err != nil {
			return fmt.Errorf("delete document %d: %w", id, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM documents WHERE id = ?`, id); err != nil {
			return fmt.Errorf("delete document %d: %w", id, err)
		}
		_, err = tx.ExecContext(ctx, `UPDATE knowledge_bases SET updated_at = ? WHERE id = ?`, nowMillis(), base)
		return err
	})
	return name, err
}

// ChatKnowledgeScope returns whether one of user's chats is scoped and the
// bases of its scope that user can still see (a base unshared or deleted
// since drops out). Another's chat is ErrNotFound.
func (db *DB) ChatKnowledgeScope(ctx context.Context, user ids.UserID, chat ids.ChatID) (bool, []KnowledgeBase, error) {
	var scoped bool
	err := db.r.QueryRowContext(ctx, `SELECT knowledge_scoped FROM chats WHERE id = ? AND user_id = ?`, chat, user).Scan(&scoped)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil, fmt.Errorf("chat %d: %w", chat, ErrNotFound)
	}
	if err != nil {
		return false, nil, fmt.Errorf("read chat %d: %w", chat, err)
	}
	if !scoped {
		return false, nil, nil
	}
	vis, args := Visible(KindBase, "kb", user)
	rows, err := db.r.QueryContext(ctx, `SELECT `+baseColumns+`
		FROM chat_knowledge_bases s JOIN knowledge_bases kb ON kb.id = s.base_id JOIN users u ON u.id = kb.owner_id
		WHERE s.chat_id = ? AND `+vis+`
		ORDER BY kb.owner_id != ?, kb.name COLLATE NOCASE, kb.id`, append(append([]any{chat}, args...), user)...)
	if err != nil {
		return false, nil, fmt.Errorf("read chat %d's knowledge bases: %w", chat, err)
	}
	defer rows.Close()
	var out []KnowledgeBase
	for rows.Next() {
		b, err := scanBase(rows)
		if err != nil {
			return false, nil, fmt.Errorf("read chat %d's knowledge bases: %w", chat, err)
		}
		out = append(out, b)
	}
	return true, out, rows.Err()
}

// SetChatKnowledgeScope scopes one of user's chats to bases (each one user
// can see, else ErrUnseenBase), or lifts the scope (scoped false). Another's
// chat is ErrNotFound.
func (db *DB) SetChatKnowledgeScope(ctx context.Context, user ids.UserID, chat ids.ChatID, scoped bool, bases []ids.BaseID) error {
	return db.WriteTx(ctx, func(tx *sql.Tx) error {
		var ok bool
		if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM chats WHERE id = ? AND user_id = ?)`, chat, user).Scan(&ok); err != nil {
			return fmt.Errorf("read chat %d: %w", chat, err)
		}
		if !ok {
			return fmt.Errorf("chat %d: %w", chat, ErrNotFound)
		}
		if !scoped {
			bases = nil
		}
		for _, b := range bases {
			if _, err := knowledgeBase(ctx, tx, user, b); errors.Is(err, ErrNotFound) {
				return fmt.Errorf("knowledge base %d: %w", b, ErrUnseenBase)
			} else if err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM chat_knowledge_bases WHERE chat_id = ?`, chat); err != nil {
			return fmt.Errorf("scope chat %d: %w", chat, err)
		}
		for _, b := range bases {
			if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO chat_knowledge_bases (chat_id, base_id) VALUES (?, ?)`, chat, b); err != nil {
				return fmt.Errorf("scope chat %d: %w", chat, err)
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE chats SET knowledge_scoped = ? WHERE id = ?`, scoped, chat); err != nil {
			return fmt.Errorf("scope chat %d: %w", chat, err)
		}
		return nil
	})
}

// SearchKnowledge finds query in the chunks of the bases user can see,
// limited to only (when scoped; no bases: nothing), best first, at most
// limit. Like Search, it ranks by bm25 only when the query is selective
// (rankedMax), and newest first otherwise. When every term together finds
// nothing, it looks for any of them: a model's query is often several
// words that no one passage holds together. Then terms too common to rank
// are left out of the ranking, unless all of them are.
func (db *DB) SearchKnowledge(ctx context.Context, user ids.UserID, scoped bool, only []ids.BaseID, query string, limit int) ([]KnowledgeHit, error) {
	pq := parseQuery(query)
	if pq.match == "" || limit <= 0 || (scoped && len(only) == 0) {
		return nil, nil
	}
	vis, visArgs := Visible(KindBase, "kb", user)
	filter := `c.base_id IN (SELECT kb.id FROM knowledge_bases kb WHERE ` + vis
	args := visArgs
	if scoped {
		filter += ` AND kb.id IN (` + placeholders(len(only)) + `)`
		for _, b := range only {
			args = append(args, b)
		}
	}
	filter += `)`
	ranked := false
	if !pq.shortPrefix {
		var err error
		if ranked, err = db.selective(ctx, "document_chunks_fts", pq.match); err != nil {
			return nil, err
		}
	}
	match := pq.match
	found, err := db.knowledgeRowids(ctx, match, ranked, filter, args, limit)
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		terms := ftsTerms.FindAllString(pq.match, -1)
		if len(terms) < 2 {
			return nil, nil
		}
		// Any of the terms: ranked by those selective enough to rank.
		var rare []string
		for _, t := range terms {
			if strings.HasSuffix(t, "*") && len([]rune(strings.Trim(t, `"*`))) < minRankedPrefix {
				continue
			}
			sel, err := db.selective(ctx, "document_chunks_fts", t)
			if err != nil {
				return nil, err
			}
			if sel {
				rare = append(rare, t)
			}
		}
		if len(rare) > 0 {
			match, ranked = strings.Join(rare, " OR "), true
		} else {
			match, ranked = strings.Join(terms, " OR "), false
		}
		if found, err = db.knowledgeRowids(ctx, match, ranked, filter, args, limit); err != nil || len(found) == 0 {
			return nil, err
		}
	}
	return db.knowledgeHits(ctx, match, found)
}

// ftsTerms finds the terms of a query parseQuery wrote: each is quoted
// (its words hold no quote) and maybe a prefix.
var ftsTerms = regexp.MustCompile(`"[^"]*"\*?`)

// knowledgeRowids returns the chunk ids matching match within filter, in
// the order asked. Only the ids: the text and snippets are read for the
// rows returned (knowledgeHits), not carried through the sort.
func (db *DB) knowledgeRowids(ctx context.Context, match string, ranked bool, filter string, fargs []any, limit int) ([]int64, error) {
	order := `f.rowid DESC`
	if ranked {
		order = `f.rank, f.rowid`
	}
	args := append(append([]any{match}, fargs...), limit)
	rows, err := db.r.QueryContext(ctx, `SELECT f.rowid FROM document_chunks_fts f
		JOIN document_chunks c ON c.id = f.rowid
		WHERE document_chunks_fts MATCH ? AND `+filter+`
		ORDER BY `+order+` LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("search knowledge: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("search knowledge: %w", err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// knowledgeHits reads the chunks found, in that order, with their
// documents' and bases' names and a snippet marking match.
func (db *DB) knowledgeHits(ctx context.Context, match string, found []int64) ([]KnowledgeHit, error) {
	args := make([]any, len(found))
	for i, id := range found {
		args[i] = id
	}
	rows, err := db.r.QueryContext(ctx, `SELECT c.id, c.document_id, d.display_name, c.base_id, kb.name, c.seq, c.text
		FROM document_chunks c JOIN documents d ON d.id = c.document_id JOIN knowledge_bases kb ON kb.id = c.base_id
		WHERE c.id IN (`+placeholders(len(found))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("search knowledge: %w", err)
	}
	defer rows.Close()
	byID := make(map[int64]KnowledgeHit, len(found))
	for rows.Next() {
		var h KnowledgeHit
		if err := rows.Scan(&h.ChunkID, &h.DocumentID, &h.DocumentName, &h.BaseID, &h.BaseName, &h.Seq, &h.Text); err != nil {
			return nil, fmt.Errorf("search knowledge: %w", err)
		}
		byID[h.ChunkID] = h
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search knowledge: %w", err)
	}
	marked, err := db.marked(ctx, ftsSearch{table: "document_chunks_fts", mark: `snippet(document_chunks_fts, 0, ?, ?, '…', 24)`}, match, found)
	if err != nil {
		return nil, err
	}
	out := make([]KnowledgeHit, 0, len(found))
	for _, id := range found {
		h, ok := byID[id]
		if !ok {
			continue // deleted meanwhile
		}
		h.Snippet = marked[id]
		out = append(out, h)
	}
	return out, nil
}
