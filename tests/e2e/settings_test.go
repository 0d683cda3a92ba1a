package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/tests/harness"
)

// adminUI is a CGO-off server open in Chromium, driven the way a user
// clicks. Every API response the page receives is kept, so a test can check
// that no secret ever reaches the browser.
type adminUI struct {
	*tab
	base string
	resp *apiResponses
	// stopped is shared by the copies step makes.
	stopped *bool
}

// newAdminUI starts a server, runs setup against it (API calls only), and
// opens the app at a viewport of w×h.
func newAdminUI(t *testing.T, w, h int64, setup func(base string)) *adminUI {
	harness.Require(t, "chromium")
	bin := harness.Build(t, "", "CGO_ENABLED=0")
	_, base := harness.Serve(t, bin, t.TempDir())
	if setup != nil {
		setup(base)
	}
	ctx := harness.Browser(t)
	harness.BrowserAdmin(t, ctx, base)
	u := &adminUI{tab: newTab(t, ctx, "settings"), base: base, stopped: new(bool)}
	u.resp = captureAPIResponses(t, u.ctx)
	u.do(chromedp.EmulateViewport(w, h), chromedp.Navigate(base+"/"))
	return u
}

// step runs f as a subtest with u reporting to it. The steps of a
// scenario build on each other: once one stops on a fatal error, the
// later ones are skipped.
func (u *adminUI) step(t *testing.T, name string, f func(t *testing.T, u *adminUI)) {
	t.Run(name, func(t *testing.T) {
		if *u.stopped {
			t.Skip("an earlier step stopped")
		}
		// A copy of the tab too: the subtest's t must not outlive it
		// in u, which the scenario goes on using.
		c, tc := *u, *u.tab
		tc.t = t
		c.tab = &tc
		done := false
		defer func() {
			if !done {
				*u.stopped = true
			}
		}()
		f(t, &c)
		done = true
	})
}

// chooseOption picks the option whose text is label in the <select> css.
func (u *adminUI) chooseOption(css, label string) {
	u.t.Helper()
	ok := u.js(fmt.Sprintf(`(() => { const s = document.querySelector(%q);
		const o = [...s.options].find((o) => o.textContent.trim() === %q); if (!o) return false;
		s.focus(); s.value = o.value; return s.dispatchEvent(new Event('change', {bubbles: true})); })()`, css, label))
	if ok != true {
		u.t.Fatalf("no option %q in %s", label, css)
	}
}

// apiResponses keeps the bodies of the /api/ calls the page made.
type apiResponses struct {
	mu      sync.Mutex
	pending map[network.RequestID]string
	bodies  map[string][]string // url → bodies
	wg      sync.WaitGroup
}

func captureAPIResponses(t *testing.T, ctx context.Context) *apiResponses {
	r := &apiResponses{pending: map[network.RequestID]string{}, bodies: map[string][]string{}}
	err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *network.EventResponseReceived:
			// The event stream never finishes; avatars are images.
			if e.Response != nil && strings.Contains(e.Response.URL, "/api/") &&
				!strings.Contains(e.Response.URL, "/api/events") && !strings.Contains(e.Response.URL, "/avatar") {
				r.mu.Lock()
				r.pending[e.RequestID] = e.Response.URL
				r.mu.Unlock()
			}
		case *network.EventLoadingFinished:
			r.mu.Lock()
			url, ok := r.pending[e.RequestID]
			delete(r.pending, e.RequestID)
			if ok {
				r.wg.Add(1)
			}
			r.mu.Unlock()
			if !ok {
				return
			}
			// A command may not run inside the listener.
			go func() {
				defer r.wg.Done()
				res, err := chromedp.Call(ctx, network.GetResponseBody, network.GetResponseBodyParams{RequestID: e.RequestID})
				if err != nil {
					return
				}
				r.mu.Lock()
				r.bodies[url] = append(r.bodies[url], string(res.Body))
				r.mu.Unlock()
			}()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// containing returns the URLs of responses that contain s, and how many
// responses were seen in all.
func (r *apiResponses) containing(s string) (urls []string, seen int) {
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	for url, bodies := range r.bodies {
		for _, b := range bodies {
			seen++
			if strings.Contains(b, s) {
				urls = append(urls, url)
			}
		}
	}
	return urls, seen
}

func (r *apiResponses) seen(method string) bool {
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	for url := range r.bodies {
		if strings.HasSuffix(url, "/api/"+method) {
			return true
		}
	}
	return false
}

// waitLLM waits until the fake endpoint has received n requests.
func waitLLM(t *testing.T, llm *fakellm.Server, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := llm.WaitRequests(ctx, n); err != nil {
		t.Fatal(err)
	}
}

// ---------- 1. Connections ----------

func TestSettingsConnections(t *testing.T) {
	const (
		key       = "sk-test-PLAINTEXT-9f8e7d6c5b4a3210"
		hdrName   = "X-Lembas-Extra"
		hdrSecret = "hdr-PLAINTEXT-31415926"
	)
	llm := fakellm.New(t)
	u := newAdminUI(t, 1280, 900, nil)

	u.step(t, "first run offers a manual connection", func(t *testing.T, u *adminUI) {
		u.waitJS(`!!document.querySelector('.firstrun') && !document.querySelector('.firstrun .loading-line')`)
		u.waitJS(`document.querySelector('.firstrun').innerText.includes('No local server answered on the usual ports')`)
		if note := u.str(`document.querySelector('#composer-note')?.innerText ?? ''`); !strings.Contains(note, "Add a connection") {
			t.Errorf("composer note: %q", note)
		}
		u.shot("firstrun")
		u.clickXPath(`//section[contains(@class,'firstrun')]//a[normalize-space(.)="Add a connection manually"]`)
		// As long as any other step may take: a loaded machine can overrun
		// a shorter wait, and the error would then blame the link.
		if !u.within(stepTimeout, `location.hash === '#/settings/connections/new' && !!document.querySelector('#conn-new-name')`) {
			// chat.js onTranscriptClick calls preventDefault on every
			// a[href^="#"] inside .chat-scroll (meant for in-message
			// anchors); the first-run card is inside it.
			t.Errorf("the first-run link %q does nothing (hash %q)", "Add a connection manually", u.str(`location.hash`))
			u.click(`a.sidebar-link[href^="#/settings"]`)
			u.clickXPath(button(`//section[@aria-labelledby='connections-title']`, "Add connection"))
			u.waitJS(`!!document.querySelector('#conn-new-name')`)
		}
	})

	u.step(t, "add with a key and a header, test, save", func(t *testing.T, u *adminUI) {
		u.fill("#conn-new-name", "Fake LLM")
		u.fill("#conn-new-url", llm.URL())
		u.fill("#conn-new-key", key)
		u.clickXPath(button(`//form[contains(@class,'conn-form')]`, "Add header"))
		u.fill(".conn-form .header-row input:not([type=password])", hdrName)
		u.fill(".conn-form .header-row input[type=password]", hdrSecret)

		n := len(llm.Requests())
		u.clickXPath(button(`//form[contains(@class,'conn-form')]`, "Test connection"))
		u.waitJS(`!!document.querySelector('.conn-form .success-note, .conn-form .error-note')`)
		note := u.str(`document.querySelector('.conn-form [role=status]')?.innerText ?? document.querySelector('.conn-form .error-note').innerText`)
		if !strings.HasPrefix(note, "Connected in ") || !strings.Contains(note, "1 model available") {
			t.Fatalf("test result: %q", note)
		}
		if c := strings.Count(note, "model available"); c != 1 {
			t.Errorf("test result says the model count %d times: %q", c, note)
		}
		u.shot("tested")
		reqs := llm.Requests()
		if len(reqs) <= n {
			t.Fatal("the test reached no endpoint")
		}
		r := reqs[len(reqs)-1]
		if r.Path != "/v1/models" || r.Header.Get("Authorization") != "Bearer "+key || r.Header.Get(hdrName) != hdrSecret {
			t.Errorf("draft test request: %s %s, Authorization %q, %s %q", r.Method, r.Path, r.Header.Get("Authorization"), hdrName, r.Header.Get(hdrName))
		}

		u.clickXPath(`//form[contains(@class,'conn-form')]//button[@type='submit']`)
		u.waitJS(`!document.querySelector('.conn-form') && document.querySelectorAll('.conn-row').length === 1`)
		u.waitJS(`location.hash === '#/settings/connections'`)
		u.waitJS(`[...document.querySelectorAll('.toast')].some((t) => t.innerText.includes('Connection added.'))`)
		u.waitJS(`document.querySelector('.conn-row').innerText.includes('1 model')`)
		badge := u.str(`[...document.querySelectorAll('.conn-row .badge')].map((b) => b.innerText).find((t) => t.startsWith('Key')) ?? ''`)
		if badge == "" || strings.Contains(badge, key) || !strings.Contains(badge, key[len(key)-4:]) {
			t.Errorf("key badge %q: want the key masked", badge)
		}
		u.shot("saved")
	})

	var connID int
	u.step(t, "no secret reaches the page", func(t *testing.T, u *adminUI) {
		dom := u.str(`document.documentElement.outerHTML`)
		for _, s := range []string{key, hdrSecret} {
			if strings.Contains(dom, s) {
				t.Errorf("the page's HTML holds the plaintext %q", s)
			}
		}
		var raw json.RawMessage
		harness.API(t, u.base, "Connections.List", &raw)
		var list []struct {
			ID      int
			APIKey  string `json:"apiKey"`
			Headers map[string]string
		}
		if err := json.Unmarshal(raw, &list); err != nil || len(list) != 1 {
			t.Fatalf("Connections.List: %s (%v)", raw, err)
		}
		connID = list[0].ID
		for _, s := range []string{key, hdrSecret} {
			if strings.Contains(string(raw), s) {
				t.Errorf("Connections.List holds the plaintext %q: %s", s, raw)
			}
		}
		if list[0].APIKey == "" || list[0].Headers[hdrName] == "" {
			t.Errorf("Connections.List lost the secrets: %s", raw)
		}
		if !u.resp.seen("Connections.List") || !u.resp.seen("Connections.Create") {
			t.Fatal("the page's API responses were not captured")
		}
		for _, s := range []string{key, hdrSecret} {
			if urls, seen := u.resp.containing(s); len(urls) > 0 {
				t.Errorf("%d of %d API responses the page received hold the plaintext %q: %v", len(urls), seen, s, urls)
			}
		}
	})

	u.step(t, "edit without touching the key keeps it", func(t *testing.T, u *adminUI) {
		u.clickXPath(`//li[contains(@class,'conn-row')]//button[normalize-space(.)="Edit"]`)
		form := fmt.Sprintf("#conn-%d", connID)
		u.waitJS(fmt.Sprintf(`!!document.querySelector('%s-name')`, form))
		if ph := u.str(fmt.Sprintf(`document.querySelector('%s-key').placeholder`, form)); strings.Contains(ph, key) || ph == "" {
			t.Errorf("key placeholder %q", ph)
		}
		u.fill(form+"-name", "Fake LLM renamed")
		u.clickXPath(`//form[contains(@class,'conn-form')]//button[@type='submit']`)
		u.waitJS(`!document.querySelector('.conn-form') && document.querySelector('.conn-row .conn-name')?.innerText === 'Fake LLM renamed'`)

		n := len(llm.Requests())
		u.clickXPath(`//li[contains(@class,'conn-row')]//button[normalize-space(.)="Test"]`)
		waitLLM(t, llm, n+1)
		r := llm.Requests()[n]
		if got := r.Header.Get("Authorization"); got != "Bearer "+key {
			t.Errorf("after the edit the endpoint got Authorization %q", got)
		}
		if got := r.Header.Get(hdrName); got != hdrSecret {
			t.Errorf("after the edit the endpoint got %s %q", hdrName, got)
		}
		u.waitJS(`document.querySelector('.conn-row .success-note')?.innerText.startsWith('Connected')`)
		if urls, _ := u.resp.containing(key); len(urls) > 0 {
			t.Errorf("API responses hold the plaintext key: %v", urls)
		}
	})

	u.step(t, "bad base URL is refused", func(t *testing.T, u *adminUI) {
		u.clickXPath(button(`//section[@aria-labelledby='connections-title']`, "Add connection"))
		u.waitJS(`!!document.querySelector('#conn-new-name')`)
		u.fill("#conn-new-name", "Broken")
		u.fill("#conn-new-url", "not a url")
		u.clickXPath(`//form[contains(@class,'conn-form')]//button[@type='submit']`)
		// The form does its own checking (novalidate), so Save shows the
		// app's message in plain words rather than the browser's bubble.
		u.waitJS(`/http:\/\/ or https:\/\//.test(document.querySelector('.conn-form .error-note')?.innerText ?? '')`)
		u.shot("bad-url-save")
		// The form's own check still answers through "Test connection".
		u.clickXPath(button(`//form[contains(@class,'conn-form')]`, "Test connection"))
		u.waitJS(`document.querySelector('.conn-form .error-note')?.innerText.includes('must start with http:// or https://') ?? false`)
		u.shot("bad-url")
		var list []map[string]any
		harness.API(t, u.base, "Connections.List", &list)
		if len(list) != 1 {
			t.Errorf("%d connections after the bad URL, want 1", len(list))
		}
		u.clickXPath(button(`//form[contains(@class,'conn-form')]`, "Cancel"))
		u.waitJS(`!document.querySelector('.conn-form')`)
	})

	u.step(t, "wrong key in plain words", func(t *testing.T, u *adminUI) {
		llm.SetModels(fakellm.Status(http.StatusUnauthorized, ""))
		u.clickXPath(`//li[contains(@class,'conn-row')]//button[normalize-space(.)="Test"]`)
		u.waitJS(`document.querySelector('.conn-row .error-note[role=status]')?.innerText.includes('rejected the API key') ?? false`)
		note := u.str(`document.querySelector('.conn-row .error-note[role=status]').innerText`)
		if !strings.HasPrefix(note, "Could not connect: ") || strings.Contains(note, "{") || strings.Contains(note, "invalid_api_key") {
			t.Errorf("wrong-key message: %q", note)
		}
		// The same in the form, with a new key typed in.
		u.clickXPath(`//li[contains(@class,'conn-row')]//button[normalize-space(.)="Edit"]`)
		form := fmt.Sprintf("#conn-%d", connID)
		u.fill(form+"-key", "sk-wrong-key")
		u.clickXPath(button(`//form[contains(@class,'conn-form')]`, "Test connection"))
		u.waitJS(`document.querySelector('.conn-form .error-note[role=status]')?.innerText.includes('rejected the API key') ?? false`)
		u.shot("wrong-key")
		u.clickXPath(button(`//form[contains(@class,'conn-form')]`, "Cancel"))
		u.waitJS(`!document.querySelector('.conn-form')`)
	})
	u.pe.check(t)
}

// ---------- 2. Models admin ----------

// modelsBody is an OpenAI model list of n models named test-model-01….
func modelsBody(n int) string {
	var items []string
	for i := 1; i <= n; i++ {
		items = append(items, fmt.Sprintf(`{"id":"test-model-%02d","object":"model","owned_by":"fake"}`, i))
	}
	return `{"object":"list","data":[` + strings.Join(items, ",") + `]}`
}

// tinyPNG writes a 16×16 PNG and returns its path.
func tinyPNG(t *testing.T) string {
	img := image.NewRGBA(image.Rect(0, 0, 16, 16))
	for y := range 16 {
		for x := range 16 {
			img.Set(x, y, color.RGBA{uint8(x * 16), 120, uint8(y * 16), 255})
		}
	}
	p := filepath.Join(t.TempDir(), "avatar.png")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

const modelRowNames = `[...document.querySelectorAll('.model-row .model-row-name')].map((e) => e.innerText)`

func modelRow(name string) string {
	return fmt.Sprintf(`//li[contains(@class,'model-row')][.//span[contains(@class,'model-row-name') and normalize-space(.)=%s]]`, xq(name))
}

func TestSettingsModels(t *testing.T) {
	llm := fakellm.New(t)
	llm.SetModels(fakellm.Status(http.StatusOK, modelsBody(60)))
	u := newAdminUI(t, 1280, 900, func(base string) {
		var c struct{ ModelCount int }
		harness.API(t, base, "Connections.Create", &c, map[string]any{"name": "Fake", "baseUrl": llm.URL()})
		if c.ModelCount != 60 {
			t.Fatalf("connection lists %d models, want 60", c.ModelCount)
		}
	})
	u.waitJS(`!!document.querySelector('#composer-input')`)
	u.click(`a.sidebar-link[href^="#/settings"]`)
	u.clickXPath(`//nav[contains(@class,'tabs')]//a[normalize-space(.)="Models"]`)

	u.step(t, "paging", func(t *testing.T, u *adminUI) {
		u.waitJS(`document.querySelectorAll('.model-row').length === 50`)
		u.waitJS(`document.querySelector('.pager-text')?.innerText === '1–50 of 60'`)
		u.shot("page1")
		u.clickXPath(button(`//nav[contains(@class,'pager')]`, "Next"))
		u.waitJS(`document.querySelector('.pager-text')?.innerText === '51–60 of 60' && document.querySelectorAll('.model-row').length === 10`)
		if first := u.str(modelRowNames + `[0]`); first != "test-model-51" {
			t.Errorf("page 2 starts with %q", first)
		}
		u.clickXPath(button(`//nav[contains(@class,'pager')]`, "Previous"))
		u.waitJS(`document.querySelector('.pager-text')?.innerText === '1–50 of 60' && ` + modelRowNames + `[0] === 'test-model-01'`)
	})

	u.step(t, "search", func(t *testing.T, u *adminUI) {
		u.fill("#models-query", "model-5")
		u.waitJS(`document.querySelectorAll('.model-row').length === 10`)
		if bad := u.js(modelRowNames + `.filter((n) => !n.includes('model-5'))`); len(bad.([]any)) != 0 {
			t.Errorf("search shows %v", bad)
		}
		if u.js(`!!document.querySelector('.pager')`) == true {
			t.Error("pager shown for 10 results")
		}
		u.shot("search")
		u.fill("#models-query", "no such model")
		u.waitJS(`document.querySelector('#main .empty-state')?.innerText.includes('No model matches.') ?? false`)
		u.fill("#models-query", "")
		u.waitJS(`document.querySelectorAll('.model-row').length === 50`)
	})

	u.step(t, "rename", func(t *testing.T, u *adminUI) {
		u.clickXPath(modelRow("test-model-03") + `//button[contains(@class,'model-row-main')]`)
		u.waitJS(`document.querySelector('.model-detail .card-title')?.innerText === 'test-model-03'`)
		id := u.str(`document.querySelector('.model-detail input[id$="-name"]').id`)
		u.fill("#"+id, "Gandalf the Grey")
		u.clickXPath(`//form[contains(@class,'model-detail')]//button[@type='submit']`)
		u.waitJS(modelRowNames + `[2] === 'Gandalf the Grey'`)
		u.waitJS(`document.querySelector('.model-detail .card-title')?.innerText === 'Gandalf the Grey'`)
	})

	u.step(t, "disable", func(t *testing.T, u *adminUI) {
		u.clickXPath(modelRow("test-model-05") + `//label[contains(@class,'switch')]`)
		u.waitJS(fmt.Sprintf(`(() => { const r = document.evaluate(%q, document, null, 9, null).singleNodeValue;
			return !!r && r.classList.contains('is-disabled') && !r.querySelector('.switch input').checked; })()`, modelRow("test-model-05")))
		var page struct{ Items []struct{ Enabled bool } }
		harness.API(t, u.base, "Models.List", &page, map[string]any{"query": "test-model-05"})
		if len(page.Items) != 1 || page.Items[0].Enabled {
			t.Errorf("test-model-05 after the switch: %+v", page.Items)
		}
	})

	u.step(t, "avatar", func(t *testing.T, u *adminUI) {
		u.clickXPath(modelRow("test-model-01") + `//button[contains(@class,'model-row-main')]`)
		u.waitJS(`document.querySelector('.model-detail .card-title')?.innerText === 'test-model-01'`)
		// Edits typed before the image is chosen are not saved yet; the
		// image must not throw them away.
		desc := u.str(`document.querySelector('.model-detail textarea[id$="-desc"]').id`)
		u.fill("#"+desc, "Typed before the image")
		u.do(chromedp.SetUploadFiles(chromedp.CSS(`.model-detail input[type=file]`), []string{tinyPNG(t)}))
		u.waitJS(`[...document.querySelectorAll('.toast')].some((t) => t.innerText.includes('Image saved.'))`)
		u.waitJS(`(() => { const i = document.querySelector('.model-detail img.avatar'); return !!i && i.complete && i.naturalWidth === 16; })()`)
		if v := u.str(`document.querySelector('.model-detail textarea[id$="-desc"]')?.value ?? ''`); v != "Typed before the image" {
			t.Errorf("after the image was saved the description reads %q, want what was typed", v)
		}
		u.waitJS(fmt.Sprintf(`(() => { const r = document.evaluate(%q, document, null, 9, null).singleNodeValue;
			const i = r && r.querySelector('img.avatar'); return !!i && i.complete && i.naturalWidth === 16; })()`, modelRow("test-model-01")))
		u.waitJS(`!!document.querySelector('.model-detail') && [...document.querySelectorAll('.model-detail button')].some((b) => b.innerText === 'Remove image')`)
		u.shot("models")
		// The typed description is still the form's to save.
		u.clickXPath(`//form[contains(@class,'model-detail')]//button[@type='submit']`)
		// Not the toast: the rename's "Model saved." may still be showing.
		waitUntil(t, "test-model-01 to have the typed description", func() bool {
			var page struct {
				Items []struct{ Description string }
			}
			harness.API(t, u.base, "Models.List", &page, map[string]any{"query": "test-model-01"})
			return len(page.Items) == 1 && page.Items[0].Description == "Typed before the image"
		})
	})

	u.step(t, "move up and down", func(t *testing.T, u *adminUI) {
		rows := func(a, b string) string {
			return fmt.Sprintf(`%s[2] === %q && %s[3] === %q`, modelRowNames, a, modelRowNames, b)
		}
		u.waitJS(rows("Gandalf the Grey", "test-model-04"))
		u.click(`button[aria-label="Move test-model-04 up"]`)
		u.waitJS(rows("test-model-04", "Gandalf the Grey"))
		// The moved row keeps the focus, on the same button, for the next press.
		u.waitJS(`document.activeElement?.getAttribute('aria-label') === 'Move test-model-04 up'`)
		var page struct{ Items []struct{ UpstreamID string } }
		harness.API(t, u.base, "Models.List", &page, map[string]any{"limit": 4})
		if len(page.Items) != 4 || page.Items[2].UpstreamID != "test-model-04" || page.Items[3].UpstreamID != "test-model-03" {
			t.Errorf("stored order after Move up: %+v", page.Items)
		}
		u.click(`button[aria-label="Move test-model-04 down"]`)
		u.waitJS(rows("Gandalf the Grey", "test-model-04"))
		u.waitJS(`document.activeElement?.getAttribute('aria-label') === 'Move test-model-04 down'`)
		if u.js(`document.querySelector('button[aria-label="Move test-model-01 up"]').disabled`) != true {
			t.Error("the first row's Move up is enabled")
		}
	})

	u.step(t, "picker follows the admin", func(t *testing.T, u *adminUI) {
		u.click(`.sidebar-new`)
		u.waitJS(`location.hash === '#/' && !!document.querySelector('.picker-trigger')`)
		u.waitJS(`document.querySelector('.picker-trigger')?.getAttribute('aria-label') === 'Model: test-model-01'`)
		u.waitJS(`(() => { const i = document.querySelector('.picker-trigger img.avatar'); return !!i && i.complete && i.naturalWidth === 16; })()`)
		u.click(`.picker-trigger`)
		u.waitJS(`document.querySelectorAll('.picker-option').length > 0`)
		names := u.js(`[...document.querySelectorAll('.picker-option .picker-option-name')].map((e) => e.innerText)`).([]any)
		var want []any
		for i := 1; i <= 60; i++ {
			switch i {
			case 3:
				want = append(want, "Gandalf the Grey")
			case 5:
			default:
				want = append(want, fmt.Sprintf("test-model-%02d", i))
			}
		}
		if fmt.Sprint(names) != fmt.Sprint(want) {
			t.Errorf("picker shows %d models:\n%v\nwant %d:\n%v", len(names), names, len(want), want)
		}
		if v := u.js(`(() => { const i = document.querySelector('.picker-option img.avatar'); return !!i && i.complete && i.naturalWidth === 16; })()`); v != true {
			t.Error("the first picker option has no loaded <img> avatar")
		}
		if n := u.js(`document.querySelectorAll('.picker-option img').length`); n != float64(1) {
			t.Errorf("%v picker options have an <img>, want 1", n)
		}
		u.shot("picker")
		u.do(chromedp.KeyEvent(kb.Escape))
		u.waitJS(`!document.querySelector('.picker-option')`)
	})
	u.pe.check(t)
}

// ---------- 3. Folders and trash ----------

// chatRow is the XPath of the sidebar row of a chat titled title.
func chatRow(title string) string {
	return fmt.Sprintf(`//li[contains(@class,'chat-row')][.//span[contains(@class,'chat-link-title') and normalize-space(.)=%s]]`, xq(title))
}

// rowAction opens a row's menu (rowXPath) and runs one item.
func (u *adminUI) rowAction(rowXPath, item string) {
	u.t.Helper()
	u.clickXPath(rowXPath + `//button[contains(@class,'row-menu')]`)
	u.clickXPath(fmt.Sprintf(`//div[@role='menu']//button[@role='menuitem' and normalize-space(.)=%s]`, xq(item)))
}

// noAutoTitles is a default reply that refuses the server's title requests,
// so chats keep their provisional titles (the start of the first message)
// instead of the fixture's text, which would be the same for every chat.
func noAutoTitles() fakellm.Reply {
	return fakellm.Func(func(r fakellm.Request) fakellm.Reply {
		if strings.Contains(string(r.Body), "You write titles") {
			return fakellm.Status(http.StatusInternalServerError, "")
		}
		return fakellm.Fixture("stream-no-reasoning")
	})
}

// seedChats creates one chat per message through the API (setup) and waits
// for their replies; it returns their titles, newest first.
func seedChats(t *testing.T, base string, msgs ...string) []string {
	var models []struct{ ID int }
	harness.API(t, base, "Models.Picker", &models)
	if len(models) == 0 {
		t.Fatal("no models")
	}
	for _, m := range msgs {
		harness.API(t, base, "Chats.Send", nil, map[string]any{"modelId": models[0].ID, "content": m})
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var chats []struct {
			Title     string
			Streaming bool
		}
		harness.API(t, base, "Chats.List", &chats)
		busy := false
		for _, c := range chats {
			busy = busy || c.Streaming
		}
		if len(chats) == len(msgs) && !busy {
			titles := make([]string, len(chats))
			for i, c := range chats {
				titles[i] = c.Title
			}
			return titles
		}
		if time.Now().After(deadline) {
			t.Fatalf("seeded chats never settled: %+v", chats)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestSettingsFoldersAndTrash(t *testing.T) {
	llm := fakellm.New(t)
	llm.SetDefault(noAutoTitles())
	var titles []string
	u := newAdminUI(t, 1280, 900, func(base string) {
		harness.API(t, base, "Connections.Create", nil, map[string]any{"name": "Fake", "baseUrl": llm.URL()})
		titles = seedChats(t, base, "Plan the journey to Rivendell", "Count the rings of power")
	})
	for _, ti := range titles {
		if ti == "" || strings.ContainsAny(ti, `"`) {
			t.Fatalf("seeded chat titles %q", titles)
		}
	}
	inFolder, loose := titles[0], titles[1]
	u.waitJS(`document.querySelectorAll('.chat-row').length === 2`)

	u.step(t, "create folder", func(t *testing.T, u *adminUI) {
		u.click(`button[aria-label="New folder"]`)
		u.waitJS(`!!document.querySelector('dialog[open] #dialog-field')`)
		u.do(chromedp.SendKeys(chromedp.CSS(`#dialog-field`), "Quests"))
		u.clickXPath(`//dialog//button[@type='submit']`)
		u.waitJS(`!document.querySelector('dialog[open]') && document.querySelector('.folder .folder-name')?.innerText === 'Quests'`)
	})

	u.step(t, "move a chat into it", func(t *testing.T, u *adminUI) {
		u.rowAction(chatRow(inFolder), "Move to folder…")
		u.waitJS(`!!document.querySelector('dialog[open] select#dialog-field')`)
		u.chooseOption("#dialog-field", "Quests")
		u.clickXPath(`//dialog//button[@type='submit']`)
		u.waitJS(fmt.Sprintf(`(() => { const f = document.querySelector('.folder');
			return !!f && f.querySelector('.folder-count').innerText === '1' && f.querySelector('.folder-chats').innerText.includes(%q); })()`, inFolder))
		var chats []struct {
			Title    string
			FolderID int `json:"folderId"`
		}
		harness.API(t, u.base, "Chats.List", &chats)
		for _, c := range chats {
			if (c.Title == inFolder) != (c.FolderID != 0) {
				t.Errorf("chat %q has folder %d", c.Title, c.FolderID)
			}
		}
	})

	u.step(t, "rename folder", func(t *testing.T, u *adminUI) {
		u.rowAction(`//li[contains(@class,'folder')]//div[contains(@class,'folder-head')]`, "Rename")
		u.waitJS(`document.querySelector('dialog[open] #dialog-field')?.value === 'Quests'`)
		u.fill("#dialog-field", "Fellowship")
		u.clickXPath(`//dialog//button[@type='submit']`)
		u.waitJS(`document.querySelector('.folder .folder-name')?.innerText === 'Fellowship'`)
		var folders []struct{ Name string }
		harness.API(t, u.base, "Folders.List", &folders)
		if len(folders) != 1 || folders[0].Name != "Fellowship" {
			t.Errorf("folders: %+v", folders)
		}
		u.shot("folder")
	})

	u.step(t, "delete and undo", func(t *testing.T, u *adminUI) {
		u.rowAction(chatRow(loose), "Delete")
		u.waitJS(fmt.Sprintf(`!document.evaluate(%q, document, null, 9, null).singleNodeValue`, chatRow(loose)))
		u.clickXPath(`//div[contains(@class,'toast')][.//span[normalize-space(.)="Chat deleted"]]//button[normalize-space(.)="Undo"]`)
		u.waitJS(fmt.Sprintf(`!!document.evaluate(%q, document, null, 9, null).singleNodeValue`, chatRow(loose)))
		var trash []any
		harness.API(t, u.base, "Chats.ListTrash", &trash)
		if len(trash) != 0 {
			t.Errorf("trash after Undo: %v", trash)
		}
	})

	u.step(t, "delete and restore from the trash", func(t *testing.T, u *adminUI) {
		u.rowAction(chatRow(loose), "Delete")
		u.waitJS(fmt.Sprintf(`!document.evaluate(%q, document, null, 9, null).singleNodeValue`, chatRow(loose)))
		u.click(`a.sidebar-link[href="#/trash"]`)
		u.waitJS(fmt.Sprintf(`location.hash === '#/trash' && [...document.querySelectorAll('.trash-row .trash-title')].map((e) => e.innerText).join('|') === %q`, loose))
		u.shot("trash")
		u.clickXPath(`//li[contains(@class,'trash-row')]//button[normalize-space(.)="Restore"]`)
		u.waitJS(`document.querySelector('#main .empty-state')?.innerText.includes('The trash is empty.') ?? false`)
		u.waitJS(fmt.Sprintf(`!!document.evaluate(%q, document, null, 9, null).singleNodeValue`, chatRow(loose)))
	})

	u.step(t, "empty the trash", func(t *testing.T, u *adminUI) {
		// Both chats go to the trash from the sidebar, while it is shown.
		u.rowAction(chatRow(inFolder), "Delete")
		u.waitJS(`document.querySelectorAll('.trash-row').length === 1`)
		u.rowAction(chatRow(loose), "Delete")
		u.waitJS(`document.querySelectorAll('.trash-row').length === 2`)
		u.clickXPath(`//div[contains(@class,'page-head')]//button[normalize-space(.)="Empty trash"]`)
		u.waitJS(`document.querySelector('dialog[open] .dialog-body')?.innerText.includes('All 2 chats') ?? false`)
		u.clickXPath(`//dialog//button[@type='submit']`)
		u.waitJS(`document.querySelector('#main .empty-state')?.innerText.includes('The trash is empty.') ?? false`)
		u.waitJS(`document.querySelectorAll('.chat-row').length === 0`)
		u.shot("emptied")
		var trash, chats []any
		harness.API(t, u.base, "Chats.ListTrash", &trash)
		harness.API(t, u.base, "Chats.List", &chats)
		if len(trash) != 0 || len(chats) != 0 {
			t.Errorf("after emptying: trash %v, chats %v", trash, chats)
		}
		// The folder stays, empty.
		if got := u.str(`document.querySelector('.folder .folder-count')?.innerText ?? ''`); got != "0" {
			t.Errorf("folder count %q", got)
		}
	})
	u.pe.check(t)
}

// ---------- 4. Phone ----------

func TestSettingsPhoneChat(t *testing.T) {
	llm := fakellm.New(t)
	llm.SetDefault(noAutoTitles())
	var title string
	u := newAdminUI(t, 390, 844, func(base string) {
		harness.API(t, base, "Connections.Create", nil, map[string]any{"name": "Fake", "baseUrl": llm.URL()})
		title = seedChats(t, base, "Which road leads to Bree")[0]
	})
	sidebarIn := `(() => { const r = document.querySelector('#sidebar').getBoundingClientRect(); return r.left >= -1 && r.right > 100 && r.right <= innerWidth + 1; })()`
	sidebarOut := `(() => { const r = document.querySelector('#sidebar').getBoundingClientRect(); return r.right <= 1 || r.left >= innerWidth; })()`
	u.waitJS(`!!document.querySelector('#composer-input')`)
	u.waitJS(sidebarOut)

	u.click(`#sidebar-toggle`)
	u.waitJS(sidebarIn)
	u.waitJS(fmt.Sprintf(`!!document.evaluate(%q, document, null, 9, null).singleNodeValue`, chatRow(title)))
	u.shot("sidebar")
	u.clickXPath(chatRow(title) + `//a[contains(@class,'chat-link')]`)
	u.waitJS(`location.hash.startsWith('#/chat/')`)
	u.waitJS(sidebarOut)
	u.waitJS(`document.querySelector('.msg-user')?.innerText.includes('Which road leads to Bree') ?? false`)

	const reply = "Take the East Road, past the Brandywine Bridge."
	llm.Enqueue(fakellm.Stream("Take the East Road, ", "past the Brandywine Bridge."))
	u.send("And after Bree?")
	u.waitJS(`[...document.querySelectorAll('.msg-user')].pop()?.innerText.includes('And after Bree?') ?? false`)
	u.waitJS(`(() => { const m = [...document.querySelectorAll('.msg-assistant')].pop(); return !!m && !m.classList.contains('is-streaming') && m.innerText.includes(` + fmt.Sprintf("%q", reply) + `); })()`)
	// The view follows the reply to the bottom; give it a frame to settle.
	u.waitJS(`(() => { const m = [...document.querySelectorAll('.msg-assistant')].pop().getBoundingClientRect();
		const c = document.querySelector('#composer-input').getBoundingClientRect();
		return m.top >= 0 && m.top < c.top; })()`)

	var geo struct {
		InnerW, InnerH, ScrollW, BodyScrollW float64
		Composer, Reply                      struct{ Top, Bottom, Left, Right float64 }
	}
	raw := u.str(`JSON.stringify((() => {
		const box = (el) => { const r = el.getBoundingClientRect(); return {Top: r.top, Bottom: r.bottom, Left: r.left, Right: r.right}; };
		return {InnerW: innerWidth, InnerH: innerHeight, ScrollW: document.documentElement.scrollWidth, BodyScrollW: document.body.scrollWidth,
			Composer: box(document.querySelector('#composer-input')), Reply: box([...document.querySelectorAll('.msg-assistant')].pop())};
	})())`)
	if err := json.Unmarshal([]byte(raw), &geo); err != nil {
		t.Fatal(err)
	}
	if geo.ScrollW > geo.InnerW+1 || geo.BodyScrollW > geo.InnerW+1 {
		t.Errorf("sideways scroll: scrollWidth %v / body %v, viewport %v", geo.ScrollW, geo.BodyScrollW, geo.InnerW)
	}
	if c := geo.Composer; c.Top < 0 || c.Bottom > geo.InnerH || c.Left < 0 || c.Right > geo.InnerW {
		t.Errorf("composer off screen: %+v in %vx%v", c, geo.InnerW, geo.InnerH)
	}
	if r := geo.Reply; r.Left < 0 || r.Right > geo.InnerW+1 || r.Top >= geo.Composer.Top || r.Bottom <= 0 {
		t.Errorf("reply not visible: %+v, composer top %v", r, geo.Composer.Top)
	}
	if n := u.js(`[...document.querySelectorAll('#main *')].filter((e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.right > innerWidth + 1; }).length`); n != float64(0) {
		t.Errorf("%v elements stick out to the right", n)
	}
	u.shot("chat")
	u.pe.check(t)
}

// seedHousehold gives an instance what every settings page has something
// to show for: a second person (Samwise) and a group; with llm, a
// connection to it too. It returns the person's and the group's ids, for
// the pages of one of them.
func seedHousehold(t *testing.T, base string, llm *fakellm.Server) (userID, groupID int) {
	t.Helper()
	if llm != nil {
		harness.API(t, base, "Connections.Create", nil, map[string]any{"name": "Workshop server", "baseUrl": llm.URL()})
	}
	var nu struct{ ID int }
	harness.API(t, base, "Admin.CreateUser", &nu, map[string]any{"username": "samwise", "displayName": "Samwise Gamgee", "password": "potatoes-and-rope"})
	var g struct{ ID int }
	harness.API(t, base, "Admin.CreateGroup", &g, "Gardeners", []string{"chat.params"})
	return nu.ID, g.ID
}
