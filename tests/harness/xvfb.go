package harness

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Xvfb starts a virtual X server on a free display and returns its DISPLAY
// value (":N"). It is stopped at test cleanup.
func Xvfb(t testing.TB) string {
	t.Helper()
	Require(t, "Xvfb")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// -displayfd makes Xvfb pick a free display and write its number to fd 3.
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "1280x800x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{w}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case n := <-line:
		if n == "" {
			t.Fatal("Xvfb did not report a display")
		}
		return ":" + n
	case <-time.After(20 * time.Second):
		t.Fatal("Xvfb did not start within 20 s")
	}
	return ""
}

// X runs an X client tool (xwininfo, xprop, import) against display.
func X(t testing.TB, display string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "DISPLAY="+display)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// Tree is `xwininfo -root -tree`. The walk fails with BadWindow when a
// window goes away halfway through it (WebKit and the window manager
// create and destroy short-lived windows all the time), so a failed walk
// is tried again for a few seconds before it fails the test.
func Tree(t testing.TB, display string) string {
	t.Helper()
	var out []byte
	var err error
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		cmd := exec.Command("xwininfo", "-root", "-tree")
		cmd.Env = append(os.Environ(), "DISPLAY="+display)
		if out, err = cmd.CombinedOutput(); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("xwininfo -root -tree: %v\n%s", err, out)
	}
	return string(out)
}
