package harness

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/zalando/go-keyring"
)

// bareBusConfig is a session bus with no activatable services: nothing
// installed on the machine (a keyring daemon with the real HOME, a password
// prompter on the real display) can be started by a call on it.
const bareBusConfig = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir=DIR</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`

// BareSessionBus starts a private session bus that activates nothing and
// returns its address. With it a test controls exactly which services
// exist: on it, no Secret Service means none, not one started on demand.
func BareSessionBus(t testing.TB) string {
	t.Helper()
	Require(t, "dbus-daemon")
	dir, err := os.MkdirTemp("", "lembas-bus-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	conf := filepath.Join(dir, "bus.conf")
	Must(t, os.WriteFile(conf, []byte(strings.Replace(bareBusConfig, "DIR", dir, 1)), 0o600), "bus config")
	cmd := exec.Command("dbus-daemon", "--config-file="+conf, "--nofork", "--print-address=1")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case addr := <-line:
		if addr == "" {
			t.Fatal("dbus-daemon printed no address")
		}
		return addr
	case <-time.After(20 * time.Second):
		t.Fatal("dbus-daemon did not start")
	}
	return ""
}

// Keyring is a real gnome-keyring-daemon serving the Secret Service on a
// bare private bus, with its own home: a login keyring made on first start
// and unlocked with a password the test chose. It never touches the
// developer's keyring.
type Keyring struct {
	Bus  string // for DBUS_SESSION_BUS_ADDRESS
	home string
}

// keyringPassword unlocks the test's login keyring.
const keyringPassword = "lembas-test-keyring"

// loginCollection is where go-keyring keeps its entries.
const loginCollection = dbus.ObjectPath("/org/freedesktop/secrets/collection/login")

// StartKeyring starts gnome-keyring-daemon (secrets component only) on a
// new bare bus and waits until its login keyring is unlocked.
func StartKeyring(t testing.TB) *Keyring {
	t.Helper()
	Require(t, "gnome-keyring-daemon", "secret-tool")
	k := &Keyring{Bus: BareSessionBus(t), home: t.TempDir()}
	run := filepath.Join(k.home, "run")
	Must(t, os.Mkdir(run, 0o700), "runtime dir")
	// --unlock reads the password from stdin and creates the login
	// keyring with it when there is none.
	cmd := exec.Command("gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets")
	cmd.Env = append(k.env(), "XDG_RUNTIME_DIR="+run)
	cmd.Stdin = strings.NewReader(keyringPassword)
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	Must(t, cmd.Start(), "start gnome-keyring-daemon")
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })

	conn := k.conn(t)
	deadline := time.Now().Add(30 * time.Second)
	for {
		locked, err := conn.Object("org.freedesktop.secrets", loginCollection).GetProperty("org.freedesktop.Secret.Collection.Locked")
		if err == nil && locked.Value() == false {
			return k
		}
		if time.Now().After(deadline) {
			t.Fatalf("gnome-keyring-daemon did not offer an unlocked login keyring (%v); its output:\n%s", err, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// env is the environment of the daemon and of secret-tool.
func (k *Keyring) env() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + k.home,
		"XDG_DATA_HOME=" + filepath.Join(k.home, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(k.home, "config"),
		"DBUS_SESSION_BUS_ADDRESS=" + k.Bus,
	}
}

func (k *Keyring) conn(t testing.TB) *dbus.Conn {
	t.Helper()
	conn, err := dbus.Connect(k.Bus)
	if err != nil {
		t.Fatalf("connect to the keyring's bus: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// Lock locks the login keyring, as the desktop does on a screen lock or
// after a timeout. Reading it then needs the password, and with no
// prompter on the bus nobody can give it.
func (k *Keyring) Lock(t testing.TB) {
	t.Helper()
	var locked []dbus.ObjectPath
	var prompt dbus.ObjectPath
	err := k.conn(t).Object("org.freedesktop.secrets", "/org/freedesktop/secrets").
		Call("org.freedesktop.Secret.Service.Lock", 0, []dbus.ObjectPath{loginCollection}).Store(&locked, &prompt)
	if err != nil || len(locked) != 1 {
		t.Fatalf("lock the login keyring: %v (locked %v, prompt %s)", err, locked, prompt)
	}
}

// Entries lists the secrets stored under service, by account, through
// secret-tool (libsecret): a client of the Secret Service that is not ours.
func (k *Keyring) Entries(t testing.TB, service string) map[string]string {
	t.Helper()
	cmd := exec.Command("secret-tool", "search", "--all", "--unlock", "service", service)
	cmd.Env = k.env()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("secret-tool search: %v: %s", err, stderr.String())
	}
	// secret-tool prints the secret on stdout and the attributes on stderr,
	// one item after another.
	out := map[string]string{}
	var secrets, accounts []string
	for _, l := range strings.Split(stdout.String(), "\n") {
		if v, ok := strings.CutPrefix(l, "secret = "); ok {
			secrets = append(secrets, v)
		}
	}
	for _, l := range strings.Split(stderr.String()+stdout.String(), "\n") {
		if v, ok := strings.CutPrefix(l, "attribute.username = "); ok {
			accounts = append(accounts, v)
		}
	}
	if len(secrets) != len(accounts) {
		t.Fatalf("secret-tool search: %d secrets for %d accounts:\n%s\n%s", len(secrets), len(accounts), stdout.String(), stderr.String())
	}
	for i, a := range accounts {
		out[a] = secrets[i]
	}
	return out
}

// Get reads one entry through secret-tool. It implements the app's keyring
// interface (secrets.Keyring), so a test can open the same data directory
// in-process against the same keyring.
func (k *Keyring) Get(service, user string) (string, error) {
	cmd := exec.Command("secret-tool", "lookup", "service", service, "username", user)
	cmd.Env = k.env()
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && len(out) == 0 && len(exit.Stderr) == 0 {
			return "", keyring.ErrNotFound // secret-tool exits 1, silently, for no match
		}
		return "", err
	}
	return string(out), nil
}

// Set refuses: the tests read the key the app stored, never make one.
func (k *Keyring) Set(service, user, password string) error {
	return errors.New("harness.Keyring: the test does not store keys")
}
