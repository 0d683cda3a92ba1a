// Package settings holds what people set: each user's preferences (theme,
// default model, the desktop app's and the keyboard's) and the instance's
// settings (its name, the default model, the storage quota; the sign-up
// mode through backend/auth).
package settings

import (
	"context"
	"strconv"
	"strings"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/events"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// Prefs is the service for users' preferences.
type Prefs struct {
	db  *store.DB
	bus events.Publisher
}

// NewPrefs returns the service; changes are published to the user on bus.
func NewPrefs(db *store.DB, bus events.Publisher) *Prefs { return &Prefs{db: db, bus: bus} }

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

// Get returns the user's preferences.
func (p *Prefs) Get(ctx context.Context, user ids.UserID) (Preferences, error) {
	m, err := p.db.Prefs(ctx, int64(user))
	if err != nil {
		return Preferences{}, err
	}
	last, _ := strconv.ParseInt(m["last_chat"], 10, 64)
	def, _ := strconv.ParseInt(m["default_model"], 10, 64)
	return Preferences{Theme: m["theme"], LastChat: ids.ChatID(last),
		DefaultModel: p.usable(ctx, user, ids.ModelID(def)), InstanceDefaultModel: p.usable(ctx, user, defaultModel(ctx, p.db)),
		DesktopPrefs: DesktopPrefsFrom(m)}, nil
}

// usable returns id if the user may use that model, else 0.
func (p *Prefs) usable(ctx context.Context, user ids.UserID, id ids.ModelID) ids.ModelID {
	if id == 0 || p.db.CanSeeModel(ctx, user, id) != nil {
		return 0
	}
	return id
}

// Set changes the user's preferences and tells the user's other windows
// (not of a new last chat alone: that is bookkeeping, not a change other
// windows follow).
func (p *Prefs) Set(ctx context.Context, user ids.UserID, patch PreferencesPatch) (Preferences, error) {
	if patch.Theme != nil {
		ok := false
		for _, t := range Themes {
			ok = ok || t == *patch.Theme
		}
		if !ok {
			return Preferences{}, apperr.New(apperr.Invalid, "unknown theme %q (want %s)", *patch.Theme, strings.Join(Themes, " or "))
		}
		if err := p.db.SetPref(ctx, int64(user), "theme", *patch.Theme); err != nil {
			return Preferences{}, err
		}
	}
	if patch.DefaultModel != nil {
		if *patch.DefaultModel != 0 {
			if err := p.db.CanSeeModel(ctx, user, *patch.DefaultModel); err != nil {
				return Preferences{}, store.Kinded(err, "model")
			}
		}
		if err := p.db.SetPref(ctx, int64(user), "default_model", strconv.FormatInt(int64(*patch.DefaultModel), 10)); err != nil {
			return Preferences{}, err
		}
	}
	if err := p.setDesktop(ctx, user, patch.DesktopPatch); err != nil {
		return Preferences{}, err
	}
	if patch.LastChat != nil {
		if err := p.setChat(ctx, user, "last_chat", *patch.LastChat); err != nil {
			return Preferences{}, err
		}
		return p.Get(ctx, user)
	}
	prefs, err := p.Get(ctx, user)
	if err != nil {
		return Preferences{}, err
	}
	p.bus.Publish(events.Event{Topic: "prefs", UserID: int64(user), Data: prefs})
	return prefs, nil
}

// setChat stores a preference naming one of the user's chats (0: none).
func (p *Prefs) setChat(ctx context.Context, user ids.UserID, key string, id ids.ChatID) error {
	if id != 0 {
		if _, err := p.db.ChatByID(ctx, user, id); err != nil {
			return store.Kinded(err, "chat")
		}
	}
	return p.db.SetPref(ctx, int64(user), key, strconv.FormatInt(int64(id), 10))
}

// AutoRead says whether replies that finish while their chat is open are
// read aloud to the user.
func (p *Prefs) AutoRead(ctx context.Context, user ids.UserID) (bool, error) {
	m, err := p.db.Prefs(ctx, int64(user))
	if err != nil {
		return false, err
	}
	auto, _ := strconv.ParseBool(m["audio_auto_read"])
	return auto, nil
}

// SetAutoRead turns reading replies aloud on or off for the user.
func (p *Prefs) SetAutoRead(ctx context.Context, user ids.UserID, on bool) error {
	return p.db.SetPref(ctx, int64(user), "audio_auto_read", strconv.FormatBool(on))
}
