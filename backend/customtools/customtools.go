// Package customtools is the HTTP tools an administrator defines: each is
// a row (store.CustomTool) holding a request template — method, URL,
// headers, body — that a model fills through the tool's parameters. It is
// a tools.Source (gate tools.GateCustom, families custom:<name>). Every
// request goes through backend/netguard widened by the administrator's
// allowed ranges (the same guard as the web tools, web.Service.Guard).
//
// The rule the package is built around: an argument may fill a hole, it
// may never move the target (template.go).
package customtools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/netguard"
	"github.com/llembas/lembas/backend/secrets"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/tools"
)

// Permission is what a person must hold to be offered custom tools.
const Permission = auth.ToolsCustom

// Bounds of a tool's row.
const (
	maxDescription = 1024
	maxSchema      = 16 << 10
	maxURL         = 2048
	maxHeaders     = 20
	maxHeaderValue = 2048
	maxBody        = 16 << 10
	maxSecret      = 4096
	maxGuidance    = 4000
	maxProperties  = 64
)

// Options tune a Service; zero values are the defaults.
type Options struct {
	// Guard returns the guard requests go through, with the
	// administrator's allowed ranges (core: web.Service.Guard).
	Guard func(ctx context.Context) (netguard.Guard, error)
	// Reserved reports names a custom tool may not take (default: the
	// built-in tools' names).
	Reserved func(name string) bool
	// Timeout bounds one call, body included (default 20 s).
	Timeout time.Duration
	// MaxBytes is how much of an answer is read (default 256 KB);
	// MaxChars how much of its text the model gets (default 20,000).
	MaxBytes int64
	MaxChars int
}

// Service keeps the custom tools and runs them.
type Service struct {
	db   *store.DB
	keys func() (*secrets.Keeper, error)
	log  *slog.Logger
	opt  Options

	clients netguard.Clients
}

var _ tools.Source = (*Service)(nil)

// New returns the service.
func New(db *store.DB, keys func() (*secrets.Keeper, error), log *slog.Logger, opt Options) *Service {
	if opt.Guard == nil {
		opt.Guard = func(context.Context) (netguard.Guard, error) { return netguard.Guard{}, nil }
	}
	if opt.Reserved == nil {
		builtin := map[string]bool{}
		for _, t := range tools.Builtins(nil) {
			builtin[t.Name] = true
		}
		opt.Reserved = func(name string) bool { return builtin[name] }
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 20 * time.Second
	}
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = 256 << 10
	}
	if opt.MaxChars <= 0 {
		opt.MaxChars = 20000
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Service{db: db, keys: keys, log: log, opt: opt}
}

// View is a custom tool as the administrator's page sees it: the secret
// only as whether one is set.
type View struct {
	ID          int64                `json:"id"`
	Name        string               `json:"name"`
	Description string               `json:"description"`
	Parameters  json.RawMessage      `json:"parameters"`
	Method      string               `json:"method"`
	URL         string               `json:"url"`
	Headers     []store.CustomHeader `json:"headers"`
	Body        string               `json:"body"`
	SecretSet   bool                 `json:"secretSet"`
	Guidance    string               `json:"guidance"`
	Enabled     bool                 `json:"enabled"`
	// Groups are who may use it; empty is everyone holding tools.custom.
	Groups    []int64 `json:"groups"`
	UpdatedAt int64   `json:"updatedAt"`
}

func view(t store.CustomTool) View {
	return View{ID: t.ID, Name: t.Name, Description: t.Description, Parameters: json.RawMessage(t.Parameters),
		Method: t.Method, URL: t.URL, Headers: t.Headers, Body: t.Body, SecretSet: t.SecretEnc != "",
		Guidance: t.Guidance, Enabled: t.Enabled, Groups: t.Groups, UpdatedAt: t.UpdatedAt}
}

// Input is a tool to save: ID 0 creates one. Secret nil keeps the stored
// secret, "" clears it.
type Input struct {
	ID          int64                `json:"id"`
	Name        string               `json:"name"`
	Description string               `json:"description"`
	Parameters  json.RawMessage      `json:"parameters"`
	Method      string               `json:"method"`
	URL         string               `json:"url"`
	Headers     []store.CustomHeader `json:"headers"`
	Body        string               `json:"body"`
	Secret      *string              `json:"secret,omitempty"`
	Guidance    string               `json:"guidance"`
	Enabled     bool                 `json:"enabled"`
	Groups      []int64              `json:"groups"`
}

// List returns every custom tool.
func (s *Service) List(ctx context.Context) ([]View, error) {
	rows, err := s.db.CustomTools(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]View, 0, len(rows))
	for _, r := range rows {
		out = append(out, view(r))
	}
	return out, nil
}

// Get returns one custom tool.
func (s *Service) Get(ctx context.Context, id int64) (View, error) {
	t, err := s.db.CustomTool(ctx, id)
	if err != nil {
		return View{}, store.Kinded(err, "custom tool")
	}
	return view(t), nil
}

// Delete removes a custom tool.
func (s *Service) Delete(ctx context.Context, id int64) error {
	return store.Kinded(s.db.DeleteCustomTool(ctx, id), "custom tool")
}

var (
	nameRE     = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)
	propRE     = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
	headerName = regexp.MustCompile("^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$")
	methods    = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}
	// Headers the transport owns, or that would redirect the request.
	forbiddenHeaders = []string{"host", "content-length", "transfer-encoding", "connection", "upgrade", "te",
		"trailer", "keep-alive", "proxy-authorization", "proxy-connection", "expect"}
)

func invalid(format string, args ...any) error { return apperr.New(apperr.Invalid, format, args...) }

// Save checks a tool and stores it.
func (s *Service) Save(ctx context.Context, in Input) (View, error) {
	var old store.CustomTool
	if in.ID != 0 {
		var err error
		if old, err = s.db.CustomTool(ctx, in.ID); err != nil {
			return View{}, store.Kinded(err, "custom tool")
		}
	}
	row := store.CustomTool{ID: in.ID, Name: strings.TrimSpace(in.Name), Description: strings.TrimSpace(in.Description),
		Method: strings.ToUpper(strings.TrimSpace(in.Method)), URL: strings.TrimSpace(in.URL), Body: in.Body,
		Guidance: strings.TrimSpace(in.Guidance), Enabled: in.Enabled, Groups: in.Groups, SecretEnc: old.SecretEnc}
	if row.Method == "" {
		row.Method = http.MethodGet
	}
	for _, h := range in.Headers {
		h.Name = strings.TrimSpace(h.Name)
		if h.Name == "" && strings.TrimSpace(h.Value) == "" {
			continue
		}
		row.Headers = append(row.Headers, h)
	}
	if row.Headers == nil {
		row.Headers = []store.CustomHeader{}
	}
	if row.Groups == nil {
		row.Groups = []int64{}
	}
	params, err := checkSchema(in.Parameters)
	if err != nil {
		return View{}, err
	}
	row.Parameters = params
	if in.Secret != nil {
		row.SecretEnc = ""
		if sec := strings.TrimSpace(*in.Secret); sec != "" {
			if len(sec) > maxSecret {
				return View{}, invalid("The secret is longer than %d characters.", maxSecret)
			}
			keeper, err := s.keys()
			if err != nil {
				return View{}, err
			}
			if row.SecretEnc, err = keeper.Encrypt(sec); err != nil {
				return View{}, err
			}
		}
	}
	if err := s.check(ctx, row); err != nil {
		return View{}, err
	}
	saved, err := s.db.SaveCustomTool(ctx, row)
	if errors.Is(err, store.ErrConflict) {
		return View{}, apperr.New(apperr.Conflict, "Another custom tool is already named %q.", row.Name)
	}
	if errors.Is(err, store.ErrNotFound) {
		return View{}, apperr.Wrap(apperr.NotFound, err, "That tool or one of its groups no longer exists.")
	}
	if err != nil {
		return View{}, err
	}
	return view(saved), nil
}

// check is every rule a row must keep, at save. Before a call, build
// checks the URL again (a row may predate a rule).
func (s *Service) check(ctx context.Context, t store.CustomTool) error {
	switch {
	case !nameRE.MatchString(t.Name):
		return invalid("The name is 1 to 64 lower-case letters, digits, - or _ (the model calls the tool by it).")
	case s.opt.Reserved(t.Name):
		return invalid("%q is a built-in tool's name; choose another.", t.Name)
	case t.Description == "":
		return invalid("Describe what the tool does: the model reads the description to decide when to call it.")
	case utf8.RuneCountInString(t.Description) > maxDescription:
		return invalid("The description is longer than %d characters.", maxDescription)
	case !slices.Contains(methods, t.Method):
		return invalid("The method is GET, POST, PUT, PATCH or DELETE.")
	case len(t.URL) > maxURL:
		return invalid("The URL is longer than %d characters.", maxURL)
	case len(t.Headers) > maxHeaders:
		return invalid("At most %d headers.", maxHeaders)
	case len(t.Body) > maxBody:
		return invalid("The body is longer than %d bytes.", maxBody)
	case utf8.RuneCountInString(t.Guidance) > maxGuidance:
		return invalid("The guidance is longer than %d characters.", maxGuidance)
	case t.Body != "" && t.Method == http.MethodGet:
		return invalid("A GET request has no body; use POST, PUT or PATCH, or put the values in the URL.")
	}
	tg, err := parseTarget(t.URL)
	if err != nil {
		return invalid("URL: %s.", err.Error())
	}
	g, err := s.opt.Guard(ctx)
	if err != nil {
		return err
	}
	if u, err := url.Parse(tg.origin + "/"); err == nil {
		if err := g.CheckURL(u); err != nil {
			return invalid("URL: %s is on a private or special network (%v). To reach a server on your network, add its address range under Settings → Web first.", u.Host, err)
		}
	}
	declared := declaredNames(t.Parameters)
	usesSecret := false
	checkHoles := func(where, tmpl string, secretOK bool) error {
		for _, h := range holes(tmpl) {
			switch {
			case h == SecretHole && !secretOK:
				return invalid("The secret may go in the URL or a header, not in the %s (a redirect would carry it to another server).", where)
			case h == SecretHole:
				usesSecret = true
			case !declared[h]:
				return invalid("{{%s}} in the %s is not one of the parameters.", h, where)
			}
		}
		return nil
	}
	if err := checkHoles("URL", t.URL, true); err != nil {
		return err
	}
	for _, h := range t.Headers {
		switch {
		case !headerName.MatchString(h.Name):
			return invalid("%q is not a header name.", h.Name)
		case slices.Contains(forbiddenHeaders, strings.ToLower(h.Name)):
			return invalid("The %s header is set by LLeMbas, not by a tool.", h.Name)
		case len(h.Value) > maxHeaderValue:
			return invalid("The %s header is longer than %d characters.", h.Name, maxHeaderValue)
		case headerSafe(h.Value) != h.Value:
			return invalid("The %s header holds a control character.", h.Name)
		}
		if err := checkHoles(h.Name+" header", h.Value, true); err != nil {
			return err
		}
	}
	if err := checkHoles("body", t.Body, false); err != nil {
		return err
	}
	if t.Body != "" && kindOf(contentType(t.Headers), t.Body) == bodyJSON {
		sample := fillJSON(t.Body, values{args: map[string]json.RawMessage{}})
		if !json.Valid([]byte(sample)) {
			return invalid("The body is not JSON (with every {{…}} filled): write values as \"{{name}}\" inside strings or {{name}} alone.")
		}
	}
	if usesSecret && t.SecretEnc == "" {
		return invalid("The templates use {{secret}}: set the secret.")
	}
	return nil
}

// checkSchema checks the parameters' JSON schema: an object schema whose
// property names can be holes, returned compact.
func checkSchema(raw json.RawMessage) (string, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return `{"type":"object","properties":{}}`, nil
	}
	if len(raw) > maxSchema {
		return "", invalid("The parameters' schema is longer than %d bytes.", maxSchema)
	}
	var s struct {
		Type       any                        `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var obj map[string]json.RawMessage
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return "", invalid("The parameters are a JSON Schema object, such as {\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}.")
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", invalid("The parameters' schema does not parse: properties is an object of schemas and required a list of their names.")
	}
	if s.Type != "object" {
		return "", invalid("The parameters' schema must have \"type\": \"object\".")
	}
	if len(s.Properties) > maxProperties {
		return "", invalid("At most %d parameters.", maxProperties)
	}
	for name, p := range s.Properties {
		if !propRE.MatchString(name) {
			return "", invalid("The parameter name %q must be letters, digits and _ (it is written {{%s}} in the templates).", name, name)
		}
		if name == SecretHole {
			return "", invalid("\"secret\" is the tool's secret, not a parameter; name the parameter otherwise.")
		}
		var ps map[string]json.RawMessage
		if json.Unmarshal(p, &ps) != nil || ps == nil {
			return "", invalid("The parameter %q must be a schema object, such as {\"type\":\"string\"}.", name)
		}
	}
	for _, r := range s.Required {
		if _, ok := s.Properties[r]; !ok {
			return "", invalid("%q is required but is not one of the properties.", r)
		}
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "", invalid("The parameters' schema is not JSON.")
	}
	return b.String(), nil
}

// declaredNames are the schema's property names.
func declaredNames(schema string) map[string]bool {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal([]byte(schema), &s)
	out := map[string]bool{}
	for k := range s.Properties {
		out[k] = true
	}
	return out
}

func requiredNames(schema string) []string {
	var s struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal([]byte(schema), &s)
	return s.Required
}

func contentType(hs []store.CustomHeader) string {
	for _, h := range hs {
		if strings.EqualFold(h.Name, "Content-Type") {
			return h.Value
		}
	}
	return ""
}

// Request is a request as built from a tool and its arguments (the secret
// masked when it is shown).
type Request struct {
	Method  string               `json:"method"`
	URL     string               `json:"url"`
	Headers []store.CustomHeader `json:"headers"`
	Body    string               `json:"body"`
	// secretHeaders are the headers holding the secret, or any written
	// header but plainHeaders (a key written as it is, not through
	// {{secret}}), dropped when a redirect leaves the origin.
	secretHeaders []string
}

// plainHeaders are the written headers that say nothing about the caller
// and so follow a redirect to another origin.
var plainHeaders = []string{"accept", "accept-language", "content-type", "user-agent"}

// build fills a tool's templates with v. The URL's target is checked
// again here, whatever was checked at save.
func build(t store.CustomTool, v values) (Request, error) {
	tg, err := parseTarget(t.URL)
	if err != nil {
		return Request{}, err
	}
	declared := declaredNames(t.Parameters)
	args := map[string]json.RawMessage{}
	for k, raw := range v.args {
		if declared[k] {
			args[k] = raw
		}
	}
	v.args = args
	r := Request{Method: t.Method, Headers: []store.CustomHeader{}}
	if r.URL, err = tg.url(v); err != nil {
		return Request{}, err
	}
	for _, h := range t.Headers {
		r.Headers = append(r.Headers, store.CustomHeader{Name: h.Name, Value: headerSafe(v.fill(h.Value, headerSafe))})
		if slices.Contains(holes(h.Value), SecretHole) || !slices.Contains(plainHeaders, strings.ToLower(h.Name)) {
			r.secretHeaders = append(r.secretHeaders, h.Name)
		}
	}
	if t.Body != "" && t.Method != http.MethodGet {
		ct := contentType(t.Headers)
		switch kindOf(ct, t.Body) {
		case bodyJSON:
			r.Body = fillJSON(t.Body, v)
			if ct == "" {
				r.Headers = append(r.Headers, store.CustomHeader{Name: "Content-Type", Value: "application/json"})
			}
		case bodyForm:
			r.Body = v.fill(t.Body, escapeStrict)
		case bodyXML:
			r.Body = v.fill(t.Body, escapeXML)
		default:
			r.Body = v.fill(t.Body, func(s string) string { return s })
			if ct == "" {
				r.Headers = append(r.Headers, store.CustomHeader{Name: "Content-Type", Value: "text/plain; charset=utf-8"})
			}
		}
	}
	if !hasHeader(r.Headers, "User-Agent") { // shown as sent
		r.Headers = append(r.Headers, store.CustomHeader{Name: "User-Agent", Value: "LLeMbas"})
	}
	return r, nil
}

func hasHeader(hs []store.CustomHeader, name string) bool {
	for _, h := range hs {
		if strings.EqualFold(h.Name, name) {
			return true
		}
	}
	return false
}

// Answer is what a call got back, or why it failed; Text is plain text
// (JSON pretty-printed), the secret never in it.
type Answer struct {
	Status     int    `json:"status"`
	StatusText string `json:"statusText"`
	Type       string `json:"contentType"`
	Text       string `json:"text"`
	Truncated  bool   `json:"truncated"`
	Error      string `json:"error,omitempty"`
}

// result is an answer as the model reads it.
func (a Answer) result() tools.Result {
	switch {
	case a.Error != "":
		return tools.Result{Text: "The request failed: " + a.Error, Failed: true}
	case a.Status >= 400:
		return tools.Result{Text: fmt.Sprintf("The server answered %s:\n\n%s", a.StatusText, a.Text), Failed: true}
	}
	text := a.Text
	if text == "" {
		text = "(The server answered " + a.StatusText + " with no content.)"
	}
	if a.Truncated {
		text += "\n\n[The answer was cut at the size limit.]"
	}
	return tools.Result{Text: text}
}

// call runs tool t with the model's arguments: it returns the request as
// shown (secret masked) and the answer.
func (s *Service) call(ctx context.Context, t store.CustomTool, arguments json.RawMessage) (Request, Answer) {
	args := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(arguments)) > 0 {
		if err := json.Unmarshal(arguments, &args); err != nil || args == nil {
			return Request{}, Answer{Error: "the arguments must be a JSON object"}
		}
	}
	var missing []string
	for _, r := range requiredNames(t.Parameters) {
		if v, ok := args[r]; !ok || string(bytes.TrimSpace(v)) == "null" {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		return Request{}, Answer{Error: "missing required arguments: " + strings.Join(missing, ", ")}
	}
	secret := ""
	if t.SecretEnc != "" {
		k, err := s.keys()
		if err != nil {
			return Request{}, Answer{Error: "the tool's secret cannot be read: the encryption key is unavailable"}
		}
		if secret, err = k.Decrypt(t.SecretEnc); err != nil {
			return Request{}, Answer{Error: "the tool's secret cannot be decrypted with the current encryption key"}
		}
	}
	shown, err := build(t, values{args: args, mask: true})
	if err != nil {
		return Request{}, Answer{Error: err.Error()}
	}
	req, err := build(t, values{args: args, secret: secret})
	if err != nil {
		return shown, Answer{Error: err.Error()}
	}
	a := s.send(ctx, req)
	if secret != "" {
		a.Text = redact(a.Text, secret)
		a.Error = redact(a.Error, secret)
		a.StatusText = redact(a.StatusText, secret) // the reason phrase is the server's too
		a.Type = redact(a.Type, secret)
	}
	return shown, a
}

// redact removes the secret, raw and escaped, from text the model or a
// page gets (a server echoing its headers would hand it over).
func redact(text, secret string) string {
	q, _ := json.Marshal(secret)
	for _, form := range []string{secret, escapeStrict(secret), url.QueryEscape(secret), string(q[1 : len(q)-1])} {
		if form != "" {
			text = strings.ReplaceAll(text, form, maskShown)
		}
	}
	return text
}

func (s *Service) send(ctx context.Context, r Request) Answer {
	g, err := s.opt.Guard(ctx)
	if err != nil {
		return Answer{Error: "the tool settings cannot be read"}
	}
	ctx, cancel := context.WithTimeout(ctx, s.opt.Timeout)
	defer cancel()
	var body io.Reader
	if r.Body != "" {
		body = strings.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, body)
	if err != nil {
		return Answer{Error: "the request cannot be made from these arguments"}
	}
	for _, h := range r.Headers {
		req.Header.Set(h.Name, h.Value)
	}
	resp, err := s.client(g, r.secretHeaders).Do(req)
	if err != nil {
		return Answer{Error: plain(ctx, err)}
	}
	defer resp.Body.Close()
	a := Answer{Status: resp.StatusCode, StatusText: resp.Status, Type: resp.Header.Get("Content-Type")}
	data, err := io.ReadAll(io.LimitReader(resp.Body, s.opt.MaxBytes+1))
	if err != nil && len(data) == 0 {
		return Answer{Status: a.Status, StatusText: a.StatusText, Type: a.Type, Error: plain(ctx, err)}
	}
	if int64(len(data)) > s.opt.MaxBytes {
		data, a.Truncated = data[:s.opt.MaxBytes], true
	}
	if !isText(a.Type, data) {
		mt, _, _ := mime.ParseMediaType(a.Type)
		a.Error = fmt.Sprintf("the server answered with %s, which is not text", mt)
		return a
	}
	a.Text, a.Truncated = s.text(data, a.Type, a.Truncated)
	return a
}

// text is an answer's body as plain text: valid UTF-8, JSON indented,
// control characters gone, cut at MaxChars.
func (s *Service) text(data []byte, ct string, truncated bool) (string, bool) {
	var pretty bytes.Buffer
	if !truncated && json.Valid(data) && indentedSize(data) <= 4*s.opt.MaxBytes &&
		json.Indent(&pretty, data, "", "  ") == nil {
		data = pretty.Bytes()
	}
	text := strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') {
			return -1
		}
		return r
	}, strings.ToValidUTF8(string(data), "\uFFFD"))
	if utf8.RuneCountInString(text) > s.opt.MaxChars {
		text, truncated = string([]rune(text)[:s.opt.MaxChars]), true
	}
	return text, truncated
}

// indentedSize bounds the size of data indented by json.Indent with two
// spaces: every bracket and comma starts a line as deep as its nesting.
// A hostile server's 256 KB of arrays nested thousands deep would
// otherwise indent to gigabytes (each of its lines thousands of spaces).
func indentedSize(data []byte) int64 {
	n := int64(len(data))
	depth := int64(0)
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			n += 1 + 2*depth
		case c == '}' || c == ']':
			depth--
			n += 1 + 2*depth
		case c == ',':
			n += 1 + 2*depth
		case c == ':':
			n++
		}
	}
	return n
}

// isText reports whether an answer can be read as text: a text type, JSON
// or XML, or no type at all with bytes that are UTF-8.
func isText(ct string, data []byte) bool {
	if ct == "" {
		return utf8.Valid(data) || len(data) == 0
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	switch {
	case strings.HasPrefix(mt, "text/"), strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"),
		mt == "application/json", mt == "application/xml", mt == "application/javascript",
		mt == "application/x-www-form-urlencoded", mt == "application/x-ndjson":
		return true
	}
	return false
}

// plain turns a transport error into a sentence for the model and the
// page; it never holds the URL (which may hold the secret).
func plain(ctx context.Context, err error) string {
	switch {
	case errors.Is(err, netguard.ErrBlocked):
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Sprintf("the address is on a private or special network, which tools may not reach unless an administrator allows its range under Settings → Web (%v)", err)
	case errors.Is(err, netguard.ErrRedirect):
		return "the server redirected in a way that is not followed (a 301, 302 or 303 in answer to a " +
			"request with a body would be retried as a GET)"
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return "the server did not answer in time"
	case errors.Is(ctx.Err(), context.Canceled):
		return "stopped"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return "the request failed: " + ue.Err.Error()
	}
	return "the request failed"
}

// client returns a guarded client for g with the secret headers dropped
// across origins; kept, so that connections are reused between calls.
func (s *Service) client(g netguard.Guard, secretHeaders []string) *http.Client {
	return s.clients.Get(g, netguard.Options{Timeout: s.opt.Timeout, HeaderTimeout: s.opt.Timeout, MaxRedirects: 5,
		SecretHeaders: secretHeaders})
}

// TryResult is a Try: the request as sent (secret masked) and the answer,
// and what the model would read.
type TryResult struct {
	Request Request `json:"request"`
	Answer  Answer  `json:"answer"`
	// Result is the tool result the model would get.
	Result string `json:"result"`
	Failed bool   `json:"failed"`
}

// Try runs the saved tool id with arguments, as a reply would.
func (s *Service) Try(ctx context.Context, id int64, arguments json.RawMessage) (TryResult, error) {
	t, err := s.db.CustomTool(ctx, id)
	if err != nil {
		return TryResult{}, store.Kinded(err, "custom tool")
	}
	req, a := s.call(ctx, t, arguments)
	r := a.result()
	return TryResult{Request: req, Answer: a, Result: r.Text, Failed: r.Failed}, nil
}

// Gate is the gate of every custom tool.
func (s *Service) Gate() tools.Family { return tools.GateCustom }

// Family is a custom tool's family.
func Family(name string) tools.Family { return tools.GateCustom + ":" + tools.Family(name) }

// Tools returns the enabled custom tools caller may use, and their
// guidance. A tool whose name was claimed first (a built-in added after
// it was saved) is left out rather than shadowing it.
func (s *Service) Tools(ctx context.Context, caller auth.Caller, _ store.Chat, taken func(string) bool) ([]tools.Tool, []tools.Guidance, error) {
	if !caller.Perms.Has(Permission) {
		return nil, nil, nil
	}
	rows, err := s.db.CustomToolsFor(ctx, caller.User, caller.Perms.Admin())
	if err != nil {
		return nil, nil, err
	}
	var out []tools.Tool
	var guide []tools.Guidance
	for _, row := range rows {
		if taken != nil && taken(row.Name) {
			s.log.Warn("custom tool left out: its name is taken", "tool", row.Name)
			continue
		}
		out = append(out, s.tool(row))
		if row.Guidance != "" {
			guide = append(guide, tools.Guidance{Family: Family(row.Name), Title: "Custom tool " + row.Name, Text: row.Guidance})
		}
	}
	return out, guide, nil
}

// tool is row as a tool a reply runs (the row as read now travels with
// the reply).
func (s *Service) tool(row store.CustomTool) tools.Tool {
	host := row.URL
	if tg, err := parseTarget(row.URL); err == nil {
		if u, err := url.Parse(tg.origin); err == nil {
			host = u.Host
		}
	}
	return tools.Tool{
		Name: row.Name, Family: Family(row.Name), Permission: Permission,
		Description: row.Description, Parameters: json.RawMessage(row.Parameters),
		Activity: func(json.RawMessage) string { return "Calling " + row.Name + " at " + host + "…" },
		Run: func(ctx context.Context, c tools.Call) tools.Result {
			_, a := s.call(ctx, row, c.Arguments)
			return a.result()
		},
	}
}
