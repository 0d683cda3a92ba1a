package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/events"
)

// fakeExports has one chat (id 5) with a hostile title.
type fakeExports struct{ format string }

func (f *fakeExports) ExportChat(ctx context.Context, c api.Caller, id int64, format string) (api.ChatExport, error) {
	if id != 5 || c.UserID != 1 {
		return api.ChatExport{}, apperr.New(apperr.NotFound, "no such chat")
	}
	f.format = format
	return api.ChatExport{Name: chat.ExportName("Evil\r\nSet-Cookie: x=1; ../../a\"b", format), MIME: "text/markdown; charset=utf-8",
		Write: func(ctx context.Context, w io.Writer) error {
			_, err := io.WriteString(w, "# Evil\n")
			return err
		}}, nil
}

// The export route sends the chat as an attachment whose name cannot
// break the header or name a path, and answers 404 for a chat that is not
// the caller's.
func TestExportRoute(t *testing.T) {
	x := &fakeExports{}
	h, err := New(Options{Dispatcher: api.NewDispatcher(slog.New(slog.DiscardHandler)), Bus: events.NewBus(), Files: files,
		Log: slog.New(slog.DiscardHandler), Caller: func(*http.Request) (api.Caller, error) { return api.Caller{UserID: 1}, nil },
		Exports: x})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	res, err := http.Get(srv.URL + "/api/chats/5/export")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || string(body) != "# Evil\n" || x.format != "markdown" {
		t.Fatalf("export: %d %q (format %q)", res.StatusCode, body, x.format)
	}
	if _, ok := res.Header["Set-Cookie"]; ok {
		t.Errorf("the title set a header: %v", res.Header)
	}
	disp := res.Header.Get("Content-Disposition")
	if !strings.HasPrefix(disp, `attachment; filename="Evil Set-Cookie- x=1_ ..-..-a-b.md"`) || strings.ContainsAny(disp, "/\\\r\n") {
		t.Errorf("Content-Disposition %q", disp)
	}
	for k, want := range map[string]string{"Content-Type": "text/markdown; charset=utf-8", "X-Content-Type-Options": "nosniff", "Cache-Control": "private, no-store"} {
		if got := res.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}

	res, err = http.Get(srv.URL + "/api/chats/5/export?format=json")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if x.format != "json" {
		t.Errorf("format passed on: %q", x.format)
	}
	res, err = http.Get(srv.URL + "/api/chats/6/export")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound || res.Header.Get("Content-Disposition") != "" || !strings.Contains(string(body), "not_found") {
		t.Errorf("another chat: %d %v %s", res.StatusCode, res.Header, body)
	}
}
