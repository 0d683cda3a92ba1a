package desktop

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llembas/lembas/backend/config"
	"github.com/llembas/lembas/backend/core"
	"github.com/llembas/lembas/backend/fakellm"
	"github.com/llembas/lembas/frontend"
	"github.com/llembas/lembas/tests/harness"
)

// The figures of issue 5, printed by build/bench.sh: start-up to a window
// showing the last chat, and memory (PSS from /proc/PID/smaps_rollup) of
// the app and its WebKit processes after start and after 200 streamed
// replies; the same for the headless server.

// benchReplies is 200, or LEMBAS_BENCH_REPLIES when set (to see whether
// growth levels off).
var benchReplies = func() int {
	if n, err := strconv.Atoi(os.Getenv("LEMBAS_BENCH_REPLIES")); err == nil && n > 0 {
		return n
	}
	return 200
}()

// BenchmarkDesktopStart: from exec to the window showing the last chat's
// messages (the frontend calls Desktop.Shown once they are drawn; the app
// logs it). The data directory has a connection and a chat to reopen.
func BenchmarkDesktopStart(b *testing.B) {
	harness.Require(b, "Xvfb")
	bin := harness.Build(b, tags)
	display := harness.Xvfb(b)
	dataDir := b.TempDir()
	llm := fakellm.New(b)
	seedConnection(b, dataDir, llm.URL())
	chatID := seedChat(b, dataDir)
	env := harness.Env(dataDir, "DISPLAY="+display, "XDG_RUNTIME_DIR=", "DBUS_SESSION_BUS_ADDRESS=unix:path="+filepath.Join(b.TempDir(), "none"),
		"LEMBAS_LOG_LEVEL=info")
	want := fmt.Sprintf(`window shown" route=#/chat/%d ms=(\d+)`, chatID)
	var walls, inApp []float64
	for b.Loop() {
		start := time.Now()
		app := harness.Start(b, bin, env)
		m := waitFine(b, app, want, 60*time.Second)
		walls = append(walls, float64(time.Since(start).Microseconds())/1000)
		ms, _ := strconv.ParseFloat(m[1], 64)
		inApp = append(inApp, ms)
		b.StopTimer()
		app.Cmd.Process.Signal(syscall.SIGTERM)
		app.Wait(b, 30*time.Second)
		b.StartTimer()
	}
	b.ReportMetric(medianOf(walls), "ms/start")
	b.ReportMetric(medianOf(inApp), "inapp_ms/start")
}

// BenchmarkDesktopMemory streams 200 replies through the window's own
// composer (LEMBAS_BENCH_REPLIES, js/dev/benchdrive.js) and measures PSS at the
// frontend's marks.
func BenchmarkDesktopMemory(b *testing.B) {
	harness.Require(b, "Xvfb")
	bin := harness.Build(b, tags)
	display := harness.Xvfb(b)
	dataDir := b.TempDir()
	llm := fakellm.New(b)
	llm.SetDefault(benchStream())
	seedConnection(b, dataDir, llm.URL())
	env := harness.Env(dataDir, "DISPLAY="+display, "XDG_RUNTIME_DIR=", "DBUS_SESSION_BUS_ADDRESS=unix:path="+filepath.Join(b.TempDir(), "none"),
		"LEMBAS_LOG_LEVEL=info", "LEMBAS_BENCH_REPLIES="+strconv.Itoa(benchReplies))
	for b.Loop() {
		app := harness.Start(b, bin, env)
		waitFine(b, app, `bench mark" stage=start`, 120*time.Second)
		before := pssTree(b, app.Cmd.Process.Pid)
		waitFine(b, app, `bench mark" stage=end`, 15*time.Minute)
		after := pssTree(b, app.Cmd.Process.Pid)
		b.StopTimer()
		app.Cmd.Process.Signal(syscall.SIGTERM)
		app.Wait(b, 30*time.Second)
		b.StartTimer()
		for _, k := range []string{"app", "web", "network", "total"} {
			b.ReportMetric(before[k], k+"_start_mb")
			b.ReportMetric(after[k], k+"_end_mb")
		}
		b.ReportMetric(100*(after["total"]-before["total"])/before["total"], "growth_pct")
		fmt.Fprintf(os.Stderr, "desktop PSS MB after start %v, after %d replies %v\n", before, benchReplies, after)
	}
}

// BenchmarkServeMemory: the headless server (CGO off), PSS after start and
// after 200 replies streamed over the HTTP API.
func BenchmarkServeMemory(b *testing.B) {
	bin := harness.Build(b, "", "CGO_ENABLED=0")
	llm := fakellm.New(b)
	llm.SetDefault(benchStream())
	for b.Loop() {
		dataDir := b.TempDir()
		p, base := harness.Serve(b, bin, dataDir, "LEMBAS_LOG_LEVEL=info")
		c := harness.AdminClient(b, base)
		var conn struct{ ModelCount int }
		harness.APIAs(b, c, base, "Connections.Create", &conn, map[string]any{"name": "Fake", "baseUrl": llm.URL()})
		var models []struct{ ID int64 }
		harness.APIAs(b, c, base, "Models.Picker", &models)
		if len(models) == 0 {
			b.Fatal("no models")
		}
		time.Sleep(time.Second)
		before := pssTree(b, p.Cmd.Process.Pid)
		var chatID int64
		for i := 0; i < benchReplies; i++ {
			if i%10 == 0 {
				chatID = 0
			}
			chatID = sendAndWait(b, c, base, chatID, models[0].ID, fmt.Sprintf("Bench message %d", i+1))
		}
		time.Sleep(time.Second)
		after := pssTree(b, p.Cmd.Process.Pid)
		b.ReportMetric(before["app"], "app_start_mb")
		b.ReportMetric(after["app"], "app_end_mb")
		b.ReportMetric(100*(after["app"]-before["app"])/before["app"], "growth_pct")
		fmt.Fprintf(os.Stderr, "serve PSS MB after start %.1f, after %d replies %.1f\n", before["app"], benchReplies, after["app"])
		p.Kill()
	}
}

// benchStream is a reply of 40 short chunks, 5 ms apart, with some
// Markdown for the renderer.
func benchStream() fakellm.Reply {
	var parts []string
	parts = append(parts, "## A short answer\n\n")
	for i := 0; i < 38; i++ {
		parts = append(parts, fmt.Sprintf("word%d ", i))
	}
	parts = append(parts, "\n\n```go\nfmt.Println(\"done\")\n```\n")
	return fakellm.Stream(parts...).Every(5 * time.Millisecond)
}

func sendAndWait(b *testing.B, c *http.Client, base string, chatID, modelID int64, text string) int64 {
	b.Helper()
	in := map[string]any{"content": text, "modelId": modelID}
	if chatID != 0 {
		in["chatId"] = chatID
	}
	var r struct {
		Chat      struct{ ID int64 }
		Assistant struct{ ID int64 }
	}
	harness.APIAs(b, c, base, "Chats.Send", &r, in)
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var page struct {
			Messages []struct {
				ID     int64
				Status string
			}
		}
		harness.APIAs(b, c, base, "Chats.Messages", &page, r.Chat.ID)
		for _, m := range page.Messages {
			if m.ID == r.Assistant.ID && m.Status != "streaming" {
				return r.Chat.ID
			}
		}
	}
	b.Fatalf("reply %d did not finish", r.Assistant.ID)
	return 0
}

// seedChat creates a chat with one exchange through the dispatcher, as the
// window would, and makes it the chat to reopen.
func seedChat(b *testing.B, dataDir string) int64 {
	b.Helper()
	cfg, _ := config.Load(func(string) (string, bool) { return "", false })
	cfg.DataDir, cfg.NoKeychain = dataDir, true
	harness.Must(b, cfg.Validate(), "config")
	c, err := core.Open(context.Background(), cfg, core.Options{Mode: core.Desktop, Files: frontend.FS()})
	harness.Must(b, err, "open instance")
	defer c.Close()
	call := func(method string, out any, args ...any) {
		raw, _ := json.Marshal(args)
		res := c.Dispatcher.Call(context.Background(), c.OwnerCaller(), method, raw)
		if res.Error != nil {
			b.Fatalf("%s: %s", method, res.Error.Message)
		}
		if out != nil {
			harness.Must(b, json.Unmarshal(res.Result, out), method)
		}
	}
	var models []struct{ ID int64 }
	call("Models.Picker", &models)
	var r struct {
		Chat      struct{ ID int64 }
		Assistant struct{ ID int64 }
	}
	call("Chats.Send", &r, map[string]any{"content": "What is lembas?", "modelId": models[0].ID})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var page struct{ Messages []struct{ Status string } }
		call("Chats.Messages", &page, r.Chat.ID)
		if n := len(page.Messages); n == 2 && page.Messages[1].Status != "streaming" {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the seeded reply did not finish")
		}
	}
	call("Prefs.Set", nil, map[string]any{"lastChat": r.Chat.ID})
	return r.Chat.ID
}

// waitFine is WaitOutput polling every 5 ms, for timings.
func waitFine(b *testing.B, p *harness.Proc, re string, timeout time.Duration) []string {
	b.Helper()
	rx := regexp.MustCompile(re)
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if m := rx.FindStringSubmatch(p.Stderr()); m != nil {
			return m
		}
	}
	b.Fatalf("no output matching %q within %s\n%s", re, timeout, p.Stderr())
	return nil
}

// pssTree returns PSS in MB of the process pid ("app"), its WebKit web and
// network processes (descendants), and their total.
func pssTree(b *testing.B, pid int) map[string]float64 {
	b.Helper()
	out := map[string]float64{"app": pss(b, pid)}
	for _, child := range descendants(pid) {
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", child))
		name := filepath.Base(strings.SplitN(string(cmd), "\x00", 2)[0])
		switch {
		case strings.Contains(name, "WebKitWebProcess"):
			out["web"] += pss(b, child)
		case strings.Contains(name, "WebKitNetworkProcess"):
			out["network"] += pss(b, child)
		default:
			out["other"] += pss(b, child)
		}
	}
	for _, k := range []string{"app", "web", "network", "other"} {
		out["total"] += out[k]
	}
	return out
}

func pss(b *testing.B, pid int) float64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		b.Logf("smaps_rollup of %d: %v", pid, err)
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "Pss:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// descendants lists every process below pid, from /proc/*/stat.
func descendants(pid int) []int {
	parent := map[int]int{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		n, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// The command is in parentheses and may hold spaces; ppid follows.
		s := string(st)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 {
			pp, _ := strconv.Atoi(f[1])
			parent[n] = pp
		}
	}
	var out []int
	var walk func(int)
	walk = func(p int) {
		for c, pp := range parent {
			if pp == p {
				out = append(out, c)
				walk(c)
			}
		}
	}
	walk(pid)
	return out
}

func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}
