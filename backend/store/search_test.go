package store

import (
	"context"
	"strings"
	"testing"
)

func TestFTSQuery(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"   ", ""},
		{"!!! ... ---", ""},
		{`"`, ""},
		{`""`, ""},
		{"*", ""},
		{"lembas", `"lembas"`},
		{"Lembas Bread", `"Lembas" "Bread"`},
		{"AND OR NOT", `"AND" "OR" "NOT"`},
		{"NEAR(a b)", `"NEAR a" "b"`},
		{"-x", `"x"`},
		{"col:x", `"col x"`},
		{"content:secret ^start", `"content secret" "start"`},
		{"node.js", `"node js"`},
		{"ab*", `"ab"*`},
		{"ab* cd", `"ab" "cd"`},
		{"cd ab*", `"cd" "ab"*`},
		{"a*b", `"a b"`},
		{`"second breakfast"`, `"second breakfast"`},
		{`"second breakfast"*`, `"second breakfast"*`},
		{`say "mellon and enter`, `"say" "mellon" "and" "enter"`},
		{`"a "b" c"`, `"a" "b" "c"`},
		{`x"y`, `"x" "y"`},
		{`foo"; DROP TABLE chats; --`, `"foo" "DROP" "TABLE" "chats"`},
		{"Éowyn naïve", `"Éowyn" "naïve"`},
		{"日本語", `"日本語"`},
		{"a\uE000b", `"a b"`},
	}
	for _, tt := range tests {
		if got := ftsQuery(tt.in); got != tt.want {
			t.Errorf("ftsQuery(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
	if got := ftsQuery(strings.Repeat("w ", 100)); strings.Count(got, `"w"`) != maxTerms {
		t.Errorf("terms not capped: %s", got)
	}
	// A phrase is one term of many words, each a doclist walk: the words
	// of the whole query are capped too.
	for _, q := range []string{strings.Repeat("w.", 1000), `"` + strings.Repeat("w ", 1000) + `"`, strings.Repeat("w.w.w ", 100)} {
		if got := ftsQuery(q); len(strings.Fields(got)) > maxWords || got == "" {
			t.Errorf("words not capped: %d words in %.80s…", len(strings.Fields(got)), got)
		}
	}
	for q, want := range map[string]bool{"ab*": true, "éa*": true, `"second br"*`: true, "ab* cd": false, "abc*": false, "ab": false, `"ab"`: false} {
		if got := parseQuery(q).shortPrefix; got != want {
			t.Errorf("parseQuery(%q).shortPrefix = %v, want %v", q, got, want)
		}
	}
}

func TestMarkHTML(t *testing.T) {
	o, c := string(markOpen), string(markClose)
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"a " + o + "b" + c + " <c>", "a <mark>b</mark> &lt;c&gt;"},
		{o + "x" + o + "y" + c + c, "<mark>xy</mark>"},
		{c + "x" + o + "y", "x<mark>y</mark>"},
		{`"&'`, "&#34;&amp;&#39;"},
	}
	for _, tt := range tests {
		if got := markHTML(tt.in); got != tt.want {
			t.Errorf("markHTML(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSearchHostileQueriesNeverError(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	frodo := addUser(t, db, "frodo")
	db.CreateChat(ctx, frodo, NewChat{Title: "and or not"}, Message{Content: "and or not near col x the quick brown fox"})
	for _, q := range []string{
		"AND OR NOT", "AND", "OR", "NOT x", `"`, `""`, `"""`, `"unterminated`, "*", "**", "a*", "x *",
		"NEAR(", "NEAR(a b, 2)", "NEAR/2", "-x", "col:x", "content:x", "{content}: x", "^x", "x + y",
		"(x", "x)", "'", "''", "\\", "%", "_", "\x00", "\uE000", "a\uE001b", "💍", "ǅ", "\u0301", "a \u0301*", "\u0301\u0301 x",
		`" OR 1=1 --`, "x AND", "OR x", "title:x", "rank:1", "messages_fts:x",
	} {
		if _, err := db.Search(ctx, frodo, q, 10); err != nil {
			t.Errorf("Search(%q): %v", q, err)
		}
	}
	for _, q := range []string{"", "   ", "!!!", `"`, "*"} {
		if hits, err := db.Search(ctx, frodo, q, 10); len(hits) != 0 || err != nil {
			t.Errorf("Search(%q) = %v, %v; want nothing", q, hits, err)
		}
	}
	// Operators are words: "not" matches the word, not a negation.
	if hits, _ := db.Search(ctx, frodo, "NOT", 10); len(hits) != 2 {
		t.Errorf("NOT as a word: %d hits, want the title and the message", len(hits))
	}
	if hits, _ := db.Search(ctx, frodo, "col:x", 10); len(hits) != 1 {
		t.Errorf("col:x as a phrase: %d hits, want 1", len(hits))
	}
}

func TestSearchSnippetsAreEscaped(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	frodo := addUser(t, db, "frodo")
	chat, msg, err := db.CreateChat(ctx, frodo, NewChat{Title: "<b>Lembas</b> & co"},
		Message{Content: `Try <script>alert("lembas")</script> and <img src=x onerror=alert(1)> lembas`})
	if err != nil {
		t.Fatal(err)
	}
	hits, err := db.Search(ctx, frodo, "lembas", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 {
		t.Fatalf("hits %+v, want the title and the message", hits)
	}
	title, m := hits[0], hits[1]
	if title.MessageID != 0 || title.ChatID != chat.ID || title.Role != "" || title.ChatTitle != "<b>Lembas</b> & co" {
		t.Errorf("title hit %+v", title)
	}
	if want := "&lt;b&gt;<mark>Lembas</mark>&lt;/b&gt; &amp; co"; title.Snippet != want {
		t.Errorf("title snippet %q, want %q", title.Snippet, want)
	}
	if m.MessageID != msg.ID || m.Role != RoleUser || m.ChatTitle != chat.Title || m.CreatedAt != msg.CreatedAt {
		t.Errorf("message hit %+v", m)
	}
	if strings.Contains(m.Snippet, "<script") || strings.Contains(m.Snippet, "<img") ||
		!strings.Contains(m.Snippet, "&lt;script&gt;") || strings.Count(m.Snippet, "<mark>lembas</mark>") != 2 {
		t.Errorf("message snippet not escaped or not marked: %q", m.Snippet)
	}
	if strings.Count(m.Snippet, "<") != strings.Count(m.Snippet, "<mark>")+strings.Count(m.Snippet, "</mark>") {
		t.Errorf("snippet has tags other than mark: %q", m.Snippet)
	}
}

func TestSearchPhrasePrefixAndLimit(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	frodo := addUser(t, db, "frodo")
	chat, _, _ := db.CreateChat(ctx, frodo, NewChat{Title: "meals"}, Message{Content: "second breakfast then elevenses"})
	db.AddMessage(ctx, frodo, chat.ID, Message{Role: RoleAssistant, Content: "breakfast, second helping"})
	for range 30 {
		db.AddMessage(ctx, frodo, chat.ID, Message{Content: "elevenses again"})
	}
	if got := messageIDs(t, db, frodo, `"second breakfast"`); len(got) != 1 {
		t.Errorf("phrase: %d hits, want 1", len(got))
	}
	if got := messageIDs(t, db, frodo, `second breakfast`); len(got) != 2 {
		t.Errorf("two terms: %d hits, want 2", len(got))
	}
	if got := messageIDs(t, db, frodo, `break*`); len(got) != 2 {
		t.Errorf("prefix: %d hits, want 2", len(got))
	}
	if got := messageIDs(t, db, frodo, `break`); len(got) != 0 {
		t.Errorf("no prefix without a star: %d hits", len(got))
	}
	hits, _ := db.Search(ctx, frodo, "elevenses", 10)
	if len(hits) != 10 {
		t.Errorf("limit: %d hits, want 10", len(hits))
	}
	// Equally relevant hits come newest first.
	for i := 1; i < len(hits); i++ {
		if hits[i].MessageID > hits[i-1].MessageID {
			t.Errorf("hit %d (%d) is newer than hit %d (%d)", i, hits[i].MessageID, i-1, hits[i-1].MessageID)
		}
	}
	// Title hits take at most half the page.
	for range 12 {
		db.CreateChat(ctx, frodo, NewChat{Title: "elevenses plans"}, Message{Content: "tea"})
	}
	hits, _ = db.Search(ctx, frodo, "elevenses", 10)
	titles := 0
	for _, h := range hits {
		if h.MessageID == 0 {
			titles++
		}
	}
	if len(hits) != 10 || titles != 5 {
		t.Errorf("%d hits with %d titles, want 10 with 5", len(hits), titles)
	}
}
