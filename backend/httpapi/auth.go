package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/llembas/lembas/backend/api"
	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// CookieName is the session cookie. It holds the token; the server keeps
// only its hash.
const CookieName = "lembas_session"

// Auth is what a listening socket needs to sign people in. Without it (the
// desktop mount) every request acts as Options.Caller says.
type Auth struct {
	Accounts *auth.Accounts
	Sessions *auth.Sessions
	Limiter  *auth.LoginLimiter
	// TrustedProxies are the reverse proxies whose X-Forwarded-For and
	// X-Forwarded-Proto are believed.
	TrustedProxies []netip.Prefix
}

// maxAuthBody bounds a login or sign-up form.
const maxAuthBody = 16 << 10

// UserInfo is the signed-in user as the login screen sees it.
type UserInfo struct {
	ID          int64  `json:"id"`
	Username    string `json:"username"`
	DisplayName string `json:"displayName"`
	Admin       bool   `json:"admin"`
	Owner       bool   `json:"owner"`
}

func userInfo(u store.User) *UserInfo {
	return &UserInfo{ID: u.ID, Username: u.Username, DisplayName: u.DisplayName, Admin: u.IsAdmin, Owner: u.IsOwner}
}

// AuthState is what the frontend needs before anyone signs in.
type AuthState struct {
	InstanceName   string          `json:"instanceName"`
	SignUpMode     auth.SignUpMode `json:"signUpMode"`
	NeedsFirstUser bool            `json:"needsFirstUser"`
	SignedIn       bool            `json:"signedIn"`
	User           *UserInfo       `json:"user"`
	// Insecure is set when passwords would cross the network in the clear:
	// plain HTTP to a host that is not this machine.
	Insecure bool `json:"insecure"`
	Desktop  bool `json:"desktop"`
}

// sessionCaller resolves the caller of a request on a listening socket from
// its session cookie.
func (h *handler) sessionCaller(r *http.Request) (api.Caller, error) {
	c, err := r.Cookie(CookieName)
	if err != nil || c.Value == "" {
		return api.Caller{}, apperr.New(apperr.Unauthorized, "Please sign in.")
	}
	u, hash, err := h.opt.Auth.Sessions.Check(r.Context(), c.Value)
	if err != nil {
		return api.Caller{}, err
	}
	// Owner: the desktop's owner signed in from another device is still
	// the owner (their own desktop's notifications).
	return api.Caller{UserID: u.ID, Admin: u.IsAdmin, Owner: u.IsOwner, Session: hash}, nil
}

// caller resolves who makes a request: the mount's fixed caller (desktop)
// or the session's user.
func (h *handler) caller(r *http.Request) (api.Caller, error) {
	if h.opt.Auth == nil {
		return h.opt.Caller(r)
	}
	return h.sessionCaller(r)
}

// clientAddr is the address a request came from: the peer, or, when the
// peer is a trusted proxy, the nearest address in X-Forwarded-For that is
// not one.
func (h *handler) clientAddr(r *http.Request) string {
	peer := peerAddr(r)
	if h.opt.Auth == nil || !h.trusted(peer) {
		return peer.String()
	}
	hops := r.Header.Values("X-Forwarded-For")
	var list []string
	for _, v := range hops {
		list = append(list, strings.Split(v, ",")...)
	}
	for i := len(list) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(list[i]))
		if err != nil {
			// A proxy we trust wrote garbage; the nearest usable answer
			// is the hop that passed it on.
			break
		}
		a = a.Unmap()
		if !h.trusted(a) {
			return a.String()
		}
		peer = a
	}
	return peer.String()
}

func peerAddr(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}

func (h *handler) trusted(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	for _, p := range h.opt.Auth.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// secure reports whether the browser reached us over TLS, directly or
// through a trusted proxy that says so.
func (h *handler) secure(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	if h.opt.Auth != nil && h.trusted(peerAddr(r)) {
		proto := r.Header.Get("X-Forwarded-Proto")
		if i := strings.IndexByte(proto, ','); i >= 0 {
			proto = proto[:i]
		}
		return strings.EqualFold(strings.TrimSpace(proto), "https")
	}
	return false
}

// loopbackHost reports whether the Host the browser used names this machine.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

func (h *handler) setSessionCookie(w http.ResponseWriter, r *http.Request, token string) {
	http.SetCookie(w, &http.Cookie{
		Name:     CookieName,
		Value:    token,
		Path:     "/",
		MaxAge:   int(h.opt.Auth.Sessions.Absolute().Seconds()),
		HttpOnly: true,
		Secure:   h.secure(r),
		SameSite: http.SameSiteLaxMode,
	})
}

func (h *handler) clearSessionCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		Secure: h.secure(r), SameSite: http.SameSiteLaxMode})
}

func (h *handler) authState(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	st := AuthState{InstanceName: h.instanceName(ctx), Desktop: h.opt.Auth == nil}
	if h.opt.Auth == nil {
		c, err := h.opt.Caller(r)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		st.SignedIn = true
		st.SignUpMode = auth.SignUpClosed
		st.User = &UserInfo{ID: c.UserID, Admin: c.Admin, Owner: c.Owner}
		writeJSON(w, http.StatusOK, st)
		return
	}
	var err error
	if st.SignUpMode, err = h.opt.Auth.Accounts.SignUpMode(ctx); err != nil {
		h.fail(w, r, err)
		return
	}
	if st.NeedsFirstUser, err = h.opt.Auth.Accounts.NeedsFirstUser(ctx); err != nil {
		h.fail(w, r, err)
		return
	}
	if c, err := r.Cookie(CookieName); err == nil {
		if u, err := h.opt.Auth.Sessions.Validate(ctx, c.Value); err == nil {
			st.SignedIn, st.User = true, userInfo(u)
		}
	}
	st.Insecure = !h.secure(r) && !loopbackHost(r.Host)
	writeJSON(w, http.StatusOK, st)
}

func (h *handler) instanceName(ctx context.Context) string {
	if h.opt.InstanceName != nil {
		if n := h.opt.InstanceName(ctx); n != "" {
			return n
		}
	}
	return "LLeMbas"
}

// readForm decodes a small JSON body into v.
func readForm(w http.ResponseWriter, r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		return apperr.New(apperr.Invalid, "send the form as application/json")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxAuthBody))
	if err != nil {
		return apperr.New(apperr.Invalid, "the form is too large")
	}
	if err := json.Unmarshal(body, v); err != nil {
		return apperr.New(apperr.Invalid, "the form is not valid JSON")
	}
	return nil
}

// rateLimited answers 429 with Retry-After.
func (h *handler) rateLimited(w http.ResponseWriter, r *http.Request, wait float64) {
	secs := int(math.Ceil(wait))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	h.fail(w, r, apperr.New(apperr.RateLimited, "Too many attempts; try again in %d seconds.", secs))
}

func (h *handler) login(w http.ResponseWriter, r *http.Request) {
	var form struct {
		Username string `json:"username"`
		Password string `json:"password"`
	}
	if err := readForm(w, r, &form); err != nil {
		h.fail(w, r, err)
		return
	}
	addr := h.clientAddr(r)
	if wait := h.opt.Auth.Limiter.Attempt(addr, form.Username); wait > 0 {
		// The username is not logged: people type passwords into it.
		h.opt.Log.Warn("sign-in rate limited", "client", addr)
		h.rateLimited(w, r, wait.Seconds())
		return
	}
	in, err := h.opt.Auth.Accounts.Login(r.Context(), form.Username, form.Password,
		auth.Client{UserAgent: r.UserAgent(), IP: addr})
	if err != nil {
		if apperr.KindOf(err) != apperr.Internal {
			h.opt.Log.Info("sign-in refused", "client", addr, "kind", apperr.KindOf(err))
		}
		h.fail(w, r, err)
		return
	}
	h.opt.Auth.Limiter.Succeeded(addr, form.Username)
	// A session this browser held before (another account, or the same
	// one signing in again) ends: one browser, one session.
	if old, err := r.Cookie(CookieName); err == nil && old.Value != "" && old.Value != in.Token {
		if err := h.opt.Auth.Sessions.Revoke(r.Context(), old.Value); err != nil {
			h.opt.Log.Warn("could not end the previous session", "err", err)
		}
	}
	h.opt.Log.Info("signed in", "user", in.User.ID, "client", addr)
	h.setSessionCookie(w, r, in.Token)
	writeJSON(w, http.StatusOK, map[string]any{"user": userInfo(in.User)})
}

func (h *handler) signUp(w http.ResponseWriter, r *http.Request) {
	var form struct {
		Username    string `json:"username"`
		DisplayName string `json:"displayName"`
		Password    string `json:"password"`
	}
	if err := readForm(w, r, &form); err != nil {
		h.fail(w, r, err)
		return
	}
	addr := h.clientAddr(r)
	// Sign-ups spend the client address's attempts like logins do (each
	// costs a hash), but no shared key: one client's flood must not keep
	// everyone else from signing up.
	if wait := h.opt.Auth.Limiter.AttemptAddress(addr); wait > 0 {
		h.opt.Log.Warn("sign-up rate limited", "client", addr)
		h.rateLimited(w, r, wait.Seconds())
		return
	}
	ctx := r.Context()
	u, err := h.opt.Auth.Accounts.SignUp(ctx, auth.SignUpRequest{Username: form.Username, DisplayName: form.DisplayName, Password: form.Password})
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.opt.Log.Info("signed up", "user", u.ID, "admin", u.IsAdmin, "status", u.Status, "client", addr)
	out := map[string]any{"user": userInfo(u), "signedIn": false, "pending": u.Status == store.StatusPending}
	if u.Status == store.StatusActive {
		token, _, err := h.opt.Auth.Sessions.Create(ctx, ids.UserID(u.ID), auth.Client{UserAgent: r.UserAgent(), IP: addr})
		if err != nil {
			h.fail(w, r, err)
			return
		}
		h.setSessionCookie(w, r, token)
		out["signedIn"] = true
	}
	writeJSON(w, http.StatusOK, out)
}

func (h *handler) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(CookieName); err == nil && c.Value != "" {
		if err := h.opt.Auth.Sessions.Revoke(r.Context(), c.Value); err != nil && !errors.Is(err, context.Canceled) {
			h.fail(w, r, err)
			return
		}
	}
	h.clearSessionCookie(w, r)
	// The next person on this browser must not find this one's files and
	// images in its cache. Browsers honour it on HTTPS and localhost only;
	// elsewhere no-cache on the files (revalidated with the new cookie)
	// is what protects them.
	w.Header().Set("Clear-Site-Data", `"cache"`)
	writeJSON(w, http.StatusOK, map[string]bool{"signedOut": true})
}
