package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// request is one NAME@VERSION from the update command line, with optional
// SRC=DEST file mappings that follow it.
type request struct {
	name, version string
	files         []File
}

func parseUpdateArgs(args []string) ([]request, error) {
	var reqs []request
	for _, a := range args {
		if src, dest, ok := strings.Cut(a, "="); ok {
			if len(reqs) == 0 {
				return nil, fmt.Errorf("file mapping %q must follow a NAME@VERSION", a)
			}
			f := File{Src: src, Dest: dest}
			for _, p := range []string{src, dest} {
				if err := checkRelPath(p); err != nil {
					return nil, fmt.Errorf("mapping %q: %w", a, err)
				}
			}
			r := &reqs[len(reqs)-1]
			r.files = append(r.files, f)
			continue
		}
		at := strings.LastIndex(a, "@")
		if at <= 0 {
			return nil, fmt.Errorf("%q: want NAME@VERSION with an exact version", a)
		}
		name, version := a[:at], a[at+1:]
		if !nameRe.MatchString(name) {
			return nil, fmt.Errorf("%q: bad package name", a)
		}
		if !versionRe.MatchString(version) {
			return nil, fmt.Errorf("%q: version must be exact (like 1.2.3), not a range or tag", a)
		}
		for _, r := range reqs {
			if r.name == name {
				return nil, fmt.Errorf("package %s named twice", name)
			}
		}
		reqs = append(reqs, request{name: name, version: version})
	}
	return reqs, nil
}

// packed is what a packer reports for one fetched tarball.
type packed struct {
	File      string // path of the tarball on disk
	Integrity string // as npm reported it
}

// packer fetches NAME@VERSION into dir. npmPack is the real one; tests use
// a fake.
type packer func(dir, spec string) (packed, error)

// npmPack runs `npm pack SPEC --json` in dir, the only network access this
// tool makes.
func npmPack(dir, spec string) (packed, error) {
	cmd := exec.Command("npm", "pack", spec, "--json", "--ignore-scripts")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return packed{}, fmt.Errorf("npm pack %s: %w\n%s", spec, err, strings.TrimSpace(stderr.String()))
	}
	// npm prints the JSON array last; skip anything a noisy npm put before it.
	if i := bytes.IndexByte(out, '['); i > 0 {
		out = out[i:]
	}
	var res []struct {
		Name      string `json:"name"`
		Version   string `json:"version"`
		Filename  string `json:"filename"`
		Integrity string `json:"integrity"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return packed{}, fmt.Errorf("npm pack %s: parse --json output: %w", spec, err)
	}
	if len(res) != 1 {
		return packed{}, fmt.Errorf("npm pack %s: want one tarball, npm reported %d", spec, len(res))
	}
	r := res[0]
	if r.Name+"@"+r.Version != spec {
		return packed{}, fmt.Errorf("npm pack %s: npm packed %s@%s", spec, r.Name, r.Version)
	}
	// npm names a scoped package's tarball scope-name-version.tgz; it is a
	// plain file name either way.
	if r.Filename == "" || strings.ContainsAny(r.Filename, `/\`) {
		return packed{}, fmt.Errorf("npm pack %s: odd tarball name %q", spec, r.Filename)
	}
	return packed{File: filepath.Join(dir, r.Filename), Integrity: r.Integrity}, nil
}

// update fetches packages, checks them, writes their files under
// frontend/vendor/ and rewrites the lock. Nothing is written unless every
// package was fetched and checked.
func update(p paths, reqs []request, pack packer, stdout io.Writer) error {
	l, err := readLock(p.lock)
	if errors.Is(err, fs.ErrNotExist) {
		l, err = &Lock{}, nil
	}
	if err != nil {
		return err
	}
	if l.Comment == "" {
		l.Comment = "Written by `go run ./build/vendor update`; checked by `go run ./build/vendor verify`. Do not edit by hand."
	}
	index := map[string]int{}
	for i, pkg := range l.Packages {
		index[pkg.Name] = i
	}

	// targets are the packages to fetch, with the integrity the lock already
	// holds for that exact version (empty when adding or bumping).
	type target struct {
		pkg           Package
		wantIntegrity string
	}
	var targets []target
	if len(reqs) == 0 {
		if len(l.Packages) == 0 {
			return errors.New("the lock lists no packages; name one as NAME@VERSION followed by SRC=DEST pairs")
		}
		for _, pkg := range l.Packages {
			targets = append(targets, target{pkg: pkg, wantIntegrity: pkg.Integrity})
		}
	}
	for _, r := range reqs {
		var pkg Package
		want := ""
		if i, ok := index[r.name]; ok {
			pkg = l.Packages[i]
			if pkg.Version == r.version {
				want = pkg.Integrity
			}
			pkg.Files = append([]File(nil), pkg.Files...)
		} else if len(r.files) == 0 {
			return fmt.Errorf("%s is not in the lock: give its files as SRC=DEST (SRC inside the tarball, DEST under frontend/vendor/)", r.name)
		}
		pkg.Name, pkg.Version = r.name, r.version
		if len(r.files) > 0 {
			pkg.Files = r.files
		}
		targets = append(targets, target{pkg: pkg, wantIntegrity: want})
	}

	tmp, err := os.MkdirTemp("", "lembas-vendor-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	type fetched struct {
		pkg      Package
		contents map[string][]byte // by Src
	}
	var done []fetched
	for i, t := range targets {
		spec := t.pkg.Name + "@" + t.pkg.Version
		dir := filepath.Join(tmp, fmt.Sprint(i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
		res, err := pack(dir, spec)
		if err != nil {
			return err
		}
		tgz, err := os.ReadFile(res.File)
		if err != nil {
			return fmt.Errorf("%s: read tarball: %w", spec, err)
		}
		if err := checkIntegrity(tgz, res.Integrity); err != nil {
			return fmt.Errorf("%s: tarball does not match the integrity npm reported: %w", spec, err)
		}
		if t.wantIntegrity != "" && t.wantIntegrity != res.Integrity {
			return fmt.Errorf("%s: npm reports integrity %s but the lock pins %s for the same version; refusing", spec, res.Integrity, t.wantIntegrity)
		}
		want := map[string]bool{}
		for _, f := range t.pkg.Files {
			want[f.Src] = true
		}
		contents, err := extract(tgz, want)
		if err != nil {
			return fmt.Errorf("%s: %w", spec, err)
		}
		t.pkg.Integrity = res.Integrity
		for j, f := range t.pkg.Files {
			t.pkg.Files[j].SHA256 = sha256Hex(contents[f.Src])
		}
		done = append(done, fetched{pkg: t.pkg, contents: contents})
	}

	// Merge into the lock and check it (destinations must stay unique)
	// before writing any file.
	for _, d := range done {
		if i, ok := index[d.pkg.Name]; ok {
			l.Packages[i] = d.pkg
		} else {
			index[d.pkg.Name] = len(l.Packages)
			l.Packages = append(l.Packages, d.pkg)
		}
	}
	if err := l.check(true); err != nil {
		return err
	}
	for _, d := range done {
		for _, f := range d.pkg.Files {
			file := filepath.Join(p.vendorDir, filepath.FromSlash(f.Dest))
			if err := writeFileAtomic(file, d.contents[f.Src]); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "vendor: %s@%s %s -> %s\n", d.pkg.Name, d.pkg.Version, f.Src, p.rel(file))
		}
	}
	if err := writeLock(p.lock, l); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "vendor: wrote %s\n", p.rel(p.lock))
	return nil
}

// checkIntegrity compares data with a "sha512-<base64>" integrity string.
func checkIntegrity(data []byte, integrity string) error {
	// An SRI string may list several hashes separated by spaces; npm's pack
	// output has one. Accept the sha512 one.
	for _, part := range strings.Fields(integrity) {
		b64, ok := strings.CutPrefix(part, "sha512-")
		if !ok {
			continue
		}
		want, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return fmt.Errorf("bad integrity %q: %w", integrity, err)
		}
		got := sha512.Sum512(data)
		if !bytes.Equal(got[:], want) {
			return fmt.Errorf("sha512 is sha512-%s, want %s", base64.StdEncoding.EncodeToString(got[:]), part)
		}
		return nil
	}
	return fmt.Errorf("no sha512 in integrity %q", integrity)
}

// maxFile bounds a single extracted file; vendored browser files are small.
const maxFile = 32 << 20

// extract reads the wanted regular files from a gzipped tarball. It refuses
// any entry whose name is absolute or contains "..", even one it does not
// want, since such a tarball is not one to trust.
func extract(tgz []byte, want map[string]bool) (map[string][]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return nil, fmt.Errorf("tarball: %w", err)
	}
	tr := tar.NewReader(zr)
	got := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("tarball: %w", err)
		}
		name := strings.TrimPrefix(h.Name, "./")
		if strings.HasPrefix(name, "/") || strings.Contains(name, `\`) || hasDotDot(name) {
			return nil, fmt.Errorf("tarball entry %q escapes the package; refusing", h.Name)
		}
		name = path.Clean(name)
		if !want[name] {
			continue
		}
		if h.Typeflag != tar.TypeReg {
			return nil, fmt.Errorf("tarball entry %q is not a regular file", h.Name)
		}
		if _, dup := got[name]; dup {
			return nil, fmt.Errorf("tarball has %q twice", name)
		}
		b, err := io.ReadAll(io.LimitReader(tr, maxFile+1))
		if err != nil {
			return nil, fmt.Errorf("tarball %s: %w", name, err)
		}
		if len(b) > maxFile {
			return nil, fmt.Errorf("tarball entry %q is larger than %d bytes", name, maxFile)
		}
		got[name] = b
	}
	var missing []string
	for src := range want {
		if _, ok := got[src]; !ok {
			missing = append(missing, src)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("tarball lacks %s", strings.Join(missing, ", "))
	}
	return got, nil
}

func hasDotDot(name string) bool {
	for _, el := range strings.Split(name, "/") {
		if el == ".." {
			return true
		}
	}
	return false
}
