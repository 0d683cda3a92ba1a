package store

import (
	"context"
	"strings"
	"testing"
)

func TestPlainSnippet(t *testing.T) {
	o, c := string(markOpen), string(markClose)
	for _, tc := range []struct{ in, want string }{
		{"Here:\n```go\nfunc " + o + "main" + c + "() {}\n```", "Here: func " + o + "main" + c + "() {}"},
		{"$$\\int_0^1 x^2\\,dx = \\frac{1}{3}$$ is the " + o + "area" + c, "∫_0^1 x^2 dx = 1/3 is the " + o + "area" + c},
		{"## A **" + o + "bold" + c + "** _claim_ and `code`", "A " + o + "bold" + c + " claim and code"},
		{"> quoted\n> - item [link " + o + "text" + c + "](http://x.example/a_b)", "quoted item link " + o + "text" + c},
		{"| a | b |\n|---|:-:|\n| 1 | 2 |", "a b 1 2"},
		{"costs $5 and 2 * 3 in snake_case, \\(\\alpha\\) and \\*stars\\*", "costs $5 and 2 * 3 in snake_case, α and *stars*"},
		{"inline $x_i$ and ~~gone~~ and ***", "inline x_i and gone and"},
		{"$\\" + o + "int" + c + "_0^1$ and \\" + o + "frac" + c + "{a}{b}", o + "∫" + c + "_0^1 and " + o + c + "{a}{b}"},
	} {
		if got := plainSnippet(tc.in); got != tc.want {
			t.Errorf("plainSnippet(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// Search results show what a reader sees, not the Markdown and LaTeX the
// reply was written in, and stay escaped with only <mark> as markup.
func TestSearchSnippetsArePlainText(t *testing.T) {
	ctx := context.Background()
	db := syncedTemp(t)
	frodo := addUser(t, db, "frodo")
	_, _, err := db.CreateChat(ctx, frodo, NewChat{Title: "maths"},
		Message{Content: "Here is the **integral**:\n\n$$\\int_0^1 x^2\\,dx$$\n\nand in Go:\n\n```go\nfmt.Println(\"<b>integral</b>\")\n```"})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"integral", "integ*", "in*"} {
		hits, err := db.Search(ctx, frodo, q, 10)
		if err != nil || len(hits) != 1 {
			t.Fatalf("%s: %+v %v", q, hits, err)
		}
		s := hits[0].Snippet
		for _, raw := range []string{"```", "**", "$$", `\int`, `\,`} {
			if strings.Contains(s, raw) {
				t.Errorf("%s: the snippet shows %q: %s", q, raw, s)
			}
		}
		if !strings.Contains(s, "<mark>integral</mark>") || !strings.Contains(s, "∫") || !strings.Contains(s, "&lt;b&gt;") {
			t.Errorf("%s: snippet %q", q, s)
		}
		if strings.Count(s, "<") != strings.Count(s, "<mark>")+strings.Count(s, "</mark>") {
			t.Errorf("%s: snippet has tags other than mark: %q", q, s)
		}
	}
}
