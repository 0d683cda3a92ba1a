// Package harness starts the real lembas binary for end-to-end tests: built
// once per test binary, run with a temporary data directory, driven over
// HTTP, in Chromium (chromedp) or under Xvfb.
package harness

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Require fails the test when a tool is missing under CI (CI=true must never
// skip the browser or desktop tests) and skips it elsewhere.
func Require(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is missing; `make test` installs it (CI=true never skips these tests)", tool)
			}
			t.Skipf("%s not installed (run `make test`, which installs it)", tool)
		}
	}
}

// RepoRoot is the repository root, found from this file's location.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

var (
	buildMu sync.Mutex
	built   = map[string]string{}
)

// Build compiles ./app with the given tags (and env, e.g. CGO_ENABLED=0)
// into a directory that lives as long as the test binary, once per set.
func Build(t testing.TB, tags string, env ...string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	key := tags + "|" + strings.Join(env, ",")
	if p, ok := built[key]; ok {
		return p
	}
	dir, err := os.MkdirTemp("", "lembas-bin-")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "lembas")
	args := []string{"build", "-o", out}
	if tags != "" {
		args = append(args, "-tags", tags)
	}
	args = append(args, "./app")
	cmd := exec.Command("go", args...)
	cmd.Dir = RepoRoot()
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %v: %v\n%s", args, err, b)
	}
	built[key] = out
	return out
}

// Proc is a running lembas process.
type Proc struct {
	Cmd     *exec.Cmd
	DataDir string
	out     *lineBuf
	err     *lineBuf
	done    chan struct{}
	exitErr error
}

// Env returns a minimal environment for a lembas process on dataDir: no
// keychain (tests must not touch the developer's), plus extra.
func Env(dataDir string, extra ...string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dataDir,
		"LEMBAS_DATA_DIR=" + dataDir,
		"LEMBAS_NO_KEYCHAIN=1",
		"LEMBAS_LOG_LEVEL=debug",
	}
	return append(env, extra...)
}

// Start runs bin with args and env, collecting its output. The process is
// killed at test cleanup if still running.
func Start(t testing.TB, bin string, env []string, args ...string) *Proc {
	t.Helper()
	p := &Proc{Cmd: exec.Command(bin, args...), out: newLineBuf(), err: newLineBuf(), done: make(chan struct{})}
	p.Cmd.Env = env
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "LEMBAS_DATA_DIR="); ok {
			p.DataDir = v
		}
	}
	p.Cmd.Stdout = p.out
	p.Cmd.Stderr = p.err
	if err := p.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.exitErr = p.Cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.Cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("%s stdout:\n%s\nstderr:\n%s", filepath.Base(bin), p.Stdout(), p.Stderr())
		}
	})
	return p
}

// Stdout and Stderr return what the process printed so far.
func (p *Proc) Stdout() string { return p.out.String() }

// Stderr returns what the process printed on stderr so far.
func (p *Proc) Stderr() string { return p.err.String() }

// WaitOutput waits until stdout or stderr matches re and returns the match.
func (p *Proc) WaitOutput(t testing.TB, re string, timeout time.Duration) []string {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for _, s := range []string{p.Stdout(), p.Stderr()} {
			if m := rx.FindStringSubmatch(s); m != nil {
				return m
			}
		}
		select {
		case <-p.done:
			t.Fatalf("process exited (%v) before printing %q", p.exitErr, re)
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("no output matching %q within %s", re, timeout)
	return nil
}

// Wait waits for the process to exit and returns its exit code.
func (p *Proc) Wait(t testing.TB, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		t.Fatalf("process still running after %s", timeout)
	}
	return p.Cmd.ProcessState.ExitCode()
}

// Kill stops the process and waits for it to exit.
func (p *Proc) Kill() {
	p.Cmd.Process.Kill()
	<-p.done
}

// Run runs bin to completion and returns exit code, stdout and stderr.
func Run(t testing.TB, bin string, env []string, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil && cmd.ProcessState == nil {
		t.Fatalf("run %s %v: %v", bin, args, err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// lineBuf is a goroutine-safe output collector.
type lineBuf struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func newLineBuf() *lineBuf { return &lineBuf{} }

func (b *lineBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lineBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Lines returns the lines of s that start with prefix.
func Lines(s, prefix string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), prefix) {
			out = append(out, sc.Text())
		}
	}
	return out
}

// ArtifactDir is where tests save screenshots: $LEMBAS_ARTIFACTS if set,
// else a temporary directory.
func ArtifactDir(t testing.TB) string {
	if d := os.Getenv("LEMBAS_ARTIFACTS"); d != "" {
		os.MkdirAll(d, 0o755)
		return d
	}
	return t.TempDir()
}

var _ io.Writer = (*lineBuf)(nil)

// Must is a tiny helper for setup steps that cannot fail in a sane test.
func Must(t testing.TB, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// API posts one facade call to a server started with Serve, as its
// administrator, and decodes its result into out (when not nil). A non-200
// answer fails the test.
func API(t testing.TB, base, method string, out any, args ...any) {
	t.Helper()
	APIAs(t, AdminClient(t, base), base, method, out, args...)
}
