package e2e

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/tests/harness"
)

// TestLibraryHostileNamesInChromium: a member whose display name, base
// name, document name and document text are HTML shares the base; the
// reader's Knowledge pages and a search over it show them as text, and
// nothing in them runs.
func TestLibraryHostileNamesInChromium(t *testing.T) {
	a := serveChatApp(t)
	a.open(t, "")
	const (
		who  = `<img src=x onerror="window.__ran='owner'">Mallory`
		base = `<svg onload="window.__ran='base'"></svg>Papers`
		name = `<img src=y onerror="window.__ran='doc'">.txt`
		text = `<script>window.__ran='text'</script><img src=z onerror="window.__ran='snippet'"> the flowerpot <b>is</b> here`
	)
	var mal struct{ ID int64 }
	harness.API(t, a.base, "Admin.CreateUser", &mal, map[string]any{"username": "mallory", "displayName": who, "password": "not-a-nice-person"})
	mc := harness.Login(t, a.base, "mallory", "not-a-nice-person")
	var b struct{ ID int64 }
	harness.APIAs(t, mc, a.base, "Library.CreateBase", &b, map[string]any{"name": base, "description": text})
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("base", fmt.Sprint(b.ID))
	fw, _ := mw.CreateFormFile("file", name)
	fw.Write([]byte(text + "\n"))
	mw.Close()
	resp, err := mc.Post(a.base+"/api/library/documents", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("upload: %d", resp.StatusCode)
	}
	var me struct{ ID int64 }
	harness.API(t, a.base, "Account.Me", &me)
	harness.APIAs(t, mc, a.base, "Library.SetShares", nil, map[string]any{"kind": "base", "id": b.ID, "to": []map[string]any{{"userId": me.ID}}})

	a.do(chromedp.Navigate(a.base+"/#/library/knowledge"), chromedp.Reload())
	a.waitJS(`(document.querySelector('#kb-shared')?.innerText || '').includes('Papers')`)
	a.click(`#kb-shared .model-row-main`)
	a.waitJS(`!!document.querySelector('#kb-docs .kb-doc-name')`)
	a.fill(`#kb-search`, "flowerpot")
	a.waitJS(`(document.querySelector('#kb-hits mark')?.textContent || '').toLowerCase() === 'flowerpot'`)
	main := a.str(`document.querySelector('#main').innerText`)
	for _, want := range []string{"Mallory", "Papers", `onerror="window.__ran='doc'">.txt`} {
		if !strings.Contains(main, want) {
			t.Errorf("the page does not show %q as text:\n%s", want, main)
		}
	}
	if got := a.str(`String(window.__ran || '') + [...document.querySelectorAll('#main img, #main svg:not(.icon):not([aria-hidden]), #main script, #main [onerror], #main [onload]')].map((e) => e.outerHTML).join(' ')`); got != "" {
		t.Errorf("hostile HTML became elements or ran: %s", got)
	}
	a.shot("knowledge-hostile-names")
}
