package settings

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
)

// DesktopPrefs are the preferences of the desktop app (quick chat, tray)
// and the keyboard shortcuts, which the browser app shares.
type DesktopPrefs struct {
	// CloseToTray hides the window instead of quitting when it is closed;
	// it only applies while a tray icon is registered.
	CloseToTray bool `json:"closeToTray"`
	// QuickChat is the chat quick chat used last (0: none), and
	// QuickContinue says to go on with it instead of starting a new one.
	QuickChat     ids.ChatID `json:"quickChat"`
	QuickContinue bool       `json:"quickContinue"`
	// Shortcuts are the rebound keyboard shortcuts, action → keys
	// ("Ctrl+Shift+O"); actions not listed keep their default.
	Shortcuts map[string]string `json:"shortcuts"`
	// NotifyReplies shows a native notification when a reply finishes
	// while the window is hidden or another chat is open (on unless
	// turned off).
	NotifyReplies bool `json:"notifyReplies"`
}

// DesktopPatch changes the desktop preferences that are set.
type DesktopPatch struct {
	CloseToTray   *bool              `json:"closeToTray,omitempty"`
	NotifyReplies *bool              `json:"notifyReplies,omitempty"`
	QuickChat     *ids.ChatID        `json:"quickChat,omitempty"`
	QuickContinue *bool              `json:"quickContinue,omitempty"`
	Shortcuts     *map[string]string `json:"shortcuts,omitempty"`
}

// ShortcutActions are the actions a shortcut can be bound to; the frontend
// (js/shell/shortcuts.js) holds their labels and default keys.
var ShortcutActions = []string{"newChat", "quickChat", "searchChats", "focusComposer", "stop", "toggleSidebar", "help"}

// shortcutKeys is the shape of a binding: modifiers in a fixed order, then
// one key name.
var shortcutKeys = regexp.MustCompile(`^(Ctrl\+)?(Alt\+)?(Shift\+)?(Meta\+)?[^\s+]{1,12}$`)

// DesktopPrefsFrom reads the desktop preferences from a user's stored
// preferences (the desktop app reads them without going through a call).
func DesktopPrefsFrom(m map[string]string) DesktopPrefs {
	quick, _ := strconv.ParseInt(m["quick_chat"], 10, 64)
	p := DesktopPrefs{
		CloseToTray:   m["close_to_tray"] == "1",
		QuickChat:     ids.ChatID(quick),
		QuickContinue: m["quick_continue"] == "1",
		Shortcuts:     map[string]string{},
		NotifyReplies: m["notify_replies"] != "0",
	}
	if s := m["shortcuts"]; s != "" {
		json.Unmarshal([]byte(s), &p.Shortcuts)
	}
	return p
}

func boolPref(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// setDesktop stores the desktop fields of a preferences patch.
func (p *Prefs) setDesktop(ctx context.Context, user ids.UserID, patch DesktopPatch) error {
	if patch.Shortcuts != nil {
		if err := checkShortcuts(*patch.Shortcuts); err != nil {
			return err
		}
		b, _ := json.Marshal(*patch.Shortcuts)
		if err := p.db.SetPref(ctx, int64(user), "shortcuts", string(b)); err != nil {
			return err
		}
	}
	if patch.QuickChat != nil {
		if err := p.setChat(ctx, user, "quick_chat", *patch.QuickChat); err != nil {
			return err
		}
	}
	for key, v := range map[string]*bool{"close_to_tray": patch.CloseToTray, "quick_continue": patch.QuickContinue, "notify_replies": patch.NotifyReplies} {
		if v == nil {
			continue
		}
		if err := p.db.SetPref(ctx, int64(user), key, boolPref(*v)); err != nil {
			return err
		}
	}
	return nil
}

// checkShortcuts refuses unknown actions, malformed keys and two actions on
// the same keys. The frontend says the same in friendlier words (it knows
// the defaults and the labels); this keeps a stored set consistent.
func checkShortcuts(m map[string]string) error {
	known := map[string]bool{}
	for _, a := range ShortcutActions {
		known[a] = true
	}
	used := map[string]string{}
	for action, keys := range m {
		if !known[action] {
			return apperr.New(apperr.Invalid, "there is no shortcut action %q", action)
		}
		if !shortcutKeys.MatchString(keys) {
			return apperr.New(apperr.Invalid, "%q is not a key combination (for example Ctrl+Shift+K)", keys)
		}
		if other, ok := used[keys]; ok {
			return apperr.New(apperr.Invalid, "%s is given to both %s and %s; each shortcut needs its own keys", keys, other, action)
		}
		used[keys] = action
	}
	return nil
}
