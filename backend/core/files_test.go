package core

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// Attachments and voice over a real socket, as signed-in users of a
// --serve handler, with the real files of backend/attach/testdata.

// newFilesWeb is newWeb with the voice guard opened for the loopback
// address only when allowLoopback is set.
func newFilesWeb(t *testing.T, allowLoopback bool) *web {
	t.Helper()
	return newWeb(t, webOptions{audioLoopback: allowLoopback})
}

func testdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "attach", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// upload posts one file as the multipart field "file" named name.
func (w *web) upload(c *http.Client, name string, data []byte) (int, api.AttachmentView, string) {
	w.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	// RFC 2231 encoding carries any byte (a NUL, quotes, line breaks),
	// which a quoted filename cannot.
	hdr := textproto.MIMEHeader{}
	hdr.Set("Content-Disposition", `form-data; name="file"; filename*=UTF-8''`+url.PathEscape(name))
	hdr.Set("Content-Type", "application/octet-stream")
	fw, err := mw.CreatePart(hdr)
	if err != nil {
		w.t.Fatal(err)
	}
	fw.Write(data)
	mw.Close()
	code, b := w.postForm(c, "/api/files", &body, mw)
	var v api.AttachmentView
	json.Unmarshal([]byte(b), &v)
	return code, v, b
}

// postForm posts a finished multipart body to path and returns the
// status and the answer.
func (w *web) postForm(c *http.Client, path string, body *bytes.Buffer, mw *multipart.Writer) (int, string) {
	w.t.Helper()
	req, _ := http.NewRequest("POST", w.srv.URL+path, body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := c.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (w *web) fetch(c *http.Client, method, path string) (*http.Response, []byte) {
	w.t.Helper()
	req, _ := http.NewRequest(method, w.srv.URL+path, nil)
	resp, err := c.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// twoUsers signs up the admin (first account) and a second, approved user.
func twoUsers(t *testing.T, w *web) (admin, other *http.Client, otherID ids.UserID) {
	admin, other = newClient(), newClient()
	if code, body := w.signUp(admin, "frodo", "a-long-enough-password"); code != 200 {
		t.Fatalf("sign up: %d %s", code, body)
	}
	u, err := w.c.Accounts.Create(context.Background(), auth.SignUpRequest{Username: "sam", Password: "another-long-password"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if code, body := w.login(other, "sam", "another-long-password"); code != 200 {
		t.Fatalf("login: %d %s", code, body)
	}
	return admin, other, ids.UserID(u.ID)
}

func TestUploadEachKindAndServeSafely(t *testing.T) {
	w := newFilesWeb(t, false)
	admin, other, _ := twoUsers(t, w)

	for _, tc := range []struct {
		file, name  string
		kind, mime  string
		disposition string // inline or attachment
		refused     string // a word of the refusal, when refused
		note        string
	}{
		{file: "opaque.png", name: "screenshot.png", kind: "image", mime: "image/png", disposition: "inline"},
		{file: "alpha.png", name: "alpha.png", kind: "image", mime: "image/png", disposition: "inline"},
		{file: "rotated.jpg", name: "holiday.jpg", kind: "image", mime: "image/jpeg", disposition: "inline"},
		{file: "anim.gif", name: "anim.gif", kind: "image", disposition: "inline"},
		{file: "photo.webp", name: "photo.webp", kind: "image", mime: "image/jpeg", disposition: "inline"},
		{file: "text.pdf", name: "report.pdf", kind: "pdf", mime: "application/pdf", disposition: "attachment"},
		{file: "scanned.pdf", name: "scan.pdf", kind: "pdf", mime: "application/pdf", disposition: "attachment", note: "no text"},
		{file: "notreally.png", name: "notreally.png", kind: "text", disposition: "attachment"},
		{file: "page.html", name: "page.html", kind: "text", disposition: "attachment"},
		{file: "latin1.txt", name: "menu.txt", kind: "text", disposition: "attachment"},
		{file: "bomb.png", name: "bomb.png", refused: "pixels"},
		{file: "malformed.pdf", name: "broken.pdf", refused: "damaged"},
		{file: "blob.bin", name: "blob.bin", refused: "binary"},
		{file: "photo.heic", name: "photo.heic", refused: "HEIC"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			code, v, body := w.upload(admin, tc.name, testdata(t, tc.file))
			if tc.refused != "" {
				if code != http.StatusBadRequest || !strings.Contains(strings.ToLower(body), strings.ToLower(tc.refused)) {
					t.Fatalf("upload %s: %d %s, want 400 mentioning %q", tc.file, code, body, tc.refused)
				}
				return
			}
			if code != 200 {
				t.Fatalf("upload %s: %d %s", tc.file, code, body)
			}
			if v.Kind != tc.kind || (tc.mime != "" && v.MIME != tc.mime) || v.Name != tc.name {
				t.Fatalf("upload %s = %+v, want kind %s mime %s", tc.file, v, tc.kind, tc.mime)
			}
			if tc.note != "" && !strings.Contains(strings.ToLower(v.Note), tc.note) {
				t.Errorf("note = %q, want it to mention %q", v.Note, tc.note)
			}
			resp, data := w.fetch(admin, "GET", v.URL)
			if resp.StatusCode != 200 || int64(len(data)) != v.Size {
				t.Fatalf("GET %s: %d, %d bytes (want %d)", v.URL, resp.StatusCode, len(data), v.Size)
			}
			h := resp.Header
			if h.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("no nosniff: %v", h)
			}
			if got := h.Get("Content-Type"); got != v.MIME {
				t.Errorf("Content-Type %q, want the stored %q", got, v.MIME)
			}
			disp, params, err := mime.ParseMediaType(h.Get("Content-Disposition"))
			if err != nil || disp != tc.disposition || params["filename"] != tc.name {
				t.Errorf("Content-Disposition %q (%v %v), want %s naming %q", h.Get("Content-Disposition"), disp, params, tc.disposition, tc.name)
			}
			if tc.file == "page.html" {
				if strings.Contains(h.Get("Content-Type"), "html") || !strings.Contains(h.Get("Content-Security-Policy"), "sandbox") {
					t.Errorf("an HTML upload is served as %q with CSP %q", h.Get("Content-Type"), h.Get("Content-Security-Policy"))
				}
			}
			if tc.file == "rotated.jpg" && (v.Width != 80 || v.Height != 120) {
				t.Errorf("rotated.jpg stored %dx%d, want 80x120 (EXIF orientation applied)", v.Width, v.Height)
			}
			if tc.kind == "image" && bytes.Contains(data, []byte("LeakyCam")) {
				t.Errorf("EXIF survived in the stored image")
			}
			// Another user: not found for reading and deleting.
			if resp, _ := w.fetch(other, "GET", v.URL); resp.StatusCode != http.StatusNotFound {
				t.Errorf("another user GETs %s: %d, want 404", v.URL, resp.StatusCode)
			}
			if resp, _ := w.fetch(other, "DELETE", v.URL); resp.StatusCode != http.StatusNotFound {
				t.Errorf("another user DELETEs %s: %d, want 404", v.URL, resp.StatusCode)
			}
			// Stored under a random name, 0600, in a 0700 directory.
			a, err := w.c.DB.AttachmentByID(context.Background(), ids.UserID(w.c.Owner.ID), v.ID)
			if err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(filepath.Join(w.c.Files.Dir(), a.StorageName))
			if err != nil || st.Mode().Perm() != 0o600 || strings.Contains(a.StorageName, ".") {
				t.Errorf("stored file %q: %v %v", a.StorageName, st, err)
			}
			if dst, _ := os.Stat(w.c.Files.Dir()); dst.Mode().Perm() != 0o700 {
				t.Errorf("files directory mode %v", dst.Mode().Perm())
			}
		})
	}
	// Signed out: 401.
	if resp, _ := w.fetch(newClient(), "GET", "/api/files/1"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("signed-out GET: %d", resp.StatusCode)
	}
	if code, _, _ := w.upload(newClient(), "a.txt", []byte("hi")); code != http.StatusUnauthorized {
		t.Errorf("signed-out upload: %d", code)
	}
}

func TestUploadNamesNeverBecomePaths(t *testing.T) {
	w := newFilesWeb(t, false)
	admin, _, _ := twoUsers(t, w)
	long := strings.Repeat("ünïcödé-名前-", 40) + ".txt"
	for _, tc := range []struct{ name, want string }{
		{"../../etc/passwd", "passwd"},
		{`..\..\windows\win.ini`, "win.ini"},
		{"evil\x00.txt.exe", "evil.txt.exe"},
		{"\u202etxt.exe", "txt.exe"},
		{"Grüße 世界.txt", "Grüße 世界.txt"},
		{"..", "file"},
		{long, ""},
	} {
		code, v, body := w.upload(admin, tc.name, []byte("plain text content\n"))
		if code != 200 {
			t.Fatalf("upload %q: %d %s", tc.name, code, body)
		}
		if tc.want != "" && v.Name != tc.want {
			t.Errorf("name %q shown as %q, want %q", tc.name, v.Name, tc.want)
		}
		if len(v.Name) > 255 || !strings.HasSuffix(v.Name, ".txt") && tc.name == long {
			t.Errorf("long name shown as %q (%d bytes)", v.Name, len(v.Name))
		}
		resp, _ := w.fetch(admin, "GET", v.URL)
		_, params, err := mime.ParseMediaType(resp.Header.Get("Content-Disposition"))
		if err != nil || params["filename"] != v.Name {
			t.Errorf("Content-Disposition for %q: %q (%v), filename %q", tc.name, resp.Header.Get("Content-Disposition"), err, params["filename"])
		}
	}
	// Nothing but storage names in the files directory, nothing outside.
	entries, _ := os.ReadDir(w.c.Files.Dir())
	for _, e := range entries {
		if len(e.Name()) != 32 {
			t.Errorf("unexpected file %q in the files directory", e.Name())
		}
	}
	if _, err := os.Stat(filepath.Join(w.c.Config.DataDir, "passwd")); err == nil {
		t.Error("a file named after the upload appeared in the data directory")
	}
}

func TestUploadSizeCap(t *testing.T) {
	w := newFilesWeb(t, false)
	admin, _, _ := twoUsers(t, w)
	max := w.c.Files.Limits().MaxBytes
	code, _, body := w.upload(admin, "big.txt", bytes.Repeat([]byte("a"), int(max)+1))
	if code != http.StatusBadRequest || !strings.Contains(body, "MB") {
		t.Fatalf("an upload over the limit: %d %.200s", code, body)
	}
	code, body = w.call(admin, "Files.Limits")
	if code != 200 || !strings.Contains(body, fmt.Sprintf(`"maxBytes":%d`, max)) || !strings.Contains(body, `"allowed":true`) {
		t.Fatalf("Files.Limits: %d %s", code, body)
	}
}

// The request a model gets: images only for vision models; documents as
// named blocks; a forged attachment id refuses the whole send.
func TestAttachmentsReachTheModel(t *testing.T) {
	w := newFilesWeb(t, false)
	admin, other, otherID := twoUsers(t, w)
	llm := fakellm.New(t)
	code, body := w.call(admin, "Connections.Create", map[string]any{"name": "fake", "baseUrl": llm.URL()})
	if code != 200 {
		t.Fatalf("connection: %d %s", code, body)
	}
	models, _, _ := w.c.DB.ListModels(context.Background(), ids.UserID(w.c.Owner.ID), store.ModelFilter{})
	if len(models) == 0 {
		t.Fatal("no model from the fake")
	}
	model := models[0]
	vision := func(on bool) {
		t.Helper()
		if code, body := w.call(admin, "Models.Update", model.ID, map[string]any{"capabilities": map[string]bool{"vision": on}}); code != 200 {
			t.Fatalf("mark vision: %d %s", code, body)
		}
	}
	// send marks the model as seeing images or not, then sends.
	send := func(seeing bool, content string, files ...ids.AttachmentID) api.TurnView {
		t.Helper()
		vision(seeing)
		code, body := w.call(admin, "Chats.Send", map[string]any{"modelId": model.ID, "content": content, "attachments": files})
		if code != 200 {
			t.Fatalf("send: %d %s", code, body)
		}
		var turn api.TurnView
		json.Unmarshal([]byte(body), &turn)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := w.c.Gen.Wait(ctx, turn.Chat.ID); err != nil {
			t.Fatal(err)
		}
		return turn
	}
	lastRequest := func() map[string]any {
		reqs := llm.Requests()
		for i := len(reqs) - 1; i >= 0; i-- {
			if reqs[i].Path == "/v1/chat/completions" && reqs[i].JSON["stream"] == true {
				return reqs[i].JSON
			}
		}
		t.Fatal("no chat request")
		return nil
	}
	userContent := func(req map[string]any) any {
		msgs := req["messages"].([]any)
		for i := len(msgs) - 1; i >= 0; i-- {
			m := msgs[i].(map[string]any)
			if m["role"] == "user" {
				return m["content"]
			}
		}
		return nil
	}

	// A plain turn stays a plain string.
	send(true, "just text")
	if _, ok := userContent(lastRequest()).(string); !ok {
		t.Fatalf("a text-only turn to a vision model is not a string: %#v", userContent(lastRequest()))
	}

	upload := func(c *http.Client, file, name string) ids.AttachmentID {
		t.Helper()
		code, v, body := w.upload(c, name, testdata(t, file))
		if code != 200 {
			t.Fatalf("upload: %d %s", code, body)
		}
		return v.ID
	}
	img, pdf := upload(admin, "opaque.png", "diagram.png"), upload(admin, "text.pdf", "report.pdf")
	turn := send(false, "what is this?", img, pdf)
	if len(turn.User.Attachments) != 2 || turn.User.Attachments[0].Name != "diagram.png" || turn.User.Attachments[1].Kind != "pdf" {
		t.Fatalf("the turn's attachments: %+v", turn.User.Attachments)
	}
	content := userContent(lastRequest())
	s, ok := content.(string)
	if !ok {
		t.Fatalf("a non-vision model got content parts: %#v", content)
	}
	if strings.Contains(s, "data:image") || !strings.Contains(s, `<document name="report.pdf">`) ||
		!strings.Contains(s, "cannot see images") || !strings.HasSuffix(s, "what is this?") {
		t.Fatalf("non-vision user turn:\n%s", s)
	}

	img2, scan := upload(admin, "rotated.jpg", "photo.jpg"), upload(admin, "scanned.pdf", "scan.pdf")
	send(true, "and this?", img2, scan)
	parts, ok := userContent(lastRequest()).([]any)
	if !ok || len(parts) != 2 {
		t.Fatalf("vision user turn: %#v", userContent(lastRequest()))
	}
	text := parts[0].(map[string]any)
	image := parts[1].(map[string]any)
	if text["type"] != "text" || !strings.Contains(text["text"].(string), `<document name="scan.pdf">`) ||
		!strings.Contains(strings.ToLower(text["text"].(string)), "no text") {
		t.Fatalf("text part: %#v", text)
	}
	url, _ := image["image_url"].(map[string]any)["url"].(string)
	if image["type"] != "image_url" || !strings.HasPrefix(url, "data:image/jpeg;base64,") {
		t.Fatalf("image part: %.200v", image)
	}

	// Messages list the attachments of each turn, with URLs.
	code, body = w.call(admin, "Chats.Messages", turn.Chat.ID)
	if code != 200 || !strings.Contains(body, `"name":"diagram.png"`) || !strings.Contains(body, fmt.Sprintf(`"url":"/api/files/%d"`, img)) {
		t.Fatalf("Chats.Messages: %d %.500s", code, body)
	}

	// A forged id: another user's upload, on send and on edit; nothing of
	// theirs is bound and nothing is sent.
	theirs := upload(other, "notreally.png", "secret.txt")
	before := len(llm.Requests())
	code, body = w.call(admin, "Chats.Send", map[string]any{"modelId": model.ID, "content": "steal", "attachments": []ids.AttachmentID{theirs}})
	if code != http.StatusNotFound {
		t.Fatalf("send with another user's upload: %d %s", code, body)
	}
	code, body = w.call(admin, "Chats.Edit", turn.User.ID, "steal", []ids.AttachmentID{theirs})
	if code != http.StatusNotFound {
		t.Fatalf("edit with another user's upload: %d %s", code, body)
	}
	// Already sent: cannot be sent again (it would bind to two messages).
	code, _ = w.call(admin, "Chats.Send", map[string]any{"modelId": model.ID, "content": "again", "attachments": []ids.AttachmentID{img}})
	if code != http.StatusNotFound {
		t.Fatalf("sending a sent file again: %d", code)
	}
	if a, err := w.c.DB.AttachmentByID(context.Background(), otherID, theirs); err != nil || a.MessageID != nil {
		t.Fatalf("the other user's upload: %+v %v", a, err)
	}
	// (Count only these sends' requests: the earlier turn's automatic
	// title may still reach the model meanwhile.)
	for _, r := range llm.Requests()[before:] {
		if b := string(r.Body); strings.Contains(b, "steal") || strings.Contains(b, `"again"`) {
			t.Fatalf("a refused send reached the model: %.300s", b)
		}
	}
	// The other user cannot delete a sent file either; its owner cannot
	// delete it as an upload (it goes with the chat).
	if resp, _ := w.fetch(admin, "DELETE", fmt.Sprintf("/api/files/%d", img)); resp.StatusCode != http.StatusConflict {
		t.Errorf("DELETE of a sent file: %d, want 409", resp.StatusCode)
	}

	// Emptying the trash removes the chat's files from disk.
	a, _ := w.c.DB.AttachmentByID(context.Background(), ids.UserID(w.c.Owner.ID), img)
	p := filepath.Join(w.c.Files.Dir(), a.StorageName)
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
	if code, body := w.call(admin, "Chats.Trash", turn.Chat.ID); code != 200 {
		t.Fatalf("trash: %d %s", code, body)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal("trashing (not emptying) removed the file")
	}
	if code, body := w.call(admin, "Chats.EmptyTrash"); code != 200 {
		t.Fatalf("empty trash: %d %s", code, body)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatalf("the file survived the emptied trash: %v", err)
	}
	if resp, _ := w.fetch(admin, "GET", fmt.Sprintf("/api/files/%d", img)); resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET after the trash was emptied: %d", resp.StatusCode)
	}

	// An unsent upload is deleted by its owner, and swept after a day.
	draft := upload(admin, "latin1.txt", "draft.txt")
	if resp, _ := w.fetch(admin, "DELETE", fmt.Sprintf("/api/files/%d", draft)); resp.StatusCode != 200 {
		t.Fatalf("DELETE own upload: %d", resp.StatusCode)
	}
	stale := upload(admin, "latin1.txt", "stale.txt")
	sa, _ := w.c.DB.AttachmentByID(context.Background(), ids.UserID(w.c.Owner.ID), stale)
	if n, err := w.c.Files.Sweep(context.Background(), time.Now().Add(25*time.Hour)); err != nil || n < 1 {
		t.Fatalf("sweep: %d %v", n, err)
	}
	if _, err := os.Stat(filepath.Join(w.c.Files.Dir(), sa.StorageName)); !os.IsNotExist(err) {
		t.Fatalf("a day-old unsent upload survived the sweep: %v", err)
	}
}

// TestDroppedFiles takes a file dropped onto the desktop window the way the
// window does: the shelf gives a token, and the desktop mount turns the
// token into an upload, once. A browser, even the owner's, cannot claim it.
func TestDroppedFiles(t *testing.T) {
	w := newFilesWeb(t, false)
	h, err := w.c.Handler(true)
	if err != nil {
		t.Fatal(err)
	}
	desk := httptest.NewServer(h)
	t.Cleanup(desk.Close)
	post := func(base, token string, c *http.Client) (int, string) {
		req, _ := http.NewRequest("POST", base+"/api/files/dropped/"+token, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	dir := t.TempDir()
	photo := filepath.Join(dir, "Bag End at dusk.png")
	if err := os.WriteFile(photo, testdata(t, "opaque.png"), 0o600); err != nil {
		t.Fatal(err)
	}
	offers := w.c.Drops.Offer([]string{photo, dir})
	if offers[0].Token == "" || offers[1].Error == "" {
		t.Fatalf("offers: %+v", offers)
	}

	// Signed in as the owner in a browser: the token is not for it.
	admin := newClient()
	if code, body := w.signUp(admin, "bilbo", "a long walk to Mordor"); code != 200 {
		t.Fatalf("sign-up: %d %s", code, body)
	}
	if code, body := post(w.srv.URL, offers[0].Token, admin); code != http.StatusNotFound {
		t.Errorf("a browser claimed a dropped file: %d %s", code, body)
	}

	code, body := post(desk.URL, offers[0].Token, http.DefaultClient)
	var v api.AttachmentView
	json.Unmarshal([]byte(body), &v)
	if code != http.StatusOK || v.Name != "Bag End at dusk.png" || v.Kind != "image" || v.ID == 0 {
		t.Fatalf("desktop claim: %d %s", code, body)
	}
	if code, _ := post(desk.URL, offers[0].Token, http.DefaultClient); code != http.StatusNotFound {
		t.Errorf("a token was good twice: %d", code)
	}
	if code, _ := post(desk.URL, "made-up", http.DefaultClient); code != http.StatusNotFound {
		t.Errorf("a made-up token: %d", code)
	}

	// Swapped for something that is not a regular file after the drop.
	fifo := filepath.Join(dir, "pipe")
	late := w.c.Drops.Offer([]string{photo})[0]
	os.Remove(photo)
	if err := syscall.Mkfifo(fifo, 0o600); err == nil {
		os.Rename(fifo, photo)
		if code, body := post(desk.URL, late.Token, http.DefaultClient); code != http.StatusBadRequest {
			t.Errorf("a FIFO in the dropped file's place: %d %s", code, body)
		}
	}
}

// TestStorageQuota caps what each person's files take: an admin sets it,
// an upload that would pass it is refused with how much is used, nothing
// of it is kept, and deleting an unsent upload makes room again.
func TestStorageQuota(t *testing.T) {
	w := newFilesWeb(t, false)
	admin, other, _ := twoUsers(t, w)
	limits := func(c *http.Client) (used, quota int64) {
		var l struct{ Used, Quota int64 }
		code, body := w.call(c, "Files.Limits")
		if code != 200 || json.Unmarshal([]byte(body), &l) != nil {
			t.Fatalf("Files.Limits: %d %s", code, body)
		}
		return l.Used, l.Quota
	}
	if _, q := limits(other); q != 0 {
		t.Fatalf("a quota of %d before any was set", q)
	}
	if code, body := w.call(other, "Admin.SetSettings", map[string]any{"filesQuotaMB": 1}); code != 403 {
		t.Errorf("a member set the quota: %d %s", code, body)
	}
	if code, body := w.call(admin, "Admin.SetSettings", map[string]any{"filesQuotaMB": -1}); code != 400 {
		t.Errorf("a negative quota: %d %s", code, body)
	}
	if code, body := w.call(admin, "Admin.SetSettings", map[string]any{"filesQuotaMB": 1}); code != 200 || !strings.Contains(body, `"filesQuotaMB":1`) {
		t.Fatalf("set the quota: %d %s", code, body)
	}

	text := bytes.Repeat([]byte("Roads go ever ever on.\n"), 700<<10/23) // ~700 KB of text
	code, first, body := w.upload(other, "first.txt", text)
	if code != 200 {
		t.Fatalf("first upload under the quota: %d %s", code, body)
	}
	if used, quota := limits(other); used != first.Size || quota != 1<<20 {
		t.Errorf("usage %d of %d, want %d of %d", used, quota, first.Size, 1<<20)
	}
	code, _, body = w.upload(other, "second.txt", text)
	if code != 400 || !strings.Contains(body, "0.7 MB of the 1.0 MB") || !strings.Contains(body, "make room") {
		t.Fatalf("upload past the quota: %d %s", code, body)
	}
	if used, _ := limits(other); used != first.Size {
		t.Errorf("the refused upload counts: %d bytes used", used)
	}
	// Someone else's files are theirs to count.
	if code, _, body := w.upload(admin, "admin.txt", text); code != 200 {
		t.Errorf("another person's upload: %d %s", code, body)
	}
	if resp, _ := w.fetch(other, "DELETE", fmt.Sprintf("/api/files/%d", first.ID)); resp.StatusCode != 200 {
		t.Fatalf("delete: %d", resp.StatusCode)
	}
	if code, _, body := w.upload(other, "second.txt", text); code != 200 {
		t.Errorf("upload after making room: %d %s", code, body)
	}
	// Nothing refused was left on disk: two files, the admin's and the last.
	entries, _ := os.ReadDir(w.c.Files.Dir())
	if len(entries) != 2 {
		t.Errorf("%d files on disk, want 2", len(entries))
	}
}

// TestEditKeepsFilesWithoutUploadPermission: a member who may no longer
// upload can still take a file off a sent turn (keeping the other), but
// cannot put a new one on it.
func TestEditKeepsFilesWithoutUploadPermission(t *testing.T) {
	w := newFilesWeb(t, false)
	admin, member, model := adminAndMember(t, w, fakellm.New(t))
	_, a, _ := w.upload(member, "a.txt", []byte("Bag End\n"))
	_, b, _ := w.upload(member, "b.txt", []byte("Bywater\n"))
	code, body := w.call(member, "Chats.Send", map[string]any{"modelId": model, "content": "hi", "attachments": []ids.AttachmentID{a.ID, b.ID}})
	var turn struct{ User struct{ ID int64 } }
	if code != 200 || json.Unmarshal([]byte(body), &turn) != nil {
		t.Fatalf("send: %d %s", code, body)
	}
	_, c, _ := w.upload(member, "c.txt", []byte("Hobbiton\n"))

	w.call(admin, "Admin.SetBaseline", []string{"chat.create"})
	if code, body := w.call(member, "Chats.Edit", turn.User.ID, "hi", []ids.AttachmentID{a.ID, c.ID}); code != 403 {
		t.Errorf("adding a file without files.upload: %d %s, want 403", code, body)
	}
	// The first reply may still be streaming: an edit waits for it.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		code, body := w.call(member, "Chats.Edit", turn.User.ID, "hi again", []ids.AttachmentID{a.ID})
		if code == 200 {
			break
		}
		if code != 409 || time.Now().After(deadline) {
			t.Fatalf("keeping one of the turn's own files: %d %s", code, body)
		}
	}
}

// TestAttachingFromElsewhereNeedsUploadPermission: a file chosen with @
// (a library document, a project file) becomes an unsent upload like any
// other, so without files.upload it is refused where it is made — not at
// Send, after its chip was shown and its bytes stored against the quota.
func TestAttachingFromElsewhereNeedsUploadPermission(t *testing.T) {
	w := newFilesWeb(t, false)
	admin, member, model := adminAndMember(t, w, fakellm.New(t))
	code, body := w.call(member, "Chats.Send", map[string]any{"modelId": model, "content": "hi"})
	var turn struct{ Chat struct{ ID int64 } }
	if code != 200 || json.Unmarshal([]byte(body), &turn) != nil {
		t.Fatalf("send: %d %s", code, body)
	}
	code, body = w.call(member, "Library.CreateBase", map[string]any{"name": "Recipes"})
	var base struct{ ID int64 }
	if code != 200 || json.Unmarshal([]byte(body), &base) != nil {
		t.Fatalf("create base: %d %s", code, body)
	}
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	mw.WriteField("base", fmt.Sprint(base.ID))
	fw, _ := mw.CreateFormFile("file", "lembas.md")
	fw.Write([]byte("# Lembas\n\nWrapped in mallorn leaves.\n"))
	mw.Close()
	code, body = w.postForm(member, "/api/library/documents", &form, mw)
	var doc struct{ ID int64 }
	if code != 200 || json.Unmarshal([]byte(body), &doc) != nil || doc.ID == 0 {
		t.Fatalf("add document: %d %s", code, body)
	}

	w.call(admin, "Admin.SetBaseline", []string{"chat.create", "library.use", "agent.use"})
	if code, body := w.call(member, "Library.AttachDocument", doc.ID); code != 403 {
		t.Errorf("a library document without files.upload: %d %.200s, want 403", code, body)
	}
	if code, body := w.call(member, "Agent.AttachFile", turn.Chat.ID, "/etc/hostname"); code != 403 {
		t.Errorf("a project file without files.upload: %d %.200s, want 403", code, body)
	}
	w.call(admin, "Admin.SetBaseline", []string{"chat.create", "library.use", "agent.use", "files.upload"})
	if code, body := w.call(member, "Library.AttachDocument", doc.ID); code != 200 {
		t.Errorf("a library document with files.upload: %d %.200s", code, body)
	}
}
