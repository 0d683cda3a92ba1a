package terminal

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Shell integration: the command a shell is started with sets up OSC 133
// marks around the prompt, the command and its result for bash and zsh,
// so that "the last command and its output" has a meaning. It is written
// by the PTY command string itself, with printf: sshd runs that string
// through `$SHELL -c`, so it needs no probe, no second channel and no
// environment variable (sshd drops those it does not AcceptEnv), and it
// never writes to the PTY's input (nothing to echo, nothing in history).
//
// The string is `exec /bin/sh -c '<script>'`, which every login shell
// parses alike (fish and csh included), and the script uses no single
// quote, no `!` and no backslash but before an octal digit. The script
// announces which shell it set up (OSC 133;L;bash|zsh|other), then:
//   - bash: an rcfile, passed through a pipe on fd 3, that reads the
//     user's startup files as a login shell would, then adds the marks to
//     PROMPT_COMMAND and PS1 and takes the exit status in the DEBUG trap
//     (DEBUG fires before every simple command, those of PROMPT_COMMAND
//     included, so $? read in PROMPT_COMMAND is whatever ran a moment ago);
//   - zsh: a ZDOTDIR of shims in a temporary directory, the user's own
//     ZDOTDIR passed on the exec line (by the time .zshenv runs, ZDOTDIR is
//     already ours: read from there, the shims would source themselves);
//   - any other shell: the login shell, unchanged, and no marks.

// ShellCommand is the PTY command of a terminal's shell.
func ShellCommand() string { return shellCommand }

var shellCommand = buildShellCommand()

// The marks, as bash's and zsh's hooks print them. C carries the command
// line (control characters made spaces) after "cmdline=", D the status.
const bashRC = `exec 3<&-
if [ -r /etc/profile ]; then . /etc/profile; fi
if [ -r ~/.bash_profile ]; then . ~/.bash_profile
elif [ -r ~/.bash_login ]; then . ~/.bash_login
elif [ -r ~/.profile ]; then . ~/.profile
elif [ -r ~/.bashrc ]; then . ~/.bashrc
fi
__lembas_run=0 __lembas_in=0 __lembas_st=0
__lembas_dbg() {
  case "$BASH_COMMAND" in
  __lembas_prompt) if [ "$__lembas_run" = 1 ]; then __lembas_st=$1; fi; __lembas_in=1; return 0;;
  __lembas_ps1) return 0;;
  esac
  if [ "$__lembas_in" = 1 ] || [ "$__lembas_run" = 1 ]; then return 0; fi
  __lembas_run=1
  local c
  c=$(HISTTIMEFORMAT= builtin history 1 2>/dev/null)
  c=${c#"${c%%[![:space:]]*}"}
  c=${c#*[[:space:]]}
  c=${c#"${c%%[![:space:]]*}"}
  if [ -z "$c" ]; then c=$BASH_COMMAND; fi
  builtin printf "\033]133;C;cmdline=%s\007" "${c//[[:cntrl:]]/ }"
}
__lembas_prompt() {
  if [ "$__lembas_run" = 1 ]; then builtin printf "\033]133;D;%s\007" "$__lembas_st"; __lembas_run=0; fi
  builtin printf "\033]133;A\007"
}
__lembas_ps1() {
  __lembas_in=0
  case "$PS1" in *"133;B"*) ;; *) PS1="$PS1\[\033]133;B\007\]";; esac
}
PROMPT_COMMAND="__lembas_prompt"$'\n'"${PROMPT_COMMAND}"$'\n'"__lembas_ps1"
trap '__lembas_dbg "$?"' DEBUG
`

// zsh's shims: each startup file reads the user's own from their ZDOTDIR
// (LEMBAS_ZDOTDIR) and hands ZDOTDIR back to the shims for the next; the
// last one a login shell reads (.zlogin) removes them and leaves ZDOTDIR
// the user's.
func zshShim(file, after string) string {
	return `ZDOTDIR=$LEMBAS_ZDOTDIR
if [ -r "$ZDOTDIR/` + file + `" ]; then . "$ZDOTDIR/` + file + `"; fi
LEMBAS_ZDOTDIR=$ZDOTDIR
` + after
}

const zshBack = `ZDOTDIR=$LEMBAS_ZSHIM
`

const zshHooks = `__lembas_run=0
__lembas_preexec() { __lembas_run=1; builtin printf "\033]133;C;cmdline=%s\007" "${1//[[:cntrl:]]/ }"; }
__lembas_precmd() {
  local st=$?
  if [[ $__lembas_run = 1 ]]; then builtin printf "\033]133;D;%s\007" $st; __lembas_run=0; fi
  builtin printf "\033]133;A\007"
  case "$PS1" in *"133;B"*) ;; *) PS1="$PS1%{"$'\e'"]133;B"$'\a'"%}";; esac
}
precmd_functions=(__lembas_precmd $precmd_functions)
preexec_functions+=(__lembas_preexec)
` + zshBack

const zshLast = `rm -rf -- "$LEMBAS_ZSHIM"
unset LEMBAS_ZSHIM LEMBAS_ZDOTDIR
`

// octal writes s as a printf format that prints it: every byte but
// letters, digits and spaces as an octal escape, so the format holds no
// quote, no %, no $ and no backslash but before a digit.
func octal(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b.WriteByte(c)
			continue
		}
		b.WriteString(`\`)
		b.WriteString(strconv.FormatInt(int64(c)+0o1000, 8)[1:]) // three digits
	}
	return b.String()
}

func buildShellCommand() string {
	announce := func(shell string) string { return `printf "\033]133;L;` + shell + `\007"` }
	other := announce("other") + `; exec "$SHELL" -l 4<&-`
	shim := func(name, text string) string { return ` && printf "` + octal(text) + `" >"$d/` + name + `"` }
	script := `exec 4<&0; case "${SHELL##*/}" in ` +
		`bash) ` + announce("bash") + `; printf "` + octal(bashRC) + `" | { exec "$SHELL" --rcfile /dev/fd/3 -i 3<&0 0<&4 4<&-; };; ` +
		`zsh) d=$(mktemp -d 2>/dev/null)` +
		shim(".zshenv", zshShim(".zshenv", zshBack)) +
		shim(".zprofile", zshShim(".zprofile", zshBack)) +
		shim(".zshrc", zshShim(".zshrc", zshHooks)) +
		shim(".zlogin", zshShim(".zlogin", zshLast)) +
		` && ` + announce("zsh") + ` && LEMBAS_ZDOTDIR="${ZDOTDIR:-$HOME}" LEMBAS_ZSHIM="$d" ZDOTDIR="$d" exec "$SHELL" -l 4<&-; ` +
		other + `;; ` +
		`*) ` + other + `;; esac`
	return `exec /bin/sh -c '` + script + `'`
}

// LastCommand is what the marks say of the last command that finished.
type LastCommand struct {
	Command string `json:"command"`
	Output  string `json:"output"`
	Exit    int    `json:"exit"`
	// Marks: the shell sets marks (bash or zsh); without them there is no
	// last command to give.
	Marks bool `json:"marks"`
}

// Caps of what the parser keeps: an OSC longer than maxOSC is not a mark
// of ours; a command's output keeps its last maxOutput bytes.
const (
	maxOSC    = 8 << 10
	maxOutput = 64 << 10
)

// parser follows the byte stream for OSC 133 marks. It only reads: what
// is forwarded to viewers is the stream as it came.
type parser struct {
	state int    // 0 text, 1 after ESC, 2 in an OSC, 3 in an OSC after ESC
	osc   []byte // the OSC's payload so far (capped at maxOSC)
	long  bool   // the OSC passed maxOSC: not ours
	escAt int    // where in output the OSC's ESC is

	shell   string // announced: "bash", "zsh", "other"; "" not yet
	running bool   // between C and D
	command string
	output  []byte // since C, escapes and all
	cut     bool   // output lost its beginning
	last    *LastCommand
}

// feed reads p; it reports whether the announcement arrived in it.
func (m *parser) feed(p []byte) (announced bool) {
	for i := 0; i < len(p); {
		if m.state == 0 {
			j := bytes.IndexByte(p[i:], 0x1b)
			if j < 0 {
				m.keep(p[i:])
				return announced
			}
			m.keep(p[i : i+j])
			m.escAt = len(m.output)
			m.keep(p[i+j : i+j+1])
			m.state = 1
			i += j + 1
			continue
		}
		c := p[i]
		m.keep(p[i : i+1])
		i++
		switch m.state {
		case 1:
			if c == ']' {
				m.state, m.osc, m.long = 2, m.osc[:0], false
			} else if c == 0x1b {
				m.escAt = len(m.output) - 1
			} else {
				m.state = 0
			}
		case 2, 3:
			if c == 0x07 || m.state == 3 && c == '\\' {
				m.state = 0
				if !m.long && m.mark() {
					announced = true
				}
				continue
			}
			if c == 0x1b {
				m.state = 3
				continue
			}
			if m.state == 3 { // ESC then not \: the OSC ended unterminated
				m.state = 0
				continue
			}
			if len(m.osc) < maxOSC {
				m.osc = append(m.osc, c)
			} else {
				m.long = true
			}
		}
	}
	return announced
}

// keep adds what a running command printed, keeping the last maxOutput
// bytes (trimmed in steps, not on every write).
func (m *parser) keep(p []byte) {
	if !m.running || len(p) == 0 {
		return
	}
	m.output = append(m.output, p...)
	if len(m.output) > 2*maxOutput {
		shift := len(m.output) - maxOutput
		m.output = m.output[:copy(m.output, m.output[shift:])]
		m.escAt = max(m.escAt-shift, 0)
		m.cut = true
	}
}

// mark acts on a finished OSC; it reports an announcement.
func (m *parser) mark() bool {
	rest, ok := bytes.CutPrefix(m.osc, []byte("133;"))
	if !ok {
		return false
	}
	if m.running && m.escAt <= len(m.output) {
		m.output = m.output[:m.escAt] // the mark is not output
	}
	kind, arg, _ := bytes.Cut(rest, []byte(";"))
	switch string(kind) {
	case "L":
		if m.shell == "" {
			m.shell = string(arg)
			return true
		}
	case "C":
		m.running, m.output, m.cut = true, m.output[:0], false
		m.command = ""
		if cmd, ok := bytes.CutPrefix(arg, []byte("cmdline=")); ok {
			m.command = strings.ToValidUTF8(string(cmd), "\uFFFD")
		}
	case "D":
		if !m.running {
			return false
		}
		exit, err := strconv.Atoi(string(arg))
		if err != nil {
			exit = -1
		}
		m.last = &LastCommand{Command: strings.TrimSpace(m.command), Output: cleanOutput(m.output, m.cut), Exit: exit, Marks: true}
		m.running, m.output = false, nil
	}
	return false
}

// marks reports whether the shell sets marks.
func (m *parser) marks() bool { return m.shell == "bash" || m.shell == "zsh" }

// cleanOutput makes a command's output text as a terminal would show it:
// escape sequences removed, a carriage return going back to the line's
// start (what follows overwrites: a progress bar's last state, zsh's
// PROMPT_SP), a backspace one place back, trailing blanks dropped.
func cleanOutput(p []byte, cut bool) string {
	var out strings.Builder
	var line []rune
	col := 0
	flush := func() {
		out.WriteString(strings.TrimRight(string(line), " \t"))
		line, col = line[:0], 0
	}
	text := []byte(strings.ToValidUTF8(string(p), "\uFFFD"))
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == 0x1b && i+1 < len(text) && text[i+1] == '[': // CSI: to its final byte
			i += 2
			for i < len(text) && (text[i] < 0x40 || text[i] > 0x7e) {
				i++
			}
			i++
		case c == 0x1b && i+1 < len(text) && text[i+1] == ']': // OSC: to BEL or ST
			i += 2
			for i < len(text) && text[i] != 0x07 && !(text[i] == 0x1b && i+1 < len(text) && text[i+1] == '\\') {
				i++
			}
			if i < len(text) && text[i] == 0x1b {
				i++
			}
			i++
		case c == 0x1b:
			i += 2 // a two-byte escape
		case c == '\r':
			col = 0
			i++
		case c == '\b':
			col = max(col-1, 0)
			i++
		case c == '\n':
			flush()
			out.WriteByte('\n')
			i++
		case c < 0x20 && c != '\t':
			i++ // other controls (BEL, SI, SO) show nothing
		default:
			r, n := utf8.DecodeRune(text[i:])
			i += n
			if col < len(line) {
				line[col] = r
			} else {
				line = append(line, r)
			}
			col++
		}
	}
	flush()
	s := strings.TrimRight(out.String(), " \n\t")
	if cut {
		s = "…\n" + s
	}
	return s
}
