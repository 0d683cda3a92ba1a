package single

import (
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestHandoffReachesRunningInstance(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	got := make(chan Message, 1)
	l, err := Listen(path, slog.New(slog.DiscardHandler), func(m Message) { got <- m })
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := Handoff(path, Message{Args: []string{"--quick"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		if strings.Join(m.Args, " ") != "--quick" {
			t.Errorf("args = %v", m.Args)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("message not delivered")
	}
	if _, err := Listen(path, slog.New(slog.DiscardHandler), func(Message) {}); err == nil {
		t.Error("a second listener took over a live socket")
	}
}

func TestStaleSocketIsReplaced(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	// A socket file left behind by a crash: bound, then closed without unlink.
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("stale socket not left: %v", err)
	}
	if err := Handoff(path, Message{}); !errors.Is(err, ErrNoInstance) {
		t.Fatalf("handoff to stale socket: %v, want ErrNoInstance", err)
	}
	l, err := Listen(path, slog.New(slog.DiscardHandler), func(Message) {})
	if err != nil {
		t.Fatalf("listen over stale socket: %v", err)
	}
	l.Close()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Error("socket not removed on close")
	}
}

func TestSocketPathIsShortAndPerDirectory(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", "")
	long := "/" + strings.Repeat("d", 150)
	if p := SocketPath(long); len(p) >= 104 {
		t.Errorf("socket path too long for a sockaddr: %d bytes", len(p))
	}
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	if SocketPath("/a") == SocketPath("/b") {
		t.Error("two data directories share a socket")
	}
}
