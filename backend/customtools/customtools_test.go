package customtools

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/netguard"
	"github.com/llembas/lembas/backend/secrets"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/store/storetest"
)

// seen is what a test server received.
type seen struct {
	mu   sync.Mutex
	reqs []recorded
}

type recorded struct {
	Method, RequestURI, Host, Body string
	Header                         http.Header
}

func (s *seen) add(r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, recorded{Method: r.Method, RequestURI: r.RequestURI, Host: r.Host, Body: string(b), Header: r.Header.Clone()})
}

func (s *seen) all() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.reqs...)
}

// server is a loopback server recording every request and answering with
// handle (nil: 200 {"ok":true}).
func server(t *testing.T, handle http.HandlerFunc) (*httptest.Server, *seen) {
	t.Helper()
	s := &seen{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.add(r)
		if handle != nil {
			handle(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(srv.Close)
	return srv, s
}

type memLedger struct{ rec *secrets.Record }

func (l *memLedger) KeyRecord(context.Context) (secrets.Record, bool, error) {
	if l.rec == nil {
		return secrets.Record{}, false, nil
	}
	return *l.rec, true, nil
}
func (l *memLedger) SetKeyRecord(_ context.Context, r secrets.Record) error { l.rec = &r; return nil }
func (l *memLedger) HasEncrypted(context.Context) (bool, error)             { return false, nil }

// loopback is the test's allow of 127.0.0.0/8, as an administrator's
// allowed range would be.
var loopback = netguard.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}

func newService(t *testing.T, g netguard.Guard) (*Service, *store.DB) {
	t.Helper()
	db := storetest.Open(t)
	keeper, err := secrets.Resolve(context.Background(), secrets.Options{DataDir: t.TempDir(), NoKeychain: true}, &memLedger{})
	if err != nil {
		t.Fatal(err)
	}
	s := New(db, func() (*secrets.Keeper, error) { return keeper, nil }, slog.New(slog.DiscardHandler),
		Options{Guard: func(context.Context) (netguard.Guard, error) { return g, nil }})
	return s, db
}

func save(t *testing.T, s *Service, in Input) View {
	t.Helper()
	if in.Description == "" {
		in.Description = "A test tool."
	}
	in.Enabled = true
	v, err := s.Save(context.Background(), in)
	if err != nil {
		t.Fatalf("save %s: %v", in.Name, err)
	}
	return v
}

func try(t *testing.T, s *Service, id int64, args string) TryResult {
	t.Helper()
	r, err := s.Try(context.Background(), id, json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func str(s string) *string { return &s }

// Every value is escaped for where it lands: a path segment, a query value,
// a JSON string and a JSON value, a form body, a header.
func TestEscapingPositions(t *testing.T) {
	srv, got := server(t, nil)
	s, _ := newService(t, loopback)
	v := save(t, s, Input{Name: "items", Method: "POST",
		Parameters: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"},"q":{"type":"string"},` +
			`"n":{"type":"integer"},"note":{"type":"string"},"text":{"type":"string"},"obj":{"type":"object"}}}`),
		URL:     srv.URL + "/api/items/{{id}}?q={{q}}&n={{n}}",
		Headers: []store.CustomHeader{{Name: "X-Note", Value: "note: {{note}}"}},
		Body:    `{"text":"{{text}}","count":{{n}},"obj":{{obj}},"quoted":{{text}}}`,
	})
	r := try(t, s, v.ID, `{"id":"a/b?c#d e","q":"x&admin=1#f=g","n":3,"note":"hi\r\nX-Injected: 1\u0000","text":"he said \"hi\"\n}","obj":{"k":"v"}}`)
	if r.Failed {
		t.Fatalf("failed: %s", r.Result)
	}
	reqs := got.all()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	q := reqs[0]
	if want := "/api/items/a%2Fb%3Fc%23d%20e?q=x%26admin%3D1%23f%3Dg&n=3"; q.RequestURI != want {
		t.Errorf("request URI %q, want %q", q.RequestURI, want)
	}
	if h := q.Header.Get("X-Note"); h != "note: hiX-Injected: 1" {
		t.Errorf("X-Note %q", h)
	}
	if q.Header.Get("X-Injected") != "" {
		t.Error("a header value added a header")
	}
	var body struct {
		Text   string            `json:"text"`
		Count  int               `json:"count"`
		Obj    map[string]string `json:"obj"`
		Quoted string            `json:"quoted"`
	}
	if err := json.Unmarshal([]byte(q.Body), &body); err != nil {
		t.Fatalf("body %q is not JSON: %v", q.Body, err)
	}
	if body.Text != "he said \"hi\"\n}" || body.Quoted != body.Text || body.Count != 3 || body.Obj["k"] != "v" {
		t.Errorf("body %q read as %+v", q.Body, body)
	}
	if ct := q.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("content type %q", ct)
	}
	// Try shows the request as it was sent: URL, every header, body.
	if r.Request.URL != srv.URL+q.RequestURI || r.Request.Body != q.Body || r.Request.Method != q.Method {
		t.Errorf("shown %s %s %q, sent %s %s %q", r.Request.Method, r.Request.URL, r.Request.Body, q.Method, q.RequestURI, q.Body)
	}
	for _, h := range r.Request.Headers {
		if q.Header.Get(h.Name) != h.Value {
			t.Errorf("shown %s: %q, sent %q", h.Name, h.Value, q.Header.Get(h.Name))
		}
	}
	if len(r.Request.Headers) != 3 { // X-Note, Content-Type, User-Agent
		t.Errorf("shown headers %v", r.Request.Headers)
	}

	// A form body: query escaping, so a value cannot add a field.
	form := save(t, s, Input{Name: "form", Method: "POST",
		Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`),
		URL:        srv.URL + "/form", Headers: []store.CustomHeader{{Name: "Content-Type", Value: "application/x-www-form-urlencoded"}},
		Body: "a={{a}}&fixed=1"})
	try(t, s, form.ID, `{"a":"1&fixed=2"}`)
	reqs = got.all()
	if vals, _ := url.ParseQuery(reqs[len(reqs)-1].Body); vals.Get("a") != "1&fixed=2" || len(vals["fixed"]) != 1 || vals.Get("fixed") != "1" {
		t.Errorf("form body %q", reqs[len(reqs)-1].Body)
	}

	// An XML body: a value is text, it cannot close its element or add one.
	xmlTool := save(t, s, Input{Name: "xml", Method: "POST",
		Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`),
		URL:        srv.URL + "/xml", Headers: []store.CustomHeader{{Name: "Content-Type", Value: "application/xml"}},
		Body: `<order><item note="{{a}}">{{a}}</item><paid>0</paid></order>`})
	try(t, s, xmlTool.ID, `{"a":"x</item><paid>1</paid><item a=\"'&"}`)
	reqs = got.all()
	var order struct {
		Items []struct {
			Note string `xml:"note,attr"`
			Text string `xml:",chardata"`
		} `xml:"item"`
		Paid []string `xml:"paid"`
	}
	if err := xml.Unmarshal([]byte(reqs[len(reqs)-1].Body), &order); err != nil || len(order.Items) != 1 || len(order.Paid) != 1 ||
		order.Paid[0] != "0" || order.Items[0].Text != `x</item><paid>1</paid><item a="'&` || order.Items[0].Note != order.Items[0].Text {
		t.Errorf("xml body %q read as %+v (%v)", reqs[len(reqs)-1].Body, order, err)
	}
}

// A name the parameters do not declare becomes nothing, whatever the
// model sends under it (a row saved before the check, written directly).
func TestUndeclaredNamesBecomeNothing(t *testing.T) {
	srv, got := server(t, nil)
	s, db := newService(t, loopback)
	row, err := db.SaveCustomTool(context.Background(), store.CustomTool{Name: "old", Description: "d", Method: "POST", Enabled: true,
		Parameters: `{"type":"object","properties":{"a":{"type":"string"}}}`,
		URL:        srv.URL + "/x/{{a}}/{{b}}?c={{c}}", Headers: []store.CustomHeader{{Name: "X-D", Value: "[{{d}}]"}},
		Body: `{"e":"{{e}}","f":{{f}}}`})
	if err != nil {
		t.Fatal(err)
	}
	if r := try(t, s, row.ID, `{"a":"1","b":"evil","c":"evil","d":"evil","e":"evil","f":"evil"}`); r.Failed {
		t.Fatalf("failed: %s", r.Result)
	}
	q := got.all()[0]
	if q.RequestURI != "/x/1/?c=" || q.Header.Get("X-D") != "[]" || q.Body != `{"e":"","f":null}` {
		t.Errorf("sent %s %q %q", q.RequestURI, q.Header.Get("X-D"), q.Body)
	}
	if strings.Contains(q.RequestURI+q.Body+q.Header.Get("X-D"), "evil") {
		t.Error("an undeclared argument was sent")
	}
}

// An argument cannot change the scheme, host, port or path root, whatever
// it holds: it lands escaped in its hole, or the call is refused.
func TestArgumentsCannotMoveTheTarget(t *testing.T) {
	srv, got := server(t, nil)
	other, otherGot := server(t, nil)
	s, _ := newService(t, loopback)
	v := save(t, s, Input{Name: "files", Parameters: json.RawMessage(`{"type":"object","properties":{"p":{"type":"string"}}}`),
		URL: srv.URL + "/base/{{p}}?q={{p}}"})
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, val := range []string{
		"..", "../..", "../admin", "./x", "//evil.example/x", "@evil.example", "\\evil", `\..\admin`, "%2e%2e", "%2e%2e%2fadmin",
		"%2f", "%252e%252e", other.URL, "https://evil.example/", ":" + strings.Split(host, ":")[1], "x#frag", "x?y=1",
		"..%2f..", "%2E%2E",
	} {
		t.Run(val, func(t *testing.T) {
			before := len(got.all())
			args, _ := json.Marshal(map[string]string{"p": val})
			r := try(t, s, v.ID, string(args))
			reqs := got.all()
			refuse := map[string]bool{"..": true, "../..": true, "../admin": true, "./x": true, `\..\admin`: true,
				"%2e%2e": true, "%2e%2e%2fadmin": true, "..%2f..": true, "%2E%2E": true}
			if refuse[val] != r.Failed {
				t.Errorf("refused %v, want %v: %s", r.Failed, refuse[val], r.Result)
			}
			if r.Failed {
				if !strings.Contains(r.Result, ". or .. segment") {
					t.Errorf("refused with %q", r.Result)
				}
				if len(reqs) != before {
					t.Error("a refused call reached the server")
				}
				return
			}
			q := reqs[len(reqs)-1]
			u, err := url.Parse(q.RequestURI)
			if err != nil {
				t.Fatal(err)
			}
			if q.Host != host {
				t.Errorf("host %q", q.Host)
			}
			if !strings.HasPrefix(u.EscapedPath(), "/base/") || strings.Count(u.EscapedPath(), "/") != 2 {
				t.Errorf("path %q (one segment under /base/ expected)", u.EscapedPath())
			}
			if vals := u.Query(); len(vals) != 1 || vals.Get("q") != val {
				t.Errorf("query %v", vals)
			}
			if u.Path != "/base/"+val {
				t.Errorf("decoded path %q", u.Path)
			}
		})
	}
	if n := len(otherGot.all()); n != 0 {
		t.Errorf("the other server got %d requests", n)
	}
}

// The scheme, host and port are literal: a template with a hole there is
// refused at save, and a row that predates the check is refused at call.
func TestTemplateHostMustBeLiteral(t *testing.T) {
	s, db := newService(t, loopback)
	params := json.RawMessage(`{"type":"object","properties":{"host":{"type":"string"},"x":{"type":"string"},"scheme":{"type":"string"},"port":{"type":"string"},"p":{"type":"string"}}}`)
	for _, u := range []string{
		"https://{{host}}/x", "https://api.{{x}}.com/v1", "{{scheme}}://example.com/", "https://example.com{{p}}",
		"https://example.com:{{port}}/", "https://{{x}}@example.com/", "https://user@example.com/", "ftp://example.com/",
		"example.com/x", "https://example.com\\@evil.example/", "https://example.com/../admin", "https://example.com/a/%2e%2e/b",
		"http://10.0.0.1/x", "http://169.254.169.254/latest", "http://[::1]/",
	} {
		t.Run(u, func(t *testing.T) {
			_, err := s.Save(context.Background(), Input{Name: "t", Description: "d", Parameters: params, URL: u, Enabled: true})
			if kind := apperr.KindOf(err); kind != apperr.Invalid {
				t.Errorf("saved (err %v)", err)
			}
		})
	}
	// Rows written before a check: refused before any request.
	row, err := db.SaveCustomTool(context.Background(), store.CustomTool{Name: "legacy", Description: "d", Method: "GET", Enabled: true,
		Parameters: `{"type":"object","properties":{"host":{"type":"string"}}}`, URL: "https://{{host}}/x"})
	if err != nil {
		t.Fatal(err)
	}
	if r := try(t, s, row.ID, `{"host":"127.0.0.1"}`); !r.Failed || !strings.Contains(r.Result, "host") || r.Request.URL != "" {
		t.Errorf("legacy row ran: %+v", r)
	}
}

// A slug that collides with a built-in or another custom tool is refused.
func TestNameCollisions(t *testing.T) {
	s, _ := newService(t, loopback)
	for _, name := range []string{"web_search", "fetch_url"} {
		if _, err := s.Save(context.Background(), Input{Name: name, Description: "d", URL: "https://example.com/"}); apperr.KindOf(err) != apperr.Invalid {
			t.Errorf("%s saved (err %v)", name, err)
		}
	}
	for _, name := range []string{"", "Weather", "a b", "x/y", strings.Repeat("a", 65)} {
		if _, err := s.Save(context.Background(), Input{Name: name, Description: "d", URL: "https://example.com/"}); apperr.KindOf(err) != apperr.Invalid {
			t.Errorf("%q saved (err %v)", name, err)
		}
	}
	a := save(t, s, Input{Name: "weather", URL: "https://example.com/"})
	if _, err := s.Save(context.Background(), Input{Name: "weather", Description: "d", URL: "https://example.com/"}); apperr.KindOf(err) != apperr.Conflict {
		t.Errorf("second weather: %v", err)
	}
	b := save(t, s, Input{Name: "forecast", URL: "https://example.com/"})
	b.Name = "weather"
	if _, err := s.Save(context.Background(), Input{ID: b.ID, Name: "weather", Description: "d", URL: "https://example.com/"}); apperr.KindOf(err) != apperr.Conflict {
		t.Errorf("rename onto weather: %v", err)
	}
	if _, err := s.Save(context.Background(), Input{ID: a.ID, Name: "weather", Description: "changed", URL: "https://example.com/"}); err != nil {
		t.Errorf("saving a tool under its own name: %v", err)
	}
}

// Other save checks: the schema, undeclared holes, the secret's places.
func TestSaveChecks(t *testing.T) {
	s, _ := newService(t, loopback)
	for name, in := range map[string]Input{
		"array schema":      {Parameters: json.RawMessage(`{"type":"array"}`)},
		"not JSON":          {Parameters: json.RawMessage(`{"type":`)},
		"bad property":      {Parameters: json.RawMessage(`{"type":"object","properties":{"a-b":{"type":"string"}}}`)},
		"secret property":   {Parameters: json.RawMessage(`{"type":"object","properties":{"secret":{"type":"string"}}}`)},
		"unknown required":  {Parameters: json.RawMessage(`{"type":"object","properties":{},"required":["x"]}`)},
		"undeclared hole":   {URL: "https://example.com/{{cty}}"},
		"secret in body":    {Method: "POST", Body: `{"k":"{{secret}}"}`, Secret: str("s3cret")},
		"secret unset":      {Headers: []store.CustomHeader{{Name: "Authorization", Value: "Bearer {{secret}}"}}},
		"host header":       {Headers: []store.CustomHeader{{Name: "Host", Value: "evil.example"}}},
		"bad header name":   {Headers: []store.CustomHeader{{Name: "X Bad", Value: "v"}}},
		"GET with body":     {Body: "hello"},
		"body not JSON":     {Method: "POST", Body: `{"a": {{}`},
		"no description":    {Description: " "},
		"unknown method":    {Method: "TRACE"},
		"CR in header text": {Headers: []store.CustomHeader{{Name: "X-A", Value: "a\r\nb: c"}}},
	} {
		t.Run(name, func(t *testing.T) {
			in.Name = "t"
			if in.Description == "" {
				in.Description = "d"
			}
			if in.URL == "" {
				in.URL = "https://example.com/"
			}
			if _, err := s.Save(context.Background(), in); apperr.KindOf(err) != apperr.Invalid {
				t.Errorf("saved (err %v)", err)
			}
		})
	}
}

// The secret goes to the tool's own origin and is dropped when a redirect
// leaves it (another port is another origin); it never comes back to the
// page or the model, and Get shows only that it is set.
func TestSecretStaysWithItsOrigin(t *testing.T) {
	const secret = "tok-PLAINTEXT-0123456789"
	other, otherGot := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("elsewhere, you sent: " + r.Header.Get("Authorization") + r.Header.Get("X-Api-Key") + r.URL.RawQuery))
	})
	srv, got := server(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/landing", http.StatusTemporaryRedirect)
		case "/here":
			http.Redirect(w, r, "/echo", http.StatusTemporaryRedirect)
		case "/post302":
			http.Redirect(w, r, "/echo", http.StatusFound)
		default:
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]string{"auth": r.Header.Get("Authorization"), "key": r.Header.Get("X-Api-Key"), "query": r.URL.RawQuery})
		}
	})
	s, _ := newService(t, loopback)
	mk := func(name, path, method string) View {
		return save(t, s, Input{Name: name, Method: method, URL: srv.URL + path + "?key={{secret}}", Secret: str(secret),
			Headers: []store.CustomHeader{{Name: "Authorization", Value: "Bearer {{secret}}"}, {Name: "X-Api-Key", Value: "{{secret}}"}}})
	}
	away, here := mk("away", "/away", "GET"), mk("here", "/here", "GET")
	if away.SecretSet != true {
		t.Error("SecretSet false")
	}
	r := try(t, s, away.ID, `{}`)
	for _, q := range otherGot.all() {
		if strings.Contains(q.Header.Get("Authorization")+q.Header.Get("X-Api-Key")+q.Header.Get("Referer")+q.RequestURI, secret) {
			t.Errorf("the secret reached the other origin: %v %s", q.Header, q.RequestURI)
		}
	}
	if len(otherGot.all()) != 1 || r.Failed {
		t.Fatalf("the redirect was not followed: %+v", r)
	}
	first := got.all()[0]
	if first.Header.Get("Authorization") != "Bearer "+secret || first.Header.Get("X-Api-Key") != secret || first.RequestURI != "/away?key="+secret {
		t.Errorf("the tool's origin did not get the secret: %v %s", first.Header, first.RequestURI)
	}
	// Same origin: the secret is kept across the redirect, and the answer
	// (which echoes it) reaches the model and the page without it.
	r = try(t, s, here.ID, `{}`)
	last := got.all()[len(got.all())-1]
	if last.Header.Get("X-Api-Key") != secret {
		t.Errorf("same-origin redirect lost the secret: %v", last.Header)
	}
	b, _ := json.Marshal(r)
	if strings.Contains(string(b), secret) || strings.Contains(string(b), "0123456789") {
		t.Errorf("the secret came back: %s", b)
	}
	if !strings.Contains(r.Request.Headers[0].Value, maskShown) || !strings.Contains(r.Request.URL, maskShown) {
		t.Errorf("the request shown does not mask the secret: %+v", r.Request)
	}
	v, _ := s.Get(context.Background(), here.ID)
	if vb, _ := json.Marshal(v); strings.Contains(string(vb), secret) {
		t.Errorf("Get returned the secret: %s", vb)
	}
	// 302 in answer to a POST: refused, not retried as a GET.
	post := save(t, s, Input{Name: "post", Method: "POST", URL: srv.URL + "/post302", Body: `{"a":1}`})
	if r := try(t, s, post.ID, `{}`); !r.Failed || !strings.Contains(r.Result, "redirected") {
		t.Errorf("302 after POST: %+v", r)
	}
}

// Only the allowed ranges are reached: without the loopback allow the
// tool is refused by the guard, with a sentence saying where to allow it.
func TestGuardedByTheAllowList(t *testing.T) {
	srv, got := server(t, nil)
	open, _ := newService(t, loopback)
	v := save(t, open, Input{Name: "local", URL: srv.URL + "/x"})
	closed := New(open.db, open.keys, open.log, Options{})
	r := try(t, closed, v.ID, `{}`)
	if !r.Failed || !strings.Contains(r.Result, "Settings → Web") || len(got.all()) != 0 {
		t.Errorf("unguarded: %+v (%d requests)", r, len(got.all()))
	}
}

// An answer is capped, pretty-printed when JSON, and plain text.
func TestAnswers(t *testing.T) {
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte(strings.Repeat("a", 400<<10)))
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"b":[1,2],"html":"<script>alert(1)</script>"}`))
		case "/png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n"))
		case "/missing":
			http.Error(w, "no such city", http.StatusNotFound)
		}
	})
	s, _ := newService(t, loopback)
	for _, tc := range []struct{ path, want string }{
		{"/big", "[The answer was cut at the size limit.]"},
		{"/json", "{\n  \"b\": [\n    1,\n    2\n  ],\n  \"html\": \"<script>alert(1)</script>\"\n}"},
		{"/png", "image/png, which is not text"},
		{"/missing", "404 Not Found:\n\nno such city"},
	} {
		v := save(t, s, Input{Name: strings.TrimPrefix(tc.path, "/"), URL: srv.URL + tc.path})
		r := try(t, s, v.ID, "")
		if !strings.Contains(r.Result, tc.want) {
			t.Errorf("%s: %q", tc.path, r.Result[:min(len(r.Result), 300)])
		}
		if len(r.Result) > 21000 {
			t.Errorf("%s: %d bytes reach the model", tc.path, len(r.Result))
		}
	}
}

// Tools (the source): only for holders of tools.custom, only enabled
// rows, restricted rows only for their groups' members, names already
// taken left out, and the guidance of each.
func TestSource(t *testing.T) {
	s, db := newService(t, loopback)
	ctx := context.Background()
	owner, err := db.EnsureOwner(ctx, "owner", "Owner")
	if err != nil {
		t.Fatal(err)
	}
	sam, err := db.CreateUser(ctx, store.NewUser{Username: "sam"})
	if err != nil {
		t.Fatal(err)
	}
	pip, err := db.CreateUser(ctx, store.NewUser{Username: "pip"})
	if err != nil {
		t.Fatal(err)
	}
	g, err := db.CreateGroup(ctx, "gardeners", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetGroupMembers(ctx, g.ID, []ids.UserID{ids.UserID(sam.ID)}); err != nil {
		t.Fatal(err)
	}
	save(t, s, Input{Name: "open", URL: "https://example.com/", Guidance: "Use open for everything."})
	save(t, s, Input{Name: "garden", URL: "https://example.com/", Groups: []int64{g.ID}})
	off := save(t, s, Input{Name: "off", URL: "https://example.com/"})
	if _, err := s.Save(ctx, Input{ID: off.ID, Name: "off", Description: "d", URL: "https://example.com/", Enabled: false}); err != nil {
		t.Fatal(err)
	}
	names := func(c auth.Caller, taken func(string) bool) ([]string, []string) {
		list, guide, err := s.Tools(ctx, c, store.Chat{}, taken)
		if err != nil {
			t.Fatal(err)
		}
		var n, gs []string
		for _, tl := range list {
			if tl.Family != Family(tl.Name) || tl.Permission != auth.ToolsCustom || tl.Run == nil {
				t.Errorf("tool %+v", tl)
			}
			n = append(n, tl.Name)
		}
		for _, x := range guide {
			gs = append(gs, string(x.Family)+"="+x.Text)
		}
		return n, gs
	}
	member := auth.NewSet(false, auth.ToolsCustom)
	for _, tc := range []struct {
		who    string
		caller auth.Caller
		taken  func(string) bool
		want   string
	}{
		{"no permission", auth.Caller{User: ids.UserID(sam.ID), Perms: auth.NewSet(false, auth.ChatCreate)}, nil, ""},
		{"group member", auth.Caller{User: ids.UserID(sam.ID), Perms: member}, nil, "garden open"},
		{"not a member", auth.Caller{User: ids.UserID(pip.ID), Perms: member}, nil, "open"},
		{"admin", auth.Caller{User: ids.UserID(owner.ID), Perms: auth.NewSet(true)}, nil, "garden open"},
		{"name taken", auth.Caller{User: ids.UserID(sam.ID), Perms: member}, func(n string) bool { return n == "open" }, "garden"},
	} {
		got, guide := names(tc.caller, tc.taken)
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: %v, want %q", tc.who, got, tc.want)
		}
		if strings.Contains(tc.want, "open") && (len(guide) != 1 || guide[0] != "custom:open=Use open for everything.") {
			t.Errorf("%s: guidance %v", tc.who, guide)
		}
	}
	// A group deleted: the tool stays closed to everyone but admins.
	if err := db.DeleteGroup(ctx, g.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := names(auth.Caller{User: ids.UserID(sam.ID), Perms: member}, nil); strings.Join(got, " ") != "open" {
		t.Errorf("after the group went: %v", got)
	}
}

func TestPlainErrorsHoldNoURL(t *testing.T) {
	err := &url.Error{Op: "Get", URL: "https://example.com/?key=SECRET", Err: errors.New("connection refused")}
	if got := plain(context.Background(), err); strings.Contains(got, "SECRET") {
		t.Errorf("%q", got)
	}
}

// A key written into a header as it is (not through {{secret}}) is a
// secret too: only the headers that say nothing about the caller follow a
// redirect to another origin.
func TestWrittenHeadersStayWithTheirOrigin(t *testing.T) {
	other, otherGot := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("ok"))
	})
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/landing", http.StatusTemporaryRedirect)
	})
	s, _ := newService(t, loopback)
	v := save(t, s, Input{Name: "written", Method: "GET", URL: srv.URL + "/away",
		Headers: []store.CustomHeader{{Name: "X-Api-Key", Value: "written-key-123"}, {Name: "Accept", Value: "text/plain"}}})
	if r := try(t, s, v.ID, `{}`); r.Failed {
		t.Fatalf("try: %+v", r)
	}
	all := otherGot.all()
	if len(all) != 1 {
		t.Fatalf("the other origin got %d requests", len(all))
	}
	if k := all[0].Header.Get("X-Api-Key"); k != "" {
		t.Errorf("the other origin received the written key %q", k)
	}
	if a := all[0].Header.Get("Accept"); a != "text/plain" {
		t.Errorf("Accept was dropped: %q", a)
	}
}

// A server echoing the secret in its status line or content type does not
// hand it to the model or the page either.
func TestSecretRedactedFromTheStatusLine(t *testing.T) {
	const secret = "tok-STATUS-0123456789"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		buf.WriteString("HTTP/1.1 401 bad key " + r.Header.Get("X-Api-Key") + "\r\nContent-Type: text/plain; key=" +
			r.Header.Get("X-Api-Key") + "\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno")
		buf.Flush()
	}))
	t.Cleanup(srv.Close)
	s, _ := newService(t, loopback)
	v := save(t, s, Input{Name: "status", URL: srv.URL + "/", Secret: str(secret),
		Headers: []store.CustomHeader{{Name: "X-Api-Key", Value: "{{secret}}"}}})
	r := try(t, s, v.ID, `{}`)
	if !r.Failed || r.Answer.Status != 401 {
		t.Fatalf("try: %+v", r)
	}
	if b, _ := json.Marshal(r); strings.Contains(string(b), "0123456789") {
		t.Errorf("the secret came back: %s", b)
	}
}
