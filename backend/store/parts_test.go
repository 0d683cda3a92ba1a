package store

import (
	"context"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/llembas/lembas/backend/ids"
)

// withoutColumn is schema s with table's column col left out: the schema of a
// release from before col existed.
func withoutColumn(s Schema, table, col string) Schema {
	out := s
	out.Tables = slices.Clone(s.Tables)
	for i, t := range out.Tables {
		if t.Name == table {
			t.Columns = slices.DeleteFunc(slices.Clone(t.Columns), func(c Column) bool { return c.Name == col })
			out.Tables[i] = t
		}
	}
	return out
}

// A reply written by a release without parts reads as its reasoning and then
// its text, after the schema has gained the parts column.
func TestOldRowsReadAsReasoningAndText(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "lembas.db")
	old, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.Sync(ctx, withoutColumn(Current, "messages", "parts"), dir); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(columnNames(t, old, "messages"), "parts") {
		t.Fatal("the old schema has a parts column")
	}
	frodo := addUser(t, old, "frodo")
	// Rows as the old release wrote them, by hand: today's insert names
	// the parts column.
	res, err := old.Write().Exec(`INSERT INTO chats (user_id, title) VALUES (?, 'old')`, frodo)
	if err != nil {
		t.Fatal(err)
	}
	chatID, _ := res.LastInsertId()
	chat := Chat{ID: ids.ChatID(chatID)}
	for _, q := range []string{
		`INSERT INTO messages (chat_id, parent_id, role, content, status) VALUES (?, (SELECT max(id) FROM messages), 'user', 'hello', 'final')`,
		`INSERT INTO messages (chat_id, parent_id, role, content, reasoning, status) VALUES (?, (SELECT max(id) FROM messages), 'assistant', 'The **answer**.', 'Let me think.', 'final')`,
		`INSERT INTO messages (chat_id, parent_id, role, content, reasoning, status) VALUES (?, (SELECT max(id) FROM messages), 'assistant', 'Plain.', '', 'final')`,
		`INSERT INTO messages (chat_id, parent_id, role, content, reasoning, status) VALUES (?, (SELECT max(id) FROM messages), 'assistant', '', 'Only thought.', 'stopped')`,
	} {
		if _, err := old.Write().Exec(q, chat.ID); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Sync(ctx, Current, dir); err != nil {
		t.Fatal(err)
	}
	page, _, err := db.MessagesPage(ctx, frodo, chat.ID, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got [][]Part
	for _, m := range page[1:] {
		got = append(got, m.Parts())
	}
	want := [][]Part{
		{{Kind: PartReasoning, Text: "Let me think."}, {Kind: PartText, Text: "The **answer**."}},
		{{Kind: PartText, Text: "Plain."}},
		{{Kind: PartReasoning, Text: "Only thought."}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parts of old rows:\n got %+v\nwant %+v", got, want)
	}
}

// Every kind of part survives a checkpoint and a read, in order; the text
// and reasoning columns still hold the reply's text and reasoning, so search,
// requests and Continue read them as before.
func TestPartsRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	frodo := addUser(t, db, "frodo")
	chat, _, err := db.CreateChat(ctx, frodo, NewChat{}, Message{Content: "weather?"})
	if err != nil {
		t.Fatal(err)
	}
	asst, err := db.AddMessage(ctx, frodo, chat.ID, Message{Role: RoleAssistant, Status: StatusStreaming})
	if err != nil {
		t.Fatal(err)
	}
	parts := []Part{
		{Kind: PartReasoning, Text: "Need the weather. "},
		{Kind: PartToolCall, Name: "weather", CallID: "c1", Text: `{"city":"Bree"}`},
		{Kind: PartToolResult, CallID: "c1", Text: "<b>rain</b> & wind"},
		{Kind: PartNotice, Text: "The tool took 3 s."},
		{Kind: PartReasoning, Text: "Rain, then."},
		{Kind: PartText, Text: "It rains in **Bree**."},
		{Kind: PartPause, Text: "Run the next tool?"},
		{Kind: PartText, Text: " Take a cloak."},
	}
	if _, err := db.Checkpoint(ctx, []MessageUpdate{{ID: asst.ID, Parts: parts, Status: StatusFinal}}); err != nil {
		t.Fatal(err)
	}
	m, err := db.MessageByID(ctx, frodo, asst.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Parts(); !reflect.DeepEqual(got, parts) {
		t.Errorf("parts read back:\n got %+v\nwant %+v", got, parts)
	}
	if m.Content != "It rains in **Bree**. Take a cloak." || m.Reasoning != "Need the weather. Rain, then." {
		t.Errorf("content %q, reasoning %q", m.Content, m.Reasoning)
	}
	hits, err := db.Search(ctx, frodo, "cloak", 10)
	if err != nil || len(hits) != 1 {
		t.Errorf("search for text of a later part: %d hits (%v)", len(hits), err)
	}

	// A reply of reasoning and text is stored as before: no layout.
	plain := []Part{{Kind: PartReasoning, Text: "Hm."}, {Kind: PartText, Text: "Yes."}}
	if _, _, layout := JoinParts(plain); layout != "" {
		t.Errorf("layout of reasoning+text = %q, want none", layout)
	}
}

func TestSplitPartsReadsWhatDoesNotFitAsDefault(t *testing.T) {
	for _, layout := range []string{`nonsense`, `[{"kind":"text","n":99}]`, `[{"kind":"text","n":1}]`} {
		got := SplitParts("content", "", layout)
		if want := DefaultParts("content", ""); !reflect.DeepEqual(got, want) {
			t.Errorf("layout %s: got %+v, want %+v", layout, got, want)
		}
	}
}

// TestReplyText: the texts on either side of a tool round, a pause or a
// notice read as separate paragraphs (Copy, the replayed turn); reasoning
// between them does not part them, and a text already ending its paragraph
// gets no more breaks.
func TestReplyText(t *testing.T) {
	call := Part{Kind: PartToolCall, Name: "web_search", CallID: "c1", Text: "{}"}
	res := Part{Kind: PartToolResult, Name: "web_search", CallID: "c1", Text: "hits"}
	text := func(s string) Part { return Part{Kind: PartText, Text: s} }
	for _, tc := range []struct {
		name  string
		parts []Part
		want  string
	}{
		{"one text", []Part{text("Hello.")}, "Hello."},
		{"a tool round between", []Part{text("Looking."), call, res, text("It rains.")}, "Looking.\n\nIt rains."},
		{"a line already ended", []Part{text("Looking:\n"), call, res, text("- rain")}, "Looking:\n\n- rain"},
		{"a paragraph already ended", []Part{text("Looking.\n\n"), call, res, text("Rain.")}, "Looking.\n\nRain."},
		{"reasoning between", []Part{text("It rains"), {Kind: PartReasoning, Text: "hm"}, text(" in Bree.")}, "It rains in Bree."},
		{"the round first", []Part{call, res, text("Rain.")}, "Rain."},
		{"a pause between", []Part{text("Go on?"), {Kind: PartPause, Text: "Waiting"}, text("Yes.")}, "Go on?\n\nYes."},
		{"no text", []Part{call, res}, ""},
	} {
		if got := ReplyText(tc.parts); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestReplyTextTrimsTheSpaceBeforeABreak(t *testing.T) {
	got := ReplyText([]Part{{Kind: PartText, Text: "Looking. "}, {Kind: PartNotice, Text: "n"}, {Kind: PartText, Text: "Rain."}})
	if got != "Looking.\n\nRain." {
		t.Errorf("%q", got)
	}
}
