package auth

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

func TestSignUpModes(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, cheap)
	if m, _ := f.accounts.SignUpMode(ctx); m != SignUpApproval {
		t.Errorf("default mode = %q, want approval", m)
	}
	// The first account is the admin even with sign-up closed.
	if err := f.accounts.SetSignUpMode(ctx, SignUpClosed); err != nil {
		t.Fatal(err)
	}
	if first, _ := f.accounts.NeedsFirstUser(ctx); !first {
		t.Error("NeedsFirstUser on an empty instance = false")
	}
	admin, err := f.accounts.SignUp(ctx, SignUpRequest{Username: " Gandalf ", Password: "you-shall-not-pass"})
	if err != nil {
		t.Fatal(err)
	}
	if !admin.IsAdmin || admin.Status != store.StatusActive || admin.Username != "Gandalf" || admin.DisplayName != "Gandalf" {
		t.Errorf("first sign-up = %+v, want active admin Gandalf", admin)
	}
	if first, _ := f.accounts.NeedsFirstUser(ctx); first {
		t.Error("NeedsFirstUser after the admin signed up = true")
	}
	_, err = f.accounts.SignUp(ctx, SignUpRequest{Username: "saruman", Password: "the-white-hand"})
	wantKind(t, "closed", err, apperr.Forbidden)

	f.accounts.SetSignUpMode(ctx, SignUpApproval)
	u, err := f.accounts.SignUp(ctx, SignUpRequest{Username: "pippin", DisplayName: "Peregrin Took", Password: "fool-of-a-took"})
	if err != nil || u.Status != store.StatusPending || u.IsAdmin || u.DisplayName != "Peregrin Took" {
		t.Errorf("approval sign-up = %+v, %v; want pending", u, err)
	}
	f.accounts.SetSignUpMode(ctx, SignUpOpen)
	u, err = f.accounts.SignUp(ctx, SignUpRequest{Username: "merry", Password: "brandybuck!"})
	if err != nil || u.Status != store.StatusActive || u.IsAdmin {
		t.Errorf("open sign-up = %+v, %v; want active non-admin", u, err)
	}
	_, err = f.accounts.SignUp(ctx, SignUpRequest{Username: "MERRY", Password: "brandybuck!"})
	wantKind(t, "taken username", err, apperr.Conflict)
	_, err = f.accounts.SignUp(ctx, SignUpRequest{Username: "sam", Password: "short"})
	wantKind(t, "short password", err, apperr.Invalid)
	_, err = f.accounts.SignUp(ctx, SignUpRequest{Username: "sam gamgee", Password: "long enough pw"})
	wantKind(t, "bad username", err, apperr.Invalid)

	wantKind(t, "unknown mode", f.accounts.SetSignUpMode(ctx, "invite"), apperr.Invalid)
	f.db.SetSetting(ctx, SettingSignUpMode, "garbage")
	if m, _ := f.accounts.SignUpMode(ctx); m != SignUpClosed {
		t.Errorf("garbage mode reads as %q, want closed", m)
	}
}

func TestConcurrentSignUpsMakeOneAdmin(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, cheap)
	f.accounts.SetSignUpMode(ctx, SignUpOpen)
	const n = 20
	var wg sync.WaitGroup
	start := make(chan struct{})
	users := make([]store.User, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			<-start
			users[i], errs[i] = f.accounts.SignUp(ctx, SignUpRequest{Username: fmt.Sprintf("hobbit%d", i), Password: "second-breakfast"})
		})
	}
	close(start)
	wg.Wait()
	admins := 0
	for i := range n {
		if errs[i] != nil {
			t.Errorf("sign-up %d: %v", i, errs[i])
		}
		if users[i].IsAdmin {
			admins++
		}
	}
	all, total, _ := f.db.ListUsers(ctx, store.UserFilter{Limit: 100})
	stored := 0
	for _, u := range all {
		if u.IsAdmin {
			stored++
		}
	}
	if admins != 1 || stored != 1 || total != n {
		t.Errorf("%d admins returned, %d stored among %d users; want exactly 1 among %d", admins, stored, total, n)
	}
}

func TestLogin(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, cheap)
	f.accounts.SetSignUpMode(ctx, SignUpApproval)
	f.accounts.SignUp(ctx, SignUpRequest{Username: "Gandalf", Password: "you-shall-not-pass"})
	pending, _ := f.accounts.SignUp(ctx, SignUpRequest{Username: "pippin", Password: "fool-of-a-took"})
	bill := f.user(t, "bill", "the-pony-bill", store.StatusDisabled, false)

	in, err := f.accounts.Login(ctx, "gandalf", "you-shall-not-pass", Client{IP: "192.0.2.1"})
	if err != nil {
		t.Fatal(err)
	}
	if u, err := f.sessions.Validate(ctx, in.Token); err != nil || u.Username != "Gandalf" || in.User.ID != u.ID {
		t.Errorf("the login's token validates as %+v, %v", u, err)
	}
	if want := f.clock.Now().Add(90 * 24 * time.Hour); !in.Expires.Equal(want) {
		t.Errorf("Expires = %v, want %v", in.Expires, want)
	}

	for name, c := range map[string][2]string{
		"wrong password":           {"gandalf", "you-shall-pass"},
		"unknown user":             {"saruman", "you-shall-not-pass"},
		"empty":                    {"", ""},
		"pending, wrong password":  {"pippin", "wrong-password"},
		"disabled, wrong password": {"bill", "wrong-password"},
	} {
		_, err := f.accounts.Login(ctx, c[0], c[1], Client{})
		wantKind(t, name, err, apperr.Unauthorized)
		if _, msg := apperr.Public(err); msg != "Wrong username or password." {
			t.Errorf("%s: message %q tells more than it should", name, msg)
		}
	}
	// Only with the right password do inactive users learn why.
	_, err = f.accounts.Login(ctx, "pippin", "fool-of-a-took", Client{})
	wantKind(t, "pending", err, apperr.Forbidden)
	_, err = f.accounts.Login(ctx, "bill", "the-pony-bill", Client{})
	wantKind(t, "disabled", err, apperr.Forbidden)
	for _, id := range []int64{pending.ID, bill.ID} {
		if list, _ := f.db.UserSessions(ctx, ids.UserID(id)); len(list) != 0 {
			t.Errorf("inactive user %d got a session", id)
		}
	}
	// The password-less owner row cannot sign in, with any password.
	owner, _ := f.db.EnsureOwner(ctx, "owner", "Owner")
	_, err = f.accounts.Login(ctx, owner.Username, "", Client{})
	wantKind(t, "password-less owner", err, apperr.Unauthorized)
}

func TestLoginUpgradesOldHashes(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Params{Memory: 128, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32})
	u := f.user(t, "frodo", "ring-bearer-1", store.StatusActive, false) // made with cheap (64 KiB)
	if _, err := f.accounts.Login(ctx, "frodo", "ring-bearer-1", Client{}); err != nil {
		t.Fatal(err)
	}
	h, _ := f.db.PasswordHash(ctx, ids.UserID(u.ID))
	p, _, _, err := decodeHash(h)
	if err != nil || p.Memory != 128 {
		t.Errorf("after login the hash is %q, want the service's parameters", h)
	}
	if _, err := f.accounts.Login(ctx, "frodo", "ring-bearer-1", Client{}); err != nil {
		t.Errorf("login with the upgraded hash: %v", err)
	}
}

// TestUnknownUserTakesAsLongAsWrongPassword uses the real parameters: with
// a dummy hash, "no such user" runs the same argon2 work as "wrong
// password", so timing does not tell who has an account.
// TestUnknownUserCostsOneVerification checks, by counting rather than
// timing (timed assertions are flaky on a shared machine), that a login
// for an unknown user runs exactly one argon2 verification with the same
// parameters as a real account's, so both take the same time.
func TestUnknownUserCostsOneVerification(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, cheap)
	frodo := f.user(t, "frodo", "ring-bearer-1", store.StatusActive, false)
	var seen []string
	f.accounts.onVerify = func(encoded string) { seen = append(seen, encoded) }
	params := func(encoded string) string {
		parts := strings.Split(encoded, "$")
		if len(parts) < 4 {
			t.Fatalf("not a PHC string: %q", encoded)
		}
		return parts[1] + "$" + parts[2] + "$" + parts[3]
	}
	for _, user := range []string{"frodo", "samwise", ""} {
		seen = nil
		_, err := f.accounts.Login(ctx, user, "wrong-password", Client{})
		wantKind(t, user, err, apperr.Unauthorized)
		if len(seen) != 1 {
			t.Fatalf("login as %q verified %d hashes, want exactly 1", user, len(seen))
		}
		real, _ := f.db.PasswordHash(ctx, ids.UserID(frodo.ID))
		if params(seen[0]) != params(real) {
			t.Errorf("login as %q verified a hash with %s, a real one has %s", user, params(seen[0]), params(real))
		}
	}
}

func TestChangeAndResetPassword(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, cheap)
	f.user(t, "gandalf", "you-shall-not-pass", store.StatusActive, true)
	sam := f.user(t, "sam", "po-tay-toes", store.StatusActive, false)
	sid := ids.UserID(sam.ID)
	here, _ := f.accounts.Login(ctx, "sam", "po-tay-toes", Client{})
	there, _ := f.accounts.Login(ctx, "sam", "po-tay-toes", Client{})

	err := f.accounts.ChangePassword(ctx, sid, "wrong-current", "boil-em-mash-em", HashToken(here.Token))
	wantKind(t, "wrong current password", err, apperr.Invalid)
	err = f.accounts.ChangePassword(ctx, sid, "po-tay-toes", "short", HashToken(here.Token))
	wantKind(t, "weak new password", err, apperr.Invalid)
	if err := f.accounts.ChangePassword(ctx, sid, "po-tay-toes", "boil-em-mash-em", HashToken(here.Token)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.sessions.Validate(ctx, here.Token); err != nil {
		t.Errorf("the session that changed the password ended: %v", err)
	}
	_, err = f.sessions.Validate(ctx, there.Token)
	wantKind(t, "other device after a password change", err, apperr.Unauthorized)
	_, err = f.accounts.Login(ctx, "sam", "po-tay-toes", Client{})
	wantKind(t, "old password", err, apperr.Unauthorized)

	if err := f.accounts.ResetPassword(ctx, sid, "a-new-reset-pw"); err != nil {
		t.Fatal(err)
	}
	_, err = f.sessions.Validate(ctx, here.Token)
	wantKind(t, "session after an admin reset", err, apperr.Unauthorized)
	if _, err := f.accounts.Login(ctx, "sam", "a-new-reset-pw", Client{}); err != nil {
		t.Errorf("login with the reset password: %v", err)
	}

	// The desktop owner sets a first password without a current one.
	owner, _ := f.db.EnsureOwner(ctx, "owner", "Owner")
	if err := f.accounts.ChangePassword(ctx, ids.UserID(owner.ID), "", "sharing-at-last", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := f.accounts.Login(ctx, "owner", "sharing-at-last", Client{}); err != nil {
		t.Errorf("owner login after setting a password: %v", err)
	}
}

func TestEnsureAdminCreatesOrPromotes(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, cheap)
	u, created, err := f.accounts.EnsureAdmin(ctx, "gandalf", "you-shall-not-pass")
	if err != nil || !created || !u.IsAdmin || u.Status != store.StatusActive {
		t.Fatalf("create: %+v, %v, %v", u, created, err)
	}
	_, _, err = f.accounts.EnsureAdmin(ctx, "new admin", "you-shall-not-pass")
	wantKind(t, "bad username", err, apperr.Invalid)

	sam := f.user(t, "sam", "po-tay-toes", store.StatusDisabled, false)
	u, created, err = f.accounts.EnsureAdmin(ctx, "SAM", "master-gardener")
	if err != nil || created || u.ID != sam.ID || !u.IsAdmin || u.Status != store.StatusActive {
		t.Fatalf("promote: %+v, %v, %v", u, created, err)
	}
	if _, err := f.accounts.Login(ctx, "sam", "master-gardener", Client{}); err != nil {
		t.Errorf("promoted admin cannot log in: %v", err)
	}
}

// TestDisplayNameRefusesHiddenControls: a NUL, a line break or a bidi
// override in a display name is refused with a message saying so, at
// sign-up, when an admin creates the account and when the user renames.
func TestDisplayNameRefusesHiddenControls(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, cheap)
	f.accounts.SetSignUpMode(ctx, SignUpOpen)
	admin, err := f.accounts.SignUp(ctx, SignUpRequest{Username: "elrond", Password: "rivendell-council"})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"Frodo\x00Baggins", "Frodo\nBaggins", "Frodo\x7f", "Frodo\u0085Baggins", "\u202eoddorF",
		"Frodo\u202a", "Frodo\u202b", "Frodo\u202c", "Frodo\u202d", "Frodo\u2066", "Frodo\u2067", "Frodo\u2068", "Frodo\u2069",
		// Direction marks, and invisible characters that make two names
		// look alike: zero-widths alone or beside a space, word joiners,
		// the byte-order mark, tags smuggling text after a name.
		"\u200fFrodo", "Frodo\u200e", "Frodo\u061c", "Fro\u200bdo", "\u200dFrodo", "Frodo\u200c", "Frodo \u200d Baggins",
		"Fro\u2060do", "Frodo\u2061", "Frodo\u2064", "\ufeffFrodo", "Frodo\U000e0041", "\u200d", "\u0301\u0301"} {
		_, err := f.accounts.SignUp(ctx, SignUpRequest{Username: "frodo", DisplayName: bad, Password: "the-ring-bearer"})
		wantKind(t, fmt.Sprintf("sign-up as %q", bad), err, apperr.Invalid)
		if err != nil && !strings.Contains(err.Error(), "text-direction") {
			t.Errorf("sign-up as %q: %v, want a message naming the reason", bad, err)
		}
		_, err = f.accounts.Create(ctx, SignUpRequest{Username: "frodo2", DisplayName: bad, Password: "the-ring-bearer"}, false)
		wantKind(t, fmt.Sprintf("created as %q", bad), err, apperr.Invalid)
		wantKind(t, fmt.Sprintf("renamed to %q", bad), f.accounts.SetDisplayName(ctx, ids.UserID(admin.ID), bad), apperr.Invalid)
	}
	// Everything else a name may hold is still fine: accents, scripts
	// written right to left, emoji, inner spaces.
	// Joiners inside emoji sequences and words keep their place: a family,
	// the rainbow flag, a Persian name with its non-joiner, Scotland's flag.
	for _, good := range []string{"Frodo Baggins", "Éowyn", "אלרונד", "إلروند", "Samwise 🌱",
		"Hobbits 👨\u200d👩\u200d👧", "🏳\ufe0f\u200d🌈 Pippin", "نیم\u200cروز", "Merry 🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"} {
		if err := f.accounts.SetDisplayName(ctx, ids.UserID(admin.ID), good); err != nil {
			t.Errorf("renamed to %q: %v", good, err)
		}
	}
}
