// Command loadtool measures how late streamed replies reach their readers
// when many replies stream at once.
//
//	go run ./build/loadtool -bin PATH -replies 50 -rate 100 -duration 10s -runs 3
//
// One run: an in-process fake OpenAI-compatible endpoint on loopback streams
// every reply at -rate tokens per second, each token carrying the instant it
// was sent (" t<unix nanoseconds> "); the real server binary (PATH --serve on
// 127.0.0.1, fresh data directory) is given a connection to it; -followers
// event streams (/api/events, as browser tabs hold them) are opened; then
// -replies chats are started at once with Chats.Send. Each follower measures
// the frames of the chats whose id is its own modulo -followers (every
// follower receives every frame: all replies belong to the one user). For
// every `gen` frame still streaming that arrives within -duration of the
// sends, lag = arrival − the newest timestamp in its HTML. At the end every
// reply is stopped with Chats.Stop and the server gets SIGTERM. The server's
// CPU time (utime+stime from /proc/PID/stat) over the same window is
// reported as a percentage of one core.
//
// With -runs N the whole run is repeated with a fresh server and endpoint,
// and the figures printed are the medians of the runs.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"
)

type config struct {
	bin       string
	replies   int
	rate      float64
	duration  time.Duration
	followers int
	para      int
	grace     time.Duration
	verbose   bool
}

// result is what one run measured.
type result struct {
	lags       []time.Duration // one per measured frame, sorted
	frames     int             // frames measured (streaming, with a timestamp)
	untimed    int             // streaming frames in the window without a timestamp
	tokens     int64           // tokens the endpoint sent within the window
	cpuPct     float64         // server CPU over the window, % of one core
	selfCPUPct float64         // this tool's CPU over the window, % of one core
	drops      int             // follower streams that ended early (dropped for falling behind) or resync events
	silent     int             // replies that produced no measured frame
	window     time.Duration
}

func (r result) quantile(q float64) float64 {
	if len(r.lags) == 0 {
		return 0
	}
	i := max(int(float64(len(r.lags))*q+0.999999)-1, 0)
	return float64(r.lags[min(i, len(r.lags)-1)]) / float64(time.Millisecond)
}

func main() {
	var cfg config
	runs := flag.Int("runs", 1, "repeat the whole measurement this many times (fresh server each) and print the medians")
	flag.StringVar(&cfg.bin, "bin", "", "the lembas server binary (required)")
	flag.IntVar(&cfg.replies, "replies", 50, "replies streaming at once")
	flag.Float64Var(&cfg.rate, "rate", 100, "tokens per second per reply")
	flag.DurationVar(&cfg.duration, "duration", 10*time.Second, "how long the replies stream before they are stopped")
	flag.IntVar(&cfg.followers, "followers", 5, "event-stream followers (each measures 1/followers of the chats)")
	flag.IntVar(&cfg.para, "para", 50, "tokens per paragraph (a blank line after every N tokens; 0: one paragraph)")
	flag.DurationVar(&cfg.grace, "grace", 5*time.Second, "extra time for stopping and shutting down before loops end by themselves")
	flag.BoolVar(&cfg.verbose, "v", false, "print the server's log on failure and progress details")
	flag.Parse()
	if cfg.bin == "" || cfg.replies < 1 || cfg.rate <= 0 || cfg.duration <= 0 || cfg.followers < 1 || *runs < 1 {
		fmt.Fprintln(os.Stderr, "loadtool: -bin is required; -replies, -rate, -duration, -followers and -runs must be positive")
		flag.Usage()
		os.Exit(2)
	}

	var results []result
	for i := 1; i <= *runs; i++ {
		// Every run is bounded: setup, the window, stopping and shutdown.
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second+cfg.duration+4*cfg.grace)
		res, err := run(ctx, cfg)
		cancel()
		if err != nil {
			fmt.Fprintf(os.Stderr, "loadtool: run %d: %v\n", i, err)
			os.Exit(1)
		}
		fmt.Printf("run %d: lag p50 %.2f ms p99 %.2f ms max %.2f ms; frames %d (untimed %d), tokens %d (%.0f/s, target %.0f/s), server cpu %.1f %%, loadtool cpu %.1f %%, dropped streams %d, silent replies %d\n",
			i, res.quantile(0.50), res.quantile(0.99), res.quantile(1), res.frames, res.untimed, res.tokens,
			float64(res.tokens)/res.window.Seconds(), cfg.rate*float64(cfg.replies), res.cpuPct, res.selfCPUPct, res.drops, res.silent)
		results = append(results, res)
	}

	med := func(f func(result) float64) float64 {
		v := make([]float64, len(results))
		for i, r := range results {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[(len(v)-1)/2]
	}
	n := cfg.replies
	fmt.Printf("figure stream_lag_p50_ms_%d %.2f ms\n", n, med(func(r result) float64 { return r.quantile(0.50) }))
	fmt.Printf("figure stream_lag_p99_ms_%d %.2f ms\n", n, med(func(r result) float64 { return r.quantile(0.99) }))
	fmt.Printf("figure stream_frames_%d %.0f frames\n", n, med(func(r result) float64 { return float64(r.frames) }))
	fmt.Printf("figure stream_tokens_%d %.0f tokens\n", n, med(func(r result) float64 { return float64(r.tokens) }))
	fmt.Printf("figure stream_server_cpu_pct_%d %.1f %%\n", n, med(func(r result) float64 { return r.cpuPct }))
}
