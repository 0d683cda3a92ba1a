package cli

import (
	"bytes"
	"context"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/llembas/lembas/tests/harness"
)

// createAdmin runs `lembas create-admin --username name --password-stdin`
// with password on standard input.
func createAdmin(t *testing.T, bin string, env []string, name, password string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "create-admin", "--username", name, "--password-stdin")
	cmd.Env = env
	cmd.Stdin = strings.NewReader(password + "\n")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Run()
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

func status(t *testing.T, c *http.Client, base, method string) int {
	t.Helper()
	resp, err := c.Post(base+"/api/"+method, "application/json", strings.NewReader("[]"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestCreateAdminOnAFreshDirectoryAndBesideTheServer(t *testing.T) {
	bin := server(t)
	dataDir := t.TempDir()
	env := harness.Env(dataDir)

	if code, _, errOut := createAdmin(t, bin, env, "alice", "short"); code != 1 || !strings.Contains(errOut, "at least") {
		t.Errorf("short password: exit %d %q", code, errOut)
	}
	code, out, errOut := createAdmin(t, bin, env, "alice", "alice-has-a-long-password")
	if code != 0 || !strings.Contains(out, "Created the administrator alice") {
		t.Fatalf("create-admin: exit %d %q %q", code, out, errOut)
	}

	p, base := harness.ServeBare(t, bin, dataDir)
	if strings.Contains(p.Stdout(), "No administrator can sign in yet") {
		t.Error("the server still asks for a first administrator")
	}
	alice := harness.Login(t, base, "alice", "alice-has-a-long-password")
	if got := status(t, alice, base, "Admin.Users"); got != 200 {
		t.Fatalf("alice is not an administrator: Admin.Users = %d", got)
	}

	// Beside the running server: a new password, and her sessions end.
	code, out, errOut = createAdmin(t, bin, env, "ALICE", "alice-forgot-and-reset")
	if code != 0 || !strings.Contains(out, "now an active administrator") {
		t.Fatalf("create-admin beside the server: exit %d %q %q", code, out, errOut)
	}
	if got := status(t, alice, base, "Account.Me"); got != 401 {
		t.Errorf("alice's old session after the reset: %d, want 401", got)
	}
	harness.Login(t, base, "alice", "alice-forgot-and-reset")
	for _, leak := range []string{"alice-has-a-long-password", "alice-forgot-and-reset"} {
		if strings.Contains(p.Stdout()+p.Stderr(), leak) {
			t.Errorf("a password appears in the server's log")
		}
	}
}

func TestServeBeyondLoopbackWarnsAboutPlainHTTP(t *testing.T) {
	bin := server(t)
	p := harness.Start(t, bin, harness.Env(t.TempDir()), "--serve", "--addr", "0.0.0.0:0")
	p.WaitOutput(t, `passwords cross the network unencrypted`, 30*time.Second)
	if !strings.Contains(p.Stdout(), "first account created in the browser becomes the administrator") {
		t.Errorf("no first-administrator hint:\n%s", p.Stdout())
	}
	p.Kill()
}
