// Package httpapi is the http.Handler shared by both transports: the HTTP API
// (POST /api/<Facade>.<Method>, which runs the one dispatcher), the event
// stream, and the frontend's files. `lembas --serve` listens with it; the
// desktop app mounts the same handler as the Wails asset server, so uploads
// and downloads take the same path in both modes.
package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/events"
	"github.com/llembas/lembas/frontend"
)

// MaxCallBody bounds a facade call's JSON arguments: well above the longest
// message (1 MiB of text, which JSON escaping can grow), so that limit
// answers with its own message. Files have their own routes and limits.
const MaxCallBody = 8 << 20

// CSP forbids inline script and style, framing, and every origin but our own.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"connect-src 'self'; media-src 'self' blob:; font-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'"

// Options configures a Handler.
type Options struct {
	Dispatcher *api.Dispatcher
	Bus        *events.Bus
	Files      fs.FS // the frontend: index.html, 404.html, css/, js/, …
	Log        *slog.Logger
	// Desktop marks the mount inside the desktop app: index.html is told to
	// use the Wails bridge, and requests come from our own webview only.
	Desktop bool
	// Caller resolves who is making a request on the desktop mount; an
	// error refuses it. A listening socket sets Auth instead, and its
	// callers are whoever their session cookie signs in.
	Caller func(*http.Request) (api.Caller, error)
	Auth   *Auth
	// InstanceName reads the instance's name (login page, manifest).
	InstanceName func(context.Context) string
	// AllowedHosts are Host values accepted besides loopback names and IP
	// literals. Checked only when CheckHost is set (a listening socket).
	AllowedHosts []string
	CheckHost    bool
	// Heartbeat is the SSE comment interval; 0 means 15 s.
	Heartbeat time.Duration
	// Stop, when closed, ends every event stream, so that a graceful
	// shutdown does not wait on followers that never hang up.
	Stop <-chan struct{}
	// Generated are files made by Go rather than stored in Files (the
	// syntax-highlighting stylesheet), by path without the leading slash.
	Generated map[string]string
	// Avatars serves and stores model avatars; nil disables the routes.
	Avatars Avatars
	// Attachments serves uploads and voice (files.go); nil disables the
	// routes.
	Attachments Attachments
	// Documents files and serves the library's documents (library.go);
	// nil disables the routes.
	Documents Documents
	// Exports serves chat exports (export.go); nil disables the route.
	Exports Exports
	// Terminals opens the terminal panel's WebSocket (terminal.go); set
	// on a listening socket only (the desktop window uses the Terminal
	// facade), nil disables the route.
	Terminals Terminals
	// Drops hands over files dropped onto the desktop window (package
	// drops); set on the desktop mount only.
	Drops Drops
	// SelfTest adds a route that panics, for the desktop test
	// (LEMBAS_SELFTEST).
	SelfTest bool
	// WriteTimeout is how long one write to a client may block before the
	// connection is cut (a reader that stopped reading); 0 means 30 s. It
	// is a deadline per write, not per response, so that event streams
	// and long downloads to slow but living readers go on.
	WriteTimeout time.Duration
	// MaxDownloads bounds each user's file downloads running at once (0:
	// 8); DownloadWait is how long one over it waits for a slot before it
	// is refused (0: 10 s).
	MaxDownloads int
	DownloadWait time.Duration
}

// Drops gives the path shelved under a token, once.
type Drops interface {
	Take(token string) (path string, ok bool)
}

// Avatars is the model-avatar store as the HTTP routes need it. caller is
// the resolved caller; implementations check access.
type Avatars interface {
	Avatar(ctx context.Context, caller api.Caller, id int64) (data []byte, contentType string, err error)
	SetAvatar(ctx context.Context, caller api.Caller, id int64, data []byte) error
	DeleteAvatar(ctx context.Context, caller api.Caller, id int64) error
}

type handler struct {
	opt       Options
	mux       *http.ServeMux
	static    map[string]staticFile
	version   string // of the frontend's files: the prefix /v/<version>/ that index.html names them by
	downloads *downloadLimit
}

type staticFile struct {
	body  []byte
	etag  string
	ctype string
}

// New returns the handler.
func New(opt Options) (http.Handler, error) {
	if opt.Heartbeat == 0 {
		opt.Heartbeat = 15 * time.Second
	}
	if opt.WriteTimeout == 0 {
		opt.WriteTimeout = 30 * time.Second
	}
	if opt.MaxDownloads == 0 {
		opt.MaxDownloads = 8
	}
	if opt.DownloadWait == 0 {
		opt.DownloadWait = 10 * time.Second
	}
	h := &handler{opt: opt, mux: http.NewServeMux(), downloads: newDownloadLimit(opt.MaxDownloads, opt.DownloadWait)}
	if err := h.loadStatic(); err != nil {
		return nil, err
	}
	h.handle("GET /api/auth/state", h.authState)
	if opt.Auth != nil {
		h.handle("POST /api/auth/login", h.login)
		h.handle("POST /api/auth/signup", h.signUp)
		h.handle("POST /api/auth/logout", h.logout)
	}
	h.handle("GET /manifest.webmanifest", h.manifest)
	h.handleAs("POST /api/{method}", h.call)
	if opt.Avatars != nil {
		h.handleAs("GET /api/models/{id}/avatar", h.getAvatar)
		h.handleAs("POST /api/models/{id}/avatar", h.setAvatar)
		h.handleAs("DELETE /api/models/{id}/avatar", h.deleteAvatar)
	}
	if opt.Attachments != nil {
		h.registerFiles()
	}
	if opt.Documents != nil {
		h.handleAs("POST /api/library/documents", h.uploadDocument)
		h.handleAs("GET /api/library/documents/{id}", h.getDocument)
	}
	if opt.Exports != nil {
		h.handleAs("GET /api/chats/{id}/export", h.exportChat)
	}
	h.handleAs("GET /api/events", h.events)
	if opt.Terminals != nil && opt.Auth != nil {
		h.handleAs("GET /api/terminal/{chat}", h.terminalSocket)
	}
	if opt.SelfTest {
		// The desktop test's proof that a panicking route leaves the app up.
		h.handleAs("GET /api/selftest/panic", func(http.ResponseWriter, *http.Request, api.Caller) {
			panic("self-test: a panic in a native route")
		})
	}
	// Signed out, every API path is 401 (handleAs), so that which routes
	// exist is not for strangers to map.
	h.handleAs("/api/", func(w http.ResponseWriter, r *http.Request, _ api.Caller) {
		h.fail(w, r, apperr.New(apperr.NotFound, "no such API route: %s %s", r.Method, r.URL.Path))
	})
	h.handle("/", h.file)

	var out http.Handler = h.mux
	if !opt.Desktop {
		// Reject cross-site state changes before anything else looks at them.
		cop := http.NewCrossOriginProtection()
		cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.fail(w, r, apperr.New(apperr.Forbidden, "cross-origin request refused"))
		}))
		out = cop.Handler(out)
	}
	out = h.security(out)
	if !opt.Desktop {
		out = h.stall(out)
	}
	return out, nil
}

// stall gives every write to a client a deadline of WriteTimeout from when
// it starts, through http.ResponseController. A server-wide WriteTimeout
// would cut event streams and long downloads; without any, a client that
// stops reading holds its handler (and what it holds: an open file, a
// download slot) for ever. The desktop mount has no socket to time out.
func (h *handler) stall(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &stallWriter{ResponseWriter: w, rc: http.NewResponseController(w), d: h.opt.WriteTimeout}
		sw.extend()
		next.ServeHTTP(sw, r)
		// The server flushes what is buffered after the handler returns,
		// and the connection keeps the last deadline into the next
		// request: give that flush its own.
		sw.extend()
	})
}

// stallWriter sets the write deadline before each write and writes in
// pieces, so the deadline bounds a stall rather than the whole response. It
// has no ReadFrom: io.Copy (http.ServeContent) then writes through it in
// 32 KiB pieces instead of one sendfile that no deadline would restart.
type stallWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

// stallChunk is the most written under one deadline.
const stallChunk = 64 << 10

func (s *stallWriter) extend() {
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.d)) // ErrNotSupported: nothing to bound
}

func (s *stallWriter) WriteHeader(code int) {
	s.extend()
	s.ResponseWriter.WriteHeader(code)
}

func (s *stallWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), stallChunk)
		s.extend()
		m, err := s.ResponseWriter.Write(p[:k])
		n += m
		if err != nil {
			return n, err
		}
		p = p[k:]
	}
	return n, nil
}

// Unwrap lets http.ResponseController reach the connection (Flush, the
// event stream's own deadlines).
func (s *stallWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (h *handler) security(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", CSP)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cross-Origin-Opener-Policy", "same-origin")
		if h.opt.CheckHost && !HostAllowed(r.Host, h.opt.AllowedHosts) {
			h.opt.Log.Warn("request for a foreign Host refused", "host", r.Host, "remote", r.RemoteAddr)
			h.fail(w, r, apperr.New(apperr.Forbidden, "this server does not answer to the host name %q; add it to LEMBAS_ALLOWED_HOSTS", r.Host))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// HostAllowed reports whether a Host header may be answered. IP literals are
// always fine (DNS rebinding needs a name), as are loopback names; any other
// name must be listed, with or without its port.
func HostAllowed(hostport string, allowed []string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if host == "" {
		return false
	}
	if net.ParseIP(host) != nil {
		return true
	}
	lh := strings.ToLower(host)
	if lh == "localhost" || strings.HasSuffix(lh, ".localhost") {
		return true
	}
	for _, a := range allowed {
		a = strings.ToLower(a)
		if a == lh || a == strings.ToLower(hostport) {
			return true
		}
	}
	return false
}

func (h *handler) call(w http.ResponseWriter, r *http.Request, caller api.Caller) {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		h.fail(w, r, apperr.New(apperr.Invalid, "send arguments as application/json"))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxCallBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeJSON(w, http.StatusRequestEntityTooLarge, api.Result{Error: &api.ErrorBody{Kind: apperr.Invalid, Message: "request too large"}})
			return
		}
		h.fail(w, r, apperr.Wrap(apperr.Invalid, err, "could not read the request"))
		return
	}
	caller.Via = "http"
	res := h.opt.Dispatcher.Call(r.Context(), caller, r.PathValue("method"), body)
	if res.Error != nil {
		writeJSON(w, apperr.HTTPStatus(res.Error.Kind), api.Result{Error: res.Error})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	w.Write(res.Result)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"kind":"internal","message":"encode failed"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(b)
}

// transportMeta is rewritten in index.html for the desktop mount, so that the
// frontend learns its transport from the server rather than by probing for
// window.go (which an element with id="go" would fake).
var transportMeta = []byte(`<meta name="lembas-transport" content="http">`)

func (h *handler) loadStatic() error {
	h.static = map[string]staticFile{}
	for p, body := range h.opt.Generated {
		sum := sha256.Sum256([]byte(body))
		h.static["/"+p] = staticFile{body: []byte(body), etag: `"` + hex.EncodeToString(sum[:8]) + `"`, ctype: contentType(p)}
	}
	err := fs.WalkDir(h.opt.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".go") {
			return err
		}
		b, err := fs.ReadFile(h.opt.Files, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		h.static["/"+p] = staticFile{body: b, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, ctype: contentType(p)}
		return nil
	})
	if err != nil {
		return err
	}
	h.version = filesVersion(h.static)
	f, ok := h.static["/index.html"]
	if !ok {
		return nil
	}
	b := f.body
	if !bytes.Contains(b, transportMeta) {
		return errors.New("index.html lacks the lembas-transport meta tag")
	}
	if h.opt.Desktop {
		b = bytes.Replace(b, transportMeta, []byte(`<meta name="lembas-transport" content="desktop">`), 1)
	}
	prefix := "/v/" + h.version + "/"
	if b, err = preloadModules(h.opt.Files, b, prefix); err != nil {
		return err
	}
	if !h.opt.Desktop {
		b = preloadAuthState(b)
	}
	b = versionedAsset.ReplaceAll(b, []byte(`$1="`+prefix+`$2"`))
	sum := sha256.Sum256(b)
	h.static["/index.html"] = staticFile{body: b, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, ctype: f.ctype}
	return nil
}

// versionedAsset matches index.html's references to the scripts and styles
// (relative paths under js/, css/ and vendor/), which it names by version.
var versionedAsset = regexp.MustCompile(`\b(src|href)="((?:js|css|vendor)/[^"]+)"`)

// filesVersion is a digest of every file but index.html (which names the
// others by it): any change to a module, a style or a vendored file gives
// a new version, and so new URLs.
func filesVersion(static map[string]staticFile) string {
	names := make([]string, 0, len(static))
	for p := range static {
		if p != "/index.html" {
			names = append(names, p)
		}
	}
	sort.Strings(names)
	d := sha256.New()
	for _, p := range names {
		fmt.Fprintf(d, "%s %s\n", p, static[p].etag)
	}
	return hex.EncodeToString(d.Sum(nil)[:6])
}

// moduleScript is index.html's entry module; preloadModules puts the links
// before it.
var moduleScript = regexp.MustCompile(`<script type="module" src="([^"]+)"></script>`)

// preloadModules adds to index.html a <link rel="modulepreload"> for every
// module its entry module loads by static import, so that the browser
// fetches the whole graph at once: without them it learns each import only
// once the module naming it has arrived, one round trip per level of
// imports. The list is computed here, at start, from the files being
// served, so it cannot go stale. The links are same-origin, which the
// CSP's script-src 'self' allows; Wails inserts its scripts at the start
// of <head> and leaves these alone. An index.html without a module script
// gets none.
func preloadModules(files fs.FS, index []byte, prefix string) ([]byte, error) {
	m := moduleScript.FindSubmatchIndex(index)
	if m == nil {
		return index, nil
	}
	entry := string(index[m[2]:m[3]])
	graph, err := frontend.ModuleGraph(files, entry)
	if err != nil {
		return nil, fmt.Errorf("index.html: %w", err)
	}
	var links bytes.Buffer
	for _, p := range graph[1:] {
		fmt.Fprintf(&links, "<link rel=\"modulepreload\" href=\"%s\">\n  ", html.EscapeString(prefix+p))
	}
	out := make([]byte, 0, len(index)+links.Len())
	out = append(out, index[:m[0]]...)
	out = append(out, links.Bytes()...)
	return append(out, index[m[0]:]...), nil
}

// authStatePreload asks for /api/auth/state while the modules load:
// login.js's first fetch of it (credentials same-origin, like the
// preload's crossorigin) takes this answer instead of a round trip of its
// own after the modules have run. The desktop mount never signs in.
const authStatePreload = `<link rel="preload" href="/api/auth/state" as="fetch" crossorigin>` + "\n  "

func preloadAuthState(index []byte) []byte {
	m := moduleScript.FindIndex(index)
	if m == nil {
		return index
	}
	return slices.Concat(index[:m[0]], []byte(authStatePreload), index[m[0]:])
}

func contentType(p string) string {
	switch path.Ext(p) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	case ".json", ".webmanifest":
		return "application/json"
	case ".txt", "":
		return "text/plain; charset=utf-8"
	case ".woff2":
		return "font/woff2"
	}
	return "application/octet-stream"
}

func (h *handler) file(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p := r.URL.Path
	if p == "/" {
		p = "/index.html"
	}
	// Revalidate every time: the files are small, and a stale module after
	// an upgrade would mix two versions of the frontend. Except under the
	// current version's prefix, whose URLs change with any file: there a
	// file is cached for good, and a reload asks for none of them.
	cache := "no-cache"
	if rest, ok := strings.CutPrefix(p, "/v/"); ok {
		version, file, _ := strings.Cut(rest, "/")
		p = "/" + file
		if version == h.version {
			cache = "public, max-age=31536000, immutable"
		}
	}
	f, ok := h.static[p]
	status := http.StatusOK
	if !ok || strings.HasSuffix(p, ".go") {
		f, status = h.static["/404.html"], http.StatusNotFound
	}
	hd := w.Header()
	hd.Set("Content-Type", f.ctype)
	if status != http.StatusOK || p == "/index.html" {
		cache = "no-cache"
	}
	hd.Set("Cache-Control", cache)
	if status == http.StatusOK {
		hd.Set("ETag", f.etag)
		if match := r.Header.Get("If-None-Match"); match != "" && match == f.etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(f.body)
	}
}
