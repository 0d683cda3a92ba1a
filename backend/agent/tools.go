package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/llembas/lembas/backend/apperr"
	"github.com/llembas/lembas/backend/auth"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/sshx"
	"github.com/llembas/lembas/backend/store"
	"github.com/llembas/lembas/backend/tools"
)

// The agent's tools, as offered to models. Their names are claimed
// (tools.Fixed): no custom or MCP tool takes one.
const (
	NameShellRun   = "shell_run"
	NameFileRead   = "file_read"
	NameFileWrite  = "file_write"
	NameFileList   = "file_list"
	NameAskUser    = "ask_user"
	NamePlanSubmit = "plan_submit"
)

// Bounds of the file tools.
const (
	// maxFileRead is how much of a file file_read looks at; the output
	// cap bounds what it returns.
	maxFileRead = 8 << 20
	// maxFileWrite bounds file_write's content.
	maxFileWrite = 4 << 20
	// maxList bounds file_list's entries.
	maxList = 500
	// maxDirRead bounds the entries a directory listing reads (file_list,
	// Browse), to sort and show the first maxList or MaxBrowse of.
	maxDirRead = 10000
	// defaultReadLines is how many lines file_read returns unless asked.
	defaultReadLines = 2000
	// maxCommandOutput stops a command that prints more than this in all
	// (yes, a runaway loop): the output cap keeps a little of it, but the
	// rest would be read and counted at full speed until the time limit.
	maxCommandOutput = 64 << 20
	// maxQuestions bounds one ask_user call.
	maxQuestions = 10
)

// Sources returns the agent's tools as one tools.Source (gate
// tools.FamilyAgent).
func (s *Service) Sources() []tools.Source { return []tools.Source{&source{s: s}} }

type source struct{ s *Service }

var (
	_ tools.Source = (*source)(nil)
	_ tools.Fixed  = (*source)(nil)
)

func (src *source) Gate() tools.Family { return tools.FamilyAgent }

// Catalog is every agent tool as models are offered it, bound to no chat
// (a call of one fails).
func (src *source) Catalog() []tools.Tool { return src.s.defs(nil, store.ModePlan) }

// Tools offers the agent's tools in an agent chat whose profile is the
// caller's, to holders of agent.use, while agent chats are on. They are
// bound to the chat's host, directory and the mode read now, for this
// reply (plan_submit only in Plan mode).
func (src *source) Tools(ctx context.Context, caller auth.Caller, c store.Chat, _ func(string) bool) ([]tools.Tool, []tools.Guidance, error) {
	if c.Kind != store.ChatAgent || c.Agent.Profile == nil || !caller.Perms.Has(Permission) {
		return nil, nil, nil
	}
	st, err := src.s.Settings(ctx)
	if err != nil || !st.Enabled {
		return nil, nil, err
	}
	if _, err := src.s.db.SSHProfile(ctx, caller.User, *c.Agent.Profile); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil, nil
		}
		return nil, nil, err
	}
	b := &binding{s: src.s, user: caller.User, profile: *c.Agent.Profile, dir: c.Agent.Dir, mode: c.Agent.Mode,
		timeout: time.Duration(st.CommandTimeoutSec) * time.Second, outputCap: st.OutputCapKB << 10}
	return src.s.defs(b, c.Agent.Mode), nil, nil
}

// binding is what one reply's agent tools act on: the person, the
// profile, the project directory, the mode read for the reply, the
// limits.
type binding struct {
	s         *Service
	user      ids.UserID
	profile   ids.ProfileID
	dir       string
	mode      store.AgentMode
	timeout   time.Duration
	outputCap int
}

// defs are the agent's tools bound to b (nil: unbound); plan_submit only
// in Plan mode.
func (s *Service) defs(b *binding, mode store.AgentMode) []tools.Tool {
	run := func(name string, risk tools.Risk, fn func(*binding, context.Context, tools.Call) tools.Result) func(context.Context, tools.Call) tools.Result {
		return func(ctx context.Context, call tools.Call) tools.Result {
			if b == nil {
				return failed("This tool works only in an agent chat.")
			}
			// The backstop: the loop decided already, but a call that
			// reached the runner by another path meets the table here.
			if r, ok := allowed(b.mode, name, risk, call); !ok {
				return r
			}
			return fn(b, ctx, call)
		}
	}
	out := []tools.Tool{
		{
			Name: NameShellRun, Risk: tools.RiskExec,
			Description: "Run a shell command on the host, in a fresh non-interactive shell (nothing carries over from earlier " +
				"commands: no cd, no variables). Returns the exit status and the output (stdout and stderr together), cut at a size " +
				"limit; a command that runs too long is stopped.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"command":{"type":"string","description":"The command line, run by the login shell"},` +
				`"cwd":{"type":"string","description":"The directory to run it in, relative to the project directory (default: the project directory)"}},` +
				`"required":["command"],"additionalProperties":false}`),
			Activity: func(args json.RawMessage) string {
				var a struct{ Command string }
				_ = json.Unmarshal(args, &a)
				return "Running " + clipLine(a.Command, 80)
			},
			Run: run(NameShellRun, tools.RiskExec, (*binding).shellRun),
		},
		{
			Name: NameFileRead, Risk: tools.RiskRead,
			Description: "Read a text file on the host. Paths are relative to the project directory (absolute ones work too). " +
				"Returns the lines asked for (by default from the start), and says when there is more.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"path":{"type":"string","description":"The file's path"},` +
				`"offset":{"type":"integer","minimum":1,"description":"The first line to return (1 is the first line of the file)"},` +
				`"limit":{"type":"integer","minimum":1,"description":"How many lines to return (default 2000)"}},` +
				`"required":["path"],"additionalProperties":false}`),
			Activity: func(args json.RawMessage) string { return "Reading " + clipLine(argPath(args), 80) },
			Run:      run(NameFileRead, tools.RiskRead, (*binding).fileRead),
		},
		{
			Name: NameFileWrite, Risk: tools.RiskWrite,
			Description: "Write a text file on the host: creates it, or replaces all of its content. Paths are relative to the project " +
				"directory (absolute ones work too). Its directory must exist.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"path":{"type":"string","description":"The file's path"},` +
				`"content":{"type":"string","description":"The file's whole new content"}},` +
				`"required":["path","content"],"additionalProperties":false}`),
			Activity: func(args json.RawMessage) string { return "Writing " + clipLine(argPath(args), 80) },
			Run:      run(NameFileWrite, tools.RiskWrite, (*binding).fileWrite),
		},
		{
			Name: NameFileList, Risk: tools.RiskRead,
			Description: "List a directory on the host: its subdirectories (ending in /) and files with their sizes. Paths are " +
				"relative to the project directory (absolute ones work too); no path lists the project directory.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"path":{"type":"string","description":"The directory's path (default: the project directory)"}},` +
				`"additionalProperties":false}`),
			Activity: func(args json.RawMessage) string {
				if p := argPath(args); p != "" {
					return "Listing " + clipLine(p, 80)
				}
				return "Listing the project directory"
			},
			Run: run(NameFileList, tools.RiskRead, (*binding).fileList),
		},
		{
			Name: NameAskUser, Risk: tools.RiskInteract,
			Description: "Ask the person one or more questions and wait for their answers (all questions of a call are shown " +
				"together). Each question may offer options; the person may also answer in their own words.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"questions":{"type":"array","minItems":1,"maxItems":10,"items":{"type":"object","properties":{` +
				`"question":{"type":"string","description":"The question"},` +
				`"options":{"type":"array","items":{"type":"string"},"description":"Answers to choose from (optional)"}},` +
				`"required":["question"]}}},"required":["questions"],"additionalProperties":false}`),
			Activity:  func(json.RawMessage) string { return "Waiting for your answers" },
			Questions: Questions,
			Run:       run(NameAskUser, tools.RiskInteract, (*binding).askUser),
		},
	}
	if mode == store.ModePlan {
		out = append(out, tools.Tool{
			Name: NamePlanSubmit, Risk: tools.RiskInteract, EndsTurn: true,
			Description: "Submit your plan for the person to review: the steps you propose, what each changes and how to check it. " +
				"This ends your turn; the person decides whether to carry it out.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"plan":{"type":"string","description":"The plan, in Markdown"}},"required":["plan"],"additionalProperties":false}`),
			Activity: func(json.RawMessage) string { return "Submitting the plan" },
			Run:      run(NamePlanSubmit, tools.RiskInteract, (*binding).planSubmit),
		})
	}
	for i := range out {
		out[i].Family, out[i].Permission = tools.FamilyAgent, Permission
	}
	return out
}

func failed(format string, args ...any) tools.Result {
	return tools.Result{Text: fmt.Sprintf(format, args...), Failed: true}
}

func argPath(args json.RawMessage) string {
	var a struct{ Path string }
	_ = json.Unmarshal(args, &a)
	return a.Path
}

// clipLine is a model's argument in an activity line: one line, without
// terminal escapes or control characters.
func clipLine(s string, n int) string { return oneLine(cleanOutput([]byte(s)), n) }

// resolve turns a path a model gave into one on the host: relative to the
// project directory, absolute as written, "~/…" from the login directory
// (SFTP's and a command's starting directory).
func (b *binding) resolve(p string) string {
	switch {
	case p == "" || p == ".":
		return b.dir
	case p == "~":
		return "."
	case strings.HasPrefix(p, "~/"):
		return path.Clean(p[2:])
	case path.IsAbs(p):
		return path.Clean(p)
	}
	return path.Join(b.dir, p)
}

// connect dials the binding's profile, as it is now (a changed profile's
// new host key or credential applies from the next call).
func (b *binding) connect(ctx context.Context) (*sshx.Client, store.SSHProfile, tools.Result, bool) {
	p, err := b.s.profile(ctx, b.user, b.profile)
	if err != nil {
		return nil, p, failed("This chat's SSH connection was deleted; nothing can run on its host any more."), false
	}
	cl, err := b.s.connect(ctx, p)
	if err != nil {
		_, msg := apperr.Public(err)
		return nil, p, failed("Could not connect: %s", msg), false
	}
	return cl, p, tools.Result{}, true
}

func (b *binding) shellRun(ctx context.Context, call tools.Call) tools.Result {
	var a struct {
		Command string `json:"command"`
		Cwd     string `json:"cwd"`
	}
	if err := json.Unmarshal(call.Arguments, &a); err != nil || strings.TrimSpace(a.Command) == "" {
		return failed(`The arguments must be a JSON object with a non-empty "command" (and optionally "cwd").`)
	}
	if strings.ContainsRune(a.Command+a.Cwd, 0) {
		// SSH carries a command as a C string: sshd drops the connection.
		return failed("The command or cwd holds a NUL character, which SSH cannot carry; nothing ran.")
	}
	cl, p, r, ok := b.connect(ctx)
	if !ok {
		return r
	}
	defer cl.Close()
	dir := b.resolve(a.Cwd)
	res, err := cl.Run(ctx, a.Command, sshx.RunOptions{Dir: dir, Timeout: b.timeout, MaxOutput: b.outputCap, StopAfter: maxCommandOutput})
	b.s.index.touch(p, b.dir)
	if err != nil {
		if ctx.Err() != nil {
			return failed("The command was stopped.")
		}
		return failed("The command could not run: %s", plainNetError(err))
	}
	return tools.Result{Text: formatRun(res, dir, b.timeout, b.outputCap)}
}

// formatRun is a command's result as the model reads it.
func formatRun(res sshx.RunResult, dir string, timeout time.Duration, outputCap int) string {
	var b strings.Builder
	switch {
	case res.TimedOut:
		fmt.Fprintf(&b, "The command was stopped after %s (the time limit); it may have done part of its work.\n", timeout)
	case res.Flooded:
		fmt.Fprintf(&b, "The command was stopped after printing more than %d MB; it may have done part of its work. Send its output to a file, or filter it (grep, head, tail).\n", maxCommandOutput>>20)
	case res.Exit < 0:
		b.WriteString("The command was ended by a signal.\n")
	default:
		fmt.Fprintf(&b, "Exit status %d (in %s).\n", res.Exit, dir)
	}
	out := cleanOutput(res.Output)
	if out == "" {
		b.WriteString("There was no output.")
	} else {
		b.WriteString("Output:\n")
		b.WriteString(out)
	}
	if res.Truncated {
		fmt.Fprintf(&b, "\n[The output was cut at %d KB; %d more bytes were not kept. Narrow it down (grep, head, tail) to see more.]", outputCap>>10, res.Omitted)
	}
	return b.String()
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[@-Z\\-_]`)

// shownName is a file name as a listing shows it: as it is when it is
// plain text, else quoted with Go's escapes ("a\nb"). A name is the
// host's, and so anybody's who could create a file there: one holding a
// newline would otherwise forge lines of the listing (in the harness, of
// the system prompt itself), and terminal escapes would reach the pages.
func shownName(name string) string {
	if printable(name) {
		return name
	}
	return strconv.Quote(name)
}

// cleanOutput makes a command's output text a model can read: valid
// UTF-8, terminal escapes and other control characters removed, carriage
// returns folded.
func cleanOutput(b []byte) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	s = ansi.ReplaceAllString(s, "")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		if r < ' ' && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f {
			return -1
		}
		return r
	}, s)
}

// showControls makes a file's control characters visible: each C0
// character but tab, newline and carriage return as its symbol (ESC as
// ␛), DEL as ␡, the C1 ones (U+0080–U+009F, 8-bit terminal controls) as
// U+FFFD. A file is shown, not run in a terminal: its escapes are
// text, and the model sees that they are there.
func showControls(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return r
		case r < ' ':
			return 0x2400 + r
		case r == 0x7f:
			return 0x2421
		case r >= 0x80 && r <= 0x9f:
			return '\uFFFD'
		}
		return r
	}, s)
}

// session is one connection with its SFTP client, for one file call.
type session struct {
	cl      *sshx.Client
	fs      *sshx.SFTP
	prof    store.SSHProfile
	ctx     context.Context
	timeout time.Duration
	stop    func() bool
	cancel  context.CancelFunc
}

func (ss *session) close() {
	ss.stop()
	ss.cancel()
	ss.fs.Close()
	ss.cl.Close()
}

// failed is a file operation on p that failed with err, as the model
// reads it: the time limit or Stop when they ended it (closing the
// connection is what ends a hanging transfer, and its error says only
// that the connection closed).
func (ss *session) failed(format, p string, err error) tools.Result {
	switch {
	case errors.Is(context.Cause(ss.ctx), errFileTimeout):
		return failed("%s: the host did not finish within %s (the time limit).", p, ss.timeout)
	case ss.ctx.Err() != nil:
		return failed("%s: stopped.", p)
	}
	return failed(format, p, plainFileError(err))
}

var errFileTimeout = errors.New("file operation timed out")

// sftp connects and opens SFTP, for at most the command time limit: the
// limit or Stop (ctx) closes the connection, which ends a transfer that
// hangs (a read the host never answers).
func (b *binding) sftp(ctx context.Context) (*session, tools.Result, bool) {
	ctx, cancel := context.WithTimeoutCause(ctx, b.timeout, errFileTimeout)
	cl, p, r, ok := b.connect(ctx)
	if !ok {
		cancel()
		return nil, r, false
	}
	// Armed before SFTP starts: a host that accepts the subsystem and
	// never answers would hold the start itself.
	stop := context.AfterFunc(ctx, func() { cl.Close() })
	fs, err := cl.SFTP()
	if err != nil {
		stop()
		cl.Close()
		cancel()
		if context.Cause(ctx) == errFileTimeout {
			return nil, failed("The host did not start SFTP within %s (the time limit).", b.timeout), false
		}
		return nil, failed("The host does not offer SFTP, which the file tools need: %s", plainNetError(err)), false
	}
	return &session{cl: cl, fs: fs, prof: p, ctx: ctx, timeout: b.timeout, cancel: cancel, stop: stop}, tools.Result{}, true
}

func (b *binding) fileRead(ctx context.Context, call tools.Call) tools.Result {
	var a struct {
		Path   string `json:"path"`
		Offset int    `json:"offset"`
		Limit  int    `json:"limit"`
	}
	if err := json.Unmarshal(call.Arguments, &a); err != nil || a.Path == "" {
		return failed(`The arguments must be a JSON object with a non-empty "path" (and optionally "offset" and "limit", in lines).`)
	}
	ss, r, ok := b.sftp(ctx)
	if !ok {
		return r
	}
	defer ss.close()
	fs := ss.fs
	p := b.resolve(a.Path)
	st, err := fs.Stat(p)
	if err != nil {
		return ss.failed("%s cannot be read: %s.", p, err)
	}
	if st.IsDir() {
		return failed("%s is a directory; list it with file_list.", p)
	}
	// A pipe would hold the read (and the reply) until something wrote
	// to it, a device such as /dev/zero or /dev/urandom never ends: only
	// files are read.
	if !st.Mode().IsRegular() {
		return failed("%s is not a regular file (a device, a pipe or a socket); file_read reads only files.", p)
	}
	f, err := fs.Open(p)
	if err != nil {
		return ss.failed("%s cannot be read: %s.", p, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileRead))
	if err != nil {
		return ss.failed("%s cannot be read: %s.", p, err)
	}
	return readLines(p, data, st.Size(), a.Offset, a.Limit, b.outputCap)
}

// readLines is file_read's result: lines offset… of data (the first
// maxFileRead bytes of a file of size bytes), at most limit and cap bytes.
func readLines(p string, data []byte, size int64, offset, limit, cap int) tools.Result {
	if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
		return failed("%s is a binary file (%d bytes); it cannot be read as text.", p, size)
	}
	if len(data) == 0 {
		return tools.Result{Text: fmt.Sprintf("%s is empty.", p)}
	}
	text := showControls(strings.ToValidUTF8(string(data), "\uFFFD"))
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if offset < 1 {
		offset = 1
	}
	if limit < 1 {
		limit = defaultReadLines
	}
	total := len(lines)
	if offset > total {
		return failed("%s has %d lines; there is no line %d.", p, total, offset)
	}
	var out strings.Builder
	last := offset - 1
	for i := offset - 1; i < total && i < offset-1+limit; i++ {
		if out.Len()+len(lines[i]) > cap && i > offset-1 {
			break
		}
		l := lines[i]
		if len(l) > cap {
			l = strings.ToValidUTF8(l[:cap], "") + "…\n"
		}
		out.WriteString(l)
		last = i + 1
	}
	body := out.String()
	whole := offset == 1 && last == total && int64(len(data)) == size
	if whole {
		return tools.Result{Text: body}
	}
	note := fmt.Sprintf("\n[Lines %d–%d of %d", offset, last, total)
	if int64(len(data)) < size {
		note += fmt.Sprintf(" in the first %d MB of a %d-byte file", maxFileRead>>20, size)
	}
	note += "."
	if last < total {
		note += fmt.Sprintf(" Read on with offset %d.", last+1)
	}
	note += "]"
	if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	return tools.Result{Text: body + note}
}

func (b *binding) fileWrite(ctx context.Context, call tools.Call) tools.Result {
	var a struct {
		Path    string  `json:"path"`
		Content *string `json:"content"`
	}
	if err := json.Unmarshal(call.Arguments, &a); err != nil || a.Path == "" || a.Content == nil {
		return failed(`The arguments must be a JSON object with a non-empty "path" and the file's "content".`)
	}
	if len(*a.Content) > maxFileWrite {
		return failed("The content is too large to write in one call (at most %d MB).", maxFileWrite>>20)
	}
	ss, r, ok := b.sftp(ctx)
	if !ok {
		return r
	}
	defer ss.close()
	fs := ss.fs
	p := b.resolve(a.Path)
	dir := path.Dir(p)
	if st, err := fs.Stat(dir); err != nil {
		if errors.Is(err, iofs.ErrNotExist) {
			return failed("The directory %s does not exist; create it first (shell_run: mkdir -p %s).", dir, sshx.Quote(dir))
		}
		return ss.failed("%s cannot be written: %s.", p, err)
	} else if !st.IsDir() {
		return failed("%s is not a directory.", dir)
	}
	verb := "Created"
	if st, err := fs.Stat(p); err == nil {
		if st.IsDir() {
			return failed("%s is a directory.", p)
		}
		verb = "Replaced"
	}
	f, err := fs.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return ss.failed("%s cannot be written: %s.", p, err)
	}
	_, err = f.Write([]byte(*a.Content))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return ss.failed("%s could not be written completely: %s.", p, err)
	}
	b.s.index.touch(ss.prof, b.dir)
	return tools.Result{Text: fmt.Sprintf("%s %s (%d bytes, %d lines).", verb, p, len(*a.Content), strings.Count(*a.Content, "\n")+boolInt(*a.Content != "" && !strings.HasSuffix(*a.Content, "\n")))}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (b *binding) fileList(ctx context.Context, call tools.Call) tools.Result {
	var a struct {
		Path string `json:"path"`
	}
	if len(bytes.TrimSpace(call.Arguments)) > 0 {
		if err := json.Unmarshal(call.Arguments, &a); err != nil {
			return failed(`The arguments must be a JSON object, with optionally a "path".`)
		}
	}
	ss, r, ok := b.sftp(ctx)
	if !ok {
		return r
	}
	defer ss.close()
	fs := ss.fs
	p := b.resolve(a.Path)
	infos, more, err := fs.ReadDirMax(ss.ctx, p, maxDirRead)
	if err != nil {
		return ss.failed("%s cannot be listed: %s.", p, err)
	}
	return tools.Result{Text: formatList(p, infos, more)}
}

// formatList is a directory as file_list returns it, directories first,
// at most maxList entries; more: it holds more entries than infos, which
// are the first the host sent.
func formatList(p string, infos []os.FileInfo, more bool) string {
	slices.SortFunc(infos, func(a, b os.FileInfo) int {
		if a.IsDir() != b.IsDir() {
			if a.IsDir() {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name(), b.Name())
	})
	if len(infos) == 0 && !more {
		return p + " is empty."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s:\n", p)
	for i, fi := range infos {
		if i == maxList {
			if more {
				fmt.Fprintf(&b, "… and more than %d more entries\n", len(infos)-maxList)
			} else {
				fmt.Fprintf(&b, "… and %d more entries\n", len(infos)-maxList)
			}
			break
		}
		name := shownName(fi.Name())
		switch {
		case fi.IsDir():
			b.WriteString(name + "/\n")
		case fi.Mode()&os.ModeSymlink != 0:
			b.WriteString(name + " (link)\n")
		default:
			fmt.Fprintf(&b, "%s (%s)\n", name, sizeWord(fi.Size()))
		}
	}
	if more {
		fmt.Fprintf(&b, "[The directory holds more than %d entries; these are the first %d the host sent, sorted. Narrow it down with shell_run (ls | grep, find -name).]\n", maxDirRead, len(infos))
	}
	return strings.TrimRight(b.String(), "\n")
}

func sizeWord(n int64) string {
	switch {
	case n < 1<<10:
		return strconv.FormatInt(n, 10) + " B"
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}

// Questions reads ask_user's questions. A small model sends something
// close to the schema rather than the schema, and a wrong guess costs a
// round trip to show a card that says nothing, so this also reads a
// single "question", bare strings, "text" or "prompt" for "question", and
// "choices" for "options".
func Questions(args json.RawMessage) ([]tools.Question, error) {
	var a struct {
		Questions json.RawMessage `json:"questions"`
		Question  json.RawMessage `json:"question"`
		Options   []string        `json:"options"`
		Choices   []string        `json:"choices"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, errors.New(`the arguments must be a JSON object with "questions": a list of {"question", "options"}`)
	}
	var raw []json.RawMessage
	switch {
	case len(a.Questions) > 0 && a.Questions[0] == '[':
		if err := json.Unmarshal(a.Questions, &raw); err != nil {
			return nil, errors.New(`"questions" must be a list of {"question", "options"}`)
		}
	case len(a.Questions) > 0 && string(a.Questions) != "null":
		raw = []json.RawMessage{a.Questions}
	case len(a.Question) > 0:
		// The singular form: {"question": "…", "options": […]}.
		var q string
		if json.Unmarshal(a.Question, &q) == nil {
			b, _ := json.Marshal(map[string]any{"question": q, "options": append(a.Options, a.Choices...)})
			raw = []json.RawMessage{b}
		} else {
			raw = []json.RawMessage{a.Question}
		}
	}
	var out []tools.Question
	for _, r := range raw {
		q, ok := question(r)
		if !ok {
			continue
		}
		if len(out) == maxQuestions {
			return nil, fmt.Errorf("ask at most %d questions at once", maxQuestions)
		}
		q.Key = "q" + strconv.Itoa(len(out)+1)
		out = append(out, q)
	}
	if len(out) == 0 {
		return nil, errors.New(`there is no question to ask: send "questions": [{"question": "…", "options": ["…"]}]`)
	}
	return out, nil
}

// question reads one question: a string, or an object.
func question(r json.RawMessage) (tools.Question, bool) {
	var s string
	if json.Unmarshal(r, &s) == nil {
		s = strings.TrimSpace(cleanOutput([]byte(s)))
		return tools.Question{Text: clipText(s, 1000)}, s != ""
	}
	var o struct {
		Question string   `json:"question"`
		Text     string   `json:"text"`
		Prompt   string   `json:"prompt"`
		Options  []any    `json:"options"`
		Choices  []any    `json:"choices"`
		Answers  []string `json:"answers"`
	}
	if json.Unmarshal(r, &o) != nil {
		return tools.Question{}, false
	}
	text := strings.TrimSpace(cleanOutput([]byte(cmpOr(o.Question, o.Text, o.Prompt))))
	if text == "" {
		return tools.Question{}, false
	}
	q := tools.Question{Text: clipText(text, 1000)}
	for _, v := range append(o.Options, o.Choices...) {
		var opt string
		switch v := v.(type) {
		case string:
			opt = v
		case float64, bool:
			opt = fmt.Sprint(v)
		case map[string]any:
			for _, k := range []string{"label", "text", "value", "option"} {
				if s, ok := v[k].(string); ok {
					opt = s
					break
				}
			}
		}
		if opt = oneLine(cleanOutput([]byte(opt)), 200); opt != "" && len(q.Options) < 10 && !slices.Contains(q.Options, opt) {
			q.Options = append(q.Options, opt)
		}
	}
	return q, true
}

func cmpOr(vals ...string) string {
	for _, v := range vals {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}

func clipText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

func (b *binding) askUser(_ context.Context, call tools.Call) tools.Result {
	qs, err := Questions(call.Arguments)
	if err != nil {
		return failed("%s", err.Error())
	}
	var out strings.Builder
	answered := 0
	for _, q := range qs {
		a, ok := call.Answers[q.Key]
		a = strings.TrimSpace(a)
		if ok && a != "" {
			answered++
		} else {
			a = "(no answer)"
		}
		fmt.Fprintf(&out, "Question: %s\nAnswer: %s\n\n", oneLine(q.Text, 1000), a)
	}
	if answered == 0 {
		return failed("The person gave no answer.")
	}
	return tools.Result{Text: strings.TrimSpace(out.String())}
}

func (b *binding) planSubmit(_ context.Context, call tools.Call) tools.Result {
	var a struct {
		Plan string `json:"plan"`
	}
	if err := json.Unmarshal(call.Arguments, &a); err != nil || strings.TrimSpace(a.Plan) == "" {
		return failed(`The arguments must be a JSON object with the "plan" as text.`)
	}
	return tools.Result{Text: "The plan was submitted. Say in a few sentences what you propose and why; the person decides whether to carry it out."}
}
