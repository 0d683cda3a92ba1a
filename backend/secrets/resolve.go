package secrets

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// EnvVar names the environment variable that may carry the key. Resolve
// does not read it (the caller passes Options.EnvKey); it appears in
// messages so users know what to set.
const EnvVar = "LEMBAS_SECRET_KEY"

// Source says where a key lives.
type Source string

// The places a key can live.
const (
	SourceKeychain Source = "keychain"
	SourceEnv      Source = "env"
	SourceFile     Source = "file"
)

// Record is what the database remembers about the key that encrypted its
// secrets.
type Record struct {
	Source      Source
	Fingerprint string
}

// Ledger is the part of the store that remembers the key record.
type Ledger interface {
	KeyRecord(ctx context.Context) (rec Record, ok bool, err error)
	SetKeyRecord(ctx context.Context, rec Record) error
	HasEncrypted(ctx context.Context) (bool, error) // any encrypted value stored yet
}

// Options configures Resolve.
type Options struct {
	EnvKey     string        // LEMBAS_SECRET_KEY, may be empty
	DataDir    string        // where the fallback key file "secret.key" lives (mode 0600)
	Keyring    Keyring       // nil means the real OS keychain via go-keyring
	Timeout    time.Duration // bound on each keychain call; 0 means 3s
	NoKeychain bool          // skip the keychain entirely (headless server, tests)
}

// Keeper encrypts and decrypts secrets with the resolved key and knows where
// that key lives. It is safe for concurrent use.
type Keeper struct {
	key      *Key
	rec      Record
	location string      // keychain account or key file path
	mode     fs.FileMode // key file permissions, for Describe
}

// Encrypt seals a secret into a Fernet token.
func (k *Keeper) Encrypt(plaintext string) (string, error) {
	return k.key.Encrypt([]byte(plaintext))
}

// Decrypt opens a token made by Encrypt. Its errors wrap ErrWrongKey or
// ErrMalformed as Key.Decrypt's do.
func (k *Keeper) Decrypt(token string) (string, error) {
	b, err := k.key.Decrypt(token)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// Record returns where the key in use lives and its fingerprint. When
// LEMBAS_SECRET_KEY overrides a key recorded elsewhere, this says env while
// the ledger keeps the original record.
func (k *Keeper) Record() Record { return k.rec }

// Describe returns a human description of where the key lives, for
// `lembas info`. It never includes the key.
func (k *Keeper) Describe() string {
	switch k.rec.Source {
	case SourceKeychain:
		return fmt.Sprintf("OS keychain (service %s, account %s), fingerprint %s", keychainService, k.location, k.rec.Fingerprint)
	case SourceFile:
		return fmt.Sprintf("key file %s (%04o), fingerprint %s", k.location, k.mode, k.rec.Fingerprint)
	default:
		return fmt.Sprintf("%s, fingerprint %s", EnvVar, k.rec.Fingerprint)
	}
}

// Resolve finds (or, only when safe, creates) the key and returns it with
// where it lives.
//
// Once the ledger holds encrypted values, a new key would make them
// unreadable, so Resolve then only loads the recorded key and fails with
// instructions when it cannot; it creates a key only for a database with
// nothing encrypted, preferring the OS keychain and falling back to a 0600
// file in DataDir when the keychain is unavailable.
func Resolve(ctx context.Context, opt Options, l Ledger) (*Keeper, error) {
	if l == nil {
		return nil, errors.New("secrets: Resolve needs a Ledger")
	}
	rec, hasRec, err := l.KeyRecord(ctx)
	if err != nil {
		return nil, fmt.Errorf("secrets: read key record: %w", err)
	}
	encrypted, err := l.HasEncrypted(ctx)
	if err != nil {
		return nil, fmt.Errorf("secrets: check for encrypted values: %w", err)
	}
	r, err := newResolver(opt)
	if err != nil {
		return nil, err
	}

	var k *Keeper
	switch {
	case opt.EnvKey != "":
		k, err = r.fromEnv()
	case hasRec && encrypted:
		k, err = r.fromRecord(ctx, rec)
	case encrypted:
		k, err = r.findExisting(ctx)
	default:
		k, err = r.findOrCreate(ctx)
	}
	if err != nil {
		return nil, err
	}

	if hasRec && encrypted && k.rec.Fingerprint != rec.Fingerprint {
		return nil, fmt.Errorf("%w: the key from %s (fingerprint %s) does not match the key that encrypted this database (fingerprint %s, kept in %s); use that key, for example by setting %s to it",
			ErrWrongKey, k.sourceName(), k.rec.Fingerprint, rec.Fingerprint, sourceName(rec.Source), EnvVar)
	}
	// The record is written only while nothing is encrypted: after that it
	// is the evidence of which key the data needs, and a key found without
	// a record cannot be proven to be the right one.
	if !encrypted && (!hasRec || rec != k.rec) {
		if err := l.SetKeyRecord(ctx, k.rec); err != nil {
			return nil, fmt.Errorf("secrets: save key record: %w", err)
		}
	}
	return k, nil
}

// Check reports whether the key rec names can be had now, without
// creating, storing or recording anything (for `lembas info`, beside a
// running app). A nil error means the key was read and has rec's
// fingerprint.
func Check(ctx context.Context, opt Options, rec Record) error {
	r, err := newResolver(opt)
	if err != nil {
		return err
	}
	var k *Keeper
	if opt.EnvKey != "" {
		k, err = r.fromEnv()
	} else {
		k, err = r.fromRecord(ctx, rec)
	}
	if err != nil {
		return err
	}
	if k.rec.Fingerprint != rec.Fingerprint {
		return fmt.Errorf("%w: the key from %s has fingerprint %s, not %s", ErrWrongKey, k.sourceName(), k.rec.Fingerprint, rec.Fingerprint)
	}
	return nil
}

// resolver holds what Resolve derives from Options.
type resolver struct {
	opt     Options
	kc      keychain
	keyPath string
}

func newResolver(opt Options) (*resolver, error) {
	r := &resolver{opt: opt}
	if opt.EnvKey != "" {
		// The key is given; DataDir is needed only to find or store one.
		return r, nil
	}
	if opt.DataDir == "" {
		return nil, fmt.Errorf("secrets: no data directory to keep the key for, and %s is not set", EnvVar)
	}
	account, err := keychainAccount(opt.DataDir)
	if err != nil {
		return nil, fmt.Errorf("secrets: data directory %s: %w", opt.DataDir, err)
	}
	kr := opt.Keyring
	if kr == nil {
		kr = osKeyring{}
	}
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = defaultKeychainTimeout
	}
	r.kc = keychain{kr: kr, account: account, timeout: timeout}
	r.keyPath = filepath.Join(opt.DataDir, keyFileName)
	return r, nil
}

func (r *resolver) fromEnv() (*Keeper, error) {
	key, err := parseKey(r.opt.EnvKey)
	if err != nil {
		return nil, fmt.Errorf("secrets: %s is not a valid key: %w", EnvVar, err)
	}
	return newKeeper(key, SourceEnv, "", 0), nil
}

// fromRecord loads the key from the source the ledger recorded. It never
// falls back to another source: any other key would fail to decrypt, and
// a silent switch would soon be followed by secrets encrypted with two keys.
func (r *resolver) fromRecord(ctx context.Context, rec Record) (*Keeper, error) {
	switch rec.Source {
	case SourceKeychain:
		return r.fromRecordedKeychain(ctx)
	case SourceFile:
		key, mode, err := readKeyFile(r.keyPath)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("secrets: the secrets in this database were encrypted with the key in %s, but that file is missing; restore it (mode 0600) or set %s to the same key", r.keyPath, EnvVar)
		}
		if err != nil {
			return nil, err
		}
		return newKeeper(key, SourceFile, r.keyPath, mode), nil
	case SourceEnv:
		return nil, fmt.Errorf("secrets: the secrets in this database were encrypted with a key given in %s, which is not set; set %s to that key", EnvVar, EnvVar)
	default:
		return nil, fmt.Errorf("secrets: the database records an unknown key source %q; set %s to the key that encrypted its secrets", rec.Source, EnvVar)
	}
}

func (r *resolver) fromRecordedKeychain(ctx context.Context) (*Keeper, error) {
	what := fmt.Sprintf("the secrets in this database were encrypted with a key kept in the OS keychain (service %s, account %s)", keychainService, r.kc.account)
	remedy := fmt.Sprintf("unlock the keyring or start the secret service (for example gnome-keyring-daemon or KWallet) and try again, or set %s to the same key. No new key was made, because it could not decrypt the existing secrets", EnvVar)
	if r.opt.NoKeychain {
		return nil, fmt.Errorf("secrets: %s, but the keychain is disabled; enable it, or set %s to the same key", what, EnvVar)
	}
	text, err := r.kc.get(ctx)
	switch {
	case err == nil:
		key, perr := parseKey(text)
		if perr != nil {
			return nil, fmt.Errorf("secrets: %s, but the keychain entry is not a valid key (%v); restore it, or set %s to the same key", what, perr, EnvVar)
		}
		return newKeeper(key, SourceKeychain, r.kc.account, 0), nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, ErrKeychainTimeout):
		return nil, fmt.Errorf("%w (waited %s): %s, and the keychain did not answer; %s", err, r.kc.timeout, what, remedy)
	case isNotFound(err):
		return nil, fmt.Errorf("secrets: %s, but the keychain did not answer with it: it has no such entry (%w); restore the entry, or set %s to the same key", what, err, EnvVar)
	default:
		return nil, fmt.Errorf("secrets: %s, but the keychain did not answer (%w); %s", what, err, remedy)
	}
}

// findExisting serves a database that holds encrypted values but no record,
// which should not happen. It uses a key it can find and never makes one.
func (r *resolver) findExisting(ctx context.Context) (*Keeper, error) {
	var kcErr error
	if !r.opt.NoKeychain {
		text, err := r.kc.get(ctx)
		if err == nil {
			key, perr := parseKey(text)
			if perr != nil {
				return nil, fmt.Errorf("secrets: keychain entry (service %s, account %s) is not a valid key: %w", keychainService, r.kc.account, perr)
			}
			return newKeeper(key, SourceKeychain, r.kc.account, 0), nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		kcErr = err
	}
	key, mode, err := readKeyFile(r.keyPath)
	if err == nil {
		return newKeeper(key, SourceFile, r.keyPath, mode), nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	msg := fmt.Sprintf("secrets: this database holds encrypted secrets but no record of their key, and no key was found at %s", r.keyPath)
	if kcErr != nil {
		return nil, fmt.Errorf("%s or in the OS keychain (%w); set %s to the key that encrypted them", msg, kcErr, EnvVar)
	}
	return nil, fmt.Errorf("%s; set %s to the key that encrypted them", msg, EnvVar)
}

// findOrCreate serves a database with nothing encrypted, where any key is
// safe to adopt or create.
func (r *resolver) findOrCreate(ctx context.Context) (*Keeper, error) {
	if !r.opt.NoKeychain {
		text, err := r.kc.get(ctx)
		switch {
		case err == nil:
			key, perr := parseKey(text)
			if perr != nil {
				// Overwriting would destroy whatever someone put there;
				// asking costs one manual step in a case that should not occur.
				return nil, fmt.Errorf("secrets: keychain entry (service %s, account %s) is not a valid key (%v); delete the entry, or set %s", keychainService, r.kc.account, perr, EnvVar)
			}
			return newKeeper(key, SourceKeychain, r.kc.account, 0), nil
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case isNotFound(err):
			k, err := r.createInKeychain(ctx)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if err == nil {
				return k, nil
			}
			// The keychain can look but not store (a read-only or
			// half-working back end). No key existed, so a file is safe.
		case errors.Is(err, ErrKeychainTimeout):
			// A keychain that hangs may be waiting on an unlock prompt and
			// may already hold this directory's key; choosing a file key now
			// could leave two keys for one database.
			return nil, fmt.Errorf("%w (waited %s); unlock the keyring and try again, or set %s, or run without the keychain", err, r.kc.timeout, EnvVar)
		default:
			// Unavailable: no session bus, no secret service, and so on.
		}
	}
	return r.fromFile()
}

// createInKeychain stores a new key and reads it back, because some back
// ends accept a Set they do not keep, and a key lost after encrypting with
// it loses the secrets.
func (r *resolver) createInKeychain(ctx context.Context) (*Keeper, error) {
	text, err := GenerateKey()
	if err != nil {
		return nil, err
	}
	if err := r.kc.set(ctx, text); err != nil {
		return nil, err
	}
	back, err := r.kc.get(ctx)
	if err != nil {
		return nil, err
	}
	if back != text {
		return nil, errors.New("secrets: keychain did not keep the stored key")
	}
	key, err := parseKey(text)
	if err != nil {
		return nil, fmt.Errorf("secrets: generated key: %w", err)
	}
	return newKeeper(key, SourceKeychain, r.kc.account, 0), nil
}

// fromFile reads the key file, creating it when absent.
func (r *resolver) fromFile() (*Keeper, error) {
	key, mode, err := readKeyFile(r.keyPath)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(r.opt.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("secrets: create data directory: %w", err)
		}
		key, mode, err = createKeyFile(r.keyPath)
	}
	if err != nil {
		return nil, err
	}
	return newKeeper(key, SourceFile, r.keyPath, mode), nil
}

func newKeeper(key *Key, src Source, location string, mode fs.FileMode) *Keeper {
	return &Keeper{
		key:      key,
		rec:      Record{Source: src, Fingerprint: key.Fingerprint()},
		location: location,
		mode:     mode,
	}
}

func (k *Keeper) sourceName() string {
	switch k.rec.Source {
	case SourceKeychain:
		return fmt.Sprintf("the OS keychain (account %s)", k.location)
	case SourceFile:
		return k.location
	default:
		return sourceName(k.rec.Source)
	}
}

// sourceName names a source in messages.
func sourceName(s Source) string {
	switch s {
	case SourceKeychain:
		return "the OS keychain"
	case SourceFile:
		return "a key file"
	case SourceEnv:
		return EnvVar
	default:
		return fmt.Sprintf("unknown source %q", string(s))
	}
}
