package store

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/ids"
)

// benchCorpus is a deterministic chat history: pseudo-words drawn with a
// Zipf distribution, so that a few words are in nearly every message (as
// "the" is) and most are rare.
type benchCorpus struct {
	vocab  []string // by frequency rank: vocab[0] is the most common
	phrase string   // two adjacent words of one generated message
}

const (
	benchMessages = 100_000
	benchChats    = 2_000
	benchVocab    = 20_000
)

func benchWords(r *rand.Rand) []string {
	syl := []string{"ab", "ka", "lo", "mi", "nu", "re", "sa", "to", "ve", "zi", "dor", "el", "an", "th", "gu", "wy", "or", "in", "es", "ul"}
	seen := map[string]bool{}
	words := make([]string, 0, benchVocab)
	for len(words) < benchVocab {
		var b strings.Builder
		for range 2 + r.IntN(3) {
			b.WriteString(syl[r.IntN(len(syl))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
}

// seedBench fills db with benchMessages messages across benchChats chats:
// 90 % of the chats belong to user 1 (the searcher), the rest to user 2,
// and 1 % of user 1's are in the trash. One transaction, through the real
// triggers, so the index is built as the app builds it.
func seedBench(b testing.TB, db *DB) benchCorpus {
	b.Helper()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(2024, 11))
	vocab := benchWords(r)
	zipf := rand.NewZipf(r, 1.1, 1, benchVocab-1)
	var corpus benchCorpus
	corpus.vocab = vocab
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		for _, u := range []string{"frodo", "sam"} {
			if _, err := tx.ExecContext(ctx, `INSERT INTO users (username) VALUES (?)`, u); err != nil {
				return err
			}
		}
		insChat, err := tx.PrepareContext(ctx, `INSERT INTO chats (id, user_id, title, created_at, updated_at, deleted_at) VALUES (?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer insChat.Close()
		insMsg, err := tx.PrepareContext(ctx, `
			INSERT INTO messages (id, chat_id, parent_id, role, content, status, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, 'final', ?, ?)`)
		if err != nil {
			return err
		}
		defer insMsg.Close()
		start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
		perChat := benchMessages / benchChats
		words := make([]string, 0, 80)
		for c := 1; c <= benchChats; c++ {
			user := 1
			if c%10 == 0 {
				user = 2
			}
			var deleted any
			if c%100 == 1 {
				deleted = start
			}
			title := vocab[zipf.Uint64()] + " " + vocab[zipf.Uint64()]
			if _, err := insChat.ExecContext(ctx, c, user, title, start, start, deleted); err != nil {
				return err
			}
			var parent any
			for i := range perChat {
				id := (c-1)*perChat + i + 1
				words = words[:0]
				for range 5 + r.IntN(76) {
					words = append(words, vocab[zipf.Uint64()])
				}
				if id == benchMessages/2 {
					corpus.phrase = words[2] + " " + words[3]
				}
				role := "user"
				if i%2 == 1 {
					role = "assistant"
				}
				at := start + int64(id)*1000
				if _, err := insMsg.ExecContext(ctx, id, c, parent, role, strings.Join(words, " "), at, at); err != nil {
					return err
				}
				parent = id
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return corpus
}

type benchQuery struct {
	name  string
	query string   // what the user types
	likes []string // the LIKE patterns a scan would use for the same thing
}

func benchQueries(c benchCorpus) []benchQuery {
	rare, mid, common := c.vocab[4000], c.vocab[200], c.vocab[0]
	two1, two2 := c.vocab[8], c.vocab[90]
	return []benchQuery{
		{"rare", rare, []string{rare}},
		{"mid", mid, []string{mid}},
		{"common", common, []string{common}},
		{"two", two1 + " " + two2, []string{two1, two2}},
		{"prefix", "ab*", []string{"ab"}},
		{"phrase", `"` + c.phrase + `"`, []string{c.phrase}},
	}
}

// likeSearch is the scan that full-text search replaces: the same scope and
// page, newest first, matching with LIKE.
func likeSearch(ctx context.Context, db *DB, user ids.UserID, patterns []string, limit int) (int, error) {
	q := `SELECT m.id, m.chat_id, substr(m.content, 1, 200) FROM messages m JOIN chats c ON c.id = m.chat_id
		WHERE c.user_id = ? AND c.deleted_at IS NULL`
	args := []any{user}
	for _, p := range patterns {
		q += ` AND m.content LIKE ?`
		args = append(args, "%"+p+"%")
	}
	rows, err := db.Read().QueryContext(ctx, q+` ORDER BY m.id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	return n, rows.Err()
}

func percentile(ds []time.Duration, p float64) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := min(int(float64(len(s))*p), len(s)-1)
	return float64(s[i]) / float64(time.Millisecond)
}

// BenchmarkSearch100k runs a fixed mix of searches (with snippets) over
// 100,000 messages and compares the median with a LIKE scan of the same
// data. Each iteration runs the whole mix once.
func BenchmarkSearch100k(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	db, err := Open(ctx, filepath.Join(dir, "lembas.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Sync(ctx, Current, dir); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	corpus := seedBench(b, db)
	b.Logf("seeded %d messages in %d chats in %v (%.0f MB)", benchMessages, benchChats, time.Since(t0).Round(time.Millisecond), float64(db.Size())/1e6)

	const user = ids.UserID(1)
	queries := benchQueries(corpus)
	for _, q := range queries {
		hits, err := db.Search(ctx, user, q.query, 20)
		if err != nil {
			b.Fatal(err)
		}
		var indexed int
		db.Read().QueryRow(`SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?`, ftsQuery(q.query)).Scan(&indexed)
		pq, ranked := parseQuery(q.query), false
		if !pq.shortPrefix {
			ranked, _ = db.selective(ctx, "messages_fts", pq.match)
		}
		b.Logf("%-7s %-24q matches %6d rows, ranked=%v, %d hits", q.name, q.query, indexed, ranked, len(hits))
	}

	byKind := map[string][]time.Duration{}
	var all []time.Duration
	for b.Loop() {
		for _, q := range queries {
			start := time.Now()
			if _, err := db.Search(ctx, user, q.query, 20); err != nil {
				b.Fatal(err)
			}
			d := time.Since(start)
			all = append(all, d)
			byKind[q.name] = append(byKind[q.name], d)
		}
	}

	var likeAll []time.Duration
	likeByKind := map[string][]time.Duration{}
	for range 3 {
		for _, q := range queries {
			start := time.Now()
			if _, err := likeSearch(ctx, db, user, q.likes, 20); err != nil {
				b.Fatal(err)
			}
			d := time.Since(start)
			likeAll = append(likeAll, d)
			likeByKind[q.name] = append(likeByKind[q.name], d)
		}
	}
	var report strings.Builder
	for _, q := range queries {
		fmt.Fprintf(&report, "\n  %-7s fts p50 %7.2f ms  p95 %7.2f ms   like p50 %7.2f ms",
			q.name, percentile(byKind[q.name], 0.5), percentile(byKind[q.name], 0.95), percentile(likeByKind[q.name], 0.5))
	}
	b.Log(report.String())
	p50, likeP50 := percentile(all, 0.5), percentile(likeAll, 0.5)
	b.ReportMetric(p50, "p50_ms")
	b.ReportMetric(percentile(all, 0.95), "p95_ms")
	b.ReportMetric(likeP50, "like_p50_ms")
	b.ReportMetric(likeP50/p50, "speedup_vs_like")
}
