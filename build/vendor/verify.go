package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// verify checks frontend/vendor/ against the lock without touching the
// network. It reports every problem it finds, one per line, and returns the
// number of files checked.
func verify(p paths) (int, error) {
	l, err := readLock(p.lock)
	if err != nil {
		return 0, err
	}
	var problems []string
	listed := map[string]bool{}
	n := 0
	for _, pkg := range l.Packages {
		for _, f := range pkg.Files {
			n++
			listed[f.Dest] = true
			file := filepath.Join(p.vendorDir, filepath.FromSlash(f.Dest))
			got, err := sha256File(file)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				problems = append(problems, fmt.Sprintf("%s: missing (listed for %s@%s)", p.rel(file), pkg.Name, pkg.Version))
			case err != nil:
				problems = append(problems, fmt.Sprintf("%s: %v", p.rel(file), err))
			case got != f.SHA256:
				problems = append(problems, fmt.Sprintf("%s: sha256 %s, lock says %s (%s@%s %s); the file was changed — restore it or run update", p.rel(file), got, f.SHA256, pkg.Name, pkg.Version, f.Src))
			}
		}
	}
	err = filepath.WalkDir(p.vendorDir, func(file string, d fs.DirEntry, err error) error {
		if err != nil {
			if file == p.vendorDir && errors.Is(err, fs.ErrNotExist) {
				return nil // reported above as missing files
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(p.vendorDir, file)
		if err != nil {
			return err
		}
		if !listed[filepath.ToSlash(rel)] {
			problems = append(problems, fmt.Sprintf("%s: not listed in %s; vendor files only through update", p.rel(file), p.rel(p.lock)))
		}
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("walk %s: %w", p.rel(p.vendorDir), err)
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return n, fmt.Errorf("verify failed:\n  %s", strings.Join(problems, "\n  "))
	}
	return n, nil
}

func sha256File(file string) (string, error) {
	fi, err := os.Lstat(file)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
