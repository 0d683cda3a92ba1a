package library

import (
	"bytes"
	"compress/zlib"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/files"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// benchDir holds what the benchmarks build once per process (the search
// corpus's database); TestMain removes it.
var benchDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// The knowledge search corpus: benchDocs documents of about benchDocBytes
// each (100 MB in all), words drawn with a Zipf distribution from a
// vocabulary whose most frequent words are English's, so that a few are in
// nearly every chunk and most are rare; a few invented terms are planted
// in a handful of documents each.
const (
	benchDocs     = 10_000
	benchDocBytes = 10_000
	benchVocab    = 30_000
	benchBases    = 20
)

// commonWords are the head of the vocabulary, most frequent first.
var commonWords = strings.Fields(`the of and to a in is that it for was on are as with his they be at one have this from
or had by hot word but what some we can out other were all there when up use your how said an each she which do their
time if will way about many then them write would like so these her long make thing see him two has look more day could
go come did number sound no most people my over know water than call first who may down side been now find any new work
part take get place made live where after back little only round man year came show every good me give our under name
very through just form sentence great think say help low line differ turn cause much mean before move right boy old too
same tell does set three want air well also play small end put home read hand port large spell add even land here must
big high such follow act why ask men change went light kind off need house picture try us again animal point mother world
near build self earth father head stand own page should country found answer school grow study still learn plant cover
food sun four between state keep eye never last let thought city tree cross farm hard start might story saw far sea draw
left late run while press close night real life few north open seem together next white children begin got walk example
ease paper group always music those both mark often letter until mile river car feet care second book carry took science
eat room friend began idea fish mountain stop once base hear horse cut sure watch color face wood main enough plain girl
usual young ready above ever red list though feel talk bird soon body dog family direct pose leave song measure door
product black short numeral class wind question happen complete ship area half rock order fire south problem piece told
knew pass since top whole king space heard best hour better true during hundred five remember step early hold west
ground interest reach fast verb sing listen six table travel less morning ten simple several vowel toward war lay against
pattern slow center love person money serve appear road map rain rule govern pull cold notice voice unit power town fine
certain fly fall lead cry dark machine note wait plan figure star box noun field rest correct able pound done beauty drive
stood contain front teach week final gave green oh quick develop ocean warm free minute strong special mind behind clear
tail produce fact street inch multiply nothing course stay wheel full force blue object decide surface deep moon island
foot system busy test record boat common gold possible plane stead dry wonder laugh thousand ago ran check game shape
equate miss brought heat snow tire bring yes distant fill east paint language among`)

// plantedTerms are invented words put in a few documents each (the rare
// terms searched for).
var plantedTerms = []string{"quorvex", "thalimber", "zentrigo", "mablewick", "orrinthal", "vashkeel"}

type benchCorpus struct {
	vocab  []string
	phrase string // two adjacent words of one document
	prefix string // the first three letters of a mid-frequency word
}

// benchVocabulary is commonWords followed by pseudo-words made of
// syllables.
func benchVocabulary(r *rand.Rand) []string {
	syl := []string{"ab", "ka", "lo", "mi", "nu", "re", "sa", "to", "ve", "zi", "dor", "el", "an", "th", "gu", "wy", "or", "in", "es", "ul", "pra", "ston", "ique"}
	seen := map[string]bool{}
	words := make([]string, 0, benchVocab)
	for _, w := range commonWords {
		if !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
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

// benchText writes one document of about n bytes: sentences of 6 to 24
// words, paragraphs of 2 to 7 sentences.
func benchText(r *rand.Rand, zipf *rand.Zipf, vocab []string, n int, planted string) string {
	var b strings.Builder
	b.Grow(n + 200)
	plantAt := -1
	if planted != "" {
		plantAt = r.IntN(n)
	}
	for b.Len() < n {
		for s := 2 + r.IntN(6); s > 0; s-- {
			words := 6 + r.IntN(19)
			for i := range words {
				w := vocab[zipf.Uint64()]
				if i == 0 {
					w = strings.ToUpper(w[:1]) + w[1:]
				}
				if plantAt >= 0 && b.Len() >= plantAt {
					w, plantAt = planted, -1
				}
				b.WriteString(w)
				if i < words-1 {
					b.WriteByte(' ')
				}
			}
			b.WriteString(". ")
		}
		b.WriteString("\n\n")
	}
	return b.String()
}

var (
	corpusOnce sync.Once
	corpusDB   *store.DB
	corpusUser ids.UserID
	corpus     benchCorpus
	corpusErr  error
)

// knowledgeCorpus builds the corpus once per process, with direct store
// inserts through the same chunking as Ingest (Chunks), not the upload
// pipeline: 10,000 uploads would measure the pipeline, not search. The
// searcher owns half of the bases; of another person's, half are shared
// with them and half are not (their chunks are matched and filtered out).
func knowledgeCorpus(b *testing.B) (*store.DB, ids.UserID, benchCorpus) {
	corpusOnce.Do(func() {
		ctx := context.Background()
		// LEMBAS_KNOWLEDGE_CORPUS keeps the database in that directory
		// from one run to the next (for looking into a query plan).
		dir, keep := os.Getenv("LEMBAS_KNOWLEDGE_CORPUS"), true
		if dir == "" {
			var err error
			if dir, err = os.MkdirTemp("", "lembas-knowledge-bench-"); err != nil {
				corpusErr = err
				return
			}
			benchDir, keep = dir, false
		}
		_, statErr := os.Stat(filepath.Join(dir, "lembas.db"))
		db, err := store.Open(ctx, filepath.Join(dir, "lembas.db"))
		if err != nil {
			corpusErr = err
			return
		}
		if keep && statErr == nil {
			corpusDB, corpusUser = db, 1
			r := rand.New(rand.NewPCG(14, 2026))
			corpus = benchCorpus{vocab: benchVocabulary(r)}
			corpus.prefix = corpus.vocab[700][:3]
			corpusErr = db.Read().QueryRow(`SELECT text FROM document_chunks WHERE document_id = ? AND seq = 0`, benchDocs/2+1).Scan(&corpus.phrase)
			if w := strings.Fields(corpus.phrase); len(w) > 41 {
				corpus.phrase = strings.Trim(w[40], ".") + " " + strings.Trim(w[41], ".")
			}
			return
		}
		if _, err := db.Sync(ctx, store.Current, filepath.Join(dir, "backups")); err != nil {
			corpusErr = err
			return
		}
		t0 := time.Now()
		corpus, corpusErr = seedKnowledge(ctx, db)
		corpusDB, corpusUser = db, 1
		var chunks int
		db.Read().QueryRow(`SELECT count(*) FROM document_chunks`).Scan(&chunks)
		var textBytes int64
		db.Read().QueryRow(`SELECT sum(length(CAST(text AS BLOB))) FROM documents`).Scan(&textBytes)
		fmt.Fprintf(os.Stderr, "knowledge corpus: %d documents, %.0f MB of text, %d chunks, built in %v (database %.0f MB)\n",
			benchDocs, float64(textBytes)/1e6, chunks, time.Since(t0).Round(time.Second), float64(db.Size())/1e6)
	})
	if corpusErr != nil {
		b.Fatal(corpusErr)
	}
	return corpusDB, corpusUser, corpus
}

func seedKnowledge(ctx context.Context, db *store.DB) (benchCorpus, error) {
	r := rand.New(rand.NewPCG(14, 2026))
	vocab := benchVocabulary(r)
	zipf := rand.NewZipf(r, 1.1, 2, benchVocab-1)
	c := benchCorpus{vocab: vocab}
	err := db.WriteTx(ctx, func(tx *sql.Tx) error {
		for _, u := range []string{"frodo", "sam"} {
			if _, err := tx.ExecContext(ctx, `INSERT INTO users (username) VALUES (?)`, u); err != nil {
				return err
			}
		}
		for i := range benchBases {
			owner := 1 + i%2
			if _, err := tx.ExecContext(ctx, `INSERT INTO knowledge_bases (id, owner_id, name) VALUES (?, ?, ?)`, i+1, owner, fmt.Sprintf("Base %d", i+1)); err != nil {
				return err
			}
			if owner == 2 && i%4 == 1 {
				if _, err := tx.ExecContext(ctx, `INSERT INTO library_shares (kind, item_id, user_id) VALUES ('base', ?, 1)`, i+1); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return c, err
	}
	const batch = 500
	for start := 0; start < benchDocs; start += batch {
		err := db.WriteTx(ctx, func(tx *sql.Tx) error {
			for i := start; i < min(start+batch, benchDocs); i++ {
				planted := ""
				if i%1667 == 7 { // six documents, one per term
					planted = plantedTerms[i/1667]
				}
				text := benchText(r, zipf, vocab, benchDocBytes/2+r.IntN(benchDocBytes), planted)
				if i == benchDocs/2 {
					w := strings.Fields(text)
					c.phrase = strings.Trim(w[40], ".") + " " + strings.Trim(w[41], ".")
				}
				base := ids.BaseID(1 + i%benchBases)
				d := store.Document{BaseID: base, OwnerID: ids.UserID(1 + (int(base)-1)%2), Kind: "text", MIME: "text/plain; charset=utf-8",
					DisplayName: fmt.Sprintf("doc-%05d.txt", i), StorageName: fmt.Sprintf("%032x", i), Size: int64(len(text)), Text: text}
				if _, err := db.AddDocumentRows(ctx, tx, d, Chunks(text)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return c, err
		}
	}
	c.prefix = vocab[700][:3]
	return c, nil
}

type benchQuery struct{ name, query string }

func knowledgeQueries(c benchCorpus) []benchQuery {
	return []benchQuery{
		{"rare", plantedTerms[3]},
		{"common", c.vocab[0]},
		{"mid", c.vocab[3000]},
		{"two", c.vocab[40] + " " + c.vocab[900]},
		{"phrase", `"` + c.phrase + `"`},
		{"prefix", c.prefix + "*"},
		// Five words no chunk holds together: found by any of them.
		{"question", "what does " + plantedTerms[1] + " say about " + plantedTerms[5]},
		{"question-common", "how do " + c.vocab[500] + " and " + c.vocab[2000] + " " + c.vocab[5000] + " work"},
	}
}

func percentile(ds []time.Duration, p float64) float64 {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := min(int(float64(len(s))*p), len(s)-1)
	return float64(s[i]) / float64(time.Millisecond)
}

// BenchmarkKnowledgeSearch runs a fixed mix of knowledge searches (every
// visible base, the model's default of 8 hits, with snippets) over 10,000
// documents of 100 MB of text; each iteration runs the mix once. Reported:
// p50_ms and p95_ms over every search run.
func BenchmarkKnowledgeSearch(b *testing.B) {
	ctx := context.Background()
	db, user, c := knowledgeCorpus(b)
	lib := New(db, nil, slog.New(slog.DiscardHandler))
	queries := knowledgeQueries(c)
	for _, q := range queries {
		t0 := time.Now()
		hits, err := lib.Search(ctx, user, Scope{}, q.query, 0)
		if err != nil {
			b.Fatal(err)
		}
		if len(hits) == 0 {
			b.Fatalf("%s (%q) found nothing", q.name, q.query)
		}
		b.Logf("%-16s %-50q %d hits, first in %s, %v", q.name, q.query, len(hits), hits[0].DocumentName, time.Since(t0).Round(10*time.Microsecond))
	}
	// quorvex is only in a base of the other person's, not shared.
	if hits, err := lib.Search(ctx, user, Scope{}, plantedTerms[0], 0); err != nil || len(hits) != 0 {
		b.Fatalf("a base not shared is searched: %v %v", hits, err)
	}
	var times []time.Duration
	each := make([][]time.Duration, len(queries))
	b.ResetTimer()
	for range b.N {
		for i, q := range queries {
			t0 := time.Now()
			if _, err := lib.Search(ctx, user, Scope{}, q.query, 0); err != nil {
				b.Fatal(err)
			}
			d := time.Since(t0)
			times, each[i] = append(times, d), append(each[i], d)
		}
	}
	b.StopTimer()
	for i, q := range queries {
		b.Logf("%-16s p50 %.1f ms, max %.1f ms", q.name, percentile(each[i], 0.5), percentile(each[i], 1))
	}
	b.ReportMetric(percentile(times, 0.5), "p50_ms")
	b.ReportMetric(percentile(times, 0.95), "p95_ms")
}

// benchPDF is a PDF of pages pages of Helvetica text (compressed content
// streams), about 3 KB of text a page.
func benchPDF(r *rand.Rand, zipf *rand.Zipf, vocab []string, pages int) []byte {
	var objs [][]byte
	kids := make([]string, pages)
	for p := range pages {
		kids[p] = fmt.Sprintf("%d 0 R", 4+2*p)
	}
	objs = append(objs,
		[]byte("<< /Type /Catalog /Pages 2 0 R >>"),
		[]byte(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), pages)),
		[]byte("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"))
	for p := range pages {
		var content bytes.Buffer
		content.WriteString("BT /F1 10 Tf 50 760 Td 12 TL\n")
		for range 50 {
			var line strings.Builder
			for line.Len() < 60 {
				line.WriteString(vocab[zipf.Uint64()])
				line.WriteByte(' ')
			}
			fmt.Fprintf(&content, "(%s) Tj T*\n", line.String())
		}
		content.WriteString("ET")
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		zw.Write(content.Bytes())
		zw.Close()
		objs = append(objs,
			[]byte(fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", 5+2*p)),
			[]byte(fmt.Sprintf("<< /Filter /FlateDecode /Length %d >>\nstream\n%s\nendstream", z.Len(), z.Bytes())))
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offs := make([]int, len(objs))
	for i, o := range objs {
		offs[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n", i+1)
		b.Write(o)
		b.WriteString("\nendobj\n")
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// heapPeak samples the live heap every half millisecond until stop is
// called, which returns the highest value seen.
func heapPeak() (stop func() uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	var peak uint64
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(500 * time.Microsecond)
		defer t.Stop()
		for {
			peak = max(peak, read())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return max(peak, read())
	}
}

// BenchmarkLibraryIngest files documents into a base through Ingest, the
// real pipeline (receive, budget, attach.Process, write, chunk, one
// transaction with the FTS triggers): a 4 MB text file and a PDF of 300
// pages (about 1 MB of text) per iteration. Reported: mb_s, the uploaded
// megabytes a second, and peak_heap_mb, the largest growth of the live heap
// during one upload over the heap before it (sampled).
func BenchmarkLibraryIngest(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	db, err := store.Open(ctx, filepath.Join(dir, "lembas.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Sync(ctx, store.Current, filepath.Join(dir, "backups")); err != nil {
		b.Fatal(err)
	}
	owner, err := db.EnsureOwner(ctx, "owner", "Owner")
	if err != nil {
		b.Fatal(err)
	}
	user := ids.UserID(owner.ID)
	log := slog.New(slog.DiscardHandler)
	lib := New(db, files.New(db, dir, log, files.Limits{}), log)
	base, err := lib.CreateBase(ctx, user, "Bench", "")
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(14, 7))
	vocab := benchVocabulary(r)
	zipf := rand.NewZipf(r, 1.1, 2, benchVocab-1)
	uploads := []struct {
		name string
		data []byte
	}{
		{"notes.txt", []byte(benchText(r, zipf, vocab, 4<<20, ""))},
		{"book.pdf", benchPDF(r, zipf, vocab, 300)},
	}
	var total int64
	var peak uint64
	var took time.Duration
	b.ResetTimer()
	for range b.N {
		for _, u := range uploads {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			before := ms.HeapAlloc
			stop := heapPeak()
			t0 := time.Now()
			d, err := lib.Ingest(ctx, user, base.ID, u.name, bytes.NewReader(u.data))
			took += time.Since(t0)
			p := stop()
			if err != nil {
				b.Fatal(err)
			}
			if d.Chunks == 0 {
				b.Fatalf("%s: no chunks", u.name)
			}
			if p > before {
				peak = max(peak, p-before)
			}
			total += int64(len(u.data))
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(total)/(1<<20)/took.Seconds(), "mb_s")
	b.ReportMetric(float64(peak)/(1<<20), "peak_heap_mb")
}
