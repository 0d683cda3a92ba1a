package secrets

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
)

// keyFileName is the fallback key file inside the data directory.
const keyFileName = "secret.key"

// keyFileMode is the only access a key file may grant: anyone who can read
// it can read every stored API key.
const keyFileMode fs.FileMode = 0o600

// maxKeyFileSize bounds how much of a key file is read; a key is 44 bytes,
// so anything much larger is not a key file.
const maxKeyFileSize = 1024

// readKeyFile loads the key in path. A missing file yields an error matching
// fs.ErrNotExist. A file that group or others can access is refused rather
// than fixed, because silently tightening it would hide that the key may
// already have been read.
func readKeyFile(path string) (*Key, fs.FileMode, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	// Stat the open file, not the path, so the checked file is the read one.
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, fmt.Errorf("secrets: key file %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("secrets: key file %s is not a regular file", path)
	}
	perm := fi.Mode().Perm()
	// Windows reports synthetic permission bits that say nothing about who
	// can read the file; there the ACL of the data directory is what counts.
	if runtime.GOOS != "windows" && perm&0o077 != 0 {
		return nil, 0, fmt.Errorf("secrets: key file %s is accessible by group or others (mode %04o); it must be private to you: run chmod 600 %s", path, perm, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFileSize))
	if err != nil {
		return nil, 0, fmt.Errorf("secrets: read key file %s: %w", path, err)
	}
	k, err := parseKey(string(b))
	if err != nil {
		return nil, 0, fmt.Errorf("secrets: key file %s does not hold a valid key: %w", path, err)
	}
	return k, perm, nil
}

// createKeyFile writes a new key to path, which must not exist. O_EXCL makes
// two processes starting at once agree on one key: the loser reads the
// winner's file instead of replacing it.
func createKeyFile(path string) (*Key, fs.FileMode, error) {
	text, err := GenerateKey()
	if err != nil {
		return nil, 0, err
	}
	k, err := parseKey(text)
	if err != nil {
		return nil, 0, fmt.Errorf("secrets: generated key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, keyFileMode)
	if errors.Is(err, fs.ErrExist) {
		return readKeyFile(path)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("secrets: create key file: %w", err)
	}
	_, err = f.WriteString(text + "\n")
	if err == nil {
		// The key must be on disk before anything is encrypted with it.
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// A half-written file would hold no usable key and block the next
		// start, and nothing has been encrypted with it yet.
		os.Remove(path)
		return nil, 0, fmt.Errorf("secrets: write key file %s: %w", path, err)
	}
	return k, keyFileMode, nil
}
