package httpapi

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/events"
	"github.com/llembas/lembas/backend/ids"
)

// fakeDocuments is a library with one document (id 7, in base 3).
type fakeDocuments struct {
	gotBase int64
	gotName string
	gotBody string
}

var _ Documents = (*fakeDocuments)(nil)

func (f *fakeDocuments) Ingest(ctx context.Context, c api.Caller, base int64, name string, r io.Reader) (api.DocumentView, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return api.DocumentView{}, err
	}
	if base != 3 {
		return api.DocumentView{}, apperr.New(apperr.NotFound, "no such knowledge base")
	}
	f.gotBase, f.gotName, f.gotBody = base, name, string(b)
	return api.DocumentView{ID: 8, BaseID: ids.BaseID(base), Name: name, Size: int64(len(b)), URL: "/api/library/documents/8"}, nil
}

// nopSeeker is a bytes.Reader that closes.
type nopSeeker struct{ *bytes.Reader }

func (nopSeeker) Close() error { return nil }

func (f *fakeDocuments) OpenDocument(ctx context.Context, c api.Caller, id int64) (api.FileContent, error) {
	if id != 7 {
		return api.FileContent{}, apperr.New(apperr.NotFound, "no such document")
	}
	// A PNG: the files route shows our re-encoded images inline; a
	// document is never shown, whatever its type.
	return api.FileContent{View: api.AttachmentView{Name: "scan.png", MIME: "image/png"},
		Body: nopSeeker{bytes.NewReader([]byte("\x89PNG\r\n\x1a\nxx"))}, ETag: `"abc"`, ModTime: time.UnixMilli(1)}, nil
}

func TestDocumentRoutes(t *testing.T) {
	lib := &fakeDocuments{}
	h, err := New(Options{Dispatcher: api.NewDispatcher(slog.New(slog.DiscardHandler)), Bus: events.NewBus(), Files: files,
		Log: slog.New(slog.DiscardHandler), Caller: func(*http.Request) (api.Caller, error) { return api.Caller{UserID: 1}, nil },
		Documents: lib})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	form := func(fields ...string) (*bytes.Buffer, string) {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		for i := 0; i+1 < len(fields); i += 2 {
			if fields[i] == "file" {
				fw, _ := mw.CreateFormFile("file", "notes.md")
				fw.Write([]byte(fields[i+1]))
			} else {
				mw.WriteField(fields[i], fields[i+1])
			}
		}
		mw.Close()
		return &b, mw.FormDataContentType()
	}
	upload := func(fields ...string) (int, string) {
		body, ctype := form(fields...)
		req, _ := http.NewRequest("POST", srv.URL+"/api/library/documents", body)
		req.Header.Set("Content-Type", ctype)
		resp, text := do(t, req)
		return resp.StatusCode, text
	}

	t.Run("upload", func(t *testing.T) {
		code, body := upload("base", "3", "file", "# Notes")
		if code != http.StatusOK || !strings.Contains(body, `"baseId":3`) || !strings.Contains(body, `"url":"/api/library/documents/8"`) {
			t.Fatalf("upload: %d %s", code, body)
		}
		if lib.gotBase != 3 || lib.gotName != "notes.md" || lib.gotBody != "# Notes" {
			t.Errorf("the library got base %d, name %q, body %q", lib.gotBase, lib.gotName, lib.gotBody)
		}
		for _, tc := range []struct {
			name   string
			fields []string
			want   int
		}{
			{"no base", []string{"file", "x"}, http.StatusBadRequest},
			{"the base after the file", []string{"file", "x", "base", "3"}, http.StatusBadRequest},
			{"a base that is not a number", []string{"base", "three", "file", "x"}, http.StatusBadRequest},
			{"another's base", []string{"base", "4", "file", "x"}, http.StatusNotFound},
		} {
			if code, body := upload(tc.fields...); code != tc.want {
				t.Errorf("%s: %d %s, want %d", tc.name, code, body, tc.want)
			}
		}
	})

	t.Run("download", func(t *testing.T) {
		resp, body := do(t, mustGet(t, srv.URL+"/api/library/documents/7"))
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(body, "\x89PNG") {
			t.Fatalf("download: %d %q", resp.StatusCode, body)
		}
		for k, want := range map[string]string{
			"Content-Disposition":    `attachment; filename="scan.png"; filename*=UTF-8''scan.png`,
			"Content-Type":           "image/png",
			"X-Content-Type-Options": "nosniff",
			"Cache-Control":          "private, no-cache",
			"ETag":                   `"abc"`,
		} {
			if got := resp.Header.Get(k); got != want {
				t.Errorf("%s: %q, want %q", k, got, want)
			}
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "sandbox") {
			t.Errorf("Content-Security-Policy %q has no sandbox", csp)
		}
		if resp, _ := do(t, mustGet(t, srv.URL+"/api/library/documents/9")); resp.StatusCode != http.StatusNotFound {
			t.Errorf("another document: %d, want 404", resp.StatusCode)
		}
	})
}

func mustGet(t *testing.T, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
