package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// server is the real lembas binary, serving on loopback.
type server struct {
	cmd  *exec.Cmd
	base string
	log  *tail
	done chan struct{}
}

var servingRx = regexp.MustCompile(`serving at (http://127\.0\.0\.1:\d+)/`)

// startServer runs `bin --serve --addr 127.0.0.1:0` on dataDir and waits
// for the address it prints.
func startServer(ctx context.Context, bin, dataDir string) (*server, error) {
	s := &server{log: &tail{max: 64 << 10}, done: make(chan struct{})}
	s.cmd = exec.Command(bin, "--serve", "--addr", "127.0.0.1:0")
	s.cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dataDir,
		"LEMBAS_DATA_DIR=" + dataDir,
		"LEMBAS_NO_KEYCHAIN=1",
	}
	s.cmd.Stderr = s.log
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			s.log.Write([]byte(line + "\n"))
			if m := servingRx.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	go func() {
		s.cmd.Wait()
		close(s.done)
	}()
	select {
	case s.base = <-found:
		return s, nil
	case <-s.done:
		return nil, fmt.Errorf("%s exited before serving (%v):\n%s", bin, s.cmd.ProcessState, s.log)
	case <-time.After(30 * time.Second):
	case <-ctx.Done():
	}
	s.kill()
	return nil, fmt.Errorf("%s did not print its address within 30 s:\n%s", bin, s.log)
}

// stop sends SIGTERM and waits for the exit, killing the process if it is
// still running after grace.
func (s *server) stop(grace time.Duration) error {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		if st := s.cmd.ProcessState; st != nil && !st.Success() {
			return fmt.Errorf("server exited with %v", st)
		}
		return nil
	case <-time.After(grace):
		s.kill()
		return fmt.Errorf("server still running %s after SIGTERM; killed", grace)
	}
}

func (s *server) kill() {
	s.cmd.Process.Kill()
	<-s.done
}

// cpuTime is the CPU time (user + system) the process pid has used, from
// /proc/PID/stat (Linux; clock ticks are USER_HZ = 100 per second).
func cpuTime(pid string) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; count from after it.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("unexpected /proc stat format")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, errors.New("unexpected /proc stat format")
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("unexpected /proc stat format")
	}
	return time.Duration(ut+st) * (time.Second / 100), nil
}

// api calls facades on the server.
type api struct {
	base string
	hc   *http.Client
}

// signUp creates the first account (the administrator) and keeps its
// session in the client's cookie jar.
func (a *api) signUp(ctx context.Context, username, password string) error {
	body, _ := json.Marshal(map[string]string{"username": username, "password": password})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+"/api/auth/signup", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.hc.Do(req)
	if err != nil {
		return fmt.Errorf("sign up: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("sign up: %s %s", resp.Status, raw)
	}
	return nil
}

func (a *api) call(ctx context.Context, method string, out any, args ...any) error {
	if args == nil {
		args = []any{}
	}
	body, err := json.Marshal(args)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+"/api/"+method, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s %s", method, resp.Status, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s: decode: %w", method, err)
		}
	}
	return nil
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
