package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/tests/harness"
)

// longChat is one seeded chat: its id and the marker only its last
// (assistant) message contains.
type longChat struct {
	name   string
	id     ids.ChatID
	n      int
	marker string
}

// benchTopics and benchWords make the seeded replies varied but
// deterministic.
var (
	benchTopics = []string{"caching", "the scheduler", "error handling", "the parser", "retries", "logging", "the index", "pagination", "backpressure", "timeouts"}
	benchWords  = strings.Fields(`the a request value handler returns buffer each when slice map channel
		context cancels reader writer goroutine mutex lock field struct pointer interface method call
		result error nil first last batch page cursor offset limit row column query plan cost`)
	benchLangs = []string{"go", "python", "js", "sql", "bash"}
)

func benchSentence(r *rand.Rand) string {
	n := 6 + r.IntN(10)
	w := make([]string, n)
	for i := range w {
		w[i] = benchWords[r.IntN(len(benchWords))]
	}
	s := strings.Join(w, " ")
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

// benchReply is an assistant reply of a few hundred bytes of Markdown: a
// paragraph with inline code and emphasis, a list, a fenced code block and
// a closing line.
func benchReply(r *rand.Rand, i int, marker string) string {
	var b strings.Builder
	topic := benchTopics[r.IntN(len(benchTopics))]
	fmt.Fprintf(&b, "About **%s** (turn %d): %s Use `%s` here. %s\n\n", topic, i, benchSentence(r), benchWords[r.IntN(len(benchWords))], benchSentence(r))
	for k := range 2 + r.IntN(3) {
		if r.IntN(2) == 0 {
			fmt.Fprintf(&b, "%d. %s\n", k+1, benchSentence(r))
		} else {
			fmt.Fprintf(&b, "- *%s*: %s\n", benchWords[r.IntN(len(benchWords))], benchSentence(r))
		}
	}
	lang := benchLangs[r.IntN(len(benchLangs))]
	fmt.Fprintf(&b, "\n```%s\n", lang)
	switch lang {
	case "go":
		fmt.Fprintf(&b, "func step%d(ctx context.Context, n int) (int, error) {\n\tif n > %d {\n\t\treturn 0, ctx.Err()\n\t}\n\treturn n * 2, nil\n}\n", i, r.IntN(100))
	case "python":
		fmt.Fprintf(&b, "def step_%d(items):\n    return [x * %d for x in items if x]\n", i, 2+r.IntN(9))
	case "js":
		fmt.Fprintf(&b, "const step%d = (xs) => xs.filter(Boolean).map((x) => x + %d);\n", i, r.IntN(50))
	case "sql":
		fmt.Fprintf(&b, "SELECT id, title FROM chats\nWHERE updated_at > %d\nORDER BY id DESC LIMIT 50;\n", 1700000000+r.IntN(1e6))
	case "bash":
		fmt.Fprintf(&b, "for f in *.log; do\n  grep -c 'turn %d' \"$f\"\ndone\n", i)
	}
	b.WriteString("```\n\n")
	b.WriteString(benchSentence(r))
	if marker != "" {
		b.WriteString(" " + marker)
	}
	return b.String()
}

// seedLongChats writes the chats into dataDir's database through the store,
// as the app would have stored them, before any server runs on it.
func seedLongChats(b *testing.B, dataDir, baseURL string, sizes map[string]int) []longChat {
	b.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(dataDir, "lembas.db"))
	harness.Must(b, err, "open store")
	defer db.Close()
	_, err = db.Sync(ctx, store.Current, filepath.Join(dataDir, "backups"))
	harness.Must(b, err, "sync schema")
	// The chats belong to the administrator harness.Serve signs in as.
	owner, err := db.EnsureOwner(ctx, harness.AdminUser, "Admin")
	harness.Must(b, err, "owner")
	uid := ids.UserID(owner.ID)
	hash, err := auth.HashPassword(harness.AdminPassword)
	harness.Must(b, err, "hash")
	harness.Must(b, db.SetPassword(ctx, uid, hash), "password")
	conn, err := db.CreateConnection(ctx, store.Actor{User: uid, Admin: true}, store.Connection{Name: "Fake", BaseURL: baseURL, Enabled: true})
	harness.Must(b, err, "create connection")
	// The fake endpoint's model, so the server's refresh keeps it listed.
	_, err = db.SyncModels(ctx, conn.ID, []store.UpstreamModel{{ID: "tiny-qwen35", ContextLength: 16384}})
	harness.Must(b, err, "sync models")
	models, _, err := db.ListModels(ctx, uid, store.ModelFilter{})
	harness.Must(b, err, "list models")
	if len(models) == 0 {
		b.Fatal("no model after SyncModels")
	}
	model := models[0]

	r := rand.New(rand.NewPCG(7, 2000))
	var chats []longChat
	for _, name := range []string{"short", "long"} {
		n := sizes[name]
		c := longChat{name: name, n: n, marker: fmt.Sprintf("END-OF-%s-CHAT-%d", strings.ToUpper(name), r.IntN(1e6))}
		t0 := time.Now()
		for i := range n {
			var m store.Message
			if i%2 == 0 {
				m = store.Message{Role: store.RoleUser, Content: fmt.Sprintf("Question %d about %s: %s", i/2+1, benchTopics[r.IntN(len(benchTopics))], benchSentence(r))}
			} else {
				marker := ""
				if i == n-1 {
					marker = c.marker
				}
				m = store.Message{Role: store.RoleAssistant, Status: store.StatusFinal, ModelLabel: model.UpstreamID, Content: benchReply(r, i, marker)}
			}
			if i == 0 {
				ch, _, err := db.CreateChat(ctx, uid, store.NewChat{Title: fmt.Sprintf("A %s chat (%d messages)", name, n), ModelID: &model.ID}, m)
				harness.Must(b, err, "create chat")
				c.id = ch.ID
				continue
			}
			_, err := db.AddMessage(ctx, uid, c.id, m)
			harness.Must(b, err, "add message")
		}
		b.Logf("seeded %s chat %d: %d messages in %v", name, c.id, n, time.Since(t0).Round(time.Millisecond))
		chats = append(chats, c)
	}
	return chats
}

// settleJS goes to the new-chat screen and resolves once no transcript is
// left on the page and a moment has passed, so the next open starts from an
// idle page as a click in the sidebar would.
const settleJS = `(async () => {
  location.hash = '#/';
  const t = performance.now();
  while (document.querySelector('article.msg') || !document.querySelector('#composer-input')) {
    if (performance.now() - t > 20000) throw new Error('the new-chat screen did not appear');
    await new Promise((r) => setTimeout(r, 10));
  }
  await new Promise((r) => requestAnimationFrame(() => r()));
  await new Promise((r) => requestAnimationFrame(() => r()));
  await new Promise((r) => setTimeout(r, 250));
  return true;
})()`

// openJS opens a chat by its hash and resolves with the milliseconds from
// the navigation until its last message is in the DOM (the last article.msg,
// an assistant one holding the marker) and painted: two animation frames
// after a mutation first makes it so.
const openJS = `(async (hash, marker) => {
  const done = () => {
    const all = document.querySelectorAll('article.msg');
    const last = all[all.length - 1];
    return !!last && last.classList.contains('msg-assistant') && last.textContent.includes(marker);
  };
  const t0 = performance.now();
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => { mo.disconnect(); reject(new Error('timed out waiting for ' + marker)); }, 20000);
    const mo = new MutationObserver(() => {
      if (done()) { mo.disconnect(); clearTimeout(timer); resolve(); }
    });
    mo.observe(document.body, { childList: true, subtree: true, characterData: true });
    location.hash = hash;
  });
  await new Promise((r) => requestAnimationFrame(() => r()));
  await new Promise((r) => requestAnimationFrame(() => r()));
  return performance.now() - t0;
})(%q, %q)`

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// BenchmarkLongChatOpen reports how much longer opening a chat of 2,000
// messages takes than one of 20, in Chromium against the real server
// (long_chat_open_ratio, target ≤ 2). Each iteration opens each chat five
// times, alternating, from the new-chat screen.
func BenchmarkLongChatOpen(b *testing.B) {
	harness.Require(b, "chromium")
	bin := harness.Build(b, "", "CGO_ENABLED=0")
	llm := fakellm.New(b)
	dir := b.TempDir()
	chats := seedLongChats(b, dir, llm.URL(), map[string]int{"short": 20, "long": 2000})
	_, base := harness.Serve(b, bin, dir)

	ctx := harness.Browser(b)
	harness.BrowserAdmin(b, ctx, base)
	step := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		b.Helper()
		c, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(c, actions...); err != nil {
			b.Fatalf("%s: %v", what, err)
		}
	}
	eval := func(expr string) float64 {
		b.Helper()
		c, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		v, err := chromedp.Run(c, chromedp.Evaluate[float64](expr, chromedp.EvalAwaitPromise))
		if err != nil {
			b.Fatalf("%.80s…: %v", expr, err)
		}
		return v
	}
	settle := func() {
		b.Helper()
		c, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if _, err := chromedp.Run(c, chromedp.Evaluate[bool](settleJS, chromedp.EvalAwaitPromise)); err != nil {
			b.Fatalf("back to the new-chat screen: %v", err)
		}
	}
	step("open the app", chromedp.EmulateViewport(1280, 800), chromedp.Navigate(base+"/"))
	{
		c, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := chromedp.Run(c, chromedp.Poll[bool](`!!document.querySelector('#composer-input')`))
		cancel()
		harness.Must(b, err, "wait for the app")
	}

	samples := map[string][]float64{}
	for b.Loop() {
		for range 5 {
			for _, c := range chats {
				settle()
				ms := eval(fmt.Sprintf(openJS, fmt.Sprintf("#/chat/%d", c.id), c.marker))
				samples[c.name] = append(samples[c.name], ms)
			}
		}
	}
	for _, c := range chats {
		// What an open put on the page (checked after the timed opens).
		settle()
		eval(fmt.Sprintf(openJS, fmt.Sprintf("#/chat/%d", c.id), c.marker))
		shown := eval(`document.querySelectorAll('article.msg').length`)
		code := eval(`document.querySelectorAll('article.msg-assistant pre').length`)
		b.Logf("%s chat (%d messages, %.0f on the page, %.0f code blocks) opens, ms: %.1f", c.name, c.n, shown, code, samples[c.name])
	}
	short, long := median(samples["short"]), median(samples["long"])
	b.ReportMetric(short, "short_ms")
	b.ReportMetric(long, "long_ms")
	b.ReportMetric(long/short, "long_chat_open_ratio")
}
