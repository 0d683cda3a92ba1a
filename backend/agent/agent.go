// Package agent is what agent chats work with: the SSH profiles people
// keep (credentials encrypted, host keys pinned per host and port), the
// instance's agent settings, the policy that decides per mode what a call
// may do, the agent's tools (commands and files on the chat's host over
// SSH, questions to the person, the plan), the project listing the
// harness carries, and what a reply of an agent chat needs (Reply).
// Everything reaches a host through backend/sshx.
package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/chat"
	"github.com/llembas/lembas/backend/files"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/prompts"
	"github.com/llembas/lembas/backend/secrets"
	"github.com/llembas/lembas/backend/sshx"
	"github.com/llembas/lembas/backend/store"
)

// Permission is what a person must hold to keep profiles and use agent
// chats.
const Permission = auth.AgentUse

// MaxProfiles is how many SSH profiles one person may keep.
const MaxProfiles = 50

// Options tune a Service; zero values are the defaults.
type Options struct {
	// ConnectTimeout bounds a connection's setup (default 15 s).
	ConnectTimeout time.Duration
	// ScanKeep is how long a scanned host key may be accepted (default
	// 10 minutes).
	ScanKeep time.Duration
	// Index tunes the project listing's walk and cache.
	Index IndexOptions
}

// Service is the agent service.
type Service struct {
	db   *store.DB
	keys func() (*secrets.Keeper, error)
	log  *slog.Logger
	opt  Options

	mu      sync.Mutex
	scanned map[ids.ProfileID]scan
	changed []func(ids.ProfileID)

	index      *indexCache
	handshakes *limiter
	// files stores what AttachFile reads (UseFiles).
	files *files.Service
	// bg bounds background work (the listing's walks); Close ends it.
	bg     context.Context
	stopBg context.CancelFunc
	wg     sync.WaitGroup
}

var _ chat.Agent = (*Service)(nil)

// New returns the service. keys gives the keeper that encrypts profiles'
// secrets (the one connections and MCP servers use).
func New(db *store.DB, keys func() (*secrets.Keeper, error), log *slog.Logger, opt Options) *Service {
	if opt.ConnectTimeout <= 0 {
		opt.ConnectTimeout = 15 * time.Second
	}
	if opt.ScanKeep <= 0 {
		opt.ScanKeep = 10 * time.Minute
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Service{db: db, keys: keys, log: log, opt: opt, scanned: map[ids.ProfileID]scan{}}
	s.bg, s.stopBg = context.WithCancel(context.Background())
	s.index = newIndexCache(opt.Index)
	s.handshakes = &limiter{per: MaxHandshakes, held: map[string]chan struct{}{}}
	return s
}

// Close ends background walks and waits for them.
func (s *Service) Close() {
	s.stopBg()
	s.wg.Wait()
}

// OnProfileChanged registers fn, called (synchronously, so it must not
// block) with a profile's id after the profile moved to another host,
// port or user, changed its credential, had its host key forgotten or a
// different one accepted, or was deleted: what was connected with the
// old settings (a terminal's shell) must end.
func (s *Service) OnProfileChanged(fn func(ids.ProfileID)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.changed = append(s.changed, fn)
}

func (s *Service) profileChanged(id ids.ProfileID) {
	s.index.forget(id)
	s.mu.Lock()
	fns := append([]func(ids.ProfileID){}, s.changed...)
	s.mu.Unlock()
	for _, fn := range fns {
		fn(id)
	}
}

// The instance's agent settings (table settings).
const (
	SettingEnabled        = "agent_enabled"
	SettingMaxRounds      = "agent_max_rounds"
	SettingCommandTimeout = "agent_command_timeout_s"
	SettingOutputCap      = "agent_output_cap_kb"
	SettingApprovalTime   = "agent_approval_timeout_s"
)

// The settings' defaults and bounds.
const (
	DefaultMaxRounds      = 24
	MaxRoundsCap          = 64
	DefaultCommandTimeout = 120
	MinCommandTimeout     = 5
	MaxCommandTimeout     = 3600
	DefaultOutputCapKB    = 64
	MinOutputCapKB        = 4
	MaxOutputCapKB        = 1024
	DefaultApprovalTime   = 600
	// MinApprovalTime: a paused reply is kept until its deadline, so the
	// timeout is at least a minute (clamped on read: a stored 0 must not
	// end every pause at once).
	MinApprovalTime = 60
	MaxApprovalTime = 24 * 3600
)

// Settings are the instance's agent settings.
type Settings struct {
	// Enabled: agent chats can be created and replied to.
	Enabled bool `json:"enabled"`
	// MaxRounds is how many requests of an agent reply may carry tools.
	MaxRounds int `json:"maxRounds"`
	// CommandTimeoutSec bounds one shell_run.
	CommandTimeoutSec int `json:"commandTimeoutSec"`
	// OutputCapKB bounds what a command or a file read returns.
	OutputCapKB int `json:"outputCapKB"`
	// ApprovalTimeoutSec is how long a reply waits for the person.
	ApprovalTimeoutSec int `json:"approvalTimeoutSec"`
}

// SettingsPatch changes the settings that are set.
type SettingsPatch struct {
	Enabled            *bool `json:"enabled,omitempty"`
	MaxRounds          *int  `json:"maxRounds,omitempty"`
	CommandTimeoutSec  *int  `json:"commandTimeoutSec,omitempty"`
	OutputCapKB        *int  `json:"outputCapKB,omitempty"`
	ApprovalTimeoutSec *int  `json:"approvalTimeoutSec,omitempty"`
}

// Settings reads the instance's agent settings; a value out of its
// bounds reads as the default (the approval timeout as at least a
// minute).
func (s *Service) Settings(ctx context.Context) (Settings, error) {
	out := Settings{Enabled: true, MaxRounds: DefaultMaxRounds, CommandTimeoutSec: DefaultCommandTimeout,
		OutputCapKB: DefaultOutputCapKB, ApprovalTimeoutSec: DefaultApprovalTime}
	read := func(key string) (string, bool, error) { return s.db.Setting(ctx, key) }
	if v, ok, err := read(SettingEnabled); err != nil {
		return Settings{}, err
	} else if ok {
		out.Enabled = v == "1"
	}
	for _, n := range []struct {
		key      string
		to       *int
		min, max int
	}{
		{SettingMaxRounds, &out.MaxRounds, 1, MaxRoundsCap},
		{SettingCommandTimeout, &out.CommandTimeoutSec, MinCommandTimeout, MaxCommandTimeout},
		{SettingOutputCap, &out.OutputCapKB, MinOutputCapKB, MaxOutputCapKB},
		{SettingApprovalTime, &out.ApprovalTimeoutSec, 0, MaxApprovalTime},
	} {
		v, ok, err := read(n.key)
		if err != nil {
			return Settings{}, err
		}
		if i, err := strconv.Atoi(v); ok && err == nil && i >= n.min && i <= n.max {
			*n.to = i
		}
	}
	out.ApprovalTimeoutSec = max(out.ApprovalTimeoutSec, MinApprovalTime)
	return out, nil
}

// SetSettings changes the instance's agent settings (administrators).
func (s *Service) SetSettings(ctx context.Context, p SettingsPatch) (Settings, error) {
	type num struct {
		key      string
		v        *int
		min, max int
		what     string
	}
	nums := []num{
		{SettingMaxRounds, p.MaxRounds, 1, MaxRoundsCap, "The number of tool rounds of an agent reply is 1 to %d."},
		{SettingCommandTimeout, p.CommandTimeoutSec, MinCommandTimeout, MaxCommandTimeout, "A command's time limit is %d to %d seconds."},
		{SettingOutputCap, p.OutputCapKB, MinOutputCapKB, MaxOutputCapKB, "The output cap is %d to %d KB."},
		{SettingApprovalTime, p.ApprovalTimeoutSec, MinApprovalTime, MaxApprovalTime, "The time to wait for an answer is %d to %d seconds."},
	}
	for _, n := range nums {
		if n.v != nil && (*n.v < n.min || *n.v > n.max) {
			if n.min == 1 {
				return Settings{}, apperr.New(apperr.Invalid, n.what, n.max)
			}
			return Settings{}, apperr.New(apperr.Invalid, n.what, n.min, n.max)
		}
	}
	if p.Enabled != nil {
		v := "0"
		if *p.Enabled {
			v = "1"
		}
		if err := s.db.SetSetting(ctx, SettingEnabled, v); err != nil {
			return Settings{}, err
		}
	}
	for _, n := range nums {
		if n.v != nil {
			if err := s.db.SetSetting(ctx, n.key, strconv.Itoa(*n.v)); err != nil {
				return Settings{}, err
			}
		}
	}
	return s.Settings(ctx)
}

// reachable refuses, with errOff, anything that would reach a host while
// an administrator has agent chats switched off.
func (s *Service) reachable(ctx context.Context) error {
	st, err := s.Settings(ctx)
	if err != nil {
		return err
	}
	if !st.Enabled {
		return errOff
	}
	return nil
}

// errOff is agent chats switched off by an administrator.
var errOff = apperr.New(apperr.Forbidden, "Agent chats are turned off on this server; an administrator can turn them on under Settings → Agent.")

// CheckNew checks a new agent chat's profile, directory and mode for
// caller before anything is stored.
func (s *Service) CheckNew(ctx context.Context, caller auth.Caller, a store.AgentChat) error {
	if err := caller.Perms.Require(Permission); err != nil {
		return err
	}
	st, err := s.Settings(ctx)
	if err != nil {
		return err
	}
	if !st.Enabled {
		return errOff
	}
	if !a.Mode.Valid() {
		return apperr.New(apperr.Invalid, "Choose the agent's mode: manual, plan, edit or auto.")
	}
	if a.Profile == nil {
		return apperr.New(apperr.Invalid, "Choose the SSH connection the agent works on.")
	}
	if _, err := s.profile(ctx, caller.User, *a.Profile); err != nil {
		return err
	}
	if err := checkDir(a.Dir); err != nil {
		return err
	}
	return nil
}

// checkDir accepts a project directory: an absolute path on the host.
func checkDir(dir string) error {
	switch {
	case dir == "":
		return apperr.New(apperr.Invalid, "Choose the project directory on the host.")
	case dir[0] != '/':
		return apperr.New(apperr.Invalid, "The project directory must be an absolute path (starting with /).")
	case len(dir) > 4096 || !printable(dir):
		return apperr.New(apperr.Invalid, "That is not a directory path the agent can use.")
	}
	return nil
}

// Reply returns what a reply of the agent chat c needs: the policy of its
// mode (read once, now, from c), the limits, and the harness's agent part,
// whose listing comes from the cache only (a walk starts in the
// background when there is none; a reply never waits on a machine).
func (s *Service) Reply(ctx context.Context, caller auth.Caller, c store.Chat) (chat.AgentReply, error) {
	if c.Kind != store.ChatAgent {
		return chat.AgentReply{}, apperr.New(apperr.Invalid, "This chat is not an agent chat.")
	}
	if err := caller.Perms.Require(Permission); err != nil {
		return chat.AgentReply{}, err
	}
	st, err := s.Settings(ctx)
	if err != nil {
		return chat.AgentReply{}, err
	}
	if !st.Enabled {
		return chat.AgentReply{}, errOff
	}
	if c.Agent.Profile == nil {
		return chat.AgentReply{}, errNoProfile
	}
	p, err := s.profile(ctx, caller.User, *c.Agent.Profile)
	if apperr.KindOf(err) == apperr.NotFound {
		return chat.AgentReply{}, errNoProfile
	}
	if err != nil {
		return chat.AgentReply{}, err
	}
	mode := c.Agent.Mode
	h := prompts.Agent{
		Host: fmt.Sprintf("%s@%s:%d", p.Username, p.Host, p.Port),
		Dir:  c.Agent.Dir,
		Mode: modeSentence(mode),
	}
	if c.Agent.RewoundAt != nil {
		h.Rewound = time.UnixMilli(*c.Agent.RewoundAt).UTC().Format("2 January 2006 at 15:04 UTC")
	}
	if tree, ok := s.index.get(p, c.Agent.Dir); ok {
		h.Listing = tree.render(listingBudget)
	}
	if p.Pinned() != "" && s.index.stale(p, c.Agent.Dir) {
		s.warm(p, c.Agent.Dir)
	}
	return chat.AgentReply{
		Policy:     Policy{Mode: mode},
		MaxRounds:  st.MaxRounds,
		AskTimeout: time.Duration(st.ApprovalTimeoutSec) * time.Second,
		Harness:    h,
	}, nil
}

// listingBudget bounds the project listing in the harness, in bytes
// (about 1,500 tokens): it is sent with every request of the chat.
const listingBudget = 6000

var errNoProfile = apperr.New(apperr.Invalid, "This chat's SSH connection was deleted, so the agent cannot work on its host any more. Start a new agent chat.")

// Dial connects to the host of user's agent chat id: the chat must be
// user's and an agent chat, agent chats on, its profile there and its host
// key accepted. It returns the chat as read. The caller checks agent.use.
func (s *Service) Dial(ctx context.Context, user ids.UserID, id ids.ChatID) (*sshx.Client, store.Chat, error) {
	c, err := s.db.ChatByID(ctx, user, id)
	if err != nil {
		return nil, c, store.Kinded(err, "chat")
	}
	if c.Kind != store.ChatAgent {
		return nil, c, apperr.New(apperr.Invalid, "This chat is not an agent chat.")
	}
	if err := s.reachable(ctx); err != nil {
		return nil, c, err
	}
	if c.Agent.Profile == nil {
		return nil, c, errNoProfile
	}
	p, err := s.profile(ctx, user, *c.Agent.Profile)
	if apperr.KindOf(err) == apperr.NotFound {
		return nil, c, errNoProfile
	}
	if err != nil {
		return nil, c, err
	}
	cl, err := s.connect(ctx, p)
	return cl, c, err
}

// MaxHandshakes is how many connections to one host and port may be
// signing in at once. A round's calls, several chats' rounds and the
// terminals all connect for themselves; sshd drops connections past its
// MaxStartups (10) that are still signing in, at random, and OpenSSH
// 9.8's penalties then refuse the whole source address for a while. The
// rest wait their turn (only the sign-in waits: a connection holds no
// place once it is in).
const MaxHandshakes = 4

// limiter bounds concurrent sign-ins per address.
type limiter struct {
	per  int
	mu   sync.Mutex
	held map[string]chan struct{}
}

// acquire waits for a place to sign in to t, or for ctx's end.
func (l *limiter) acquire(ctx context.Context, t sshx.Target) (func(), error) {
	key := fmt.Sprintf("%s:%d", t.Host, t.Port)
	l.mu.Lock()
	ch, ok := l.held[key]
	if !ok {
		ch = make(chan struct{}, l.per)
		l.held[key] = ch
	}
	l.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// connect dials p with its credential and pinned key, under the connect
// timeout; errors are apperr with a plain message.
func (s *Service) connect(ctx context.Context, p store.SSHProfile) (*sshx.Client, error) {
	if p.Pinned() == "" {
		return nil, apperr.New(apperr.Invalid, "The host key of %q has not been accepted: scan it and accept it under Settings → SSH connections first.", p.Name)
	}
	a, err := s.auth(p)
	if err != nil {
		return nil, err
	}
	release, err := s.handshakes.acquire(ctx, target(p))
	if err != nil {
		return nil, err
	}
	defer release()
	dctx, cancel := context.WithTimeout(ctx, s.opt.ConnectTimeout)
	defer cancel()
	cl, err := sshx.Dial(dctx, target(p), a, p.Pinned())
	if err != nil {
		return nil, dialError(p, err)
	}
	return cl, nil
}

// dialError is a failed connection as a person reads it: sshx's own
// words (they say what to do) when it gave some, else what happened.
func dialError(p store.SSHProfile, err error) error {
	if apperr.KindOf(err) != apperr.Internal {
		return err
	}
	return apperr.Wrap(apperr.Unavailable, err, "%s", connectError(p, err))
}

func target(p store.SSHProfile) sshx.Target {
	return sshx.Target{Host: p.Host, Port: p.Port, User: p.Username}
}

// auth decrypts p's credential.
func (s *Service) auth(p store.SSHProfile) (sshx.Auth, error) {
	if p.SecretEnc == "" {
		return sshx.Auth{}, apperr.New(apperr.Invalid, "The SSH connection %q has no key or password; set one.", p.Name)
	}
	k, err := s.keys()
	if err != nil {
		return sshx.Auth{}, apperr.Wrap(apperr.Unavailable, err, "The encryption key is unavailable, so the SSH credential cannot be read.")
	}
	plain, err := k.Decrypt(p.SecretEnc)
	if err != nil {
		return sshx.Auth{}, apperr.Wrap(apperr.Unavailable, err, "The SSH credential of %q cannot be decrypted (the encryption key changed?); enter it again.", p.Name)
	}
	if p.Auth == store.AuthPassword {
		return sshx.Auth{Password: plain}, nil
	}
	return sshx.Auth{PrivateKey: []byte(plain)}, nil
}

// connectError says in plain words why a connection to p failed.
func connectError(p store.SSHProfile, err error) string {
	switch {
	case errors.Is(err, sshx.ErrHostKeyUnknown):
		return fmt.Sprintf("The host key of %q has not been accepted: scan it and accept it first.", p.Name)
	case errors.Is(err, sshx.ErrHostKeyChanged):
		return fmt.Sprintf("The host key of %s:%d has changed since it was accepted. If the server was reinstalled, scan its key again "+
			"and compare the fingerprint with the server's own; otherwise someone may be in the way: do not connect.", p.Host, p.Port)
	case isAuthError(err):
		return fmt.Sprintf("Sign-in refused: %s@%s did not accept the %s.", p.Username, p.Host, credentialWord(p.Auth))
	case isTimeout(err):
		return fmt.Sprintf("No answer from %s:%d in time.", p.Host, p.Port)
	}
	return fmt.Sprintf("%s:%d cannot be reached: %s", p.Host, p.Port, plainNetError(err))
}

func credentialWord(a store.SSHAuth) string {
	if a == store.AuthPassword {
		return "password"
	}
	return "key (is its public key in ~/.ssh/authorized_keys?)"
}
