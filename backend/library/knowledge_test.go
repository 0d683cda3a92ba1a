package library

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/files"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/store/storetest"
)

// household is a library over a real database and files directory: the
// owner is an administrator; frodo and sam are members.
type household struct {
	lib               *Service
	db                *store.DB
	files             *files.Service
	admin, frodo, sam ids.UserID
}

func newHousehold(t testing.TB) household {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t)
	owner, err := db.EnsureOwner(ctx, "owner", "Owner")
	if err != nil {
		t.Fatal(err)
	}
	user := func(name string) ids.UserID {
		u, err := db.CreateUser(ctx, store.NewUser{Username: name, DisplayName: strings.ToUpper(name[:1]) + name[1:]})
		if err != nil {
			t.Fatal(err)
		}
		return ids.UserID(u.ID)
	}
	log := slog.New(slog.DiscardHandler)
	fs := files.New(db, t.TempDir(), log, files.Limits{})
	return household{lib: New(db, fs, log), db: db, files: fs, admin: ids.UserID(owner.ID), frodo: user("frodo"), sam: user("sam")}
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (h household) base(t testing.TB, owner ids.UserID, name string) store.KnowledgeBase {
	t.Helper()
	b, err := h.lib.CreateBase(context.Background(), owner, name, "")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (h household) ingest(t testing.TB, owner ids.UserID, base ids.BaseID, name string, data []byte) store.Document {
	t.Helper()
	d, err := h.lib.Ingest(context.Background(), owner, base, name, bytes.NewReader(data))
	if err != nil {
		t.Fatalf("ingest %s: %v", name, err)
	}
	return d
}

// share gives user reading of a base, as the share service will (slice
// A1 owns it): one row in library_shares.
func (h household) share(t testing.TB, base ids.BaseID, user ids.UserID) {
	t.Helper()
	if _, err := h.db.Write().Exec(`INSERT INTO library_shares (kind, item_id, user_id) VALUES ('base', ?, ?)`, base, user); err != nil {
		t.Fatal(err)
	}
}

func (h household) chat(t testing.TB, user ids.UserID) ids.ChatID {
	t.Helper()
	c, _, _, err := h.db.AddTurn(context.Background(), user, store.Turn{Title: "Bees",
		User: store.Message{Role: store.RoleUser, Content: "About bees"}, Reply: store.Message{Role: store.RoleAssistant, Status: store.StatusFinal}})
	if err != nil {
		t.Fatal(err)
	}
	return c.ID
}

// ftsIntegrity checks that the chunks' index still matches its table
// (external-content triggers that delete what they did not insert corrupt
// it).
func ftsIntegrity(t testing.TB, db *store.DB) {
	t.Helper()
	if _, err := db.Write().Exec(`INSERT INTO document_chunks_fts(document_chunks_fts, rank) VALUES ('integrity-check', 1)`); err != nil {
		t.Errorf("document_chunks_fts: %v", err)
	}
}

func wantKindSays(t testing.TB, what string, err error, kind apperr.Kind, words string) {
	t.Helper()
	if apperr.KindOf(err) != kind {
		t.Errorf("%s: %v (%s), want %s", what, err, apperr.KindOf(err), kind)
		return
	}
	if _, msg := apperr.Public(err); !strings.Contains(msg, words) {
		t.Errorf("%s: %q, want it to say %q", what, msg, words)
	}
}

func docNames(hits []store.KnowledgeHit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.DocumentName)
	}
	return out
}

// Text, Markdown and PDF go in through the attachment pipeline, their text
// is chunked and searchable; a PDF's accents fold (café finds cafe).
func TestIngestTextMarkdownAndPDF(t *testing.T) {
	ctx := context.Background()
	h := newHousehold(t)
	b := h.base(t, h.frodo, "Garden")
	long := strings.Repeat("The orchard has apple trees and pear trees along the wall.\n\n", 100) + "Quinces ripen last."
	docs := map[string]store.Document{
		"guide.md":  h.ingest(t, h.frodo, b.ID, "guide.md", fixture(t, "guide.md")),
		"text.pdf":  h.ingest(t, h.frodo, b.ID, "text.pdf", fixture(t, "text.pdf")),
		"trees.txt": h.ingest(t, h.frodo, b.ID, "trees.txt", []byte(long)),
	}
	for name, d := range docs {
		if d.DisplayName != name || d.Chunks == 0 || d.Size == 0 || d.BaseID != b.ID || d.OwnerID != h.frodo {
			t.Errorf("%s: %+v", name, d)
		}
	}
	if d := docs["text.pdf"]; d.Kind != "pdf" || d.MIME != "application/pdf" {
		t.Errorf("pdf: %+v", d)
	}
	if d := docs["guide.md"]; d.Kind != "text" || !strings.HasPrefix(d.MIME, "text/plain") {
		t.Errorf("markdown: %+v", d)
	}
	if d := docs["trees.txt"]; d.Chunks < 4 {
		t.Errorf("a text of %d bytes in %d chunks", len(long), d.Chunks)
	}
	full, err := h.lib.Document(ctx, h.frodo, docs["text.pdf"].ID)
	if err != nil || !strings.Contains(full.Text, "café au lait") {
		t.Errorf("pdf text %q, %v", full.Text, err)
	}
	for query, want := range map[string]string{"syrup foulbrood": "guide.md", "cafe": "text.pdf", "quinces": "trees.txt"} {
		hits, err := h.lib.Search(ctx, h.frodo, Scope{}, query, 0)
		if err != nil || len(hits) != 1 || hits[0].DocumentName != want || hits[0].BaseName != "Garden" {
			t.Errorf("search %q: %v %v, want one hit in %s", query, docNames(hits), err, want)
			continue
		}
		if !strings.Contains(hits[0].Snippet, "<mark>") {
			t.Errorf("search %q: snippet %q has no mark", query, hits[0].Snippet)
		}
	}
	list, err := h.lib.Documents(ctx, h.frodo, b.ID)
	if err != nil || len(list) != 3 {
		t.Fatalf("documents %v %v", list, err)
	}
	bases, err := h.lib.Bases(ctx, h.frodo)
	if err != nil || len(bases) != 1 || bases[0].Documents != 3 || bases[0].Bytes != docs["guide.md"].Size+docs["text.pdf"].Size+docs["trees.txt"].Size || bases[0].OwnerName != "Frodo" {
		t.Errorf("bases %+v %v", bases, err)
	}
	f, err := os.Open(filepath.Join(h.files.Dir(), docs["text.pdf"].StorageName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, _ := io.ReadAll(f); !bytes.Equal(got, fixture(t, "text.pdf")) {
		t.Error("the stored PDF is not the uploaded one")
	}
	ftsIntegrity(t, h.db)
}

// An image, and a PDF with no text, are refused with a sentence saying
// why, and leave nothing behind.
func TestIngestRefusesImagesAndTextlessPDFs(t *testing.T) {
	ctx := context.Background()
	h := newHousehold(t)
	b := h.base(t, h.frodo, "Garden")
	_, err := h.lib.Ingest(ctx, h.frodo, b.ID, "plan.png", bytes.NewReader(fixture(t, "opaque.png")))
	wantKindSays(t, "image", err, apperr.Invalid, "plan.png is an image; a knowledge base holds documents with text: PDF, text, Markdown, code or HTML")
	_, err = h.lib.Ingest(ctx, h.frodo, b.ID, "scan.pdf", bytes.NewReader(fixture(t, "scanned.pdf")))
	wantKindSays(t, "scanned PDF", err, apperr.Invalid, "scan.pdf has no text in it (it may be scanned pages), so there is nothing to search")
	_, err = h.lib.Ingest(ctx, h.frodo, b.ID, "blank.txt", strings.NewReader(" \n\n "))
	wantKindSays(t, "blank text", err, apperr.Invalid, "has no text")
	if list, _ := h.lib.Documents(ctx, h.frodo, b.ID); len(list) != 0 {
		t.Errorf("documents %v", list)
	}
	entries, _ := os.ReadDir(h.files.Dir())
	if len(entries) != 0 {
		t.Errorf("%d files left behind", len(entries))
	}
}

// Documents count toward the person's storage quota, for uploads and
// further documents alike.
func TestQuotaCountsDocuments(t *testing.T) {
	ctx := context.Background()
	h := newHousehold(t)
	if err := h.db.SetSetting(ctx, files.SettingQuotaMB, "1"); err != nil {
		t.Fatal(err)
	}
	b := h.base(t, h.frodo, "Garden")
	big := []byte(strings.Repeat("Seven hundred thousand bytes of notes about the garden.\n", 700_000/56))
	d := h.ingest(t, h.frodo, b.ID, "notes.txt", big)
	used, _, err := h.files.Usage(ctx, h.frodo)
	if err != nil || used != d.Size {
		t.Errorf("usage %d %v, want the document's %d", used, err, d.Size)
	}
	_, err = h.lib.Ingest(ctx, h.frodo, b.ID, "more.txt", bytes.NewReader(big))
	wantKindSays(t, "second document", err, apperr.Invalid, "this server allows each person")
	_, err = h.files.Upload(ctx, h.frodo, "upload.txt", bytes.NewReader(big))
	wantKindSays(t, "upload", err, apperr.Invalid, "this server allows each person")
	// Sam's files are Sam's.
	if _, err := h.files.Upload(ctx, h.sam, "upload.txt", bytes.NewReader(big)); err != nil {
		t.Errorf("sam's upload: %v", err)
	}
	// At the quota, a document is refused before it is read.
	if _, err := h.lib.Ingest(ctx, h.frodo, b.ID, "tiny.txt", strings.NewReader("x")); err != nil {
		t.Errorf("a tiny document under the quota: %v", err)
	}
}

// The orphan sweep removes files no row names, never a document's.
func TestSweepLeavesDocumentFiles(t *testing.T) {
	ctx := context.Background()
	h := newHousehold(t)
	b := h.base(t, h.frodo, "Garden")
	d := h.ingest(t, h.frodo, b.ID, "guide.md", fixture(t, "guide.md"))
	orphan := filepath.Join(h.files.Dir(), strings.Repeat("ab", 16))
	if err := os.WriteFile(orphan, []byte("left by a crash"), 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-3 * time.Hour)
	for _, p := range []string{orphan, filepath.Join(h.files.Dir(), d.StorageName)} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.files.Sweep(ctx, time.Now().Add(48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(h.files.Dir(), d.StorageName)); err != nil {
		t.Errorf("the document's file went with the sweep: %v", err)
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Errorf("the orphan stayed: %v", err)
	}
}

// A chat scoped to one base never sees another's text; once its base is
// deleted it searches nothing, never everything.
func TestScopedChatSeesOnlyItsBases(t *testing.T) {
	ctx := context.Background()
	h := newHousehold(t)
	bees, trees := h.base(t, h.frodo, "Bees"), h.base(t, h.frodo, "Trees")
	h.ingest(t, h.frodo, bees.ID, "bees.txt", []byte("The hive swarmed in May; mithril-coloured wax."))
	h.ingest(t, h.frodo, trees.ID, "trees.txt", []byte("The pear tree fruited in September, and the palantir glowed."))
	chat := h.chat(t, h.frodo)
	if err := h.lib.SetChatScope(ctx, h.frodo, chat, Scope{Scoped: true, Bases: []ids.BaseID{bees.ID}}); err != nil {
		t.Fatal(err)
	}
	scope, bases, err := h.lib.ChatScope(ctx, h.frodo, chat)
	if err != nil || !scope.Scoped || len(scope.Bases) != 1 || scope.Bases[0] != bees.ID || len(bases) != 1 || bases[0].Name != "Bees" {
		t.Fatalf("scope %+v %+v %v", scope, bases, err)
	}
	for _, q := range []string{"palantir", "pear tree", "September", "the", "palantir hive", "tree*"} {
		hits, err := h.lib.Search(ctx, h.frodo, scope, q, 50)
		if err != nil {
			t.Fatal(err)
		}
		for _, hit := range hits {
			if hit.BaseID != bees.ID {
				t.Errorf("scoped search %q found %s in %s", q, hit.DocumentName, hit.BaseName)
			}
		}
	}
	if hits, _ := h.lib.Search(ctx, h.frodo, scope, "mithril", 0); len(hits) != 1 {
		t.Errorf("scoped search misses its own base: %v", docNames(hits))
	}
	if err := h.lib.DeleteBase(ctx, h.frodo, bees.ID); err != nil {
		t.Fatal(err)
	}
	scope, bases, err = h.lib.ChatScope(ctx, h.frodo, chat)
	if err != nil || !scope.Scoped || len(scope.Bases) != 0 || len(bases) != 0 {
		t.Fatalf("scope after the delete %+v %+v %v", scope, bases, err)
	}
	for _, q := range []string{"palantir", "mithril", "the", "tree*"} {
		if hits, _ := h.lib.Search(ctx, h.frodo, scope, q, 0); len(hits) != 0 {
			t.Errorf("a scoped chat with no base left found %q in %v", q, docNames(hits))
		}
	}
	if hits, _ := h.lib.Search(ctx, h.frodo, Scope{}, "palantir", 0); len(hits) != 1 {
		t.Errorf("unscoped search: %v", docNames(hits))
	}
	ftsIntegrity(t, h.db)
	// Lifted, and refused for a base not seen or a chat not one's own.
	if err := h.lib.SetChatScope(ctx, h.frodo, chat, Scope{}); err != nil {
		t.Fatal(err)
	}
	if scope, _, _ := h.lib.ChatScope(ctx, h.frodo, chat); scope.Scoped {
		t.Errorf("scope lifted: %+v", scope)
	}
	samsBase := h.base(t, h.sam, "Sam's")
	wantKindSays(t, "another's base in the scope", h.lib.SetChatScope(ctx, h.frodo, chat, Scope{Scoped: true, Bases: []ids.BaseID{samsBase.ID}}),
		apperr.Invalid, "not one you can see")
	wantKindSays(t, "another's chat", h.lib.SetChatScope(ctx, h.sam, chat, Scope{Scoped: true, Bases: []ids.BaseID{samsBase.ID}}),
		apperr.NotFound, "chat")
	_, _, err = h.lib.ChatScope(ctx, h.sam, chat)
	wantKindSays(t, "another's chat's scope", err, apperr.NotFound, "chat")
}

// A shared base is readable by its grantee (a person, or a group they are
// in) through every reading method and writable through none; an
// administrator who is not a grantee cannot reach it at all.
func TestSharedBaseIsReadOnlyAndAdminsDoNotBypass(t *testing.T) {
	ctx := context.Background()
	h := newHousehold(t)
	b := h.base(t, h.frodo, "Recipes")
	d := h.ingest(t, h.frodo, b.ID, "guide.md", fixture(t, "guide.md"))
	h.base(t, h.sam, "Sam's own")
	h.share(t, b.ID, h.sam)

	bases, err := h.lib.Bases(ctx, h.sam)
	if err != nil || len(bases) != 2 || bases[0].Name != "Sam's own" || bases[1].ID != b.ID || bases[1].OwnerName != "Frodo" {
		t.Fatalf("sam's bases %+v %v", bases, err)
	}
	if _, err := h.lib.Base(ctx, h.sam, b.ID); err != nil {
		t.Errorf("base: %v", err)
	}
	if docs, err := h.lib.Documents(ctx, h.sam, b.ID); err != nil || len(docs) != 1 {
		t.Errorf("documents %v %v", docs, err)
	}
	if got, err := h.lib.Document(ctx, h.sam, d.ID); err != nil || !strings.Contains(got.Text, "syrup") {
		t.Errorf("document %v", err)
	}
	if _, f, err := h.lib.OpenDocument(ctx, h.sam, d.ID); err != nil {
		t.Errorf("open document: %v", err)
	} else {
		f.Close()
	}
	if hits, err := h.lib.Search(ctx, h.sam, Scope{}, "syrup", 0); err != nil || len(hits) != 1 {
		t.Errorf("search %v %v", docNames(hits), err)
	}
	if a, err := h.lib.AttachDocument(ctx, h.sam, d.ID); err != nil || a.UserID != h.sam || !strings.Contains(a.Text, "syrup") {
		t.Errorf("attach %+v %v", a, err)
	}
	chat := h.chat(t, h.sam)
	if err := h.lib.SetChatScope(ctx, h.sam, chat, Scope{Scoped: true, Bases: []ids.BaseID{b.ID}}); err != nil {
		t.Errorf("scope a chat to a shared base: %v", err)
	}

	const readOnly = "shared with you for reading only"
	_, err = h.lib.Ingest(ctx, h.sam, b.ID, "mine.txt", strings.NewReader("my text"))
	wantKindSays(t, "ingest", err, apperr.Forbidden, readOnly)
	wantKindSays(t, "delete document", h.lib.DeleteDocument(ctx, h.sam, d.ID), apperr.Forbidden, readOnly)
	name := "Mine now"
	_, err = h.lib.UpdateBase(ctx, h.sam, b.ID, BasePatch{Name: &name})
	wantKindSays(t, "update base", err, apperr.Forbidden, readOnly)
	wantKindSays(t, "delete base", h.lib.DeleteBase(ctx, h.sam, b.ID), apperr.Forbidden, readOnly)
	if got, err := h.lib.Base(ctx, h.frodo, b.ID); err != nil || got.Name != "Recipes" || got.Documents != 1 {
		t.Errorf("frodo's base after sam's tries %+v %v", got, err)
	}

	// The administrator is no grantee: not found, by every method.
	admin := h.admin
	if bases, _ := h.lib.Bases(ctx, admin); len(bases) != 0 {
		t.Errorf("the admin lists %v", bases)
	}
	if hits, _ := h.lib.Search(ctx, admin, Scope{}, "syrup", 0); len(hits) != 0 {
		t.Errorf("the admin finds %v", docNames(hits))
	}
	if hits, _ := h.lib.Search(ctx, admin, Scope{Scoped: true, Bases: []ids.BaseID{b.ID}}, "syrup", 0); len(hits) != 0 {
		t.Errorf("the admin finds %v by naming the base", docNames(hits))
	}
	_, err = h.lib.Base(ctx, admin, b.ID)
	wantKindSays(t, "admin base", err, apperr.NotFound, "not found")
	_, err = h.lib.Documents(ctx, admin, b.ID)
	wantKindSays(t, "admin documents", err, apperr.NotFound, "not found")
	_, err = h.lib.Document(ctx, admin, d.ID)
	wantKindSays(t, "admin document", err, apperr.NotFound, "not found")
	_, _, err = h.lib.OpenDocument(ctx, admin, d.ID)
	wantKindSays(t, "admin open", err, apperr.NotFound, "not found")
	_, err = h.lib.AttachDocument(ctx, admin, d.ID)
	wantKindSays(t, "admin attach", err, apperr.NotFound, "not found")
	_, err = h.lib.Ingest(ctx, admin, b.ID, "x.txt", strings.NewReader("x"))
	wantKindSays(t, "admin ingest", err, apperr.NotFound, "not found")
	wantKindSays(t, "admin delete document", h.lib.DeleteDocument(ctx, admin, d.ID), apperr.NotFound, "not found")
	_, err = h.lib.UpdateBase(ctx, admin, b.ID, BasePatch{Name: &name})
	wantKindSays(t, "admin update", err, apperr.NotFound, "not found")
	wantKindSays(t, "admin delete base", h.lib.DeleteBase(ctx, admin, b.ID), apperr.NotFound, "not found")
	adminChat := h.chat(t, admin)
	wantKindSays(t, "admin scope", h.lib.SetChatScope(ctx, admin, adminChat, Scope{Scoped: true, Bases: []ids.BaseID{b.ID}}),
		apperr.Invalid, "not one you can see")

	// Through a group: the admin joins a group the base is shared with,
	// and reads it, still without writing.
	g, err := h.db.CreateGroup(ctx, "Cooks", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.db.AddGroupMember(ctx, g.ID, admin); err != nil {
		t.Fatal(err)
	}
	if _, err := h.db.Write().Exec(`INSERT INTO library_shares (kind, item_id, group_id) VALUES ('base', ?, ?)`, b.ID, g.ID); err != nil {
		t.Fatal(err)
	}
	if hits, _ := h.lib.Search(ctx, admin, Scope{}, "syrup", 0); len(hits) != 1 {
		t.Errorf("a group's member does not find %v", docNames(hits))
	}
	wantKindSays(t, "group member deletes", h.lib.DeleteBase(ctx, admin, b.ID), apperr.Forbidden, readOnly)
}

// Attaching a document makes a copy: deleting the document later (or its
// base) changes nothing of the message it was sent with.
func TestDeletedDocumentLeavesItsMessage(t *testing.T) {
	ctx := context.Background()
	h := newHousehold(t)
	b := h.base(t, h.frodo, "Papers")
	d := h.ingest(t, h.frodo, b.ID, "text.pdf", fixture(t, "text.pdf"))
	full, err := h.lib.Document(ctx, h.frodo, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	a, err := h.lib.AttachDocument(ctx, h.frodo, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if a.StorageName == d.StorageName || a.Kind != "pdf" || a.MIME != "application/pdf" || a.DisplayName != "text.pdf" || a.Text != full.Text || a.MessageID != nil {
		t.Fatalf("attachment %+v", a)
	}
	// It says where it came from: the document's name and its base.
	if a.SourcePath != "text.pdf" || a.SourceLabel != "Papers" {
		t.Errorf("the attachment's source: %q %q", a.SourcePath, a.SourceLabel)
	}
	_, um, _, err := h.db.AddTurn(ctx, h.frodo, store.Turn{Title: "Paper",
		User:  store.Message{Role: store.RoleUser, Content: "Read this", Attachments: []ids.AttachmentID{a.ID}},
		Reply: store.Message{Role: store.RoleAssistant, Status: store.StatusFinal}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.lib.DeleteDocument(ctx, h.frodo, d.ID); err != nil {
		t.Fatal(err)
	}
	if err := h.lib.DeleteBase(ctx, h.frodo, b.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(h.files.Dir(), d.StorageName)); !os.IsNotExist(err) {
		t.Errorf("the document's file stayed: %v", err)
	}
	byMsg, err := h.db.AttachmentsOf(ctx, h.frodo, []ids.MessageID{um.ID})
	if err != nil || len(byMsg[um.ID]) != 1 {
		t.Fatalf("attachments %v %v", byMsg, err)
	}
	sent := byMsg[um.ID][0]
	if sent.Text != full.Text || sent.DisplayName != "text.pdf" {
		t.Errorf("the message's attachment changed: %+v", sent)
	}
	_, data, err := h.files.Get(ctx, h.frodo, sent.ID)
	if err != nil || !bytes.Equal(data, fixture(t, "text.pdf")) {
		t.Errorf("the message's file: %d bytes, %v", len(data), err)
	}
	ftsIntegrity(t, h.db)
}

// An attached document keeps an attachment's share of its text, and says
// it was cut.
func TestAttachedDocumentTextIsCut(t *testing.T) {
	ctx := context.Background()
	h := newHousehold(t)
	b := h.base(t, h.frodo, "Long")
	long := strings.Repeat("é", 300<<10) // 600 KB of two-byte runes
	d := h.ingest(t, h.frodo, b.ID, "long.txt", []byte(long))
	if full, err := h.lib.Document(ctx, h.frodo, d.ID); err != nil || full.Text != long || full.Note != "" {
		t.Errorf("the document kept %d of %d bytes (note %q), %v", len(full.Text), len(long), full.Note, err)
	}
	a, err := h.lib.AttachDocument(ctx, h.frodo, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Text) > 256<<10 || len(a.Text) < 255<<10 || !strings.HasPrefix(long, a.Text) || !strings.Contains(a.Note, "Only the first") {
		t.Errorf("attached text %d bytes, note %q", len(a.Text), a.Note)
	}
}

// Names are required, bounded and unique per owner whatever their case.
func TestBaseNames(t *testing.T) {
	ctx := context.Background()
	h := newHousehold(t)
	h.base(t, h.frodo, "Garden")
	_, err := h.lib.CreateBase(ctx, h.frodo, "  ", "")
	wantKindSays(t, "empty", err, apperr.Invalid, "needs a name")
	_, err = h.lib.CreateBase(ctx, h.frodo, strings.Repeat("n", 101), "")
	wantKindSays(t, "long", err, apperr.Invalid, "at most 100")
	_, err = h.lib.CreateBase(ctx, h.frodo, "x", strings.Repeat("d", 501))
	wantKindSays(t, "long description", err, apperr.Invalid, "at most 500")
	_, err = h.lib.CreateBase(ctx, h.frodo, "GARDEN", "")
	wantKindSays(t, "taken", err, apperr.Conflict, "already have")
	if _, err := h.lib.CreateBase(ctx, h.sam, "Garden", ""); err != nil {
		t.Errorf("another's name: %v", err)
	}
	other := h.base(t, h.frodo, "Orchard")
	name := "garden"
	_, err = h.lib.UpdateBase(ctx, h.frodo, other.ID, BasePatch{Name: &name})
	wantKindSays(t, "renamed to a taken name", err, apperr.Conflict, "already have")
	desc := "Apples"
	got, err := h.lib.UpdateBase(ctx, h.frodo, other.ID, BasePatch{Description: &desc})
	if err != nil || got.Description != "Apples" || got.Name != "Orchard" {
		t.Errorf("update %+v %v", got, err)
	}
}

// A deleted base's id used again by a new base does not bring back its
// readers.
func TestDeletedBaseTakesItsShares(t *testing.T) {
	ctx := context.Background()
	h := newHousehold(t)
	b := h.base(t, h.frodo, "Shared")
	h.share(t, b.ID, h.sam)
	if err := h.lib.DeleteBase(ctx, h.frodo, b.ID); err != nil {
		t.Fatal(err)
	}
	again := h.base(t, h.frodo, "Private")
	if again.ID != b.ID {
		t.Skipf("the id was not used again (%d, %d)", b.ID, again.ID)
	}
	if _, err := h.lib.Base(ctx, h.sam, again.ID); apperr.KindOf(err) != apperr.NotFound {
		t.Errorf("sam sees the new base: %v", err)
	}
}
