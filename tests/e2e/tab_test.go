package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/llembas/lembas/tests/harness"
)

// tab is one Chromium tab, driven the way a person clicks and types. The
// page drivers (authPage, chatApp, adminUI) embed it and add only what
// their screens need: each used to carry its own copy of these helpers,
// and the copies drifted apart: only one retried a wait that a navigation
// cut short (the others failed the test), only one named its screenshots
// after the subtest (the others' overwrote each other), and their clicks
// took CSS in one and XPath in another.
//
// Every helper reports to t and stops the test on failure, so a scenario
// reads as a list of steps. A subtest that drives the tab sets t to itself
// first, so that a failure is reported where it happened.
type tab struct {
	t    *testing.T
	ctx  context.Context
	pe   *pageErrors
	name string // tells apart the screenshots of two tabs in one test
}

// stepTimeout bounds each action, evaluation and wait, so that a page that
// never gets there fails with a screenshot rather than hanging until go
// test's own timeout kills everything without one.
const stepTimeout = 20 * time.Second

// newTab watches ctx's page errors from now on. ctx is a tab that
// harness.Browser opened and, where the test needs one, already holds a
// session cookie.
func newTab(t *testing.T, ctx context.Context, name string) *tab {
	t.Helper()
	return &tab{t: t, ctx: ctx, pe: watchErrors(t, ctx), name: name}
}

func (p *tab) do(steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.shot("failure")
		p.t.Fatal(err)
	}
}

// evaluate is js, str, bool and await in one; methods cannot be generic.
func evaluate[T any](p *tab, expr string, opts ...chromedp.EvaluateOption) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, opts...))
	if err != nil {
		p.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// js evaluates expr and returns its value as JSON decodes it: numbers are
// float64, arrays []any.
func (p *tab) js(expr string) any {
	p.t.Helper()
	return evaluate[any](p, expr)
}

func (p *tab) str(expr string) string {
	p.t.Helper()
	return evaluate[string](p, expr)
}

func (p *tab) bool(expr string) bool {
	p.t.Helper()
	return evaluate[bool](p, expr)
}

// await evaluates an expression that yields a promise and returns what it
// resolves to, as a string.
func (p *tab) await(expr string) string {
	p.t.Helper()
	return evaluate[string](p, expr, chromedp.EvalAwaitPromise)
}

// waitJS waits for a JavaScript condition, for stepTimeout at most.
func (p *tab) waitJS(cond string) {
	p.t.Helper()
	p.waitJSFor(cond, stepTimeout)
}

// waitJSFor waits for cond for at most d. On failure it saves a screenshot
// and puts the page's text in the message, which is usually enough to see
// what the page showed instead.
func (p *tab) waitJSFor(cond string, d time.Duration) {
	p.t.Helper()
	if err := p.poll(cond, d); err != nil {
		p.shot("failure")
		ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
		defer cancel()
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
		p.t.Fatalf("waiting for %s: %v\npage:\n%.3000s", cond, err, body)
	}
}

// within reports whether cond came true within d, for a test that goes on
// (with a workaround or a softer error) when it does not.
func (p *tab) within(d time.Duration, cond string) bool {
	return p.poll(cond, d) == nil
}

// poll waits until cond is true or d has passed. A navigation (signing in
// reloads the page, a click may follow a link) destroys the document a
// poll runs in, which ends the poll with an error that says nothing about
// cond: it is started again in the new document until the deadline.
//
// cond is evaluated every 50 ms. chromedp polls on animation frames by
// default, and a tab that is hidden (another tab of the profile in front)
// or was frozen draws no frames: a wait on such a tab never saw its
// condition come true however long it had held, and on a busy machine,
// where a woken tab is slow to be shown again, TestCrashedTabIsDropped
// failed every time.
func (p *tab) poll(cond string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		ctx, cancel := context.WithDeadline(p.ctx, deadline)
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](cond, chromedp.WithPollingInterval(50*time.Millisecond)))
		cancel()
		if err == nil || !navigatedAway(err) || !time.Now().Before(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func navigatedAway(err error) bool {
	s := err.Error()
	return strings.Contains(s, "navigated or closed") || strings.Contains(s, "context was destroyed") ||
		strings.Contains(s, "Cannot find context")
}

// shot saves a screenshot of the whole page and logs where. The file is
// named after the test and subtest as well as the tab and the shot, since
// $LEMBAS_ARTIFACTS gathers every test's screenshots in one folder and
// each subtest's "failure" must not replace the last one's.
func (p *tab) shot(name string) {
	parts := []string{strings.ReplaceAll(p.t.Name(), "/", "-")}
	if p.name != "" {
		parts = append(parts, p.name)
	}
	p.shotAs(strings.Join(append(parts, name), "-") + ".png")
}

// shotAs saves a screenshot under exactly file: the README's pictures,
// which `make screenshots` takes again into docs/screenshots.
func (p *tab) shotAs(file string) {
	ctx, cancel := context.WithTimeout(p.ctx, stepTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(90))
	if err != nil {
		p.t.Logf("screenshot %s: %v", file, err)
		return
	}
	f := filepath.Join(harness.ArtifactDir(p.t), file)
	if err := os.WriteFile(f, png, 0o644); err != nil {
		p.t.Error(err)
		return
	}
	p.t.Logf("screenshot %s", f)
}

// Clicks go through harness.Click, never chromedp.Click: it waits until
// the node holds still and is not covered, where chromedp.Click presses
// wherever the node was a moment before.

// click clicks the first visible element css matches.
func (p *tab) click(css string) {
	p.t.Helper()
	p.do(harness.Click(chromedp.CSS(css)))
}

// clickXPath clicks the first visible element an XPath matches, for the
// elements CSS cannot pick out: by their text, or by what they contain.
func (p *tab) clickXPath(xpath string) {
	p.t.Helper()
	p.do(harness.Click(chromedp.Search(xpath)))
}

// clickText clicks the button or link whose text is text inside scope,
// an element's class or id (the page marks its regions either way).
func (p *tab) clickText(scope, text string) {
	p.t.Helper()
	p.clickXPath(fmt.Sprintf(
		`//*[self::button or self::a][normalize-space(.)=%s][ancestor-or-self::*[contains(concat(' ', @class, ' '), ' %s ') or @id=%s]]`,
		xq(text), scope, xq(scope)))
}

// button is the XPath of a button whose text is text inside scope (an
// XPath).
func button(scope, text string) string {
	return fmt.Sprintf(`%s//button[normalize-space(.)=%s]`, scope, xq(text))
}

// xq quotes s as an XPath string literal (s holds no double quote).
func xq(s string) string { return `"` + s + `"` }

// fill replaces the value of the field css matches by typing text, so the
// page sees the key events a person's typing makes.
func (p *tab) fill(css, text string) {
	p.t.Helper()
	p.click(css)
	p.bool(fmt.Sprintf(`document.querySelector(%q).select(), true`, css))
	if text == "" {
		p.do(chromedp.SendKeys(chromedp.CSS(css), kb.Delete))
		return
	}
	p.do(chromedp.SendKeys(chromedp.CSS(css), text))
}

// send types text into the composer and presses Enter, as a person sends a
// message.
func (p *tab) send(text string) {
	p.t.Helper()
	p.do(harness.Click(chromedp.CSS("#composer-input")), chromedp.SendKeys(chromedp.CSS("#composer-input"), text+kb.Enter))
}
