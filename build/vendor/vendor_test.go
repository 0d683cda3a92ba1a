package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is the repository root as seen from this package's directory.
const repoRoot = "../.."

// copyTree copies the lock and frontend/vendor/ of the real tree into a
// temporary root, so tests can break things without touching the repo.
func copyTree(t *testing.T) paths {
	t.Helper()
	src := newPaths(repoRoot)
	dst := newPaths(t.TempDir())
	copyFile(t, src.lock, dst.lock)
	err := filepath.WalkDir(src.vendorDir, func(file string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src.vendorDir, file)
		if err != nil {
			return err
		}
		copyFile(t, file, filepath.Join(dst.vendorDir, rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyCommittedTree(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run([]string{"-root", repoRoot, "verify"}, &out, &errOut); err != nil {
		t.Fatalf("verify on the committed tree: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "files match") {
		t.Errorf("verify output = %q", out.String())
	}
}

func TestVerifyCopyPasses(t *testing.T) {
	p := copyTree(t)
	if n, err := verify(p); err != nil || n == 0 {
		t.Fatalf("verify(copy) = %d, %v; want >0 files, nil", n, err)
	}
}

func TestVerifyFailures(t *testing.T) {
	l, err := readLock(newPaths(repoRoot).lock)
	if err != nil {
		t.Fatal(err)
	}
	first := l.Packages[0].Files[0].Dest

	tests := []struct {
		name   string
		mutate func(t *testing.T, p paths)
		want   []string
	}{
		{
			name: "changed file",
			mutate: func(t *testing.T, p paths) {
				f := filepath.Join(p.vendorDir, filepath.FromSlash(first))
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(f, append(b, "\n// tampered\n"...), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"frontend/vendor/" + first, "sha256"},
		},
		{
			name: "missing file",
			mutate: func(t *testing.T, p paths) {
				if err := os.Remove(filepath.Join(p.vendorDir, filepath.FromSlash(first))); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"frontend/vendor/" + first, "missing"},
		},
		{
			name: "unlisted file",
			mutate: func(t *testing.T, p paths) {
				f := filepath.Join(p.vendorDir, "extra", "sneaky.js")
				if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(f, []byte("alert(1)\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{"frontend/vendor/extra/sneaky.js", "not listed"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := copyTree(t)
			tt.mutate(t, p)
			var out, errOut bytes.Buffer
			err := run([]string{"-root", p.root, "verify"}, &out, &errOut)
			if err == nil {
				t.Fatal("verify passed; want failure")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// tarball builds a gzipped npm-style tarball.
func tarball(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func integrityOf(b []byte) string {
	s := sha512.Sum512(b)
	return "sha512-" + base64.StdEncoding.EncodeToString(s[:])
}

// fakePack serves tarballs from memory; lie makes it report a wrong
// integrity.
func fakePack(t *testing.T, tgz map[string][]byte, lie bool) packer {
	return func(dir, spec string) (packed, error) {
		b, ok := tgz[spec]
		if !ok {
			t.Fatalf("unexpected pack of %s", spec)
		}
		f := filepath.Join(dir, "pkg.tgz")
		if err := os.WriteFile(f, b, 0o644); err != nil {
			return packed{}, err
		}
		integ := integrityOf(b)
		if lie {
			integ = integrityOf(append(b, 0))
		}
		return packed{File: f, Integrity: integ}, nil
	}
}

func TestUpdateAddThenVerify(t *testing.T) {
	p := newPaths(t.TempDir())
	tgz := map[string][]byte{
		"demo@1.0.0": tarball(t, map[string]string{"package/LICENSE": "MIT\n", "package/demo.js": "export const x = 1;\n"}),
	}
	reqs, err := parseUpdateArgs([]string{"demo@1.0.0", "package/demo.js=demo/demo.js", "package/LICENSE=demo/LICENSE"})
	if err != nil {
		t.Fatal(err)
	}
	if err := update(p, reqs, fakePack(t, tgz, false), io.Discard); err != nil {
		t.Fatal(err)
	}
	if _, err := verify(p); err != nil {
		t.Fatalf("verify after update: %v", err)
	}
	// Re-fetching the locked version with no arguments must succeed too.
	if err := update(p, nil, fakePack(t, tgz, false), io.Discard); err != nil {
		t.Fatalf("update from lock: %v", err)
	}
	// Same version, different bytes: the lock's pin wins.
	tgz["demo@1.0.0"] = tarball(t, map[string]string{"package/LICENSE": "MIT\n", "package/demo.js": "export const x = 2;\n"})
	if err := update(p, nil, fakePack(t, tgz, false), io.Discard); err == nil || !strings.Contains(err.Error(), "lock pins") {
		t.Fatalf("update with a republished tarball: err = %v, want a pin mismatch", err)
	}
}

func TestUpdateRefuses(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		args  []string
		lie   bool
		want  string
	}{
		{"integrity mismatch", map[string]string{"package/a.js": "a"}, []string{"demo@1.0.0", "package/a.js=a.js"}, true, "integrity"},
		{"dot-dot entry", map[string]string{"package/a.js": "a", "package/../../evil": "x"}, []string{"demo@1.0.0", "package/a.js=a.js"}, false, "escapes"},
		{"missing source", map[string]string{"package/a.js": "a"}, []string{"demo@1.0.0", "package/b.js=b.js"}, false, "lacks package/b.js"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPaths(t.TempDir())
			reqs, err := parseUpdateArgs(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			tgz := map[string][]byte{"demo@1.0.0": tarball(t, tt.files)}
			err = update(p, reqs, fakePack(t, tgz, tt.lie), io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.want)
			}
			if _, err := os.Stat(p.lock); !os.IsNotExist(err) {
				t.Errorf("lock written after a refused update (stat err %v)", err)
			}
		})
	}
}

func TestParseUpdateArgs(t *testing.T) {
	bad := [][]string{
		{"htm"},
		{"htm@^3.1.1"},
		{"htm@latest"},
		{"a=b"},
		{"htm@3.1.1", "../x=y"},
		{"htm@3.1.1", "x=../y"},
		{"htm@3.1.1", "x=/abs"},
	}
	for _, args := range bad {
		if _, err := parseUpdateArgs(args); err == nil {
			t.Errorf("parseUpdateArgs(%q) succeeded; want error", args)
		}
	}
	reqs, err := parseUpdateArgs([]string{"@scope/pkg@1.2.3-rc.1", "package/x.js=x.js"})
	if err != nil || len(reqs) != 1 || reqs[0].name != "@scope/pkg" || reqs[0].version != "1.2.3-rc.1" || len(reqs[0].files) != 1 {
		t.Errorf("scoped parse = %+v, %v", reqs, err)
	}
}
