// Package core opens one LLeMbas instance: it takes the data-directory lock,
// opens and syncs the database, finds the encryption key, creates the owner,
// and builds the dispatcher, the event bus and the shared http.Handler. Both
// `lembas --serve` and the desktop app start through Open, so they cannot
// differ in what they set up.
package core

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/llembas/lembas/assets"
	"github.com/llembas/lembas/backend/agent"
	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/audio"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/config"
	"github.com/llembas/lembas/backend/connections"
	"github.com/llembas/lembas/backend/customtools"
	"github.com/llembas/lembas/backend/drops"
	"github.com/llembas/lembas/backend/events"
	"github.com/llembas/lembas/backend/files"
	"github.com/llembas/lembas/backend/folders"
	"github.com/llembas/lembas/backend/generation"
	"github.com/llembas/lembas/backend/httpapi"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/library"
	"github.com/llembas/lembas/backend/llm"
	"github.com/llembas/lembas/backend/mcp"
	"github.com/llembas/lembas/backend/netguard"
	"github.com/llembas/lembas/backend/prompts"
	"github.com/llembas/lembas/backend/render"
	"github.com/llembas/lembas/backend/secrets"
	"github.com/llembas/lembas/backend/settings"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/suggestions"
	"github.com/llembas/lembas/backend/terminal"
	"github.com/llembas/lembas/backend/tools"
	webtools "github.com/llembas/lembas/backend/web"
)

// Mode is how the process runs.
type Mode string

// The modes.
const (
	Desktop Mode = "desktop"
	Serve   Mode = "serve"
)

// Options are what Open needs besides the configuration.
type Options struct {
	Mode      Mode
	Version   string
	BuildTags []string
	Files     fs.FS // the frontend
	Log       *slog.Logger
	// Keyring replaces the OS keychain (tests).
	Keyring secrets.Keyring
	// OpenURL opens links in the system browser (desktop only).
	OpenURL func(string) error
	// Notify shows a native notification (desktop only).
	Notify func(title, body string) error
	// TrayStatus says whether the tray icon is registered (desktop only).
	TrayStatus func() string
	// Sharer runs the household server from the desktop app (desktop only).
	Sharer api.Sharer
	// LLM and Generation tune the endpoint client and replies (tests
	// shorten timeouts); zero values are the defaults.
	LLM        llm.Options
	Generation generation.Options
	// SelfPort is our own port, never probed for local model servers.
	SelfPort int
	// Sessions and Password tune sign-in (tests shorten lifetimes and
	// make hashing cheap); zero values are the defaults.
	Sessions auth.SessionOptions
	Password auth.Params
	Login    *auth.LoginLimits
	// Heartbeat is the event streams' keep-alive interval, which also
	// bounds how long a revoked session keeps its stream (0: 15 s).
	Heartbeat time.Duration
	// ToolsWeb replaces what the built-in web tools run on (tests give a
	// fake); nil is Core.Web, except under LEMBAS_SELFTEST, where
	// tools.SelfTestWeb answers without the network (the Chromium tests).
	ToolsWeb tools.Web
	// AudioGuard guards users' own voice endpoints (tests let their
	// loopback fake through).
	AudioGuard netguard.Guard
	// Web tunes the web tools (tests point the providers at fakes and
	// give the guard a resolver hook); the administrator's allow-list is
	// added to its guard.
	Web webtools.Options
	// MCP tunes the MCP tools (tests shorten the call time limit).
	MCP mcp.Options
	// Agent tunes the agent service (tests shorten its timeouts).
	Agent agent.Options
	// WriteTimeout, MaxDownloads and DownloadWait tune the listening
	// handler (httpapi.Options); zero values are the defaults.
	WriteTimeout time.Duration
	MaxDownloads int
	DownloadWait time.Duration
	// TerminalDialer replaces how a terminal reaches an agent chat's host
	// (tests give a fake shell); nil is the chat's SSH profile.
	TerminalDialer terminal.Dialer
	// Now is the harness's clock (tests fix it so requests do not depend
	// on the day); nil is time.Now, the server's local time zone.
	Now func() time.Time
}

// Core is an open instance.
type Core struct {
	Config     config.Config
	DB         *store.DB
	Bus        *events.Bus
	Dispatcher *api.Dispatcher
	Owner      store.User
	Log        *slog.Logger
	Render     *render.Renderer
	Gen        *generation.Service
	Chat       *chat.Service
	// Connections owns the endpoints, their secrets and models.
	Connections *connections.Service
	// Prefs and Instance are people's preferences and the instance's
	// settings.
	Prefs    *settings.Prefs
	Instance *settings.Instance
	Accounts *auth.Accounts
	Sessions *auth.Sessions
	Perms    *auth.Permissions
	Limiter  *auth.LoginLimiter
	Files    *files.Service
	Audio    *audio.Service
	// Tools is the registry of tools replies may use.
	Tools *tools.Service
	// Web is what the web_search and fetch_url tools run on.
	Web *webtools.Service
	// CustomTools are the administrator's HTTP tools (a tools source).
	CustomTools *customtools.Service
	// MCP is the remote MCP servers whose tools replies may call.
	MCP *mcp.Service
	// Library is the people's knowledge bases, notes, memories and skills.
	Library *library.Service
	// Agent is agent chats' SSH profiles, settings, policy and tools.
	Agent *agent.Service
	// Suggestions are the new-chat screen's cards.
	Suggestions *suggestions.Service
	// Prompts is the harness: fragments, overrides, the text a reply gets.
	Prompts *prompts.Service
	// Drops shelves files dropped onto the desktop window until the
	// window claims them through the desktop mount.
	Drops *drops.Shelf
	// Terminal is the terminal panel's shells, one per agent chat.
	Terminal *terminal.Service

	opt     Options
	permits api.Permits
	lock    *store.Lock
	keeper  *secrets.Keeper
	keyErr  error

	stopStreams     chan struct{}
	stopStreamsOnce sync.Once

	sweepCtx  context.Context
	stopSweep context.CancelFunc
	sweepDone chan struct{}
}

// TrashKeep is how long a deleted chat can be restored.
const TrashKeep = 30 * 24 * time.Hour

// sweepTrash empties chats trashed longer than TrashKeep ago, and deletes
// expired sessions, at start and then every six hours.
func (c *Core) sweepTrash(ctx context.Context) {
	for {
		if n, err := c.Files.Sweep(ctx, time.Now()); err != nil {
			c.Log.Warn("sweep uploads", "err", err)
		} else if n > 0 {
			c.Log.Info("deleted unsent uploads and orphaned files", "count", n)
		}
		if n, err := c.Sessions.ExpireOld(ctx); err != nil {
			c.Log.Warn("expire sessions", "err", err)
		} else if n > 0 {
			c.Log.Info("deleted expired sessions", "count", n)
		}
		users, err := c.DB.UserIDs(ctx)
		if err == nil {
			cutoff := time.Now().Add(-TrashKeep).UnixMilli()
			for _, u := range users {
				if n, err := c.DB.EmptyTrash(ctx, ids.UserID(u), cutoff); err != nil {
					c.Log.Warn("empty trash", "user", u, "err", err)
				} else if n > 0 {
					c.Log.Info("emptied old trash", "user", u, "chats", n)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(6 * time.Hour):
		}
	}
}

// Open starts an instance on cfg.DataDir. It fails with store.ErrLocked when
// another process holds the directory.
func Open(ctx context.Context, cfg config.Config, opt Options) (*Core, error) {
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	lock, err := store.LockDir(cfg.DataDir, string(opt.Mode))
	if err != nil {
		return nil, err
	}
	c := &Core{Config: cfg, Bus: events.NewBus(), Log: opt.Log, opt: opt, lock: lock, stopStreams: make(chan struct{})}
	if err := c.open(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Core) open(ctx context.Context) error {
	cfg := c.Config
	db, err := store.Open(ctx, cfg.DBPath())
	if err != nil {
		return err
	}
	c.DB = db
	c.checkDataDir()
	rep, err := db.Sync(ctx, store.Current, filepath.Join(cfg.DataDir, "backups"))
	if err != nil {
		return err
	}
	if rep.Snapshot != "" {
		c.Log.Info("database schema updated", "snapshot", rep.Snapshot, "changes", strings.Join(rep.Applied, "; "))
	}
	for _, e := range rep.Extra {
		c.Log.Debug("left in place (not in the declared schema)", "what", e)
	}
	if err := db.SeedSetting(ctx, "instance_name", cfg.InstanceName); err != nil {
		return err
	}
	login, display := ownerNames()
	if c.Owner, err = db.EnsureOwner(ctx, login, display); err != nil {
		return err
	}
	c.keeper, c.keyErr = secrets.Resolve(ctx, secrets.Options{
		EnvKey:     cfg.SecretKey,
		DataDir:    cfg.DataDir,
		Keyring:    c.opt.Keyring,
		NoKeychain: cfg.NoKeychain,
	}, Ledger{db})
	if c.keyErr != nil {
		// The app still opens: everything but stored API keys works, and
		// the About card and `lembas info` show what to do.
		c.Log.Error("encryption key unavailable", "err", c.keyErr)
	} else {
		c.Log.Info("encryption key", "where", c.keeper.Describe())
	}

	// A reply that was streaming when the process ended is abandoned: say
	// so, so that it can be continued or regenerated.
	if n, err := db.InterruptStreaming(ctx); err != nil {
		return err
	} else if n > 0 {
		c.Log.Info("replies interrupted by the last shutdown", "count", n)
	}
	c.Render = render.New()
	c.Gen = generation.New(db, c.Bus, c.Render, c.Log, c.opt.Generation)
	c.Files = files.New(db, cfg.DataDir, c.Log, files.Limits{})
	db.OnFilesReleased(c.Files.Remove)
	c.Audio = audio.New(db, c.Secrets, c.Log, audio.Options{Guard: c.opt.AudioGuard})
	c.Drops = drops.New()
	c.Web = webtools.New(db, c.Secrets, c.Log, c.opt.Web)
	c.Connections = connections.New(db, c.Secrets, c.Log, connections.Options{LLM: c.opt.LLM, SelfPort: c.opt.SelfPort})
	var web tools.Web = c.Web
	switch {
	case c.opt.ToolsWeb != nil:
		web = c.opt.ToolsWeb
	case cfg.SelfTest:
		web = tools.NewSelfTestWeb()
	}
	c.Tools = tools.New(db, web)
	c.CustomTools = customtools.New(db, c.Secrets, c.Log, customtools.Options{Guard: c.Web.Guard,
		Reserved: func(name string) bool { return slices.Contains(c.Tools.Reserved(), name) }})
	c.Tools.AddSource(c.CustomTools)
	mcpOpt := c.opt.MCP
	if mcpOpt.Version == "" {
		mcpOpt.Version = c.opt.Version
	}
	if mcpOpt.Reserved == nil {
		mcpOpt.Reserved = c.Tools.Reserved
	}
	c.MCP = mcp.New(db, c.Secrets, c.Web.Guard, c.Log, mcpOpt)
	c.Tools.AddSource(c.MCP)
	c.Library = library.New(db, c.Files, c.Log)
	c.Library.PublishTo(c.Bus)
	for _, src := range c.Library.Sources() {
		c.Tools.AddSource(src)
	}
	c.Agent = agent.New(db, c.Secrets, c.Log, c.opt.Agent)
	c.Agent.UseFiles(c.Files)
	c.Suggestions = suggestions.New(db)
	if err := c.Suggestions.Seed(ctx); err != nil {
		return fmt.Errorf("seed suggestions: %w", err)
	}
	for _, src := range c.Agent.Sources() {
		c.Tools.AddSource(src)
	}
	c.Prompts = prompts.New(db, c.opt.Now)
	c.Terminal = c.newTerminal()
	c.Agent.OnProfileChanged(c.Terminal.EndProfile)
	c.Chat = chat.New(db, c.Gen, c.Connections, chatBus{c.Bus, c.Terminal}, c.Log, chat.Options{ReadFile: c.Files.Read, CopyFile: c.Files.Copy, MaxFiles: c.Files.Limits().MaxFiles,
		Tools: c.Tools, Prompts: c.Prompts, Library: c.Library, Agent: c.Agent})

	c.Sessions = auth.NewSessions(db, c.opt.Sessions)
	c.Accounts = auth.NewAccounts(db, c.Sessions, auth.AccountOptions{Params: c.opt.Password})
	c.Perms = auth.NewPermissions(db)
	limits := auth.DefaultLoginLimits
	if c.opt.Login != nil {
		limits = *c.opt.Login
	}
	c.Limiter = auth.NewLoginLimiter(limits, nil)

	c.sweepCtx, c.stopSweep = context.WithCancel(context.Background())
	c.sweepDone = make(chan struct{})
	go func() {
		defer close(c.sweepDone)
		c.sweepTrash(c.sweepCtx)
	}()

	c.Prefs = settings.NewPrefs(db, c.Bus)
	c.Instance = settings.NewInstance(db, c.Accounts, c.Files)
	c.permits = api.NewPermits(c.Perms)
	c.Dispatcher = api.NewDispatcher(c.Log)
	f := api.Facades{
		App: api.NewApp(c.Instance, api.About{Version: c.opt.Version, Mode: string(c.opt.Mode), BuildTags: c.opt.BuildTags,
			DataDir: cfg.DataDir, KeySource: c.KeySource, OpenURL: c.opt.OpenURL, Notify: c.opt.Notify,
			TrayStatus: c.opt.TrayStatus, SelfTest: cfg.SelfTest}),
		Prefs:       api.NewPrefs(c.Prefs),
		Chats:       api.NewChats(c.Chat, c.Render, c.permits),
		Models:      api.NewModels(c.Connections, c.permits),
		Connections: api.NewConnections(c.Connections),
		Folders:     api.NewFolders(folders.New(db)),
		Account:     api.NewAccount(c.Accounts, c.Sessions, c.Perms, c.Limiter),
		Admin:       api.NewAdmin(c.Accounts, c.Perms, c.Instance, c.Connections),
		Files:       api.NewFiles(c.Files, c.permits),
		Audio:       api.NewAudio(c.Audio, c.Prefs),
		Sharing:     api.NewSharing(c.opt.Sharer),
		Tools:       api.NewTools(c.Tools, c.permits),
		Web:         api.NewWeb(c.Web),
		Prompts:     api.NewPrompts(c.Prompts, c.Chat, c.permits, c.Tools.List),
		CustomTools: api.NewCustomTools(c.CustomTools),
		MCP:         api.NewMCP(c.MCP),
		Library:     api.NewLibrary(c.Library, c.Render, c.permits),
		Agent:       api.NewAgent(c.Agent, c.permits),
		Terminal:    api.NewTerminal(c.Terminal, c.Bus),
		Suggestions: api.NewSuggestions(c.Suggestions),
	}
	if cfg.SelfTest {
		var release func()
		if sw, ok := web.(*tools.SelfTestWeb); ok {
			release = sw.Release
		}
		f.Diag = api.NewDiag(c.Bus, release)
	}
	api.RegisterAll(c.Dispatcher, c.permits, f)
	return nil
}

// checkDataDir keeps what LLeMbas writes in the data directory private: the
// snapshot and attachment directories it made (an older version or a hand
// may have left them open) are closed to group and others, and so are the
// snapshots in them. The data directory itself may be the administrator's
// choice, so it is only warned about: the database is private, but anyone
// who can enter the directory sees its names and sizes.
func (c *Core) checkDataDir() {
	if runtime.GOOS == "windows" {
		return
	}
	dir := c.Config.DataDir
	if fi, err := os.Stat(dir); err == nil && fi.Mode().Perm()&0o077 != 0 {
		c.Log.Warn("the data directory is open to other accounts on this machine; run chmod 700 on it",
			"dir", dir, "mode", fmt.Sprintf("%04o", fi.Mode().Perm()))
	}
	for _, sub := range []string{"backups", "files"} {
		p := filepath.Join(dir, sub)
		fi, err := os.Stat(p)
		if err != nil || !fi.IsDir() {
			continue
		}
		if fi.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(p, 0o700); err != nil {
				c.Log.Warn("could not make a data subdirectory private", "dir", p, "err", err)
			}
		}
	}
	snaps, _ := filepath.Glob(filepath.Join(dir, "backups", "*.db"))
	for _, p := range snaps {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(p, 0o600); err != nil {
				c.Log.Warn("could not make a snapshot private", "file", p, "err", err)
			}
		}
	}
}

// Secrets returns the key keeper, or an unavailable error saying why not.
func (c *Core) Secrets() (*secrets.Keeper, error) {
	if c.keyErr != nil {
		return nil, apperr.Wrap(apperr.Unavailable, c.keyErr, "the encryption key is unavailable: %v", c.keyErr)
	}
	return c.keeper, nil
}

// KeySource describes where the encryption key lives, or why it is missing.
func (c *Core) KeySource() string {
	if c.keyErr != nil {
		return "unavailable: " + c.keyErr.Error()
	}
	return c.keeper.Describe()
}

// OwnerCaller is the caller for the desktop mount: the local owner. Whether
// the owner is an administrator is read from the database each time, so
// that a demotion by another administrator (while the app is shared)
// applies to the desktop window at once, not at the next start.
func (c *Core) OwnerCaller() api.Caller {
	admin := c.Owner.IsAdmin
	if u, err := c.DB.UserByID(context.Background(), c.Owner.ID); err == nil {
		admin = u.IsAdmin
	}
	return api.Caller{UserID: c.Owner.ID, Admin: admin, Owner: true}
}

// Documents is the library's document routes: what GET
// /api/library/documents/{id} checks and opens, for the desktop window's
// save dialog to open a document through the same checks.
func (c *Core) Documents() api.LibraryRoutes {
	return api.NewLibraryRoutes(c.Library, c.permits)
}

// Handler builds the shared http.Handler. desktop selects the desktop mount
// (the bridge transport, acting as the owner, no Host check); otherwise the
// handler is for a listening socket, where every caller signs in.
//
// extraHosts are Host names accepted besides the configured ones (the
// desktop's machine name when it shares the app).
func (c *Core) Handler(desktop bool, extraHosts ...string) (http.Handler, error) {
	opt := httpapi.Options{
		Dispatcher:   c.Dispatcher,
		Bus:          c.Bus,
		Files:        c.opt.Files,
		Log:          c.Log,
		Desktop:      desktop,
		CheckHost:    !desktop,
		AllowedHosts: append(slices.Clone(c.Config.AllowedHosts), extraHosts...),
		InstanceName: func(ctx context.Context) string {
			name, _ := c.Instance.Name(ctx)
			return name
		},
		Stop:      c.stopStreams,
		Heartbeat: c.opt.Heartbeat,
		Generated: map[string]string{
			"css/highlight.css":  render.ChromaCSS(),
			"icons/icon-256.png": string(assets.Icon256),
			"icons/icon-512.png": string(assets.Icon512),
		},
		Avatars:      api.NewAvatarStore(c.Connections),
		Attachments:  api.NewFileRoutes(c.Files, c.Audio, c.permits),
		Documents:    c.Documents(),
		Exports:      api.NewExportRoutes(c.Chat),
		Terminals:    api.NewTerminalRoutes(c.Terminal, c.permits),
		WriteTimeout: c.opt.WriteTimeout,
		MaxDownloads: c.opt.MaxDownloads,
		DownloadWait: c.opt.DownloadWait,
		SelfTest:     c.Config.SelfTest,
	}
	if desktop {
		opt.Caller = func(*http.Request) (api.Caller, error) { return c.OwnerCaller(), nil }
		opt.Drops = c.Drops
	} else {
		opt.Auth = &httpapi.Auth{Accounts: c.Accounts, Sessions: c.Sessions, Limiter: c.Limiter,
			TrustedProxies: c.Config.TrustedProxies}
	}
	return httpapi.New(opt)
}

// StopStreams ends every open event stream (at shutdown).
func (c *Core) StopStreams() {
	c.stopStreamsOnce.Do(func() { close(c.stopStreams) })
}

// Close interrupts running replies (written as interrupted, so they can be
// continued after a restart), then releases the database and the lock.
func (c *Core) Close() error {
	var errs []error
	if c.stopSweep != nil {
		c.stopSweep()
		<-c.sweepDone
	}
	if c.Terminal != nil {
		c.Terminal.Shutdown()
	}
	if c.Gen != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		errs = append(errs, c.Gen.Shutdown(ctx))
		cancel()
	}
	if c.Chat != nil {
		c.Chat.Wait() // automatic titles write to the database
	}
	if c.Agent != nil {
		c.Agent.Close() // the project listings' walks
	}
	if c.DB != nil {
		errs = append(errs, c.DB.Close())
	}
	errs = append(errs, c.lock.Release())
	return errors.Join(errs...)
}

var validLogin = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$`)

// ownerNames picks the owner's username from the OS account, so that the
// household server later greets them by a name they know.
func ownerNames() (login, display string) {
	login, display = "owner", "Owner"
	if u, err := user.Current(); err == nil {
		if validLogin.MatchString(u.Username) {
			login = u.Username
		}
		if d := strings.TrimSpace(strings.Split(u.Name, ",")[0]); d != "" {
			display = d
		} else if login != "owner" {
			display = login
		}
	}
	return login, display
}

// Ledger adapts the store's meta table to secrets.Ledger.
type Ledger struct{ DB *store.DB }

var _ secrets.Ledger = Ledger{}

// KeyRecord reads which key encrypted this database's secrets.
func (l Ledger) KeyRecord(ctx context.Context) (secrets.Record, bool, error) {
	src, ok, err := l.DB.Meta(ctx, "secret_key_source")
	if err != nil || !ok {
		return secrets.Record{}, false, err
	}
	fp, _, err := l.DB.Meta(ctx, "secret_key_fingerprint")
	if err != nil {
		return secrets.Record{}, false, err
	}
	return secrets.Record{Source: secrets.Source(src), Fingerprint: fp}, true, nil
}

// SetKeyRecord remembers which key encrypts this database's secrets.
func (l Ledger) SetKeyRecord(ctx context.Context, rec secrets.Record) error {
	if err := l.DB.SetMeta(ctx, "secret_key_source", string(rec.Source)); err != nil {
		return err
	}
	return l.DB.SetMeta(ctx, "secret_key_fingerprint", rec.Fingerprint)
}

// HasEncrypted reports whether any secret is stored yet.
func (l Ledger) HasEncrypted(ctx context.Context) (bool, error) { return l.DB.HasEncrypted(ctx) }

// Describe is used by `lembas info` without opening the instance: it reads
// the key record and never touches the keychain.
func Describe(ctx context.Context, db *store.DB) string {
	rec, ok, err := Ledger{db}.KeyRecord(ctx)
	switch {
	case err != nil:
		return "unknown (" + err.Error() + ")"
	case !ok:
		return "not chosen yet (made on first start)"
	}
	where := map[secrets.Source]string{
		secrets.SourceKeychain: "OS keychain",
		secrets.SourceEnv:      "LEMBAS_SECRET_KEY",
		secrets.SourceFile:     "key file " + filepath.Join(filepath.Dir(db.Path()), "secret.key"),
	}[rec.Source]
	if where == "" {
		where = string(rec.Source)
	}
	return fmt.Sprintf("%s (fingerprint %s)", where, rec.Fingerprint)
}

// CheckKey says whether the key the database records can be read now, for
// `lembas info`: "ok", or why not. Unlike Describe it asks the keychain
// (bounded like at start), but it never creates, stores or records a key.
func CheckKey(ctx context.Context, cfg config.Config, db *store.DB, kr secrets.Keyring) string {
	rec, ok, err := Ledger{db}.KeyRecord(ctx)
	if err != nil || !ok {
		return "nothing to check yet"
	}
	err = secrets.Check(ctx, secrets.Options{EnvKey: cfg.SecretKey, DataDir: cfg.DataDir, Keyring: kr, NoKeychain: cfg.NoKeychain}, rec)
	if err == nil {
		return "ok, the key was read"
	}
	if enc, _ := db.HasEncrypted(ctx); !enc {
		return "unavailable, but nothing is encrypted yet, so the next start chooses a key again: " + err.Error()
	}
	return "unavailable: " + err.Error()
}

// Exists reports whether path exists, for callers that must not create it.
func Exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
