package api

import (
	"context"
	"strings"

	"github.com/llembas/lembas/backend/agent"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// Agent is the facade for agent chats' SSH connections (issue 15): the
// caller's own profiles (a credential is write-only: the page sees only
// the public key and whether a secret is set), their host keys (scan,
// accept, forget), a test connection, the new-chat directory picker, and
// the instance's agent settings. Another person's profile is not found.
type Agent struct {
	agent   *agent.Service
	permits Permits
}

// NewAgent returns the Agent facade; permits checks files.upload for
// AttachFile.
func NewAgent(a *agent.Service, permits Permits) *Agent { return &Agent{agent: a, permits: permits} }

// SSHProfile is an SSH connection as its owner sees it. Generated says
// its key is one LLeMbas made (the page offers "A key LLeMbas makes"
// again, not "Paste a private key", when the connection is reopened).
type SSHProfile struct {
	agent.Profile
	Generated bool `json:"generated"`
}

// generatedComment ends the public key line of a key LLeMbas generated
// (sshx.GenerateKey); a pasted key's line, derived from the private key,
// has no comment, so the line alone tells the two apart.
const generatedComment = " lembas"

func profileView(p agent.Profile) SSHProfile {
	return SSHProfile{Profile: p, Generated: p.Auth == store.AuthKey && strings.HasSuffix(p.PublicKey, generatedComment)}
}

func profileResult(p agent.Profile, err error) (SSHProfile, error) {
	if err != nil {
		return SSHProfile{}, err
	}
	return profileView(p), nil
}

// SSHProfileInput creates a connection; auth "key" without privateKey
// generates a key, whose publicKey the result shows to copy.
type SSHProfileInput = agent.ProfileInput

// SSHProfilePatch changes what is set; newKey generates a new key.
type SSHProfilePatch = agent.ProfilePatch

// HostKeyScan is a host key just captured, compared with the pinned one.
type HostKeyScan = agent.ScanResult

// SSHTestResult is how a test connection went.
type SSHTestResult = agent.TestResult

// SSHBrowsing is a directory of a host, directories first.
type SSHBrowsing = agent.Browsing

// AgentSettings are the instance's agent settings.
type AgentSettings = agent.Settings

// AgentSettingsPatch changes the settings that are set.
type AgentSettingsPatch = agent.SettingsPatch

// Profiles lists the caller's SSH connections.
func (a *Agent) Profiles(ctx context.Context) ([]SSHProfile, error) {
	list, err := a.agent.Profiles(ctx, user(ctx))
	if err != nil {
		return nil, err
	}
	out := make([]SSHProfile, len(list))
	for i, p := range list {
		out[i] = profileView(p)
	}
	return out, nil
}

// CreateProfile adds an SSH connection.
func (a *Agent) CreateProfile(ctx context.Context, in SSHProfileInput) (SSHProfile, error) {
	return profileResult(a.agent.CreateProfile(ctx, user(ctx), in))
}

// UpdateProfile changes one of the caller's connections; moving it to
// another host or port forgets its host key.
func (a *Agent) UpdateProfile(ctx context.Context, id ids.ProfileID, in SSHProfilePatch) (SSHProfile, error) {
	return profileResult(a.agent.UpdateProfile(ctx, user(ctx), id, in))
}

// DeleteProfile deletes one of the caller's connections; its chats keep
// their transcripts and can no longer act.
func (a *Agent) DeleteProfile(ctx context.Context, id ids.ProfileID) error {
	return a.agent.DeleteProfile(ctx, user(ctx), id)
}

// ScanHostKey captures a connection's host key (no credential is sent),
// to compare and accept.
func (a *Agent) ScanHostKey(ctx context.Context, id ids.ProfileID) (HostKeyScan, error) {
	return a.agent.ScanHostKey(ctx, user(ctx), id)
}

// AcceptHostKey pins the key just scanned, if fingerprint is its own.
func (a *Agent) AcceptHostKey(ctx context.Context, id ids.ProfileID, fingerprint string) (SSHProfile, error) {
	return profileResult(a.agent.AcceptHostKey(ctx, user(ctx), id, fingerprint))
}

// ForgetHostKey unpins a connection's host key.
func (a *Agent) ForgetHostKey(ctx context.Context, id ids.ProfileID) (SSHProfile, error) {
	return profileResult(a.agent.ForgetHostKey(ctx, user(ctx), id))
}

// Test connects and runs `uname -srm`; a failure is the result's
// message, not an error.
func (a *Agent) Test(ctx context.Context, id ids.ProfileID) (SSHTestResult, error) {
	return a.agent.Test(ctx, user(ctx), id)
}

// Browse lists a directory of a connection's host over SFTP ("" is the
// login directory), for choosing a new agent chat's project directory.
func (a *Agent) Browse(ctx context.Context, id ids.ProfileID, dir string) (SSHBrowsing, error) {
	return a.agent.Browse(ctx, user(ctx), id, dir)
}

// Settings returns the instance's agent settings.
func (a *Agent) Settings(ctx context.Context) (AgentSettings, error) { return a.agent.Settings(ctx) }

// SetSettings changes the instance's agent settings.
func (a *Agent) SetSettings(ctx context.Context, p AgentSettingsPatch) (AgentSettings, error) {
	return a.agent.SetSettings(ctx, p)
}

// ProjectFiles is what `@` offers in an agent chat: project files whose
// path holds query, from the cached listing only (ready false: none yet).
type ProjectFiles = agent.ProjectFiles

// ProjectFiles lists the caller's agent chat's files matching query,
// from the cached listing only: it never waits on the host.
func (a *Agent) ProjectFiles(ctx context.Context, chatID ids.ChatID, query string) (ProjectFiles, error) {
	return a.agent.ProjectFiles(ctx, user(ctx), chatID, query)
}

// AttachFile reads a file of the caller's agent chat's host (a path
// relative to its directory, or absolute) into an unsent upload, capped
// like uploads, marked with where it came from. It is an upload: it needs
// files.upload, as attaching any file does.
func (a *Agent) AttachFile(ctx context.Context, chatID ids.ChatID, path string) (AttachmentView, error) {
	if err := a.permits.Require(ctx, auth.FilesUpload); err != nil {
		return AttachmentView{}, err
	}
	att, err := a.agent.AttachFile(ctx, user(ctx), chatID, path)
	if err != nil {
		return AttachmentView{}, err
	}
	return AttachmentViewOf(att), nil
}
