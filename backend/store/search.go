package store

import (
	"context"
	"fmt"
	"html"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/llembas/lembas/backend/ids"
)

// Hit is one search result: a message, or a chat whose title matched
// (MessageID 0, Role ""). ChatTitle is plain text; Snippet is HTML, escaped,
// with the matched words in <mark> elements.
type Hit struct {
	ChatID    ids.ChatID
	ChatTitle string
	MessageID ids.MessageID
	Snippet   string
	Role      Role
	CreatedAt int64
}

// rankedMax decides between the two orders of search results. A query
// matching at most this many indexed rows (across the instance: that is what
// ranking costs) is ordered by bm25; beyond it, newest first. bm25 scores
// every match before the best 20 are known: 4 to 6 µs a row with modernc
// (BenchmarkSearch100k: 1,817 matches rank in 10 ms, 5,000 in about 20 ms;
// DESIGN.md §5: 216 ms for a term in 98 % of 100k rows). Newest first stops
// after the page whatever the count, and among thousands of matches the
// reader can no more judge "best" than "newest". The check counts with a
// LIMIT of rankedMax+1, so it reads at most that many doclist entries
// (0.6 ms for a term in 5,000 rows); a prefix query also pays for merging
// the doclists of the terms it covers, which is why short prefixes skip the
// check (minRankedPrefix).
const rankedMax = 5000

// maxTerms bounds how many terms a query may have; each costs a doclist
// walk. maxWords bounds the words of all of them: a phrase ("…" or
// a.b.c, one term) walks a doclist per word, and "the." 2,000 times was
// one term that took 10.6 s over 3,000 notes (16 words: 0.23 s).
const (
	maxTerms = 16
	maxWords = 32
)

// Sentinels that snippet() puts around matches. They are private-use
// characters, so they survive HTML escaping untouched and are then turned
// into the only tags the snippet contains. A message that itself contains
// them gets at worst a stray highlight (markHTML keeps the tags balanced).
const (
	markOpen  = '\uE000'
	markClose = '\uE001'
)

type searchTerm struct {
	text   string // tokens separated by single spaces
	prefix bool
}

// ftsQuery turns what a user typed into an FTS5 query. User text is never
// FTS5 syntax: it is split into terms, each reduced to word characters and
// double-quoted, so operators (AND, OR, NOT, NEAR), column filters, "^",
// "-", parentheses and stray quotes are plain words or nothing and cannot
// cause a syntax error. Two things are deliberate syntax: a "quoted phrase"
// matches its words in sequence, and a "*" at the end of the last term makes
// it a prefix. A word with inner punctuation ("node.js", "col:x") becomes the
// phrase of its parts, which is how the tokenizer indexed it. The terms are
// ANDed. It returns "" when nothing searchable is left.
func ftsQuery(s string) string { return parseQuery(s).match }

// parsedQuery is a search as FTS5 will run it.
type parsedQuery struct {
	match string // the FTS5 query; "" when nothing is searchable
	// shortPrefix is set when the last term is a prefix shorter than
	// minRankedPrefix, which is never selective enough to rank.
	shortPrefix bool
}

// minRankedPrefix is the shortest prefix whose matches are counted to
// decide on ranking. A prefix of one or two characters covers a large share
// of the vocabulary, so counting its matches costs a merge of all their
// doclists, as much as the search itself (28 ms for "ab*" over 75 % of the
// rows in BenchmarkSearch100k), and the answer is foreseeable: newest first.
const minRankedPrefix = 3

func parseQuery(s string) parsedQuery {
	var terms []searchTerm
	used := 0
	add := func(text string, prefix bool) {
		words := strings.FieldsFunc(text, func(r rune) bool { return !isWordRune(r) })
		if len(words) > maxWords-used {
			// A phrase cut short is no longer a prefix at its end.
			words, prefix = words[:maxWords-used], false
		}
		if len(words) > 0 && len(terms) < maxTerms {
			terms = append(terms, searchTerm{strings.Join(words, " "), prefix})
			used += len(words)
		}
	}
	rs := []rune(s)
	for i := 0; i < len(rs); {
		switch {
		case unicode.IsSpace(rs[i]):
			i++
		case rs[i] == '"':
			end := -1
			for j := i + 1; j < len(rs); j++ {
				if rs[j] == '"' {
					end = j
					break
				}
			}
			if end < 0 {
				i++ // a lone quote is punctuation
				continue
			}
			prefix := end+1 < len(rs) && rs[end+1] == '*'
			add(string(rs[i+1:end]), prefix)
			i = end + 1
		default:
			j := i
			for j < len(rs) && !unicode.IsSpace(rs[j]) && rs[j] != '"' {
				j++
			}
			add(string(rs[i:j]), rs[j-1] == '*')
			i = j
		}
	}
	var q parsedQuery
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(`"` + t.text + `"`)
		if t.prefix && i == len(terms)-1 {
			b.WriteByte('*')
			last := t.text[strings.LastIndexByte(t.text, ' ')+1:]
			q.shortPrefix = utf8.RuneCountInString(last) < minRankedPrefix
		}
	}
	q.match = b.String()
	return q
}

// isWordRune is roughly the unicode61 tokenizer's idea of a token
// character. It only has to be strict about the quote; what it lets through,
// FTS5 tokenizes again exactly as it tokenized the messages.
func isWordRune(r rune) bool {
	return r != markOpen && r != markClose &&
		(unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r) || unicode.Is(unicode.Co, r))
}

// markHTML escapes a snippet for HTML and turns the sentinels into <mark>
// tags, keeping them balanced whatever the text contained.
func markHTML(s string) string {
	var b strings.Builder
	open := false
	start := 0
	flush := func(end int) { b.WriteString(html.EscapeString(s[start:end])) }
	for i, r := range s {
		if r != markOpen && r != markClose {
			continue
		}
		flush(i)
		start = i + len(string(r))
		switch {
		case r == markOpen && !open:
			b.WriteString("<mark>")
			open = true
		case r == markClose && open:
			b.WriteString("</mark>")
			open = false
		}
	}
	flush(len(s))
	if open {
		b.WriteString("</mark>")
	}
	return b.String()
}

// Search finds query in the titles and messages of user's chats that are
// not in the trash. Title hits come first, at most half of limit, so that
// messages always have room. Results are ranked by relevance when the query
// is selective and newest first otherwise (see rankedMax). A query with
// nothing searchable in it returns no hits and no error.
func (db *DB) Search(ctx context.Context, user ids.UserID, query string, limit int) ([]Hit, error) {
	q := parseQuery(query)
	if q.match == "" {
		return nil, nil
	}
	if limit <= 0 {
		limit = 20
	}
	limit = min(limit, 100)
	titles, err := db.searchTitles(ctx, user, q, (limit+1)/2)
	if err != nil {
		return nil, err
	}
	msgs, err := db.searchMessages(ctx, user, q, limit-len(titles))
	if err != nil {
		return nil, err
	}
	return append(titles, msgs...), nil
}

// selective reports whether match finds at most rankedMax rows of table.
func (db *DB) selective(ctx context.Context, table, match string) (bool, error) {
	var n int
	err := db.r.QueryRowContext(ctx,
		`SELECT count(*) FROM (SELECT 1 FROM `+table+` WHERE `+table+` MATCH ? LIMIT ?)`, match, rankedMax+1).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("search: %w", err)
	}
	return n <= rankedMax, nil
}

func (db *DB) searchTitles(ctx context.Context, user ids.UserID, q parsedQuery, limit int) ([]Hit, error) {
	return db.searchFTS(ctx, q, limit, ftsSearch{
		table: "chats_fts",
		mark:  `highlight(chats_fts, 0, ?, ?)`,
		query: `SELECT c.id, c.title, 0, '', c.created_at, %s
			FROM chats_fts f JOIN chats c ON c.id = f.rowid
			WHERE chats_fts MATCH ? AND c.user_id = ? AND c.deleted_at IS NULL
			ORDER BY %s LIMIT ?`,
		rowid: func(h Hit) int64 { return int64(h.ChatID) },
	}, user)
}

// onPathSQL selects the chosen path of chat c from its leaf up to message
// m: a message on another version's branch is not a hit (the transcript
// does not show it). The walk stops at m's id, since parents are older.
// Only a chat that has had versions walks: leaf_id NULL means it never
// branched, so every message is on its path (insertMessageAt).
const onPathSQL = `WITH RECURSIVE up(id) AS (
		SELECT ` + leafSQL + `
		UNION ALL
		SELECT p.parent_id FROM messages p JOIN up ON p.id = up.id WHERE p.parent_id >= m.id
	) SELECT id FROM up`

func (db *DB) searchMessages(ctx context.Context, user ids.UserID, q parsedQuery, limit int) ([]Hit, error) {
	return db.searchFTS(ctx, q, limit, ftsSearch{
		table: "messages_fts",
		mark:  `snippet(messages_fts, 0, ?, ?, '…', 24)`,
		plain: true,
		query: `SELECT m.chat_id, c.title, m.id, m.role, m.created_at, %s
			FROM messages_fts f JOIN messages m ON m.id = f.rowid JOIN chats c ON c.id = m.chat_id
			WHERE messages_fts MATCH ? AND c.user_id = ? AND c.deleted_at IS NULL
				AND (c.leaf_id IS NULL OR m.id IN (` + onPathSQL + `))
			ORDER BY %s LIMIT ?`,
		rowid: func(h Hit) int64 { return int64(h.MessageID) },
	}, user)
}

// ftsSearch describes a search over one FTS table. query has two %s: the
// marked-text column and the order.
type ftsSearch struct {
	table string
	mark  string // snippet() or highlight(), taking the two sentinels
	plain bool   // the text is Markdown: shown as plain text (plainSnippet)
	query string
	rowid func(Hit) int64
}

// html turns marked text from FTS5 into the snippet's HTML.
func (s ftsSearch) html(text string) string {
	if s.plain {
		text = plainSnippet(text)
	}
	return markHTML(text)
}

// searchFTS runs s in the order selective picks. Newest first, the rows
// come from FTS5 in rowid order, already sorted, so the snippet is computed
// in the same statement and only for the rows returned. Ranked, SQLite
// sorts every match, and a snippet in the same statement would be computed
// for each of them: the snippets are made afterwards for the page only.
func (db *DB) searchFTS(ctx context.Context, pq parsedQuery, limit int, s ftsSearch, user ids.UserID) ([]Hit, error) {
	if limit <= 0 {
		return nil, nil
	}
	match := pq.match
	ranked := false
	if !pq.shortPrefix {
		var err error
		if ranked, err = db.selective(ctx, s.table, match); err != nil {
			return nil, err
		}
	}
	var q string
	args := []any{match, user, limit}
	if ranked {
		// Ties (a term that is in every row counts the same everywhere) go
		// to the newest.
		q = fmt.Sprintf(s.query, `''`, `f.rank, f.rowid DESC`)
	} else {
		// Message ids, like chat ids, grow with time.
		q = fmt.Sprintf(s.query, s.mark, `f.rowid DESC`)
		args = append([]any{string(markOpen), string(markClose)}, args...)
	}
	rows, err := db.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", s.table, err)
	}
	defer rows.Close()
	var hits []Hit
	for rows.Next() {
		var h Hit
		if err := rows.Scan(&h.ChatID, &h.ChatTitle, &h.MessageID, &h.Role, &h.CreatedAt, &h.Snippet); err != nil {
			return nil, fmt.Errorf("search %s: %w", s.table, err)
		}
		h.Snippet = s.html(h.Snippet)
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search %s: %w", s.table, err)
	}
	if !ranked || len(hits) == 0 {
		return hits, nil
	}
	rowids := make([]int64, len(hits))
	for i, h := range hits {
		rowids[i] = s.rowid(h)
	}
	marked, err := db.marked(ctx, s, match, rowids)
	if err != nil {
		return nil, err
	}
	for i := range hits {
		hits[i].Snippet = marked[rowids[i]]
	}
	return hits, nil
}

// marked computes fn for the given rows of an FTS table and returns it as
// HTML by rowid. The rows are bounded by a rowid range, which FTS5 applies
// in one pass, and picked out of it by an IN list written as +rowid so that
// SQLite does not hand it to FTS5: FTS5 would run the whole query again for
// every value, which for a prefix query means merging the doclists of every
// matching term each time (300 ms for 10 rows of "ab*" measured here).
func (db *DB) marked(ctx context.Context, s ftsSearch, match string, rowids []int64) (map[int64]string, error) {
	table, fn := s.table, s.mark
	lo, hi := slices.Min(rowids), slices.Max(rowids)
	args := []any{string(markOpen), string(markClose), match, lo, hi}
	for _, id := range rowids {
		args = append(args, id)
	}
	rows, err := db.r.QueryContext(ctx, `SELECT rowid, `+fn+` FROM `+table+`
		WHERE `+table+` MATCH ? AND rowid BETWEEN ? AND ? AND +rowid IN (?`+strings.Repeat(`, ?`, len(rowids)-1)+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("search snippets: %w", err)
	}
	defer rows.Close()
	out := make(map[int64]string, len(rowids))
	for rows.Next() {
		var id int64
		var text string
		if err := rows.Scan(&id, &text); err != nil {
			return nil, fmt.Errorf("search snippets: %w", err)
		}
		out[id] = s.html(text)
	}
	return out, rows.Err()
}
