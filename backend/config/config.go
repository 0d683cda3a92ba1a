// Package config is the deployment configuration: what is read once at start
// from LEMBAS_* environment variables and command-line flags. Instance settings
// that an admin edits at run time live in the database instead (see
// backend/settings); the environment only seeds those.
package config

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/llembas/lembas/backend/secrets"
)

// DefaultAddr is where --serve listens unless told otherwise. Not 8080: local
// model servers (llama.cpp) take that one.
const DefaultAddr = "127.0.0.1:8484"

// Config is the typed deployment configuration. It is built by Load and
// validated by Validate; nothing reads the environment after that.
type Config struct {
	// DataDir holds the database, the key file fallback, uploads and the lock.
	DataDir string
	// SecretKey is LEMBAS_SECRET_KEY: a Fernet key used instead of the OS
	// keychain. Never printed.
	SecretKey string
	// NoKeychain skips the OS keychain (headless servers, tests).
	NoKeychain bool
	// Addr is the listen address of --serve.
	Addr string
	// AllowedHosts are extra Host header values accepted by the HTTP server
	// besides loopback names and IP literals ("host" or "host:port").
	AllowedHosts []string
	// TrustedProxies are the reverse proxies (addresses or CIDR prefixes)
	// whose X-Forwarded-For and X-Forwarded-Proto headers are believed.
	// From anyone else those headers are ignored.
	TrustedProxies []netip.Prefix
	// LogLevel is debug, info, warn or error.
	LogLevel string
	// InstanceName seeds the instance name setting on first start.
	InstanceName string
	// SelfTest turns on the test-only Diag facade and the frontend self-test.
	// It exists so that the desktop tests can drive the real binary.
	SelfTest bool
}

// Var describes one environment variable, for help text and the README.
type Var struct {
	Name, Default, Help string
}

// Vars lists every variable Load reads.
var Vars = []Var{
	{"LEMBAS_DATA_DIR", "the OS user data directory + /lembas", "Where the database, key file and uploads live."},
	{"LEMBAS_SECRET_KEY", "(unset)", "Fernet key for encrypting API keys; used instead of the OS keychain. Make one with `lembas secret-key`."},
	{"LEMBAS_NO_KEYCHAIN", "false", "Never use the OS keychain; use LEMBAS_SECRET_KEY or a 0600 key file in the data directory."},
	{"LEMBAS_ADDR", DefaultAddr, "Listen address for --serve (same as --addr)."},
	{"LEMBAS_ALLOWED_HOSTS", "(loopback and IP literals only)", "Comma-separated host or host:port names the server answers to."},
	{"LEMBAS_TRUSTED_PROXIES", "(none)", "Comma-separated addresses or CIDR prefixes of reverse proxies whose X-Forwarded-For/-Proto headers are believed."},
	{"LEMBAS_LOG_LEVEL", "info", "debug, info, warn or error."},
	{"LEMBAS_INSTANCE_NAME", "LLeMbas", "Initial instance name (later edited in the app; the database wins)."},
}

// Load reads the configuration from getenv (os.LookupEnv in production) and
// fills defaults. Call Validate after applying flags.
func Load(getenv func(string) (string, bool)) (Config, error) {
	get := func(k string) string { v, _ := getenv(k); return strings.TrimSpace(v) }
	c := Config{
		DataDir:      get("LEMBAS_DATA_DIR"),
		SecretKey:    get("LEMBAS_SECRET_KEY"),
		Addr:         get("LEMBAS_ADDR"),
		LogLevel:     strings.ToLower(get("LEMBAS_LOG_LEVEL")),
		InstanceName: get("LEMBAS_INSTANCE_NAME"),
	}
	var errs []error
	var err error
	if c.NoKeychain, err = parseBool("LEMBAS_NO_KEYCHAIN", get("LEMBAS_NO_KEYCHAIN")); err != nil {
		errs = append(errs, err)
	}
	if c.SelfTest, err = parseBool("LEMBAS_SELFTEST", get("LEMBAS_SELFTEST")); err != nil {
		errs = append(errs, err)
	}
	if hosts := get("LEMBAS_ALLOWED_HOSTS"); hosts != "" {
		for _, h := range strings.Split(hosts, ",") {
			if h = strings.TrimSpace(h); h != "" {
				c.AllowedHosts = append(c.AllowedHosts, h)
			}
		}
	}
	if proxies := get("LEMBAS_TRUSTED_PROXIES"); proxies != "" {
		for _, p := range strings.Split(proxies, ",") {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			pre, err := parsePrefix(p)
			if err != nil {
				errs = append(errs, fmt.Errorf("LEMBAS_TRUSTED_PROXIES: %q is not an address or CIDR prefix", p))
				continue
			}
			c.TrustedProxies = append(c.TrustedProxies, pre)
		}
	}
	if c.DataDir == "" {
		d, err := DefaultDataDir()
		if err != nil {
			errs = append(errs, err)
		}
		c.DataDir = d
	}
	if c.Addr == "" {
		c.Addr = DefaultAddr
	}
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	if c.InstanceName == "" {
		c.InstanceName = "LLeMbas"
	}
	return c, errors.Join(errs...)
}

// Validate checks the configuration and normalises paths. Its errors name the
// variable or flag to fix.
func (c *Config) Validate() error {
	var errs []error
	if c.DataDir == "" {
		errs = append(errs, errors.New("LEMBAS_DATA_DIR is empty and no user data directory could be found; set LEMBAS_DATA_DIR"))
	} else if abs, err := filepath.Abs(c.DataDir); err != nil {
		errs = append(errs, fmt.Errorf("LEMBAS_DATA_DIR %q: %w", c.DataDir, err))
	} else {
		c.DataDir = abs
	}
	if c.SecretKey != "" {
		if _, err := secrets.ParseKey(c.SecretKey); err != nil {
			errs = append(errs, fmt.Errorf("LEMBAS_SECRET_KEY is not a usable key (make one with `lembas secret-key`): %w", err))
		}
	}
	if _, err := SplitAddr(c.Addr); err != nil {
		errs = append(errs, fmt.Errorf("LEMBAS_ADDR / --addr: %w", err))
	}
	for _, h := range c.AllowedHosts {
		if err := checkHostEntry(h); err != nil {
			errs = append(errs, fmt.Errorf("LEMBAS_ALLOWED_HOSTS: %w", err))
		}
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("LEMBAS_LOG_LEVEL %q: want debug, info, warn or error", c.LogLevel))
	}
	return errors.Join(errs...)
}

// Redacted returns the configuration as name/value pairs safe to print:
// the secret key shows only whether it is set.
func (c Config) Redacted() [][2]string {
	key := "(unset)"
	if c.SecretKey != "" {
		key = "(set)"
	}
	hosts := strings.Join(c.AllowedHosts, ",")
	if hosts == "" {
		hosts = "(none)"
	}
	return [][2]string{
		{"LEMBAS_DATA_DIR", c.DataDir},
		{"LEMBAS_SECRET_KEY", key},
		{"LEMBAS_NO_KEYCHAIN", strconv.FormatBool(c.NoKeychain)},
		{"LEMBAS_ADDR", c.Addr},
		{"LEMBAS_ALLOWED_HOSTS", hosts},
		{"LEMBAS_LOG_LEVEL", c.LogLevel},
	}
}

// DBPath is the SQLite database inside the data directory.
func (c Config) DBPath() string { return filepath.Join(c.DataDir, "lembas.db") }

// Addr is a validated listen address.
type Addr struct {
	Host string
	Port int
}

// Loopback reports whether the address only listens on this machine.
func (a Addr) Loopback() bool {
	if a.Host == "localhost" {
		return true
	}
	ip := net.ParseIP(a.Host)
	return ip != nil && ip.IsLoopback()
}

// SplitAddr parses host:port. An empty host (":8484") means every interface.
func SplitAddr(s string) (Addr, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return Addr{}, fmt.Errorf("%q is not host:port (for example %s)", s, DefaultAddr)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p > 65535 {
		return Addr{}, fmt.Errorf("%q: port must be a number from 0 to 65535", s)
	}
	return Addr{Host: host, Port: p}, nil
}

func checkHostEntry(h string) error {
	if strings.ContainsAny(h, "/ @") {
		return fmt.Errorf("%q: want a host name or host:port, not a URL", h)
	}
	if strings.Contains(h, ":") && !strings.HasPrefix(h, "[") {
		if _, err := SplitAddr(h); err != nil {
			return fmt.Errorf("%q: %v", h, err)
		}
	}
	return nil
}

func parseBool(name, v string) (bool, error) {
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s=%q: want true or false", name, v)
	}
	return b, nil
}

// DefaultDataDir is the per-user data directory of the OS plus "lembas":
// $XDG_DATA_HOME or ~/.local/share on Linux and BSD, ~/Library/Application
// Support on macOS, %LocalAppData% on Windows.
func DefaultDataDir() (string, error) {
	switch runtime.GOOS {
	case "windows":
		if d := os.Getenv("LocalAppData"); d != "" {
			return filepath.Join(d, "lembas"), nil
		}
	case "darwin":
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(home, "Library", "Application Support", "lembas"), nil
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "lembas"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find home directory: %w", err)
	}
	return filepath.Join(home, ".local", "share", "lembas"), nil
}

// parsePrefix reads "10.0.0.0/8", "::1" or "192.168.1.2" as a prefix.
func parsePrefix(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		return p.Masked(), err
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), nil
}
