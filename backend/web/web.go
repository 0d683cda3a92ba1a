// Package web is what the built-in web tools run on: a search through the
// provider an administrator chose (DuckDuckGo's HTML page, a SearXNG
// instance's JSON API, or Firecrawl's search API), all giving one result
// shape, and the fetch of a page as readable text. It implements
// tools.Web. Every request goes through backend/netguard, widened only by
// the administrator's allow-list of LAN ranges; what comes back is
// untrusted and is cleaned (control characters, lengths, schemes) before
// anyone sees it.
package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/netguard"
	"github.com/llembas/lembas/backend/secrets"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/tools"
)

// Provider names a search provider.
type Provider string

// The providers ("" is none: web search is off).
const (
	ProviderNone       Provider = ""
	ProviderDuckDuckGo Provider = "duckduckgo"
	ProviderSearXNG    Provider = "searxng"
	ProviderFirecrawl  Provider = "firecrawl"
)

// The instance settings this package owns.
const (
	SettingProvider     = "web_provider"
	SettingSearXNGURL   = "web_searxng_url"
	SettingFirecrawlKey = store.SettingWebFirecrawlKey // a Fernet token, counted by store.HasEncrypted
	SettingAllow        = "web_allow"                  // prefixes, one a line
	SettingResults      = "web_results"
)

// Bounds.
const (
	DefaultResults = 5
	MaxResults     = 20
	maxAllow       = 32
)

// Options tune a Service; zero values are the defaults.
type Options struct {
	// Guard is the base guard (tests give it a resolver hook or a
	// loopback range); the administrator's allow-list is added to it.
	Guard netguard.Guard
	// DuckDuckGoURL and FirecrawlURL are the providers' endpoints (tests
	// point them at local fakes).
	DuckDuckGoURL string
	FirecrawlURL  string
	// Timeout bounds one search or one fetch, body included (default 20 s).
	Timeout time.Duration
	// MaxBytes is how much of a page is read (default 2 MB); MaxChars is
	// how much of its text is kept (default 40,000 characters).
	MaxBytes int64
	MaxChars int
}

// Service implements tools.Web on the instance's settings.
type Service struct {
	db   *store.DB
	keys func() (*secrets.Keeper, error)
	log  *slog.Logger
	opt  Options

	clients netguard.Clients
}

var _ tools.Web = (*Service)(nil)

// New returns the service.
func New(db *store.DB, keys func() (*secrets.Keeper, error), log *slog.Logger, opt Options) *Service {
	if opt.DuckDuckGoURL == "" {
		opt.DuckDuckGoURL = "https://html.duckduckgo.com/html/"
	}
	if opt.FirecrawlURL == "" {
		opt.FirecrawlURL = "https://api.firecrawl.dev/v1/search"
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 20 * time.Second
	}
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = 2 << 20
	}
	if opt.MaxChars <= 0 {
		opt.MaxChars = 40000
	}
	return &Service{db: db, keys: keys, log: log, opt: opt}
}

// config is the stored settings, read once per call.
type config struct {
	provider     Provider
	searxngURL   string
	firecrawlKey string // the token, encrypted
	allow        []netip.Prefix
	results      int
}

func (s *Service) config(ctx context.Context) (config, error) {
	var c config
	get := func(k string) (string, error) {
		v, _, err := s.db.Setting(ctx, k)
		return v, err
	}
	p, err := get(SettingProvider)
	if err != nil {
		return c, err
	}
	c.provider = Provider(p)
	if c.searxngURL, err = get(SettingSearXNGURL); err != nil {
		return c, err
	}
	if c.firecrawlKey, err = get(SettingFirecrawlKey); err != nil {
		return c, err
	}
	allow, err := get(SettingAllow)
	if err != nil {
		return c, err
	}
	for _, line := range strings.Split(allow, "\n") {
		if p, err := netip.ParsePrefix(strings.TrimSpace(line)); err == nil {
			c.allow = append(c.allow, p)
		}
	}
	n, err := get(SettingResults)
	if err != nil {
		return c, err
	}
	c.results, _ = strconv.Atoi(n)
	if c.results <= 0 || c.results > MaxResults {
		c.results = DefaultResults
	}
	return c, nil
}

// Guard is the base guard widened by the administrator's allowed ranges:
// what every outbound request of a tool goes through (backend/mcp takes
// it too, so one allow-list governs every tool).
func (s *Service) Guard(ctx context.Context) (netguard.Guard, error) {
	c, err := s.config(ctx)
	if err != nil {
		return netguard.Guard{}, err
	}
	return s.guard(c.allow), nil
}

// guard is the base guard widened by allow.
func (s *Service) guard(allow []netip.Prefix) netguard.Guard {
	g := s.opt.Guard
	g.Allow = append(append([]netip.Prefix(nil), g.Allow...), allow...)
	return g
}

// client returns the guarded client for an allow-list (kept, so that
// connections are reused between calls).
func (s *Service) client(allow []netip.Prefix) *http.Client {
	return s.clients.Get(s.guard(allow), netguard.Options{Timeout: s.opt.Timeout, HeaderTimeout: s.opt.Timeout,
		MaxRedirects: 5, SecretHeaders: []string{"X-Api-Key"}})
}

// Settings are the web settings as an administrator's page sees them: the
// Firecrawl key only as whether one is set.
type Settings struct {
	Provider        Provider `json:"provider"`
	SearXNGURL      string   `json:"searxngUrl"`
	FirecrawlKeySet bool     `json:"firecrawlKeySet"`
	// Allow are the LAN ranges (CIDR prefixes) requests may reach.
	Allow   []string `json:"allow"`
	Results int      `json:"results"`
}

// SettingsInput changes the settings that are set. FirecrawlKey "" clears
// the key.
type SettingsInput struct {
	Provider     *Provider `json:"provider,omitempty"`
	SearXNGURL   *string   `json:"searxngUrl,omitempty"`
	FirecrawlKey *string   `json:"firecrawlKey,omitempty"`
	Allow        *[]string `json:"allow,omitempty"`
	Results      *int      `json:"results,omitempty"`
}

// Get returns the settings.
func (s *Service) Get(ctx context.Context) (Settings, error) {
	c, err := s.config(ctx)
	if err != nil {
		return Settings{}, err
	}
	out := Settings{Provider: c.provider, SearXNGURL: c.searxngURL, FirecrawlKeySet: c.firecrawlKey != "",
		Allow: []string{}, Results: c.results}
	for _, p := range c.allow {
		out.Allow = append(out.Allow, p.String())
	}
	return out, nil
}

// Set validates and stores the settings that are set. The SearXNG address
// is checked against the guard with the allow-list being saved, so that
// an instance on the LAN is refused when saved, with what to do, rather
// than on the first search.
func (s *Service) Set(ctx context.Context, in SettingsInput) (Settings, error) {
	c, err := s.config(ctx)
	if err != nil {
		return Settings{}, err
	}
	writes := map[string]string{}
	if in.Allow != nil {
		list, err := ParseAllow(*in.Allow)
		if err != nil {
			return Settings{}, err
		}
		c.allow = list
		var lines []string
		for _, p := range list {
			lines = append(lines, p.String())
		}
		writes[SettingAllow] = strings.Join(lines, "\n")
	}
	if in.Provider != nil {
		switch *in.Provider {
		case ProviderNone, ProviderDuckDuckGo, ProviderSearXNG, ProviderFirecrawl:
		default:
			return Settings{}, apperr.New(apperr.Invalid, "Unknown search provider %q.", *in.Provider)
		}
		c.provider = *in.Provider
		writes[SettingProvider] = string(*in.Provider)
	}
	if in.SearXNGURL != nil {
		raw := strings.TrimSpace(*in.SearXNGURL)
		if raw != "" {
			u, err := s.checkInstanceURL(ctx, raw, c.allow)
			if err != nil {
				return Settings{}, err
			}
			raw = u
		}
		c.searxngURL = raw
		writes[SettingSearXNGURL] = raw
	}
	if in.FirecrawlKey != nil {
		tok := ""
		if k := strings.TrimSpace(*in.FirecrawlKey); k != "" {
			if len(k) > 500 {
				return Settings{}, apperr.New(apperr.Invalid, "That key is too long to be a Firecrawl key.")
			}
			keeper, err := s.keys()
			if err != nil {
				return Settings{}, err
			}
			if tok, err = keeper.Encrypt(k); err != nil {
				return Settings{}, err
			}
		}
		c.firecrawlKey = tok
		writes[SettingFirecrawlKey] = tok
	}
	if in.Results != nil {
		if *in.Results < 1 || *in.Results > MaxResults {
			return Settings{}, apperr.New(apperr.Invalid, "The number of results is 1 to %d.", MaxResults)
		}
		writes[SettingResults] = strconv.Itoa(*in.Results)
	}
	switch {
	case c.provider == ProviderSearXNG && c.searxngURL == "":
		return Settings{}, apperr.New(apperr.Invalid, "SearXNG needs the address of an instance.")
	case c.provider == ProviderFirecrawl && c.firecrawlKey == "":
		return Settings{}, apperr.New(apperr.Invalid, "Firecrawl needs an API key.")
	}
	for k, v := range writes {
		if err := s.db.SetSetting(ctx, k, v); err != nil {
			return Settings{}, err
		}
	}
	return s.Get(ctx)
}

// checkInstanceURL normalises a SearXNG address and refuses one the guard
// (with allow) would refuse, saying how to open it.
func (s *Service) checkInstanceURL(ctx context.Context, raw string, allow []netip.Prefix) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", apperr.New(apperr.Invalid, "The SearXNG address is an http or https URL, such as https://searx.example.org.")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", apperr.New(apperr.Invalid, "The SearXNG address is the instance's base URL, without a user name, query or fragment.")
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	g := s.guard(allow)
	blocked := g.CheckURL(u)
	if blocked == nil {
		rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		if err := g.Resolve(rctx, u.Hostname()); errors.Is(err, netguard.ErrBlocked) {
			blocked = err
		}
		cancel()
	}
	if blocked != nil {
		return "", apperr.Wrap(apperr.Invalid, blocked, "%s is on a private or special network (%v). To use a SearXNG on your network, add its address range to the allowed ranges first.", u.Host, blocked)
	}
	return u.String(), nil
}

// metadata are the cloud metadata addresses no allow-list may open.
var metadata = []netip.Addr{netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("fd00:ec2::254")}

// embedding are the IPv6 ranges that carry an IPv4 address: allowing one
// would open IPv4 space by the back door.
var embedding = []netip.Prefix{netip.MustParsePrefix("::/96"), netip.MustParsePrefix("::ffff:0:0/96"),
	netip.MustParsePrefix("64:ff9b::/96"), netip.MustParsePrefix("2002::/16")}

// ParseAllow checks an allow-list: CIDR prefixes or single addresses, at
// most 32. Catch-alls are refused outright rather than warned about: an
// IPv4 range wider than /8 or an IPv6 one wider than /16 (or one holding
// the IPv4-embedding ranges) would switch the guard off for more than a
// home network, and so would one holding a cloud metadata address.
func ParseAllow(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, raw := range list {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		p, err := netip.ParsePrefix(raw)
		if err != nil {
			a, aerr := netip.ParseAddr(raw)
			if aerr != nil || a.Zone() != "" {
				return nil, apperr.New(apperr.Invalid, "%q is not an address range: write it as 192.168.1.0/24 or a single address such as 192.168.1.20.", raw)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		if p.Masked() != p {
			return nil, apperr.New(apperr.Invalid, "%q has host bits set; the range is %s.", raw, p.Masked())
		}
		if (p.Addr().Is4() && p.Bits() < 8) || (p.Addr().Is6() && p.Bits() < 16) {
			return nil, apperr.New(apperr.Invalid, "%s is too wide: allow only your own network's range (such as 192.168.1.0/24), at most a /8.", p)
		}
		for _, m := range metadata {
			if p.Contains(m) {
				return nil, apperr.New(apperr.Invalid, "%s holds the cloud metadata address %s, which stays refused; allow a narrower range.", p, m)
			}
		}
		for _, e := range embedding {
			if p.Overlaps(e) {
				return nil, apperr.New(apperr.Invalid, "%s overlaps %s, whose addresses carry IPv4 addresses; allow the IPv4 range itself.", p, e)
			}
		}
		if len(out) == maxAllow {
			return nil, apperr.New(apperr.Invalid, "At most %d ranges.", maxAllow)
		}
		out = append(out, p)
	}
	return out, nil
}

// SearchReady reports whether a provider is chosen.
func (s *Service) SearchReady(ctx context.Context) bool {
	c, err := s.config(ctx)
	return err == nil && c.provider != ProviderNone
}

// Search runs query on the chosen provider and returns at most n hits (n
// ≤ 0, or more than the instance's number: the instance's number).
func (s *Service) Search(ctx context.Context, query string, n int) ([]tools.SearchHit, error) {
	c, err := s.config(ctx)
	if err != nil {
		return nil, err
	}
	query = strings.TrimSpace(cleanLine(query, 400))
	if query == "" {
		return nil, errors.New("the search query is empty")
	}
	if n <= 0 || n > c.results {
		n = c.results
	}
	ctx, cancel := context.WithTimeout(ctx, s.opt.Timeout)
	defer cancel()
	hc := s.client(c.allow)
	var hits []tools.SearchHit
	switch c.provider {
	case ProviderDuckDuckGo:
		hits, err = s.duckduckgo(ctx, hc, query)
	case ProviderSearXNG:
		hits, err = s.searxng(ctx, hc, c.searxngURL, query)
	case ProviderFirecrawl:
		var key string
		if key, err = s.decrypt(c.firecrawlKey); err == nil {
			hits, err = s.firecrawl(ctx, hc, key, query, n)
		}
	default:
		return nil, errors.New("web search is not set up: an administrator can choose a provider under Settings → Web")
	}
	if err != nil {
		return nil, plain(ctx, err)
	}
	return cleanHits(hits, n), nil
}

func (s *Service) decrypt(tok string) (string, error) {
	if tok == "" {
		return "", errors.New("no Firecrawl API key is set")
	}
	k, err := s.keys()
	if err != nil {
		return "", errors.New("the Firecrawl API key cannot be read: the encryption key is unavailable")
	}
	v, err := k.Decrypt(tok)
	if err != nil {
		return "", errors.New("the Firecrawl API key cannot be decrypted with the current encryption key")
	}
	return v, nil
}

// plain turns transport errors into sentences a model (and a person) can
// read; the provider's own errors already are.
func plain(ctx context.Context, err error) error {
	var pe *providerError
	switch {
	case errors.As(err, &pe):
		return err
	case errors.Is(err, netguard.ErrBlocked):
		return fmt.Errorf("the address is on a private or special network, which web requests may not reach (%w)", err)
	case errors.Is(err, netguard.ErrRedirect):
		return fmt.Errorf("the server redirected in a way that is not followed (%w)", err)
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return errors.New("the server did not answer in time")
	case errors.Is(ctx.Err(), context.Canceled):
		return errors.New("stopped")
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("the request failed: %v", ue.Err)
	}
	return err
}
