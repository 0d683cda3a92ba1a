package api

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/audio"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/connections"
	"github.com/llembas/lembas/backend/events"
	"github.com/llembas/lembas/backend/files"
	"github.com/llembas/lembas/backend/generation"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/render"
	"github.com/llembas/lembas/backend/store"
)

// Deps is what the facades need from the running instance.
type Deps struct {
	DB        *store.DB
	Bus       events.Publisher
	Version   string
	Mode      string // "desktop" or "serve"
	BuildTags []string
	DataDir   string
	// KeySource describes where the encryption key lives (or why it is
	// unavailable), for the About card and `lembas info`.
	KeySource func() string
	// OpenURL opens a link in the system browser; nil where there is no
	// desktop to open it on.
	OpenURL func(string) error
	// Notify shows a desktop notification; nil where there is none.
	Notify func(title, body string) error
	// TrayStatus says whether the desktop tray icon is registered, or why
	// not; nil where there is no desktop.
	TrayStatus func() string
	// SelfTest registers the Diag facade, used only by the desktop tests.
	SelfTest bool

	Chat        *chat.Service
	Connections *connections.Service
	Gen         *generation.Service
	Render      *render.Renderer

	// Sharer runs the household server from the desktop app; nil elsewhere.
	Sharer Sharer

	// Limiter bounds password checks (changing a password from a session).
	Limiter *auth.LoginLimiter

	// Accounts, Sessions and Perms are the account services (backend/auth).
	Accounts *auth.Accounts
	Sessions *auth.Sessions
	Perms    *auth.Permissions

	// Files keeps attachments and Audio talks to voice endpoints (issue 6).
	Files *files.Service
	Audio *audio.Service
}

// RegisterAll registers every facade on d, each method behind its guard in
// Table.
func RegisterAll(d *Dispatcher, deps Deps) {
	d.require = deps.require
	for _, f := range []struct {
		name   string
		facade any
	}{
		{"App", &App{deps}}, {"Prefs", &Prefs{deps}}, {"Chats", &Chats{deps}}, {"Models", &Models{deps}},
		{"Connections", &Connections{deps}}, {"Folders", &Folders{deps}}, {"Account", &Account{deps}},
		{"Admin", &Admin{deps}}, {"Files", &Files{deps}}, {"Audio", &Audio{deps}}, {"Sharing", &Sharing{deps}},
	} {
		d.Register(f.name, f.facade, Table[f.name])
	}
	if deps.SelfTest {
		d.Register("Diag", &Diag{deps}, Table["Diag"])
	}
}

// App is the facade for facts about the running instance.
type App struct{ deps Deps }

// Info describes the running instance.
type Info struct {
	Version      string           `json:"version"`
	Mode         string           `json:"mode"`
	DataDir      string           `json:"dataDir"`
	DBPath       string           `json:"dbPath"`
	DBBytes      int64            `json:"dbBytes"`
	KeySource    string           `json:"keySource"`
	BuildTags    []string         `json:"buildTags"`
	InstanceName string           `json:"instanceName"`
	Counts       map[string]int64 `json:"counts"`
	SelfTest     bool             `json:"selfTest"`
	// TrayStatus is the desktop tray's state, or why there is none.
	TrayStatus string `json:"trayStatus,omitempty"`
}

// Info returns version, paths, key location and row counts. Paths, the key's
// home and instance-wide counts are for administrators only.
func (a *App) Info(ctx context.Context) (Info, error) {
	if !CallerFrom(ctx).Admin {
		name, _, err := a.deps.DB.Setting(ctx, "instance_name")
		if err != nil {
			return Info{}, err
		}
		return Info{Version: a.deps.Version, Mode: a.deps.Mode, InstanceName: name, BuildTags: []string{},
			Counts: map[string]int64{}, SelfTest: a.deps.SelfTest}, nil
	}
	counts, err := a.deps.DB.Counts(ctx)
	if err != nil {
		return Info{}, err
	}
	name, _, err := a.deps.DB.Setting(ctx, "instance_name")
	if err != nil {
		return Info{}, err
	}
	tags := a.deps.BuildTags
	if tags == nil {
		tags = []string{}
	}
	tray := ""
	if a.deps.TrayStatus != nil {
		tray = a.deps.TrayStatus()
	}
	return Info{
		TrayStatus:   tray,
		Version:      a.deps.Version,
		Mode:         a.deps.Mode,
		DataDir:      a.deps.DataDir,
		DBPath:       a.deps.DB.Path(),
		DBBytes:      a.deps.DB.Size(),
		KeySource:    a.deps.KeySource(),
		BuildTags:    tags,
		InstanceName: name,
		Counts:       counts,
		SelfTest:     a.deps.SelfTest,
	}, nil
}

// OpenURL opens an http, https or mailto link in the system browser. Any
// other scheme is refused: handing file: or a custom scheme to the desktop's
// opener would let a link in model output start programs.
func (a *App) OpenURL(ctx context.Context, link string) error {
	if err := CheckExternalURL(link); err != nil {
		return err
	}
	if a.deps.OpenURL == nil {
		return apperr.New(apperr.Unavailable, "opening links is only possible in the desktop app")
	}
	if err := a.deps.OpenURL(link); err != nil {
		return apperr.Wrap(apperr.Unavailable, err, "could not open the link in a browser")
	}
	return nil
}

// Notification is a desktop notification's text.
type Notification struct {
	Title string `json:"title"`
	Body  string `json:"body"`
}

// Notify shows a native notification (the desktop app tells the reader
// that a reply finished in a chat they are not looking at).
func (a *App) Notify(ctx context.Context, n Notification) error {
	if a.deps.Notify == nil {
		return apperr.New(apperr.Unavailable, "notifications are only available in the desktop app")
	}
	title, body := clip(n.Title, 200), clip(n.Body, 1000)
	if strings.TrimSpace(title) == "" {
		title = "LLeMbas"
	}
	if err := a.deps.Notify(title, body); err != nil {
		return apperr.Wrap(apperr.Unavailable, err, "the desktop did not take the notification")
	}
	return nil
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// CheckExternalURL accepts only absolute http(s) URLs with a host, and
// mailto: addresses.
func CheckExternalURL(link string) error {
	u, err := url.Parse(strings.TrimSpace(link))
	if err != nil {
		return apperr.New(apperr.Invalid, "not a valid link")
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return apperr.New(apperr.Invalid, "link has no host")
		}
	case "mailto":
		if u.Opaque == "" {
			return apperr.New(apperr.Invalid, "mailto link has no address")
		}
	default:
		return apperr.New(apperr.Invalid, "only http, https and mailto links can be opened")
	}
	return nil
}

// Prefs is the facade for the caller's own preferences.
type Prefs struct{ deps Deps }

// Preferences are one user's settings.
type Preferences struct {
	Theme string `json:"theme"`
	// LastChat is the chat open last, reopened at the next start (0: none).
	LastChat ids.ChatID `json:"lastChat"`
	// DefaultModel is the user's choice for new chats (0: none), and
	// InstanceDefaultModel the admin's; either may since have become
	// unusable, in which case it reads 0.
	DefaultModel         ids.ModelID `json:"defaultModel"`
	InstanceDefaultModel ids.ModelID `json:"instanceDefaultModel"`
	DesktopPrefs
}

// PreferencesPatch changes the fields that are set.
type PreferencesPatch struct {
	Theme        *string      `json:"theme,omitempty"`
	LastChat     *ids.ChatID  `json:"lastChat,omitempty"`
	DefaultModel *ids.ModelID `json:"defaultModel,omitempty"`
	DesktopPatch
}

// Themes are the theme names the frontend knows.
var Themes = []string{"moria", "shire"}

// Get returns the caller's preferences.
func (p *Prefs) Get(ctx context.Context) (Preferences, error) {
	m, err := p.deps.DB.Prefs(ctx, CallerFrom(ctx).UserID)
	if err != nil {
		return Preferences{}, err
	}
	last, _ := strconv.ParseInt(m["last_chat"], 10, 64)
	def, _ := strconv.ParseInt(m["default_model"], 10, 64)
	out := Preferences{Theme: m["theme"], LastChat: ids.ChatID(last),
		DefaultModel: p.usable(ctx, ids.ModelID(def)), InstanceDefaultModel: p.usable(ctx, instanceDefaultModel(ctx, p.deps.DB)),
		DesktopPrefs: desktopPrefs(m)}
	return out, nil
}

// usable returns id if the caller may use that model, else 0.
func (p *Prefs) usable(ctx context.Context, id ids.ModelID) ids.ModelID {
	if id == 0 || p.deps.DB.CanSeeModel(ctx, user(ctx), id) != nil {
		return 0
	}
	return id
}

// Set changes the caller's preferences and tells the caller's other windows.
func (p *Prefs) Set(ctx context.Context, patch PreferencesPatch) (Preferences, error) {
	c := CallerFrom(ctx)
	if patch.Theme != nil {
		ok := false
		for _, t := range Themes {
			ok = ok || t == *patch.Theme
		}
		if !ok {
			return Preferences{}, apperr.New(apperr.Invalid, "unknown theme %q (want %s)", *patch.Theme, strings.Join(Themes, " or "))
		}
		if err := p.deps.DB.SetPref(ctx, c.UserID, "theme", *patch.Theme); err != nil {
			return Preferences{}, err
		}
	}
	if patch.DefaultModel != nil {
		if *patch.DefaultModel != 0 {
			if err := p.deps.DB.CanSeeModel(ctx, user(ctx), *patch.DefaultModel); err != nil {
				return Preferences{}, storeErr(err, "model")
			}
		}
		if err := p.deps.DB.SetPref(ctx, c.UserID, "default_model", strconv.FormatInt(int64(*patch.DefaultModel), 10)); err != nil {
			return Preferences{}, err
		}
	}
	if err := p.setDesktop(ctx, c, patch.DesktopPatch); err != nil {
		return Preferences{}, err
	}
	if patch.LastChat != nil {
		if *patch.LastChat != 0 {
			if _, err := p.deps.DB.ChatByID(ctx, ids.UserID(c.UserID), *patch.LastChat); err != nil {
				return Preferences{}, storeErr(err, "chat")
			}
		}
		if err := p.deps.DB.SetPref(ctx, c.UserID, "last_chat", strconv.FormatInt(int64(*patch.LastChat), 10)); err != nil {
			return Preferences{}, err
		}
		// The last chat is bookkeeping, not a change other windows follow.
		return p.Get(ctx)
	}
	prefs, err := p.Get(ctx)
	if err != nil {
		return Preferences{}, err
	}
	p.deps.Bus.Publish(events.Event{Topic: "prefs", UserID: c.UserID, Data: prefs})
	return prefs, nil
}

// Diag is a facade that exists only under LEMBAS_SELFTEST, so that the
// desktop tests can drive the real binary through its real bridge.
type Diag struct{ deps Deps }

// NilDeref dereferences a nil pointer. In the desktop app this is the crash
// that WebKit's signal handlers turn fatal unless SA_ONSTACK is restored.
func (d *Diag) NilDeref(ctx context.Context) error {
	var p *struct{ n int }
	return fmt.Errorf("unreachable: %d", p.n)
}

// Emit publishes an event to the caller, to test the event path end to end.
func (d *Diag) Emit(ctx context.Context, topic string, data any) error {
	d.deps.Bus.Publish(events.Event{Topic: topic, UserID: CallerFrom(ctx).UserID, Data: data})
	return nil
}

// Report logs one self-test step, which the test reads from the log.
func (d *Diag) Report(ctx context.Context, step string, ok bool, detail string) error {
	lvl := "PASS"
	if !ok {
		lvl = "FAIL"
	}
	fmt.Printf("selftest %s %s %s\n", lvl, step, strings.ReplaceAll(detail, "\n", " "))
	return nil
}
