package auth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// SignUpMode says who may create an account. Whatever the mode, the first
// account on an instance without an admin who can sign in is made, and is
// the admin.
type SignUpMode string

// The sign-up modes.
const (
	SignUpOpen     SignUpMode = "open"     // anyone reaching the server; active at once
	SignUpApproval SignUpMode = "approval" // anyone, but pending until an admin approves
	SignUpClosed   SignUpMode = "closed"   // nobody; admins create accounts
)

// SettingSignUpMode is the instance setting holding the SignUpMode.
const SettingSignUpMode = "signup_mode"

// DefaultSignUpMode applies while the setting is unset: a household member
// can ask for an account, and nobody else gets one unnoticed.
const DefaultSignUpMode = SignUpApproval

// AccountOptions configure Accounts. Zero values take the defaults.
type AccountOptions struct {
	Params     Params // zero: DefaultParams
	MaxHashing int    // argon2 computations at once (each takes Params.Memory); zero: 4
}

// Accounts signs users up and in and changes passwords.
type Accounts struct {
	db       *store.DB
	sessions *Sessions
	params   Params
	slots    chan struct{}
	dummy    func() (string, error)
	// onVerify, when set (tests), is told of every hash verified.
	onVerify func(encoded string)
}

// NewAccounts returns the account service over db, issuing sessions from
// sessions.
func NewAccounts(db *store.DB, sessions *Sessions, o AccountOptions) *Accounts {
	if o.Params == (Params{}) {
		o.Params = DefaultParams
	}
	if o.MaxHashing <= 0 {
		o.MaxHashing = 4
	}
	a := &Accounts{db: db, sessions: sessions, params: o.Params, slots: make(chan struct{}, o.MaxHashing)}
	// The hash an unknown username is checked against, so that "no such
	// user" takes as long as "wrong password" and does not reveal who has
	// an account. Its password is random and thrown away.
	a.dummy = sync.OnceValues(func() (string, error) { return a.params.Hash(rand.Text()) })
	return a
}

// hashing holds one of the slots that bound argon2's memory use.
func (a *Accounts) hashing(ctx context.Context) (release func(), err error) {
	select {
	case a.slots <- struct{}{}:
		return func() { <-a.slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (a *Accounts) hash(ctx context.Context, password string) (string, error) {
	release, err := a.hashing(ctx)
	if err != nil {
		return "", err
	}
	defer release()
	return a.params.Hash(password)
}

func (a *Accounts) verify(ctx context.Context, encoded, password string) (bool, error) {
	release, err := a.hashing(ctx)
	if err != nil {
		return false, err
	}
	defer release()
	if a.onVerify != nil {
		a.onVerify(encoded)
	}
	return VerifyPassword(encoded, password)
}

// SignUpMode reads the instance's sign-up mode. A stored value that is not
// a mode counts as closed.
func (a *Accounts) SignUpMode(ctx context.Context) (SignUpMode, error) {
	v, ok, err := a.db.Setting(ctx, SettingSignUpMode)
	if err != nil {
		return "", err
	}
	if !ok {
		return DefaultSignUpMode, nil
	}
	switch m := SignUpMode(v); m {
	case SignUpOpen, SignUpApproval, SignUpClosed:
		return m, nil
	}
	return SignUpClosed, nil
}

// SetSignUpMode stores the sign-up mode; anything else is Invalid.
func (a *Accounts) SetSignUpMode(ctx context.Context, m SignUpMode) error {
	switch m {
	case SignUpOpen, SignUpApproval, SignUpClosed:
		return a.db.SetSetting(ctx, SettingSignUpMode, string(m))
	}
	return apperr.New(apperr.Invalid, "Sign-up is open, approval or closed, not %q.", m)
}

// NeedsFirstUser reports whether no admin can sign in yet, so that the next
// sign-up becomes the admin (the login page then offers to create it).
func (a *Accounts) NeedsFirstUser(ctx context.Context) (bool, error) {
	ok, err := a.db.HasSignInAdmin(ctx)
	return !ok, err
}

// SignUpRequest is what a sign-up form sends.
type SignUpRequest struct {
	Username    string
	DisplayName string // empty: the username
	Password    string
}

// SignUp creates an account under the instance's sign-up mode. The first
// account becomes the admin (see store.DB.CreateAccount); otherwise it is
// active (open), pending (approval) or refused (closed, Forbidden). The
// caller starts a session only if the returned user is active.
func (a *Accounts) SignUp(ctx context.Context, r SignUpRequest) (store.User, error) {
	name := strings.TrimSpace(r.Username)
	if err := CheckUsername(name); err != nil {
		return store.User{}, err
	}
	if err := CheckPassword(name, r.Password); err != nil {
		return store.User{}, err
	}
	display, err := displayName(r.DisplayName, name)
	if err != nil {
		return store.User{}, err
	}
	mode, err := a.SignUpMode(ctx)
	if err != nil {
		return store.User{}, err
	}
	status := map[SignUpMode]string{SignUpOpen: store.StatusActive, SignUpApproval: store.StatusPending}[mode]
	if status == "" {
		// Refuse before spending a hash; CreateAccount checks again.
		if first, err := a.NeedsFirstUser(ctx); err != nil {
			return store.User{}, err
		} else if !first {
			return store.User{}, errClosed
		}
	}
	hash, err := a.hash(ctx, r.Password)
	if err != nil {
		return store.User{}, err
	}
	u, err := a.db.CreateAccount(ctx, store.NewUser{Username: name, DisplayName: display, PasswordHash: hash, Status: status})
	switch {
	case errors.Is(err, store.ErrConflict):
		return store.User{}, apperr.New(apperr.Conflict, "The username %s is taken; choose another.", name)
	case errors.Is(err, store.ErrForbidden):
		return store.User{}, errClosed
	}
	return u, err
}

var errClosed = apperr.New(apperr.Forbidden, "Sign-up is closed on this server; ask an administrator for an account.")

func displayName(display, username string) (string, error) {
	display = strings.TrimSpace(display)
	if display == "" {
		return username, nil
	}
	if !utf8.ValidString(display) || utf8.RuneCountInString(display) > 64 {
		return "", apperr.New(apperr.Invalid, "The display name must be text of at most 64 characters.")
	}
	if hiddenChars(display) {
		return "", apperr.New(apperr.Invalid, "The display name cannot hold control characters (such as NUL or a line break), text-direction marks or invisible characters.")
	}
	return display, nil
}

// hiddenChars reports whether a display name holds what a name shown beside
// others (the admin's user list, "signed in as") could use to reverse the
// text after it or pose as someone else: control characters, and the
// invisible format characters (Unicode Cf) — the bidirectional marks,
// embeddings, overrides and isolates (U+200E, U+200F, U+061C,
// U+202A–U+202E, U+2066–U+2069), zero-width spaces and joiners, U+2060–U+2064,
// U+FEFF and the like — or nothing visible at all.
//
// Two Cf characters have work to do in names: the zero-width joiner and
// non-joiner (U+200D, U+200C) inside emoji sequences and in Persian and
// Indic words, so they may stand between two visible characters; and tag
// characters (U+E0020–U+E007F) spell subdivision flags, so they may follow
// the black flag U+1F3F4.
func hiddenChars(name string) bool {
	rs := []rune(name)
	visible := false
	for i, r := range rs {
		if unicode.IsControl(r) {
			return true
		}
		switch {
		case r == 0x200C || r == 0x200D:
			if i == 0 || i == len(rs)-1 || !joinable(rs[i-1]) || !joinable(rs[i+1]) {
				return true
			}
		case r >= 0xE0020 && r <= 0xE007F:
			if i == 0 || (rs[i-1] != 0x1F3F4 && !(rs[i-1] >= 0xE0020 && rs[i-1] <= 0xE007F)) {
				return true
			}
		case unicode.Is(unicode.Cf, r):
			return true
		case unicode.In(r, unicode.L, unicode.N, unicode.P, unicode.S):
			visible = true
		}
	}
	return !visible
}

// joinable reports whether r may stand beside a zero-width joiner: a
// visible character or a mark, variation selectors included (as in U+1F3F3
// U+FE0F U+200D U+1F308, the rainbow flag), not a space or another
// invisible character.
func joinable(r rune) bool {
	return unicode.In(r, unicode.L, unicode.N, unicode.P, unicode.S, unicode.M)
}

// SignIn is a successful login: the session token for the cookie, when the
// session expires at the latest, and who signed in.
type SignIn struct {
	Token   string
	Expires time.Time
	User    store.User
}

var errWrongPassword = apperr.New(apperr.Unauthorized, "Wrong username or password.")

// Login checks a username (any letter case) and password and starts a
// session. An unknown user, a user without a password and a wrong password
// all run one argon2 verification and give the same Unauthorized error;
// only after a correct password does a pending or disabled user learn why
// they cannot sign in (Forbidden). A hash made with older parameters is
// upgraded. Rate limiting is the caller's (LoginLimiter), around this call.
func (a *Accounts) Login(ctx context.Context, username, password string, c Client) (SignIn, error) {
	if len(password) > MaxPasswordBytes {
		return SignIn{}, errWrongPassword
	}
	u, hash, err := a.db.Credentials(ctx, strings.TrimSpace(username))
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return SignIn{}, err
	}
	if err != nil || hash == "" {
		dummy, derr := a.dummy()
		if derr != nil {
			return SignIn{}, derr
		}
		if _, derr := a.verify(ctx, dummy, password); derr != nil {
			return SignIn{}, derr
		}
		return SignIn{}, errWrongPassword
	}
	ok, err := a.verify(ctx, hash, password)
	if err != nil {
		return SignIn{}, fmt.Errorf("verify password of user %d: %w", u.ID, err)
	}
	if !ok {
		return SignIn{}, errWrongPassword
	}
	if err := statusError(u); err != nil {
		return SignIn{}, err
	}
	if a.params.NeedsRehash(hash) {
		// Best effort: the old hash still works if this fails.
		if h, err := a.hash(ctx, password); err == nil {
			_ = a.db.SetPassword(ctx, ids.UserID(u.ID), h)
		}
	}
	token, exp, err := a.sessions.Create(ctx, ids.UserID(u.ID), c)
	if err != nil {
		return SignIn{}, err
	}
	return SignIn{Token: token, Expires: exp, User: u}, nil
}

// ChangePassword sets a user's own new password after checking the current
// one (not asked for when none was ever set, as for the desktop owner
// turning on sharing), and ends every other session of the user: keepHash
// is the hash (HashToken) of the session making the change ("" ends them
// all).
func (a *Accounts) ChangePassword(ctx context.Context, user ids.UserID, current, next, keepHash string) error {
	u, err := a.db.UserByID(ctx, int64(user))
	if err != nil {
		return err
	}
	old, err := a.db.PasswordHash(ctx, user)
	if err != nil {
		return err
	}
	if old != "" {
		ok, err := a.verify(ctx, old, current)
		if err != nil {
			return fmt.Errorf("verify password of user %d: %w", user, err)
		}
		if !ok {
			return apperr.New(apperr.Invalid, "The current password is wrong.")
		}
	}
	if err := a.setPassword(ctx, u, next); err != nil {
		return err
	}
	_, err = a.sessions.RevokeOthers(ctx, user, keepHash)
	return err
}

// Create is an admin creating an account: active at once whatever the
// sign-up mode, an admin when asked.
func (a *Accounts) Create(ctx context.Context, r SignUpRequest, admin bool) (store.User, error) {
	name := strings.TrimSpace(r.Username)
	if err := CheckUsername(name); err != nil {
		return store.User{}, err
	}
	if err := CheckPassword(name, r.Password); err != nil {
		return store.User{}, err
	}
	display, err := displayName(r.DisplayName, name)
	if err != nil {
		return store.User{}, err
	}
	hash, err := a.hash(ctx, r.Password)
	if err != nil {
		return store.User{}, err
	}
	u, err := a.db.CreateUser(ctx, store.NewUser{Username: name, DisplayName: display, PasswordHash: hash, IsAdmin: admin})
	if errors.Is(err, store.ErrConflict) {
		return store.User{}, apperr.New(apperr.Conflict, "The username %s is taken; choose another.", name)
	}
	return u, err
}

// SetDisplayName changes the name a user is shown by.
func (a *Accounts) SetDisplayName(ctx context.Context, user ids.UserID, name string) error {
	u, err := a.db.UserByID(ctx, int64(user))
	if err != nil {
		return err
	}
	display, err := displayName(name, u.Username)
	if err != nil {
		return err
	}
	return a.db.SetDisplayName(ctx, user, display)
}

// ResetPassword sets another user's password (an admin's reset) and ends
// every session of that user.
func (a *Accounts) ResetPassword(ctx context.Context, user ids.UserID, next string) error {
	u, err := a.db.UserByID(ctx, int64(user))
	if err != nil {
		return err
	}
	if err := a.setPassword(ctx, u, next); err != nil {
		return err
	}
	_, err = a.sessions.RevokeAll(ctx, user)
	return err
}

func (a *Accounts) setPassword(ctx context.Context, u store.User, next string) error {
	if err := CheckPassword(u.Username, next); err != nil {
		return err
	}
	h, err := a.hash(ctx, next)
	if err != nil {
		return err
	}
	return a.db.SetPassword(ctx, ids.UserID(u.ID), h)
}

// EnsureAdmin is `lembas create-admin`: it creates an active admin with
// this password, or makes the existing user of that name (any letter case)
// one — promoted, active, with the new password, its sessions ended. It
// reports whether the account was created.
func (a *Accounts) EnsureAdmin(ctx context.Context, username, password string) (store.User, bool, error) {
	name := strings.TrimSpace(username)
	u, err := a.db.UserByName(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		if err := CheckUsername(name); err != nil {
			return store.User{}, false, err
		}
		if err := CheckPassword(name, password); err != nil {
			return store.User{}, false, err
		}
		h, err := a.hash(ctx, password)
		if err != nil {
			return store.User{}, false, err
		}
		u, err := a.db.CreateUser(ctx, store.NewUser{Username: name, DisplayName: name, PasswordHash: h, IsAdmin: true})
		if errors.Is(err, store.ErrConflict) {
			return store.User{}, false, apperr.New(apperr.Conflict, "The username %s was just taken; run the command again.", name)
		}
		return u, err == nil, err
	}
	if err != nil {
		return store.User{}, false, err
	}
	id := ids.UserID(u.ID)
	if err := a.setPassword(ctx, u, password); err != nil {
		return store.User{}, false, err
	}
	if err := a.db.SetAdmin(ctx, id, true); err != nil {
		return store.User{}, false, err
	}
	if err := a.db.SetStatus(ctx, id, store.StatusActive); err != nil {
		return store.User{}, false, err
	}
	if _, err := a.sessions.RevokeAll(ctx, id); err != nil {
		return store.User{}, false, err
	}
	u, err = a.db.UserByID(ctx, u.ID)
	return u, false, err
}
