package api

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/events"
	"github.com/llembas/lembas/backend/settings"
)

// Facades are the facades of one instance, each built by its constructor
// with only what it needs. Diag is nil unless the self-test asks for it.
type Facades struct {
	App         *App
	Prefs       *Prefs
	Chats       *Chats
	Models      *Models
	Connections *Connections
	Folders     *Folders
	Account     *Account
	Admin       *Admin
	Files       *Files
	Audio       *Audio
	Sharing     *Sharing
	Tools       *Tools
	Web         *Web
	Prompts     *Prompts
	CustomTools *CustomTools
	MCP         *MCP
	Library     *Library
	Agent       *Agent
	Terminal    *Terminal
	Suggestions *Suggestions
	Diag        *Diag
}

// RegisterAll registers every facade on d, each method behind its guard in
// Table; permits answers the Perm guards.
func RegisterAll(d *Dispatcher, permits Permits, f Facades) {
	d.require = permits.Require
	for _, r := range []struct {
		name   string
		facade any
	}{
		{"App", f.App}, {"Prefs", f.Prefs}, {"Chats", f.Chats}, {"Models", f.Models},
		{"Connections", f.Connections}, {"Folders", f.Folders}, {"Account", f.Account},
		{"Admin", f.Admin}, {"Files", f.Files}, {"Audio", f.Audio}, {"Sharing", f.Sharing},
		{"Tools", f.Tools},
		{"Web", f.Web},
		{"Prompts", f.Prompts},
		{"CustomTools", f.CustomTools},
		{"MCP", f.MCP},
		{"Library", f.Library},
		{"Agent", f.Agent},
		{"Terminal", f.Terminal},
		{"Suggestions", f.Suggestions},
	} {
		d.Register(r.name, r.facade, Table[r.name])
	}
	if f.Diag != nil {
		d.Register("Diag", f.Diag, Table["Diag"])
	}
}

// App is the facade for facts about the running instance.
type App struct {
	instance *settings.Instance
	about    About
}

// About is what the running process knows of itself, for App.Info and the
// desktop's links and notifications.
type About struct {
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
	// SelfTest says the Diag facade is registered (desktop tests).
	SelfTest bool
}

// NewApp returns the App facade.
func NewApp(instance *settings.Instance, about About) *App {
	return &App{instance: instance, about: about}
}

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
	name, err := a.instance.Name(ctx)
	if err != nil {
		return Info{}, err
	}
	about := a.about
	if !CallerFrom(ctx).Admin {
		return Info{Version: about.Version, Mode: about.Mode, InstanceName: name, BuildTags: []string{},
			Counts: map[string]int64{}, SelfTest: about.SelfTest}, nil
	}
	st, err := a.instance.Stats(ctx)
	if err != nil {
		return Info{}, err
	}
	tags := about.BuildTags
	if tags == nil {
		tags = []string{}
	}
	tray := ""
	if about.TrayStatus != nil {
		tray = about.TrayStatus()
	}
	return Info{
		TrayStatus:   tray,
		Version:      about.Version,
		Mode:         about.Mode,
		DataDir:      about.DataDir,
		DBPath:       st.Path,
		DBBytes:      st.Bytes,
		KeySource:    about.KeySource(),
		BuildTags:    tags,
		InstanceName: name,
		Counts:       st.Counts,
		SelfTest:     about.SelfTest,
	}, nil
}

// OpenURL opens an http, https or mailto link in the system browser. Any
// other scheme is refused: handing file: or a custom scheme to the desktop's
// opener would let a link in model output start programs.
func (a *App) OpenURL(ctx context.Context, link string) error {
	if err := CheckExternalURL(link); err != nil {
		return err
	}
	if a.about.OpenURL == nil {
		return apperr.New(apperr.Unavailable, "opening links is only possible in the desktop app")
	}
	if err := a.about.OpenURL(link); err != nil {
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
	if a.about.Notify == nil {
		return apperr.New(apperr.Unavailable, "notifications are only available in the desktop app")
	}
	title, body := clip(n.Title, 200), clip(n.Body, 1000)
	if strings.TrimSpace(title) == "" {
		title = "LLeMbas"
	}
	if err := a.about.Notify(title, body); err != nil {
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
type Prefs struct{ prefs *settings.Prefs }

// NewPrefs returns the Prefs facade.
func NewPrefs(prefs *settings.Prefs) *Prefs { return &Prefs{prefs: prefs} }

// Preferences are one user's settings (backend/settings).
type Preferences = settings.Preferences

// PreferencesPatch changes the fields that are set.
type PreferencesPatch = settings.PreferencesPatch

// Get returns the caller's preferences.
func (p *Prefs) Get(ctx context.Context) (Preferences, error) { return p.prefs.Get(ctx, user(ctx)) }

// Set changes the caller's preferences and tells the caller's other windows.
func (p *Prefs) Set(ctx context.Context, patch PreferencesPatch) (Preferences, error) {
	return p.prefs.Set(ctx, user(ctx), patch)
}

// Diag is a facade that exists only under LEMBAS_SELFTEST, so that the
// desktop tests can drive the real binary through its real bridge.
type Diag struct {
	bus events.Publisher
	// ReleaseTools lets the self-test's held tool calls go on (nil:
	// nothing to release).
	releaseTools func()
}

// ReleaseTools lets the self-test web's held searches ("[hold]") go on.
func (d *Diag) ReleaseTools(ctx context.Context) error {
	if d.releaseTools != nil {
		d.releaseTools()
	}
	return nil
}

// NewDiag returns the Diag facade, publishing on bus; releaseTools, if
// given, is what ReleaseTools calls.
func NewDiag(bus events.Publisher, releaseTools ...func()) *Diag {
	d := &Diag{bus: bus}
	if len(releaseTools) > 0 {
		d.releaseTools = releaseTools[0]
	}
	return d
}

// NilDeref dereferences a nil pointer. In the desktop app this is the crash
// that WebKit's signal handlers turn fatal unless SA_ONSTACK is restored.
func (d *Diag) NilDeref(ctx context.Context) error {
	var p *struct{ n int }
	return fmt.Errorf("unreachable: %d", p.n)
}

// Emit publishes an event to the caller, to test the event path end to end.
func (d *Diag) Emit(ctx context.Context, topic string, data any) error {
	d.bus.Publish(events.Event{Topic: topic, UserID: CallerFrom(ctx).UserID, Data: data})
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
