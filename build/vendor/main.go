// Command vendor pins the browser libraries under frontend/vendor/.
//
// The lock file, build/vendor.lock.json, names each npm package by exact
// version and tarball integrity, and lists every file copied out of the
// tarball with its sha256. Two subcommands use it:
//
//	go run ./build/vendor verify
//	    Offline. Recomputes the sha256 of every vendored file and fails if a
//	    file differs, is missing, or sits under frontend/vendor/ without being
//	    listed in the lock.
//
//	go run ./build/vendor update [NAME@VERSION [SRC=DEST ...]] ...
//	    Fetches each locked package (or the named ones, to add or bump them)
//	    with `npm pack NAME@VERSION --json` in a temporary directory, checks
//	    the tarball against the integrity npm reports (and against the lock
//	    when the version is unchanged), extracts the listed files and rewrites
//	    the lock. SRC is a path inside the tarball (for example
//	    package/LICENSE) and DEST a path under frontend/vendor/. A package
//	    that is not yet locked needs at least one SRC=DEST; a bumped one keeps
//	    its file list unless new mappings are given.
//
// npm is the only thing that touches the network; verify never does.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "vendor:", err)
		os.Exit(1)
	}
}

const usage = `usage:
  go run ./build/vendor [-root DIR] verify
  go run ./build/vendor [-root DIR] update [NAME@VERSION [SRC=DEST ...]] ...`

// run parses args and runs one subcommand; tests call it directly.
func run(args []string, stdout, stderr io.Writer) error {
	fset := flag.NewFlagSet("vendor", flag.ContinueOnError)
	fset.SetOutput(stderr)
	root := fset.String("root", "", "repository root (default: nearest directory above the working directory holding go.mod)")
	fset.Usage = func() { fmt.Fprintln(stderr, usage); fset.PrintDefaults() }
	if err := fset.Parse(args); err != nil {
		return err
	}
	if fset.NArg() == 0 {
		fset.Usage()
		return errors.New("no subcommand")
	}
	r := *root
	if r == "" {
		var err error
		if r, err = findRoot(); err != nil {
			return err
		}
	}
	p := newPaths(r)
	switch cmd, rest := fset.Arg(0), fset.Args()[1:]; cmd {
	case "verify":
		if len(rest) > 0 {
			return fmt.Errorf("verify takes no arguments, got %q", rest)
		}
		n, err := verify(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "vendor: %d files match %s\n", n, p.rel(p.lock))
		return nil
	case "update":
		reqs, err := parseUpdateArgs(rest)
		if err != nil {
			return err
		}
		return update(p, reqs, npmPack, stdout)
	default:
		fset.Usage()
		return fmt.Errorf("unknown subcommand %q", cmd)
	}
}

// paths holds the locations the tool works on, all derived from the
// repository root so that tests can point it at a temporary copy.
type paths struct {
	root      string
	lock      string // build/vendor.lock.json
	vendorDir string // frontend/vendor
}

func newPaths(root string) paths {
	return paths{
		root:      root,
		lock:      filepath.Join(root, "build", "vendor.lock.json"),
		vendorDir: filepath.Join(root, "frontend", "vendor"),
	}
}

// rel shortens an absolute path for messages.
func (p paths) rel(path string) string {
	if r, err := filepath.Rel(p.root, path); err == nil {
		return filepath.ToSlash(r)
	}
	return path
}

// findRoot walks up from the working directory to the first go.mod.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory; pass -root")
		}
		dir = parent
	}
}
