package e2e

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/llembas/lembas/tests/harness"
)

// After one person signs out, the next person on the same browser does not
// get the first one's image from the browser's cache.
func TestSignedOutFilesLeaveTheCacheInChromium(t *testing.T) {
	harness.Require(t, "chromium")
	bin := harness.Build(t, "", "CGO_ENABLED=0")
	_, base := harness.Serve(t, bin, t.TempDir())
	admin := harness.AdminClient(t, base)
	harness.APIAs(t, admin, base, "Admin.CreateUser", nil, map[string]any{
		"username": "frodo", "displayName": "Frodo", "password": "the ring is mine, precious", "admin": false})
	frodo := harness.Login(t, base, "frodo", "the ring is mine, precious")

	png, err := os.ReadFile(filepath.Join(harness.RepoRoot(), "backend", "attach", "testdata", "opaque.png"))
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file", "ring.png")
	fw.Write(png)
	mw.Close()
	req, _ := http.NewRequest("POST", base+"/api/files", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := frodo.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var up struct{ URL string }
	json.NewDecoder(resp.Body).Decode(&up)
	resp.Body.Close()
	if resp.StatusCode != 200 || up.URL == "" {
		t.Fatalf("upload: %d", resp.StatusCode)
	}

	p := openAuthPage(t, "cache", 1280, 860)
	harness.BrowserSession(t, p.ctx, base, frodo)
	p.do(chromedp.Navigate(base + "/"))
	p.waitJS(appShown)
	fetchStatus := `fetch(` + strconv.Quote(up.URL) + `).then((r) => String(r.status))`
	if got := p.await(fetchStatus); got != "200" {
		t.Fatalf("frodo's own file: %s", got)
	}
	if got := p.await(`fetch('/api/auth/logout', {method: 'POST'}).then((r) => String(r.status))`); got != "200" {
		t.Fatalf("sign-out: %s", got)
	}
	p.do(chromedp.Navigate(base + "/"))
	p.signIn("admin", harness.AdminPassword)
	p.waitJS(appShown)
	if got := p.await(fetchStatus); got != "404" {
		t.Errorf("the next person on the browser got frodo's file: %s, want 404", got)
	}
}
