// Package single keeps one desktop app per data directory. A second launch
// connects to the first one's Unix socket, hands over its arguments (such as
// --quick) and exits; only a launch that finds nobody listening goes on to
// take the data-directory lock. Wails' own single-instance lock is a D-Bus
// name and silently does nothing without a session bus, hence this.
package single

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Message is what a second launch hands over.
type Message struct {
	Args []string `json:"args"`
}

// SocketPath is the socket for dataDir: named by a hash of the directory, in
// $XDG_RUNTIME_DIR when set (per-user, tmpfs) or else in the data directory
// itself (root on CI has no runtime dir). Unix socket paths must be short
// (108 bytes on Linux), so a long data directory falls back to the temp dir.
func SocketPath(dataDir string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(dataDir)))
	name := "lembas-" + hex.EncodeToString(sum[:6]) + ".sock"
	candidates := []string{}
	if rd := os.Getenv("XDG_RUNTIME_DIR"); rd != "" {
		candidates = append(candidates, filepath.Join(rd, name))
	}
	candidates = append(candidates, filepath.Join(dataDir, "lembas.sock"), filepath.Join(os.TempDir(), name))
	for _, c := range candidates {
		if len(c) < 104 {
			return c
		}
	}
	return candidates[len(candidates)-1]
}

// ErrNoInstance means nobody is listening on the socket.
var ErrNoInstance = errors.New("no running instance")

// Handoff sends msg to the instance listening on path and waits for it to
// acknowledge. It returns ErrNoInstance when there is none (including a
// stale socket left by a crash).
func Handoff(path string, msg Message) error {
	conn, err := net.DialTimeout("unix", path, 2*time.Second)
	if err != nil {
		return ErrNoInstance
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if err := json.NewEncoder(conn).Encode(msg); err != nil {
		return fmt.Errorf("hand over to the running instance: %w", err)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil || line != "ok\n" {
		return fmt.Errorf("the running instance did not acknowledge (%q, %v)", line, err)
	}
	return nil
}

// Listener accepts handoffs.
type Listener struct {
	ln   net.Listener
	path string
	wg   sync.WaitGroup
}

// Listen starts accepting handoffs on path, calling fn for each. A socket
// file nobody answers on is stale and is replaced. Call it only while holding
// the data-directory lock, so two instances never race for the socket.
func Listen(path string, log *slog.Logger, fn func(Message)) (*Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err == nil {
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("another instance is answering on %s", path)
		}
		os.Remove(path)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	os.Chmod(path, 0o600)
	l := &Listener{ln: ln, path: path}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			l.wg.Add(1)
			go func() {
				defer l.wg.Done()
				defer conn.Close()
				conn.SetDeadline(time.Now().Add(5 * time.Second))
				var m Message
				if err := json.NewDecoder(bufio.NewReader(conn)).Decode(&m); err != nil {
					log.Warn("bad handoff message", "err", err)
					return
				}
				fmt.Fprint(conn, "ok\n")
				fn(m)
			}()
		}
	}()
	return l, nil
}

// Close stops listening and removes the socket.
func (l *Listener) Close() error {
	err := l.ln.Close()
	l.wg.Wait()
	os.Remove(l.path)
	return err
}
