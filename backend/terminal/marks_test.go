package terminal

import (
	"os/exec"
	"strings"
	"testing"
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
