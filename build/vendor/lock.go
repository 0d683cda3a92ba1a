package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Lock is the content of build/vendor.lock.json.
type Lock struct {
	Comment  string    `json:"comment,omitempty"`
	Packages []Package `json:"packages"`
}

// Package pins one npm package and the files taken from its tarball.
type Package struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Integrity is the tarball's Subresource Integrity string as npm pack
	// --json reports it ("sha512-" + base64).
	Integrity string `json:"integrity"`
	// Note says why the package is here when that is not obvious.
	Note  string `json:"note,omitempty"`
	Files []File `json:"files"`
}

// File is one file copied out of a package tarball.
type File struct {
	// Src is the path inside the tarball, as tar lists it (npm puts a
	// package's files under "package/").
	Src string `json:"src"`
	// Dest is the path under frontend/vendor/, with forward slashes.
	Dest   string `json:"dest"`
	SHA256 string `json:"sha256"`
}

var (
	nameRe    = regexp.MustCompile(`^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$`)
	versionRe = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)
	sha256Re  = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// readLock loads and checks the lock file.
func readLock(file string) (*Lock, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read lock: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var l Lock
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("parse %s: %w", file, err)
	}
	if err := l.check(true); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &l, nil
}

// writeLock writes the lock with packages sorted by name and files by
// destination, so that diffs stay small.
func writeLock(file string, l *Lock) error {
	sort.Slice(l.Packages, func(i, j int) bool { return l.Packages[i].Name < l.Packages[j].Name })
	for i := range l.Packages {
		fs := l.Packages[i].Files
		sort.Slice(fs, func(a, b int) bool { return fs[a].Dest < fs[b].Dest })
	}
	if err := l.check(true); err != nil {
		return err
	}
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(file, append(b, '\n'))
}

// check validates names, versions and paths. With hashes set it also
// requires every file's sha256 and every package's integrity.
func (l *Lock) check(hashes bool) error {
	names := map[string]bool{}
	dests := map[string]string{}
	for _, p := range l.Packages {
		if !nameRe.MatchString(p.Name) {
			return fmt.Errorf("bad package name %q", p.Name)
		}
		if names[p.Name] {
			return fmt.Errorf("package %s is listed twice", p.Name)
		}
		names[p.Name] = true
		if !versionRe.MatchString(p.Version) {
			return fmt.Errorf("package %s: version %q is not an exact version", p.Name, p.Version)
		}
		if hashes && !strings.HasPrefix(p.Integrity, "sha512-") {
			return fmt.Errorf("package %s: integrity %q is not sha512", p.Name, p.Integrity)
		}
		if len(p.Files) == 0 {
			return fmt.Errorf("package %s lists no files", p.Name)
		}
		for _, f := range p.Files {
			if err := checkRelPath(f.Src); err != nil {
				return fmt.Errorf("package %s: src: %w", p.Name, err)
			}
			if err := checkRelPath(f.Dest); err != nil {
				return fmt.Errorf("package %s: dest: %w", p.Name, err)
			}
			if other, ok := dests[f.Dest]; ok {
				return fmt.Errorf("dest %s is claimed by %s and %s", f.Dest, other, p.Name)
			}
			dests[f.Dest] = p.Name
			if hashes && !sha256Re.MatchString(f.SHA256) {
				return fmt.Errorf("package %s: %s: sha256 %q is not 64 lowercase hex digits", p.Name, f.Dest, f.SHA256)
			}
		}
	}
	return nil
}

// checkRelPath accepts a clean, relative, forward-slash path that does not
// climb out of its directory.
func checkRelPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("empty path")
	case strings.Contains(p, `\`):
		return fmt.Errorf("path %q contains a backslash", p)
	case path.IsAbs(p) || (len(p) > 1 && p[1] == ':'):
		return fmt.Errorf("path %q is absolute", p)
	case path.Clean(p) != p:
		return fmt.Errorf("path %q is not clean", p)
	}
	for _, el := range strings.Split(p, "/") {
		if el == ".." || el == "." {
			return fmt.Errorf("path %q contains %q", p, el)
		}
	}
	return nil
}

// writeFileAtomic writes through a temporary file in the same directory.
func writeFileAtomic(file string, data []byte) error {
	dir := filepath.Dir(file)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(file)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}
