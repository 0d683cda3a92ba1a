// Package connections owns the endpoints LLeMbas talks to: connections with
// their encrypted secrets (API key, headers), the cached client of each,
// model refresh (listing an endpoint's models into the store) and
// first-run discovery of model servers on this machine. The chat service
// asks it for a connection's client; the Connections facade calls the rest.
package connections

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/secrets"
	"github.com/llembas/lembas/backend/store"
)

// Service manages connections and their clients.
type Service struct {
	db   *store.DB
	keys func() (*secrets.Keeper, error)
	log  *slog.Logger
	// llmOpt is used for every client (tests shorten the timeouts).
	llmOpt llm.Options
	// selfPort is our own --serve port, never probed for local servers.
	selfPort int

	mu      sync.Mutex
	clients map[ids.ConnectionID]cachedClient
}

type cachedClient struct {
	updatedAt int64
	client    *llm.Client
}

// Options configure a Service.
type Options struct {
	LLM      llm.Options
	SelfPort int
}

// New returns the service; keys returns the encryption key, or why it is
// unavailable.
func New(db *store.DB, keys func() (*secrets.Keeper, error), log *slog.Logger, opt Options) *Service {
	return &Service{db: db, keys: keys, log: log, llmOpt: opt.LLM, selfPort: opt.SelfPort,
		clients: map[ids.ConnectionID]cachedClient{}}
}

// storeErr maps store errors to application errors.
func storeErr(err error, what string) error { return store.Kinded(err, what) }

// Input is what the connection form sends. On update a nil APIKey
// or Headers keeps the stored secret; "" or an empty map clears it.
type Input struct {
	Name        string             `json:"name"`
	BaseURL     string             `json:"baseUrl"`
	APIKey      *string            `json:"apiKey,omitempty"`
	Headers     *map[string]string `json:"headers,omitempty"`
	CAPEM       *string            `json:"caPem,omitempty"`
	InsecureTLS bool               `json:"insecureTLS,omitempty"`
	Enabled     *bool              `json:"enabled,omitempty"`
}

// View is a connection as the browser may see it: secrets masked.
type View struct {
	ID                ids.ConnectionID  `json:"id"`
	Name              string            `json:"name"`
	BaseURL           string            `json:"baseUrl"`
	APIKey            string            `json:"apiKey"`
	Headers           map[string]string `json:"headers"`
	HasCA             bool              `json:"hasCA"`
	InsecureTLS       bool              `json:"insecureTLS"`
	Enabled           bool              `json:"enabled"`
	LastError         string            `json:"lastError"`
	ModelsRefreshedAt int64             `json:"modelsRefreshedAt"`
	ModelCount        int               `json:"modelCount"`
}

// TestResult is the outcome of "Test connection".
type TestResult struct {
	OK         bool   `json:"ok"`
	ModelCount int    `json:"modelCount"`
	LatencyMs  int64  `json:"latencyMs"`
	Message    string `json:"message"`
}

// RefreshResult counts what a model refresh changed.
type RefreshResult struct {
	Added   int `json:"added"`
	Missing int `json:"missing"`
	Total   int `json:"total"`
}

func (s *Service) keeper() (*secrets.Keeper, error) {
	k, err := s.keys()
	if err != nil {
		return nil, err
	}
	return k, nil
}

// secretsOf decrypts a connection's key and headers.
func (s *Service) secretsOf(c store.Connection) (key string, headers map[string]string, err error) {
	if c.APIKeyEnc == "" && c.HeadersEnc == "" {
		return "", nil, nil
	}
	k, err := s.keeper()
	if err != nil {
		return "", nil, err
	}
	if c.APIKeyEnc != "" {
		if key, err = k.Decrypt(c.APIKeyEnc); err != nil {
			return "", nil, apperr.Wrap(apperr.Unavailable, err, "the API key of %q cannot be decrypted with the current encryption key", c.Name)
		}
	}
	if c.HeadersEnc != "" {
		raw, err := k.Decrypt(c.HeadersEnc)
		if err != nil {
			return "", nil, apperr.Wrap(apperr.Unavailable, err, "the headers of %q cannot be decrypted with the current encryption key", c.Name)
		}
		if err := json.Unmarshal([]byte(raw), &headers); err != nil {
			return "", nil, err
		}
	}
	return key, headers, nil
}

func (s *Service) endpoint(c store.Connection) (llm.Endpoint, error) {
	key, headers, err := s.secretsOf(c)
	if err != nil {
		return llm.Endpoint{}, err
	}
	return llm.Endpoint{BaseURL: c.BaseURL, APIKey: key, Headers: headers, CAPEM: c.CAPEM,
		InsecureTLS: c.InsecureTLS, NoStreamOptions: c.NoStreamOptions}, nil
}

// Client returns a (cached) client for a connection the user may use.
func (s *Service) Client(ctx context.Context, user ids.UserID, id ids.ConnectionID) (*llm.Client, store.Connection, error) {
	c, err := s.db.ConnectionByID(ctx, user, id)
	if err != nil {
		return nil, store.Connection{}, storeErr(err, "connection")
	}
	s.mu.Lock()
	cached, ok := s.clients[id]
	s.mu.Unlock()
	if ok && cached.updatedAt == c.UpdatedAt {
		return cached.client, c, nil
	}
	ep, err := s.endpoint(c)
	if err != nil {
		return nil, c, err
	}
	cl, err := llm.NewClient(ep, s.llmOpt)
	if err != nil {
		return nil, c, err
	}
	s.mu.Lock()
	s.clients[id] = cachedClient{updatedAt: c.UpdatedAt, client: cl}
	s.mu.Unlock()
	return cl, c, nil
}

// Forget drops the cached client of a connection, so that the next Client
// builds one from the stored row (after a change the row's updatedAt does
// not show, such as the stream_options refusal).
func (s *Service) Forget(id ids.ConnectionID) {
	s.mu.Lock()
	delete(s.clients, id)
	s.mu.Unlock()
}

func (s *Service) view(ctx context.Context, user ids.UserID, c store.Connection) View {
	v := View{ID: c.ID, Name: c.Name, BaseURL: c.BaseURL, Headers: map[string]string{}, HasCA: c.CAPEM != "",
		InsecureTLS: c.InsecureTLS, Enabled: c.Enabled, LastError: c.LastError, ModelsRefreshedAt: c.ModelsRefreshedAt}
	if key, headers, err := s.secretsOf(c); err != nil {
		v.APIKey = "(cannot be decrypted)"
	} else {
		v.APIKey = secrets.Mask(key)
		for name, val := range headers {
			v.Headers[name] = secrets.Mask(val)
		}
	}
	if _, n, err := s.db.ListModels(ctx, user, store.ModelFilter{ConnectionID: c.ID, Limit: 1}); err == nil {
		v.ModelCount = n
	}
	return v
}

// List lists the connections the user can see, masked.
func (s *Service) List(ctx context.Context, user ids.UserID) ([]View, error) {
	list, err := s.db.ListConnections(ctx, user)
	if err != nil {
		return nil, err
	}
	out := make([]View, 0, len(list))
	for _, c := range list {
		out = append(out, s.view(ctx, user, c))
	}
	return out, nil
}

// validate checks the input before anything is stored.
func (in *Input) validate() error {
	in.Name = strings.TrimSpace(in.Name)
	in.BaseURL = strings.TrimSpace(in.BaseURL)
	u, err := llm.NormalizeBaseURL(in.BaseURL)
	if err != nil {
		return err
	}
	in.BaseURL = u.String()
	if in.Name == "" {
		in.Name = u.Host
	}
	if len(in.Name) > 200 {
		return apperr.New(apperr.Invalid, "the name is too long")
	}
	if in.Headers != nil {
		for k := range *in.Headers {
			if strings.TrimSpace(k) == "" {
				return apperr.New(apperr.Invalid, "a header needs a name")
			}
		}
	}
	// Building a client checks the CA and header names the same way a
	// request would.
	if _, err := llm.NewClient(llm.Endpoint{BaseURL: in.BaseURL, CAPEM: deref(in.CAPEM), Headers: derefHeaders(in.Headers)}, llm.Options{}); err != nil {
		return err
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefHeaders(h *map[string]string) map[string]string {
	if h == nil {
		return nil
	}
	return *h
}

func (s *Service) encryptSecrets(in Input) (key, headers *string, err error) {
	if in.APIKey == nil && in.Headers == nil {
		return nil, nil, nil
	}
	k, err := s.keeper()
	if err != nil {
		return nil, nil, err
	}
	if in.APIKey != nil {
		v := ""
		if t := strings.TrimSpace(*in.APIKey); t != "" {
			if v, err = k.Encrypt(t); err != nil {
				return nil, nil, err
			}
		}
		key = &v
	}
	if in.Headers != nil {
		v := ""
		if len(*in.Headers) > 0 {
			b, _ := json.Marshal(*in.Headers)
			if v, err = k.Encrypt(string(b)); err != nil {
				return nil, nil, err
			}
		}
		headers = &v
	}
	return key, headers, nil
}

// Create stores a new instance-wide connection and lists its
// models. A failing endpoint does not stop the save: the error is kept on
// the connection and shown.
func (s *Service) Create(ctx context.Context, a store.Actor, in Input) (View, error) {
	if err := in.validate(); err != nil {
		return View{}, err
	}
	key, headers, err := s.encryptSecrets(in)
	if err != nil {
		return View{}, err
	}
	c := store.Connection{Name: in.Name, BaseURL: in.BaseURL, CAPEM: deref(in.CAPEM), InsecureTLS: in.InsecureTLS, Enabled: in.Enabled == nil || *in.Enabled}
	if key != nil {
		c.APIKeyEnc = *key
	}
	if headers != nil {
		c.HeadersEnc = *headers
	}
	c, err = s.db.CreateConnection(ctx, a, c)
	if err != nil {
		return View{}, storeErr(err, "connection")
	}
	s.RefreshModels(ctx, a.User, c.ID)
	return s.getView(ctx, a.User, c.ID)
}

func (s *Service) getView(ctx context.Context, user ids.UserID, id ids.ConnectionID) (View, error) {
	c, err := s.db.ConnectionByID(ctx, user, id)
	if err != nil {
		return View{}, storeErr(err, "connection")
	}
	return s.view(ctx, user, c), nil
}

// Update changes a connection; secrets only when given.
func (s *Service) Update(ctx context.Context, a store.Actor, id ids.ConnectionID, in Input) (View, error) {
	cur, err := s.db.ConnectionByID(ctx, a.User, id)
	if err != nil {
		return View{}, storeErr(err, "connection")
	}
	if err := in.validate(); err != nil {
		return View{}, err
	}
	// Stored secrets never follow the connection to another server: a
	// new address with the key kept would hand the key to whoever runs
	// that server (someone with connections.manage, say, who cannot read
	// the key otherwise). The key and headers must be typed again, or
	// cleared.
	if keptSecrets(cur, in) && !sameOrigin(cur.BaseURL, in.BaseURL) {
		return View{}, apperr.New(apperr.Invalid,
			"The address moved to another server: enter the API key (and secret headers) again, or clear them, so that stored secrets are never sent somewhere new.")
	}
	// Nor may the trust that keeps them from others be loosened under
	// them: turning off certificate checks, or adding a CA of one's own,
	// lets whoever sits between this server and the endpoint read the key
	// on the very same origin.
	if keptSecrets(cur, in) && widensTrust(cur, in) {
		return View{}, apperr.New(apperr.Invalid,
			"Changing which certificates are trusted needs the API key (and secret headers) entered again, or cleared, so that stored secrets are never sent over a connection trusted differently.")
	}
	key, headers, err := s.encryptSecrets(in)
	if err != nil {
		return View{}, err
	}
	// Like the secrets, an absent CA keeps the stored one and "" clears it:
	// the form never sees the PEM again to send it back.
	cur.Name, cur.BaseURL, cur.InsecureTLS = in.Name, in.BaseURL, in.InsecureTLS
	if in.CAPEM != nil {
		cur.CAPEM = *in.CAPEM
	}
	if in.Enabled != nil {
		cur.Enabled = *in.Enabled
	}
	if _, err := s.db.UpdateConnection(ctx, a, cur); err != nil {
		return View{}, storeErr(err, "connection")
	}
	if key != nil || headers != nil {
		if err := s.db.SetConnectionSecrets(ctx, a, id, key, headers); err != nil {
			return View{}, storeErr(err, "connection")
		}
	}
	s.Forget(id)
	return s.getView(ctx, a.User, id)
}

// Delete removes a connection and its models.
func (s *Service) Delete(ctx context.Context, a store.Actor, id ids.ConnectionID) error {
	if err := s.db.DeleteConnection(ctx, a, id); err != nil {
		return storeErr(err, "connection")
	}
	s.Forget(id)
	return nil
}

// Test lists the models of a stored connection.
func (s *Service) Test(ctx context.Context, user ids.UserID, id ids.ConnectionID) (TestResult, error) {
	cl, _, err := s.Client(ctx, user, id)
	if err != nil {
		if apperr.KindOf(err) == apperr.NotFound {
			return TestResult{}, err
		}
		return TestResult{Message: publicMessage(err)}, nil
	}
	return runTest(ctx, cl), nil
}

// TestDraft tests a connection that has not been saved yet.
func (s *Service) TestDraft(ctx context.Context, in Input) (TestResult, error) {
	if err := in.validate(); err != nil {
		return TestResult{Message: publicMessage(err)}, nil
	}
	ep := llm.Endpoint{BaseURL: in.BaseURL, CAPEM: deref(in.CAPEM), InsecureTLS: in.InsecureTLS, Headers: derefHeaders(in.Headers)}
	if in.APIKey != nil {
		ep.APIKey = strings.TrimSpace(*in.APIKey)
	}
	cl, err := llm.NewClient(ep, s.llmOpt)
	if err != nil {
		return TestResult{Message: publicMessage(err)}, nil
	}
	return runTest(ctx, cl), nil
}

func runTest(ctx context.Context, cl *llm.Client) TestResult {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	res, err := cl.Test(ctx)
	if err != nil {
		return TestResult{Message: publicMessage(err)}
	}
	return TestResult{OK: true, ModelCount: res.Count, LatencyMs: res.Latency.Milliseconds(),
		Message: plural(res.Count, "model") + " available"}
}

func publicMessage(err error) string {
	_, msg := apperr.Public(err)
	return msg
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

// RefreshModels lists the connection's models and syncs them. Its error is
// also stored on the connection, where the settings page shows it.
func (s *Service) RefreshModels(ctx context.Context, user ids.UserID, id ids.ConnectionID) (RefreshResult, error) {
	cl, c, err := s.Client(ctx, user, id)
	if err != nil {
		if c.ID != 0 {
			s.db.SetConnectionStatus(ctx, id, publicMessage(err), c.ModelsRefreshedAt, c.NoStreamOptions)
		}
		return RefreshResult{}, err
	}
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	models, err := cl.ListModels(lctx)
	if err != nil {
		s.db.SetConnectionStatus(ctx, id, publicMessage(err), c.ModelsRefreshedAt, c.NoStreamOptions)
		return RefreshResult{}, err
	}
	up := make([]store.UpstreamModel, 0, len(models))
	for _, m := range models {
		up = append(up, store.UpstreamModel{ID: m.ID, ContextLength: int64(m.ContextLength), Meta: m.Raw})
	}
	res, err := s.db.SyncModels(ctx, id, up)
	if err != nil {
		return RefreshResult{}, err
	}
	if err := s.db.SetConnectionStatus(ctx, id, "", time.Now().UnixMilli(), c.NoStreamOptions); err != nil {
		return RefreshResult{}, err
	}
	return RefreshResult{Added: res.Added, Missing: res.Missing, Total: len(models)}, nil
}

// LocalServer is a model server found on this machine at first run.
type LocalServer struct {
	BaseURL    string `json:"baseUrl"`
	Server     string `json:"server"`
	ModelCount int    `json:"modelCount"`
}

// Discover looks for model servers on the usual local ports, only while no
// connection exists (first run), never on our own port.
func (s *Service) Discover(ctx context.Context, user ids.UserID) ([]LocalServer, error) {
	list, err := s.db.ListConnections(ctx, user)
	if err != nil {
		return nil, err
	}
	if len(list) > 0 {
		return []LocalServer{}, nil
	}
	found := llm.Probe(ctx, []int{11434, 1234, 8080, 8000}, s.selfPort)
	out := make([]LocalServer, 0, len(found))
	for _, f := range found {
		out = append(out, LocalServer{BaseURL: f.BaseURL, Server: f.Server, ModelCount: len(f.Models)})
	}
	return out, nil
}

// keptSecrets reports whether an update keeps a stored API key or stored
// headers (it does not send new ones).
func keptSecrets(cur store.Connection, in Input) bool {
	return (in.APIKey == nil && cur.APIKeyEnc != "") || (in.Headers == nil && cur.HeadersEnc != "")
}

// widensTrust reports whether an update trusts more certificates than the
// stored connection: certificate checks turned off, or a CA added or
// replaced. Turning checks back on or removing the CA only narrows it.
func widensTrust(cur store.Connection, in Input) bool {
	if in.InsecureTLS && !cur.InsecureTLS {
		return true
	}
	return in.CAPEM != nil && strings.TrimSpace(*in.CAPEM) != "" && strings.TrimSpace(*in.CAPEM) != strings.TrimSpace(cur.CAPEM)
}

// sameOrigin reports whether two base URLs reach the same server: scheme,
// host and port (the path may change).
func sameOrigin(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	if err1 != nil || err2 != nil {
		return false
	}
	return strings.EqualFold(ua.Scheme, ub.Scheme) && strings.EqualFold(ua.Host, ub.Host)
}

// RefusesStreamOptions remembers that conn's endpoint refused
// stream_options (a reply had to be retried without it), so that its next
// requests leave it out.
func (s *Service) RefusesStreamOptions(ctx context.Context, conn store.Connection) {
	if conn.NoStreamOptions {
		return
	}
	if err := s.db.SetConnectionStatus(ctx, conn.ID, "", conn.ModelsRefreshedAt, true); err != nil {
		s.log.Warn("remember stream_options refusal", "connection", conn.ID, "err", err)
	}
	s.Forget(conn.ID)
}
