package settings

import (
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/apperr"
)

func TestCheckShortcuts(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   map[string]string
		want string // "" for accepted, else part of the message
	}{
		{"none", map[string]string{}, ""},
		{"one", map[string]string{"newChat": "Ctrl+Alt+N"}, ""},
		{"function key", map[string]string{"help": "F1"}, ""},
		{"escape", map[string]string{"focusComposer": "Shift+Escape"}, ""},
		{"unknown action", map[string]string{"launchRockets": "Ctrl+R"}, "no shortcut action"},
		{"modifiers out of order", map[string]string{"stop": "Shift+Ctrl+X"}, "not a key combination"},
		{"empty", map[string]string{"stop": ""}, "not a key combination"},
		{"two keys", map[string]string{"stop": "Ctrl+X Y"}, "not a key combination"},
		{"same keys twice", map[string]string{"stop": "Ctrl+Shift+K", "searchChats": "Ctrl+Shift+K"}, "given to both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkShortcuts(tc.in)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || apperr.KindOf(err) != apperr.Invalid {
				t.Fatalf("got %v, want an invalid error containing %q", err, tc.want)
			}
		})
	}
}

func TestDesktopPrefsFrom(t *testing.T) {
	p := DesktopPrefsFrom(map[string]string{"close_to_tray": "1", "quick_chat": "7", "quick_continue": "0", "shortcuts": `{"stop":"Ctrl+Alt+S"}`})
	if !p.CloseToTray || p.QuickChat != 7 || p.QuickContinue || p.Shortcuts["stop"] != "Ctrl+Alt+S" {
		t.Fatalf("got %+v", p)
	}
	if p := DesktopPrefsFrom(map[string]string{"shortcuts": "not json"}); p.Shortcuts == nil || len(p.Shortcuts) != 0 {
		t.Fatalf("bad JSON: %+v", p.Shortcuts)
	}
}

func TestNotifyRepliesIsOnUntilTurnedOff(t *testing.T) {
	if !DesktopPrefsFrom(map[string]string{}).NotifyReplies {
		t.Error("reply notifications are off before anyone chose")
	}
	if DesktopPrefsFrom(map[string]string{"notify_replies": "0"}).NotifyReplies {
		t.Error("turning reply notifications off did not stick")
	}
}
