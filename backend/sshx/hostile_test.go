package sshx_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/llembas/lembas/backend/sshx"
	"github.com/llembas/lembas/backend/sshx/sshtest"
)

// A keyboard-interactive server asks what it likes. The password goes
// to one hidden prompt, once: not to a second round (a one-time code
// after the password), not to a round of several hidden prompts, not to
// a prompt that asks for a code, and never to a shown one.
func TestKeyboardInteractiveGivesThePasswordOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rounds [][]string // prompts per round; a leading "!" is shown (echoed)
		want   [][]string
	}{
		{"password then a code", [][]string{{"Password: "}, {"Verification code: "}}, [][]string{{"s3cret"}, {""}}},
		{"a code first", [][]string{{"Verification code: "}, {"Password: "}}, [][]string{{""}, {"s3cret"}}},
		{"two hidden at once", [][]string{{"Password: ", "Token: "}}, [][]string{{"", ""}}},
		{"shown then hidden", [][]string{{"!Username: ", "Password: "}}, [][]string{{"", "s3cret"}}},
		{"asked again", [][]string{{"Password: "}, {"Password: "}}, [][]string{{"s3cret"}, {""}}},
		{"OpenSSH's prefix", [][]string{{"(pinky@otp-box) Password: "}}, [][]string{{"s3cret"}}},
		{"a one-time password", [][]string{{"One-time password: "}}, [][]string{{""}}},
		{"a passcode", [][]string{{"Enter PASSCODE: "}}, [][]string{{""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hostKey := newSigner(t)
			var mu sync.Mutex
			var got [][]string
			cfg := &ssh.ServerConfig{
				KeyboardInteractiveCallback: func(_ ssh.ConnMetadata, ch ssh.KeyboardInteractiveChallenge) (*ssh.Permissions, error) {
					for _, round := range tc.rounds {
						var qs []string
						var echos []bool
						for _, q := range round {
							echo := q[0] == '!'
							if echo {
								q = q[1:]
							}
							qs, echos = append(qs, q), append(echos, echo)
						}
						answers, err := ch("", "", qs, echos)
						if err != nil {
							return nil, err
						}
						mu.Lock()
						got = append(got, answers)
						mu.Unlock()
					}
					return nil, errors.New("no")
				},
			}
			cfg.AddHostKey(hostKey)
			client, server := connPair(t)
			done := make(chan struct{})
			go func() {
				defer close(done)
				if sc, _, _, err := ssh.NewServerConn(server, cfg); err == nil {
					sc.Close()
				}
				server.Close()
			}()
			ccfg, err := sshx.ClientConfig(sshx.Target{Host: "example.invalid", Port: 22, User: "u"}, sshx.Auth{Password: "s3cret"},
				string(ssh.MarshalAuthorizedKey(hostKey.PublicKey())))
			if err != nil {
				t.Fatal(err)
			}
			if _, _, _, err := ssh.NewClientConn(client, "example.invalid:22", ccfg); err == nil {
				t.Fatal("signed in to a server that accepts nothing")
			}
			client.Close()
			<-done
			mu.Lock()
			defer mu.Unlock()
			if len(got) != len(tc.want) {
				t.Fatalf("answers %q, want %q", got, tc.want)
			}
			for i := range got {
				if len(got[i]) != len(tc.want[i]) {
					t.Fatalf("answers %q, want %q", got, tc.want)
				}
				for j := range got[i] {
					if got[i][j] != tc.want[i][j] {
						t.Errorf("round %d prompt %d answered %q, want %q", i+1, j+1, got[i][j], tc.want[i][j])
					}
				}
			}
		})
	}
}

// hostileClient signs in to a Hostile server.
func hostileClient(t *testing.T, srv *sshtest.Hostile) *sshx.Client {
	t.Helper()
	c, err := sshx.Dial(context.Background(), sshx.Target{Host: srv.Host, Port: srv.Port, User: srv.User}, sshx.Auth{Password: "anything"}, srv.HostKey())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// A directory the server never ends (or one of billions of files) is
// read up to a bound, not into all the memory there is.
func TestReadDirMaxOfAnEndlessDirectory(t *testing.T) {
	srv := sshtest.StartHostile(t, sshtest.EndlessDir())
	fs, err := hostileClient(t, srv).SFTP()
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	type res struct {
		infos []os.FileInfo
		more  bool
		err   error
	}
	done := make(chan res, 1)
	go func() {
		infos, more, err := fs.ReadDirMax(context.Background(), "/anywhere", 500)
		done <- res{infos, more, err}
	}()
	select {
	case r := <-done:
		if r.err != nil || !r.more || len(r.infos) != 500 || r.infos[0].Name() != "file0000000001" {
			t.Fatalf("ReadDirMax: %d entries, more %v, %v", len(r.infos), r.more, r.err)
		}
	case <-time.After(time.Minute):
		t.Fatal("ReadDirMax of an endless directory did not return within a minute")
	}
	// The session still works after the cut.
	if infos, more, err := fs.ReadDirMax(context.Background(), "/elsewhere", 10); err != nil || !more || len(infos) != 10 {
		t.Fatalf("a second ReadDirMax: %d entries, more %v, %v", len(infos), more, err)
	}
}

// A server that never answers a session's opening or a command's
// request: Run ends at its time limit or ctx's end, Shell at ctx's end
// (each closes the connection, which is of no use any more).
func TestMuteServerEndsRunAndShell(t *testing.T) {
	for _, tc := range []struct {
		name, mute string
		start      func(*sshx.Client) error
	}{
		{"run: the exec request", "exec", func(c *sshx.Client) error {
			_, err := c.Run(context.Background(), "true", sshx.RunOptions{Timeout: 2 * time.Second})
			return err
		}},
		{"run: the session", "channels", func(c *sshx.Client) error {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_, err := c.Run(ctx, "true", sshx.RunOptions{})
			return err
		}},
		{"shell: the session", "channels", func(c *sshx.Client) error {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_, err := c.Shell(ctx, "", 80, 24)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := sshtest.StartHostile(t, sshtest.EndlessDir())
			c := hostileClient(t, srv)
			srv.SetMute(tc.mute)
			done := make(chan error, 1)
			go func() { done <- tc.start(c) }()
			select {
			case err := <-done:
				if err == nil {
					t.Error("started against a server that never answered")
				}
			case <-time.After(time.Minute):
				t.Fatal("did not return within a minute")
			}
		})
	}
}

// What a server sends before and during the key exchange is bounded: an
// endless banner before its version line, or a version line and then
// nothing, end the scan and the dial by ctx's deadline at the latest.
func TestHugeBannerAndEndlessKex(t *testing.T) {
	for _, tc := range []struct {
		name  string
		serve func(net.Conn)
	}{
		{"endless banner", func(c net.Conn) {
			line := []byte(strings.Repeat("x", 200) + "\r\n")
			for {
				if _, err := c.Write(line); err != nil {
					return
				}
			}
		}},
		{"version, then nothing", func(c net.Conn) {
			c.Write([]byte("SSH-2.0-OpenSSH_9.2\r\n"))
			io.Copy(io.Discard, c)
		}},
		{"a packet too large to be one", func(c net.Conn) {
			c.Write([]byte("SSH-2.0-OpenSSH_9.2\r\n"))
			// A packet far larger than any SSH packet may be.
			c.Write([]byte{0x7f, 0xff, 0xff, 0xff})
			io.Copy(io.Discard, c)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			go func() {
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					go func() { defer c.Close(); tc.serve(c) }()
				}
			}()
			target := sshx.Target{Host: "127.0.0.1", Port: l.Addr().(*net.TCPAddr).Port, User: "u"}
			done := make(chan error, 2)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				defer cancel()
				_, err := sshx.CaptureHostKey(ctx, target)
				done <- err
			}()
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				defer cancel()
				_, err := sshx.Dial(ctx, target, sshx.Auth{Password: "x"}, "")
				done <- err
			}()
			for range 2 {
				select {
				case err := <-done:
					if err == nil {
						t.Error("a scan or dial succeeded")
					}
				case <-time.After(time.Minute):
					t.Fatal("a scan or dial did not return within a minute")
				}
			}
		})
	}
}

// A command that floods its output is stopped at StopAfter bytes, not
// read at full speed until its time limit.
func TestRunStopsAFlood(t *testing.T) {
	srv, target, auth := keyServer(t)
	c := dial(t, target, auth, srv.HostKey())
	done := make(chan sshx.RunResult, 1)
	go func() {
		r, err := c.Run(context.Background(), "yes", sshx.RunOptions{Timeout: 10 * time.Minute, MaxOutput: 1 << 10, StopAfter: 8 << 20})
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	select {
	case r := <-done:
		if !r.Flooded || r.TimedOut || len(r.Output) != 1<<10 || r.Omitted < 7<<20 {
			t.Fatalf("a flood: flooded %v, timed out %v, kept %d, omitted %d", r.Flooded, r.TimedOut, len(r.Output), r.Omitted)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("a flood ran on past two minutes")
	}
}
