package agent

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/sshx"
	"github.com/llembas/lembas/backend/store"
)

// Profile is an SSH profile as its owner's pages see it: never its
// secret, only whether one is set.
type Profile struct {
	ID        ids.ProfileID `json:"id"`
	Name      string        `json:"name"`
	Host      string        `json:"host"`
	Port      int           `json:"port"`
	Username  string        `json:"username"`
	Auth      store.SSHAuth `json:"auth"`
	PublicKey string        `json:"publicKey"`
	// HostKey is the key pinned for the current host and port (nil: none).
	HostKey   *sshx.HostKey `json:"hostKey"`
	HasSecret bool          `json:"hasSecret"`
	CreatedAt int64         `json:"createdAt"`
}

// ProfileInput creates a profile. Auth "key" without PrivateKey generates
// a new ed25519 key (its public key is in the result, to copy).
type ProfileInput struct {
	Name       string        `json:"name"`
	Host       string        `json:"host"`
	Port       int           `json:"port"`
	Username   string        `json:"username"`
	Auth       store.SSHAuth `json:"auth"`
	PrivateKey string        `json:"privateKey,omitempty"`
	Password   string        `json:"password,omitempty"`
}

// ProfilePatch changes what is set. A credential is write-only: a new
// PrivateKey or Password replaces the stored one; NewKey generates a new
// key. Moving the profile (host or port) forgets its pinned key.
type ProfilePatch struct {
	Name       *string        `json:"name,omitempty"`
	Host       *string        `json:"host,omitempty"`
	Port       *int           `json:"port,omitempty"`
	Username   *string        `json:"username,omitempty"`
	Auth       *store.SSHAuth `json:"auth,omitempty"`
	PrivateKey *string        `json:"privateKey,omitempty"`
	Password   *string        `json:"password,omitempty"`
	NewKey     bool           `json:"newKey,omitempty"`
}

func view(p store.SSHProfile) Profile {
	v := Profile{ID: p.ID, Name: p.Name, Host: p.Host, Port: p.Port, Username: p.Username, Auth: p.Auth,
		PublicKey: p.PublicKey, HasSecret: p.SecretEnc != "", CreatedAt: p.CreatedAt}
	if k := p.Pinned(); k != "" {
		fp, _ := sshx.Fingerprint(k)
		v.HostKey = &sshx.HostKey{Key: k, Fingerprint: fp}
	}
	return v
}

// profile reads user's profile id: NotFound when it is not user's.
func (s *Service) profile(ctx context.Context, user ids.UserID, id ids.ProfileID) (store.SSHProfile, error) {
	p, err := s.db.SSHProfile(ctx, user, id)
	return p, store.Kinded(err, "SSH connection")
}

// Profiles lists user's profiles.
func (s *Service) Profiles(ctx context.Context, user ids.UserID) ([]Profile, error) {
	list, err := s.db.SSHProfiles(ctx, user)
	if err != nil {
		return nil, err
	}
	out := make([]Profile, 0, len(list))
	for _, p := range list {
		out = append(out, view(p))
	}
	return out, nil
}

// Profile returns one of user's profiles.
func (s *Service) Profile(ctx context.Context, user ids.UserID, id ids.ProfileID) (Profile, error) {
	p, err := s.profile(ctx, user, id)
	if err != nil {
		return Profile{}, err
	}
	return view(p), nil
}

// Field bounds.
const (
	maxName     = 100
	maxHost     = 253
	maxUsername = 64
	maxPassword = 1024
	maxKey      = 16 << 10
)

// printable reports whether s is valid UTF-8 with no control characters.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == 0x2028 || r == 0x2029 || unicode.Is(unicode.Bidi_Control, r) {
			return false
		}
	}
	return true
}

func cleanName(s string) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", apperr.New(apperr.Invalid, "Give the connection a name.")
	case utf8.RuneCountInString(s) > maxName || !printable(s):
		return "", apperr.New(apperr.Invalid, "The name must be at most %d characters of plain text.", maxName)
	}
	return s, nil
}

// cleanHost accepts a host name or address: no spaces, nothing an ssh
// command line would read as an option, and [v6] written bare.
func cleanHost(s string) (string, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		s = s[1 : len(s)-1]
	}
	switch {
	case s == "":
		return "", apperr.New(apperr.Invalid, "Enter the host's name or address.")
	case strings.HasPrefix(s, "-"):
		return "", apperr.New(apperr.Invalid, "A host name cannot start with '-'.")
	case len(s) > maxHost || !printable(s) || strings.ContainsAny(s, " \t/\\@'\"`$;&|<>()[]{}*?!#"):
		return "", apperr.New(apperr.Invalid, "Enter only the host's name or address (such as build.lan or 192.168.1.20), without spaces, user or port.")
	case strings.Contains(s, ":"):
		if ip := net.ParseIP(s); ip == nil {
			return "", apperr.New(apperr.Invalid, "Enter the port in the port field, not after the host.")
		}
	}
	return s, nil
}

func cleanPort(p int) (int, error) {
	if p == 0 {
		return 22, nil
	}
	if p < 1 || p > 65535 {
		return 0, apperr.New(apperr.Invalid, "The port is 1 to 65535 (SSH's is 22).")
	}
	return p, nil
}

func cleanUsername(s string) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", apperr.New(apperr.Invalid, "Enter the user name to sign in as.")
	case strings.HasPrefix(s, "-"):
		return "", apperr.New(apperr.Invalid, "A user name cannot start with '-'.")
	case len(s) > maxUsername || !printable(s) || strings.ContainsAny(s, " \t@:/\\'\"`$;&|<>"):
		return "", apperr.New(apperr.Invalid, "That is not a user name an SSH server accepts (no spaces, @ or :).")
	}
	return s, nil
}

// credential is a checked credential: the secret to encrypt and the
// key's public line.
type credential struct {
	auth   store.SSHAuth
	secret string
	public string
}

// newCredential builds the credential of auth from what was given: a
// password, an imported private key (checked by parsing it), or none for
// a key, which generates one.
func newCredential(auth store.SSHAuth, privateKey, password string, generate bool) (credential, error) {
	switch auth {
	case store.AuthPassword:
		if password == "" {
			return credential{}, apperr.New(apperr.Invalid, "Enter the password.")
		}
		if len(password) > maxPassword || strings.ContainsAny(password, "\x00\r\n") {
			return credential{}, apperr.New(apperr.Invalid, "That password cannot be sent over SSH.")
		}
		return credential{auth: auth, secret: password}, nil
	case store.AuthKey:
		if strings.TrimSpace(privateKey) == "" || generate {
			priv, pub, err := sshx.GenerateKey()
			if err != nil {
				return credential{}, fmt.Errorf("generate ssh key: %w", err)
			}
			return credential{auth: auth, secret: string(priv), public: pub}, nil
		}
		if len(privateKey) > maxKey {
			return credential{}, apperr.New(apperr.Invalid, "That is too long to be a private key.")
		}
		key := strings.TrimSpace(strings.ReplaceAll(privateKey, "\r\n", "\n")) + "\n"
		pub, err := sshx.PublicKey([]byte(key))
		if err != nil {
			if apperr.KindOf(err) != apperr.Internal {
				return credential{}, err
			}
			return credential{}, apperr.Wrap(apperr.Invalid, err, "That private key cannot be used: %s", plainKeyError(err))
		}
		return credential{auth: auth, secret: key, public: pub}, nil
	}
	return credential{}, apperr.New(apperr.Invalid, "Sign in with a key or a password.")
}

// plainKeyError is sshx's refusal of a key, without Go's package prefixes.
func plainKeyError(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "ssh: ")
	msg = strings.TrimPrefix(msg, "sshx: ")
	if msg == "" {
		return "it is not a private key."
	}
	return msg
}

func (s *Service) encrypt(plain string) (string, error) {
	k, err := s.keys()
	if err != nil {
		return "", apperr.Wrap(apperr.Unavailable, err, "The encryption key is unavailable, so an SSH credential cannot be stored.")
	}
	tok, err := k.Encrypt(plain)
	if err != nil {
		return "", fmt.Errorf("encrypt ssh credential: %w", err)
	}
	return tok, nil
}

// CreateProfile adds a profile for user.
func (s *Service) CreateProfile(ctx context.Context, user ids.UserID, in ProfileInput) (Profile, error) {
	var p store.SSHProfile
	var err error
	if p.Name, err = cleanName(in.Name); err != nil {
		return Profile{}, err
	}
	if p.Host, err = cleanHost(in.Host); err != nil {
		return Profile{}, err
	}
	if p.Port, err = cleanPort(in.Port); err != nil {
		return Profile{}, err
	}
	if p.Username, err = cleanUsername(in.Username); err != nil {
		return Profile{}, err
	}
	if in.Auth == "" {
		in.Auth = store.AuthKey
	}
	cred, err := newCredential(in.Auth, in.PrivateKey, in.Password, false)
	if err != nil {
		return Profile{}, err
	}
	p.Auth, p.PublicKey = cred.auth, cred.public
	if p.SecretEnc, err = s.encrypt(cred.secret); err != nil {
		return Profile{}, err
	}
	row, err := s.db.CreateSSHProfile(ctx, user, p, MaxProfiles)
	if errors.Is(err, store.ErrTooMany) {
		return Profile{}, apperr.New(apperr.Invalid, "You already have %d SSH connections, the most there can be; delete one to make room.", MaxProfiles)
	}
	if err != nil {
		return Profile{}, err
	}
	return view(row), nil
}

// UpdateProfile changes user's profile id. Moving it forgets its pinned
// key; a change of where or how it signs in ends what was connected with
// the old settings (OnProfileChanged).
func (s *Service) UpdateProfile(ctx context.Context, user ids.UserID, id ids.ProfileID, in ProfilePatch) (Profile, error) {
	old, err := s.profile(ctx, user, id)
	if err != nil {
		return Profile{}, err
	}
	p := old
	if in.Name != nil {
		if p.Name, err = cleanName(*in.Name); err != nil {
			return Profile{}, err
		}
	}
	if in.Host != nil {
		if p.Host, err = cleanHost(*in.Host); err != nil {
			return Profile{}, err
		}
	}
	if in.Port != nil {
		if p.Port, err = cleanPort(*in.Port); err != nil {
			return Profile{}, err
		}
	}
	if in.Username != nil {
		if p.Username, err = cleanUsername(*in.Username); err != nil {
			return Profile{}, err
		}
	}
	var key, password string
	if in.PrivateKey != nil {
		key = *in.PrivateKey
	}
	if in.Password != nil {
		password = *in.Password
	}
	// A credential sent without auth says how the profile signs in now.
	auth := p.Auth
	switch {
	case in.Auth != nil:
		auth = *in.Auth
	case key != "" || in.NewKey:
		auth = store.AuthKey
	case password != "":
		auth = store.AuthPassword
	}
	// A new credential when asked for, or when the way of signing in
	// changes (a password profile turned to a key one gets a new key
	// unless one is given).
	if auth != p.Auth || in.NewKey || key != "" || password != "" {
		if in.NewKey && auth != store.AuthKey {
			return Profile{}, apperr.New(apperr.Invalid, "A new key is only for a connection that signs in with a key.")
		}
		cred, err := newCredential(auth, key, password, in.NewKey)
		if err != nil {
			return Profile{}, err
		}
		p.Auth, p.PublicKey = cred.auth, cred.public
		if p.SecretEnc, err = s.encrypt(cred.secret); err != nil {
			return Profile{}, err
		}
	}
	row, err := s.db.UpdateSSHProfile(ctx, user, p)
	if err != nil {
		return Profile{}, store.Kinded(err, "SSH connection")
	}
	if p.Host != old.Host || p.Port != old.Port || p.Username != old.Username || p.SecretEnc != old.SecretEnc || p.Auth != old.Auth {
		s.forgetScan(id)
		s.profileChanged(id)
	}
	return view(row), nil
}

// DeleteProfile deletes user's profile id. Its chats keep their
// transcripts and can no longer act.
func (s *Service) DeleteProfile(ctx context.Context, user ids.UserID, id ids.ProfileID) error {
	if err := store.Kinded(s.db.DeleteSSHProfile(ctx, user, id), "SSH connection"); err != nil {
		return err
	}
	s.forgetScan(id)
	s.profileChanged(id)
	return nil
}

// scan is a host key captured for a profile, waiting to be accepted.
type scan struct {
	key  sshx.HostKey
	host string
	port int
	at   time.Time
}

func (s *Service) forgetScan(id ids.ProfileID) {
	s.mu.Lock()
	delete(s.scanned, id)
	s.mu.Unlock()
}

// ScanResult is a captured host key compared with the pinned one.
type ScanResult struct {
	Key         string `json:"key"`
	Fingerprint string `json:"fingerprint"`
	// Status: "new" (nothing pinned), "same" or "changed".
	Status string `json:"status"`
	// Pinned is the pinned key's fingerprint ("" when none).
	Pinned string `json:"pinned"`
}

// ScanHostKey captures the host key of user's profile id (the key
// exchange only: no user name or credential is sent) and remembers it for
// a while, for AcceptHostKey.
func (s *Service) ScanHostKey(ctx context.Context, user ids.UserID, id ids.ProfileID) (ScanResult, error) {
	p, err := s.profile(ctx, user, id)
	if err != nil {
		return ScanResult{}, err
	}
	// Nothing reaches a host with agent chats switched off.
	if err := s.reachable(ctx); err != nil {
		return ScanResult{}, err
	}
	sctx, cancel := context.WithTimeout(ctx, s.opt.ConnectTimeout)
	defer cancel()
	hk, err := sshx.CaptureHostKey(sctx, sshx.Target{Host: p.Host, Port: p.Port})
	if err != nil {
		return ScanResult{}, dialError(p, err)
	}
	out := ScanResult{Key: hk.Key, Fingerprint: hk.Fingerprint, Status: "new"}
	if pinned := p.Pinned(); pinned != "" {
		out.Pinned, _ = sshx.Fingerprint(pinned)
		out.Status = "changed"
		if sameKey(pinned, hk.Key) {
			out.Status = "same"
		}
	}
	now := time.Now()
	s.mu.Lock()
	for k, v := range s.scanned {
		if now.Sub(v.at) > s.opt.ScanKeep {
			delete(s.scanned, k)
		}
	}
	s.scanned[id] = scan{key: hk, host: p.Host, port: p.Port, at: now}
	s.mu.Unlock()
	return out, nil
}

// sameKey compares two authorized_keys lines by type and key, not comment.
func sameKey(a, b string) bool {
	fa, fb := strings.Fields(a), strings.Fields(b)
	return len(fa) >= 2 && len(fb) >= 2 && fa[0] == fb[0] && fa[1] == fb[1]
}

// AcceptHostKey pins the host key last scanned for user's profile id, if
// its fingerprint is the one the person accepted (what they saw), it was
// scanned from the profile's current address, and not too long ago.
func (s *Service) AcceptHostKey(ctx context.Context, user ids.UserID, id ids.ProfileID, fingerprint string) (Profile, error) {
	p, err := s.profile(ctx, user, id)
	if err != nil {
		return Profile{}, err
	}
	s.mu.Lock()
	sc, ok := s.scanned[id]
	s.mu.Unlock()
	if !ok || time.Since(sc.at) > s.opt.ScanKeep || sc.host != p.Host || sc.port != p.Port ||
		strings.TrimSpace(fingerprint) == "" || sc.key.Fingerprint != strings.TrimSpace(fingerprint) {
		return Profile{}, apperr.New(apperr.Invalid, "Scan the host key again: the fingerprint to accept must be the one just scanned.")
	}
	prev := p.Pinned()
	if err := store.Kinded(s.db.PinSSHHostKey(ctx, user, id, sc.key.Key, sc.host, sc.port), "SSH connection"); err != nil {
		return Profile{}, err
	}
	s.forgetScan(id)
	if prev != "" && !sameKey(prev, sc.key.Key) {
		s.profileChanged(id)
	}
	return s.Profile(ctx, user, id)
}

// ForgetHostKey unpins the host key of user's profile id.
func (s *Service) ForgetHostKey(ctx context.Context, user ids.UserID, id ids.ProfileID) (Profile, error) {
	if err := store.Kinded(s.db.ForgetSSHHostKey(ctx, user, id), "SSH connection"); err != nil {
		return Profile{}, err
	}
	s.profileChanged(id)
	return s.Profile(ctx, user, id)
}

// TestResult is how a test connection went.
type TestResult struct {
	OK      bool   `json:"ok"`
	Message string `json:"message"`
}

// Test connects with user's profile id and runs `uname -srm`.
func (s *Service) Test(ctx context.Context, user ids.UserID, id ids.ProfileID) (TestResult, error) {
	p, err := s.profile(ctx, user, id)
	if err != nil {
		return TestResult{}, err
	}
	// Nothing reaches a host with agent chats switched off.
	if err := s.reachable(ctx); err != nil {
		return TestResult{}, err
	}
	cl, err := s.connect(ctx, p)
	if err != nil {
		_, msg := apperr.Public(err)
		return TestResult{Message: msg}, nil
	}
	defer cl.Close()
	res, err := cl.Run(ctx, "uname -srm", sshx.RunOptions{Timeout: s.opt.ConnectTimeout, MaxOutput: 1024})
	switch {
	case err != nil:
		return TestResult{Message: "Connected, but a command could not run: " + plainNetError(err)}, nil
	case res.TimedOut:
		return TestResult{Message: "Connected, but `uname -srm` did not finish in time."}, nil
	case res.Exit != 0:
		return TestResult{Message: fmt.Sprintf("Connected, but `uname -srm` ended with status %d.", res.Exit)}, nil
	}
	return TestResult{OK: true, Message: "Connected: " + oneLine(cleanOutput(res.Output), 200)}, nil
}

// Browsing is a directory of a host as the new-chat picker shows it.
type Browsing struct {
	Dir    string        `json:"dir"`
	Parent string        `json:"parent"`
	Items  []BrowseEntry `json:"entries"`
	// More: the directory holds more than MaxBrowse entries.
	More bool `json:"more,omitempty"`
}

// BrowseEntry is one entry of a browsed directory.
type BrowseEntry struct {
	Name string `json:"name"`
	Dir  bool   `json:"dir"`
}

// MaxBrowse bounds the entries Browse returns.
const MaxBrowse = 500

// Browse lists directory dir ("" = the login directory) on the host of
// user's profile id, over SFTP, read-only: directories first.
func (s *Service) Browse(ctx context.Context, user ids.UserID, id ids.ProfileID, dir string) (Browsing, error) {
	p, err := s.profile(ctx, user, id)
	if err != nil {
		return Browsing{}, err
	}
	// Nothing reaches a host with agent chats switched off.
	if err := s.reachable(ctx); err != nil {
		return Browsing{}, err
	}
	if dir != "" && (!printable(dir) || len(dir) > 4096) {
		return Browsing{}, apperr.New(apperr.Invalid, "That is not a directory path.")
	}
	// The picker waits on this: a host that stops answering ends it at
	// the connect timeout (closing the connection is what ends a read
	// that hangs), as does the person leaving.
	ctx, cancel := context.WithTimeout(ctx, 2*s.opt.ConnectTimeout)
	defer cancel()
	cl, err := s.connect(ctx, p)
	if err != nil {
		return Browsing{}, err
	}
	defer cl.Close()
	defer context.AfterFunc(ctx, func() { cl.Close() })()
	fs, err := cl.SFTP()
	if err != nil {
		return Browsing{}, apperr.Wrap(apperr.Unavailable, err, "The host does not offer SFTP, which the agent needs for files.")
	}
	defer fs.Close()
	if dir == "" {
		if dir, err = fs.Getwd(); err != nil {
			return Browsing{}, apperr.Wrap(apperr.Unavailable, err, "The login directory cannot be read.")
		}
	}
	if real, err := fs.RealPath(dir); err == nil {
		dir = real
	}
	dir = path.Clean(dir)
	infos, more, err := fs.ReadDirMax(ctx, dir, maxDirRead)
	if err != nil {
		if ctx.Err() != nil {
			return Browsing{}, apperr.Wrap(apperr.Unavailable, err, "%s:%d did not finish listing %s in time.", p.Host, p.Port, dir)
		}
		return Browsing{}, apperr.Wrap(apperr.Invalid, err, "%s cannot be listed: %s", dir, plainFileError(err))
	}
	out := Browsing{Dir: dir, Items: []BrowseEntry{}, More: more}
	if dir != "/" {
		out.Parent = path.Dir(dir)
	}
	stats := 0
	for _, fi := range infos {
		isDir := fi.IsDir()
		if fi.Mode()&os.ModeSymlink != 0 && stats < MaxBrowse {
			stats++
			if st, err := fs.Stat(path.Join(dir, fi.Name())); err == nil {
				isDir = st.IsDir()
			}
		}
		out.Items = append(out.Items, BrowseEntry{Name: fi.Name(), Dir: isDir})
	}
	slices.SortFunc(out.Items, func(a, b BrowseEntry) int {
		if a.Dir != b.Dir {
			if a.Dir {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	if len(out.Items) > MaxBrowse {
		out.Items, out.More = out.Items[:MaxBrowse], true
	}
	return out, nil
}
