package terminal

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// bashSession is what bash printed with the marks for `echo hi; false`,
// an empty line, `ls /nonexist` and `exit` (captured on a PTY).
const bashSession = "\x1b]133;L;bash\x07\x1b]133;A\x07\x1b[?2004hroot@vm:/tmp# \x1b]133;B\x07echo hi; false\r\n\x1b[?2004l\r" +
	"\x1b]133;C;cmdline=echo hi; false\x07hi\r\n\x1b]133;D;1\x07\x1b]133;A\x07\x1b[?2004hroot@vm:/tmp# \x1b]133;B\x07\r\n\x1b[?2004l\r" +
	"\x1b]133;A\x07\x1b[?2004hroot@vm:/tmp# \x1b]133;B\x07ls /nonexist\r\n\x1b[?2004l\r\x1b]133;C;cmdline=ls /nonexist\x07" +
	"ls: cannot access '/nonexist': \x1b[1mNo such file\x1b[0m or directory\r\n\x1b]0;title\x07\x1b]133;D;2\x07\x1b]133;A\x07"

// The parser gives the last command whole wherever the stream is split.
func TestMarksAcrossChunks(t *testing.T) {
	for cut := 0; cut <= len(bashSession); cut++ {
		var m parser
		a := m.feed([]byte(bashSession[:cut]))
		b := m.feed([]byte(bashSession[cut:]))
		if !a && !b || !m.marks() {
			t.Fatalf("cut %d: announcement missed", cut)
		}
		want := LastCommand{Command: "ls /nonexist", Output: "ls: cannot access '/nonexist': No such file or directory", Exit: 2, Marks: true}
		if m.last == nil || *m.last != want {
			t.Fatalf("cut %d: last %+v, want %+v", cut, m.last, want)
		}
	}
	var m parser
	m.feed([]byte(bashSession[:strings.Index(bashSession, "\x1b]133;A\x07\x1b[?2004hroot@vm:/tmp# \x1b]133;B\x07\r\n")]))
	if want := (LastCommand{Command: "echo hi; false", Output: "hi", Exit: 1, Marks: true}); *m.last != want {
		t.Fatalf("first command %+v, want %+v", *m.last, want)
	}
}

// A command's output keeps its end, marked as cut.
func TestMarksOutputIsCapped(t *testing.T) {
	var m parser
	m.feed([]byte("\x1b]133;L;zsh\x07\x1b]133;C;cmdline=yes\x07"))
	for range 300 {
		m.feed([]byte(strings.Repeat("y\r\n", 1000)))
	}
	m.feed([]byte("end\r\n\x1b]133;D;130\x07"))
	if m.last == nil || !strings.HasPrefix(m.last.Output, "…\n") || !strings.HasSuffix(m.last.Output, "y\nend") ||
		len(m.last.Output) > 2*maxOutput || m.last.Exit != 130 {
		t.Fatalf("last: exit %d, %d bytes", m.last.Exit, len(m.last.Output))
	}
}

// Other shells: announced, no marks.
func TestNoMarksForOtherShells(t *testing.T) {
	var m parser
	if !m.feed([]byte("\x1b]133;L;other\x07$ ")) || m.marks() {
		t.Fatal("other shell: want announced without marks")
	}
}

// The command string parses in the shells sshd may run it with.
func TestShellCommandParses(t *testing.T) {
	cmd := ShellCommand()
	if strings.Count(cmd, "'") != 2 || strings.Contains(cmd, "!") {
		t.Fatalf("the script must sit in one pair of single quotes, with no '!': %q", cmd)
	}
	for i := 0; i < len(cmd); i++ {
		if cmd[i] == '\\' && (i+1 == len(cmd) || cmd[i+1] < '0' || cmd[i+1] > '7') {
			t.Fatalf("a backslash not before an octal digit at %d (fish would read it)", i)
		}
	}
	for _, sh := range []string{"sh", "bash", "dash", "zsh", "fish", "csh", "tcsh"} {
		path, err := exec.LookPath(sh)
		if err != nil {
			continue
		}
		flag := "-n"
		if sh == "fish" {
			flag = "--no-execute"
		}
		if out, err := exec.Command(path, flag, "-c", cmd).CombinedOutput(); err != nil {
			t.Errorf("%s does not parse the command: %v %s", sh, err, out)
		}
	}
	if out, err := exec.Command("bash", "-n", "-c", bashRC).CombinedOutput(); err != nil {
		t.Errorf("bash does not parse the rcfile: %v %s", err, out)
	}
	// The script inside: sh parses it too.
	script := cmd[strings.Index(cmd, "'")+1 : strings.LastIndex(cmd, "'")]
	if out, err := exec.Command("sh", "-n", "-c", script).CombinedOutput(); err != nil {
		t.Errorf("sh does not parse the script: %v %s", err, out)
	}
}

// zshSession is zsh with the marks for `echo hi; false` (captured on a
// PTY): zsh prints PROMPT_SP (an inverse "#", spaces, "\r \r") before
// precmd's D mark, which a carriage return then overwrites.
const zshSession = "\x1b]133;L;zsh\x07\x1b]133;A\x07\r\x1b[0m\x1b[27m\x1b[24m\x1b[Jvm# \x1b]133;B\x07\x1b[K\x1b[?1h\x1b=\x1b[?2004he\x08echo hi; false\x1b[?1l\x1b>\x1b[?2004l\r\r\n" +
	"\x1b]133;C;cmdline=echo hi; false\x07hi\r\n\x1b[1m\x1b[7m#\x1b[27m\x1b[1m\x1b[0m" + "                                                                               \r \r" +
	"\x1b]133;D;1\x07\x1b]133;A\x07\r\x1b[0m\x1b[27m\x1b[24m\x1b[Jvm# \x1b]133;B\x07"

func TestMarksOfZsh(t *testing.T) {
	var m parser
	m.feed([]byte(zshSession))
	if want := (LastCommand{Command: "echo hi; false", Output: "hi", Exit: 1, Marks: true}); m.last == nil || *m.last != want {
		t.Fatalf("last %+v, want %+v", m.last, want)
	}
}

// What a terminal would show: a progress bar's last state, a backspace.
func TestCleanOutput(t *testing.T) {
	for in, want := range map[string]string{
		"10%\r50%\r100%\r\ndone\r\n": "100%\ndone",
		"ab\bc\n":                    "ac",
		"\x1b[31mred\x1b[0m \t \n\n": "red",
		"x\x1b]0;title\x07y":         "xy",
		"héllo\rH":                   "Héllo",
	} {
		if got := cleanOutput([]byte(in), false); got != want {
			t.Errorf("cleanOutput(%q) = %q, want %q", in, got, want)
		}
	}
}

// The command string run the way sshd runs it ($SHELL -c, on a PTY: here
// script(1)) for each shell installed: bash and zsh set marks and give the
// last command; another shell (dash) runs without them.
func TestShellCommandOnALocalPTY(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("no script(1)")
	}
	for _, sh := range []string{"bash", "zsh", "dash"} {
		path, err := exec.LookPath(sh)
		if err != nil {
			continue
		}
		t.Run(sh, func(t *testing.T) {
			home := t.TempDir()
			cmd := exec.Command(script, "-qfec", ShellCommand(), "/dev/null")
			cmd.Env = []string{"SHELL=" + path, "HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin", "TERM=xterm-256color"}
			cmd.Dir = home
			in, _ := cmd.StdinPipe()
			out, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			var mu sync.Mutex
			var m parser
			var seen strings.Builder
			go func() {
				buf := make([]byte, 4096)
				for {
					n, err := out.Read(buf)
					mu.Lock()
					m.feed(buf[:n])
					seen.Write(buf[:n])
					mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
			waitFor := func(what string, ok func() bool) {
				t.Helper()
				deadline := time.Now().Add(30 * time.Second)
				for {
					mu.Lock()
					done := ok()
					mu.Unlock()
					if done {
						return
					}
					if time.Now().After(deadline) {
						mu.Lock()
						defer mu.Unlock()
						t.Fatalf("waiting for %s: %q", what, seen.String())
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			waitFor("the announcement", func() bool { return m.shell != "" })
			if sh == "dash" {
				if m.marks() {
					t.Fatal("dash announced marks")
				}
				in.Write([]byte("exit\n"))
				return
			}
			waitFor("a prompt", func() bool { return strings.Contains(seen.String(), "\x1b]133;B\x07") })
			in.Write([]byte("echo hi; false\n"))
			waitFor("the last command", func() bool { return m.last != nil })
			if want := (LastCommand{Command: "echo hi; false", Output: "hi", Exit: 1, Marks: true}); *m.last != want {
				t.Fatalf("last %+v, want %+v", *m.last, want)
			}
			in.Write([]byte("exit\n"))
			cmd.Wait()
			if sh == "zsh" {
				// The shims removed themselves.
				if left, _ := filepath.Glob(filepath.Join(os.TempDir(), "tmp.*", ".zlogin")); len(left) > 0 {
					for _, f := range left {
						if b, _ := os.ReadFile(f); strings.Contains(string(b), "LEMBAS_ZSHIM") {
							t.Errorf("zsh's shims left behind: %s", f)
						}
					}
				}
			}
		})
	}
}
