package core

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/auth"
)

// One client's sign-ups spend its own attempts, never everyone's: a
// stranger hammering the sign-up form must not keep the household from
// creating accounts.
func TestSignUpLimitIsPerClient(t *testing.T) {
	proxy := netip.MustParsePrefix("127.0.0.1/32")
	limits := &auth.LoginLimits{
		PerAddress:  auth.LimitOptions{Burst: 3, Every: time.Hour},
		PerUsername: auth.LimitOptions{Burst: 3, Every: time.Hour},
	}
	w := newWeb(t, webOptions{proxies: []netip.Prefix{proxy}, limits: limits})
	attacker := []string{"X-Forwarded-For", "203.0.113.66"}
	for i := range 3 {
		w.post(newClient(), "/api/auth/signup", map[string]string{"username": fmt.Sprintf("spam%d", i), "password": "x"}, attacker...)
	}
	if code, _ := w.post(newClient(), "/api/auth/signup", map[string]string{"username": "spam9", "password": "x"}, attacker...); code != 429 {
		t.Errorf("the flooding client is not limited: %d", code)
	}
	code, body := w.post(newClient(), "/api/auth/signup", map[string]string{"username": "rosie", "password": "a-long-enough-password"},
		"X-Forwarded-For", "192.168.1.7")
	if code != 200 {
		t.Errorf("another client's sign-up after someone else's flood: %d %s, want 200", code, body)
	}
}
