package sshtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// Hostile is an in-process SSH server for tests of what a server that
// means harm can do, where an sshd cannot be made to misbehave: it signs
// in anyone (any key, any password), serves SFTP from Handlers, and
// answers every command with exit status 0 and no output.
type Hostile struct {
	Host string
	Port int
	User string

	onAuth   func()
	keepOpen bool
	silent   bool
	mute     string // "exec": exec requests, "channels": session opens, never answered
	stopped  chan struct{}
	key      ssh.Signer
	l        net.Listener
	wg       sync.WaitGroup
	mu       sync.Mutex
	cs       []net.Conn
}

// StartHostile starts a Hostile server serving h, stopped when the test
// ends.
func StartHostile(t testing.TB, h sftp.Handlers) *Hostile {
	t.Helper()
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	key, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Hostile{Host: "127.0.0.1", Port: l.Addr().(*net.TCPAddr).Port, User: "anyone", key: key, l: l, stopped: make(chan struct{})}
	signIn := func() (*ssh.Permissions, error) {
		s.mu.Lock()
		f := s.onAuth
		s.mu.Unlock()
		if f != nil {
			f()
		}
		return nil, nil
	}
	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(ssh.ConnMetadata, ssh.PublicKey) (*ssh.Permissions, error) { return signIn() },
		PasswordCallback:  func(ssh.ConnMetadata, []byte) (*ssh.Permissions, error) { return signIn() },
	}
	cfg.AddHostKey(key)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.cs = append(s.cs, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.serve(c, cfg, h)
			}()
		}
	}()
	t.Cleanup(func() {
		close(s.stopped)
		l.Close()
		s.mu.Lock()
		for _, c := range s.cs {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

// SetOnAuth makes f run in each sign-in before it is accepted (to hold
// sign-ins, or count them).
func (s *Hostile) SetOnAuth(f func()) {
	s.mu.Lock()
	s.onAuth = f
	s.mu.Unlock()
}

// SetKeepOpen makes the server keep an SFTP channel open after the client
// has ended it (until the test ends): a client that waits for the server
// to close first waits for ever.
func (s *Hostile) SetKeepOpen(keep bool) {
	s.mu.Lock()
	s.keepOpen = keep
	s.mu.Unlock()
}

// SetSilentSFTP makes the server accept the SFTP subsystem and then say
// nothing at all (not even its version), until the test ends.
func (s *Hostile) SetSilentSFTP(silent bool) {
	s.mu.Lock()
	s.silent = silent
	s.mu.Unlock()
}

// SetMute makes the server never answer what: "exec" (a command's
// request) or "channels" (a session's opening); "" answers again.
func (s *Hostile) SetMute(what string) {
	s.mu.Lock()
	s.mute = what
	s.mu.Unlock()
}

func (s *Hostile) muted(what string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mute == what
}

// HostKey is the server's host key as an authorized_keys line.
func (s *Hostile) HostKey() string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.key.PublicKey())))
}

func (s *Hostile) serve(c net.Conn, cfg *ssh.ServerConfig, h sftp.Handlers) {
	defer c.Close()
	sc, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		return
	}
	defer sc.Close()
	go ssh.DiscardRequests(reqs)
	var wg sync.WaitGroup
	defer wg.Wait()
	for nc := range chans {
		if nc.ChannelType() != "session" {
			nc.Reject(ssh.UnknownChannelType, "no")
			continue
		}
		if s.muted("channels") {
			continue // never confirmed, never refused
		}
		ch, creqs, err := nc.Accept()
		if err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer ch.Close()
			for req := range creqs {
				switch {
				case req.Type == "subsystem" && len(req.Payload) > 4 && string(req.Payload[4:]) == "sftp":
					req.Reply(true, nil)
					go ssh.DiscardRequests(creqs)
					s.mu.Lock()
					keep, silent := s.keepOpen, s.silent
					s.mu.Unlock()
					if silent {
						go io.Copy(io.Discard, ch)
						<-s.stopped
						return
					}
					var rwc io.ReadWriteCloser = ch
					if keep {
						rwc = struct {
							io.Reader
							io.Writer
							io.Closer
						}{ch, ch, io.NopCloser(nil)}
					}
					srv := sftp.NewRequestServer(rwc, h)
					if err := srv.Serve(); err != nil && !errors.Is(err, net.ErrClosed) {
						srv.Close()
					}
					if keep {
						<-s.stopped
					}
					return
				case req.Type == "exec" && s.muted("exec"):
					<-s.stopped // never answered
					return
				case req.Type == "exec":
					req.Reply(true, nil)
					status := make([]byte, 4)
					binary.BigEndian.PutUint32(status, 0)
					ch.SendRequest("exit-status", false, status)
					return
				default:
					req.Reply(false, nil)
				}
			}
		}()
	}
}

// EndlessDir is an SFTP server whose every directory lists without end
// (file0000000001, file0000000002, …): a server that never ends a
// listing, or a directory of billions of files.
func EndlessDir() sftp.Handlers {
	return sftp.Handlers{FileList: endless{}, FileGet: refuse{}, FilePut: refuse{}, FileCmd: refuse{}}
}

// Stalling is an SFTP server that answers a Stat and then nothing: every
// listing and read waits until stall is closed.
func Stalling(stall <-chan struct{}) sftp.Handlers {
	return sftp.Handlers{FileList: stalling{stall}, FileGet: stalling{stall}, FilePut: refuse{}, FileCmd: refuse{}}
}

type fileInfo struct {
	name string
	dir  bool
}

func (f fileInfo) Name() string { return f.name }
func (f fileInfo) Size() int64  { return 1 << 20 }
func (f fileInfo) Mode() os.FileMode {
	if f.dir {
		return os.ModeDir | 0o755
	}
	return 0o644
}
func (f fileInfo) ModTime() time.Time { return time.Unix(0, 0) }
func (f fileInfo) IsDir() bool        { return f.dir }
func (f fileInfo) Sys() any           { return nil }

// stat is what a Stat of p says: a directory unless its name has a dot.
func stat(p string) sftp.ListerAt {
	name := path.Base(p)
	return listOf{fileInfo{name, !strings.Contains(name, ".")}}
}

type listOf []os.FileInfo

func (l listOf) ListAt(out []os.FileInfo, off int64) (int, error) {
	if off >= int64(len(l)) {
		return 0, io.EOF
	}
	n := copy(out, l[off:])
	if n < len(out) {
		return n, io.EOF
	}
	return n, nil
}

type endless struct{}

func (endless) Filelist(r *sftp.Request) (sftp.ListerAt, error) {
	if r.Method == "List" {
		return endlessList{}, nil
	}
	return stat(r.Filepath), nil
}

type endlessList struct{}

func (endlessList) ListAt(out []os.FileInfo, off int64) (int, error) {
	for i := range out {
		out[i] = fileInfo{name: fmt.Sprintf("file%010d", off+int64(i)+1)}
	}
	return len(out), nil
}

type stalling struct{ stall <-chan struct{} }

func (s stalling) Filelist(r *sftp.Request) (sftp.ListerAt, error) {
	if r.Method == "List" {
		<-s.stall
		return nil, os.ErrPermission
	}
	return stat(r.Filepath), nil
}

func (s stalling) Fileread(*sftp.Request) (io.ReaderAt, error) {
	<-s.stall
	return nil, os.ErrPermission
}

type refuse struct{}

func (refuse) Fileread(*sftp.Request) (io.ReaderAt, error)  { return nil, os.ErrPermission }
func (refuse) Filewrite(*sftp.Request) (io.WriterAt, error) { return nil, os.ErrPermission }
func (refuse) Filecmd(*sftp.Request) error                  { return os.ErrPermission }
func (refuse) Filelist(r *sftp.Request) (sftp.ListerAt, error) {
	return nil, os.ErrPermission
}
