package render

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The benchmarks below are the headline figures for rendering. CPU time is the
// process's (getrusage: user+system, GC included), not wall time. Each
// iteration uses a fresh Renderer so highlighting is never served from an
// earlier iteration's cache; building it is not timed.

const (
	benchSize     = 60 << 10
	deltaBytes    = 4  // ≈ one token at 2000 tok/s
	deltasPerTick = 80 // one frame per ~40 ms at 2000 tok/s
)

// splitDeltas cuts src into deltas of about n bytes, on rune boundaries as an
// endpoint's tokens are.
func splitDeltas(src string, n int) []string {
	var out []string
	for len(src) > 0 {
		i := min(n, len(src))
		for i < len(src) && !utf8.RuneStart(src[i]) {
			i++
		}
		out = append(out, src[:i])
		src = src[i:]
	}
	return out
}

type streamStats struct {
	frames, resets int
	bytes          int // Seal + Tail + Full of every frame
	final          string
}

// streamReply feeds deltas through a Stream with a frame after the first delta
// and then after every perFrame deltas, and finishes it.
func streamReply(r *Renderer, deltas []string, perFrame int) streamStats {
	var st streamStats
	s := r.NewStream()
	var c benchFollower
	add := func(f Frame) {
		st.frames++
		if f.Reset {
			st.resets++
		}
		for _, p := range f.Seal {
			st.bytes += len(p)
		}
		st.bytes += len(f.Tail) + len(f.Full)
		c.apply(f)
	}
	pending := 0
	for i, d := range deltas {
		s.Write(d)
		pending++
		if i == 0 || pending >= perFrame {
			add(s.Frame())
			pending = 0
		}
	}
	add(s.Finish())
	st.final = c.sealed.String() + c.tail
	return st
}

// benchFollower applies frames like follower, in linear time: the benchmarks
// measure the renderer, not string concatenation in the test.
type benchFollower struct {
	sealed strings.Builder
	tail   string
}

func (c *benchFollower) apply(f Frame) {
	if f.Reset {
		c.sealed.Reset()
		c.sealed.WriteString(f.Full)
		c.tail = ""
	}
	for _, s := range f.Seal {
		c.sealed.WriteString(s)
	}
	switch f.Op {
	case TailReplace:
		c.tail = f.Tail
	case TailAppend:
		// The benchmark keeps appended text out of the tail string (copying it
		// per frame would be quadratic); the final tail always comes as a
		// replacement or a reset.
	}
}

func benchInput(b *testing.B) (string, []string) {
	b.Helper()
	src := sampleReply(benchSize)
	New().Markdown(src) // chroma compiles each lexer once per process: warm them
	return src, splitDeltas(src, deltaBytes)
}

func BenchmarkRenderWhole60KB(b *testing.B) {
	src, _ := benchInput(b)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		r := New()
		c0 := cpuTime()
		b.StartTimer()
		r.Markdown(src)
		cpu += cpuTime() - c0
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
}

func benchStream(b *testing.B, perFrame int) {
	src, deltas := benchInput(b)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	var cpu time.Duration
	var st streamStats
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		r := New()
		c0 := cpuTime()
		b.StartTimer()
		st = streamReply(r, deltas, perFrame)
		cpu += cpuTime() - c0
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(st.frames), "frames")
	b.ReportMetric(float64(len(deltas)), "deltas")
}

// BenchmarkStream60KB is the reply as ~4-byte deltas with a frame per delta.
func BenchmarkStream60KB(b *testing.B) { benchStream(b, 1) }

// BenchmarkStream60KBCoalesced is the same with one frame per 80 deltas.
func BenchmarkStream60KBCoalesced(b *testing.B) { benchStream(b, deltasPerTick) }

// BenchmarkRenderAmplification reports render_amplification: the CPU time of
// streaming the reply (all frames and Finish) over that of rendering it whole
// once, per delta and coalesced (the target is ≤ 3 coalesced).
func BenchmarkRenderAmplification(b *testing.B) {
	for _, mode := range []struct {
		name     string
		perFrame int
	}{{"per-delta", 1}, {"coalesced", deltasPerTick}} {
		b.Run(mode.name, func(b *testing.B) {
			src, deltas := benchInput(b)
			var whole, stream time.Duration
			for i := 0; i < b.N; i++ {
				r := New()
				c0 := cpuTime()
				r.Markdown(src)
				whole += cpuTime() - c0
				r = New()
				c0 = cpuTime()
				streamReply(r, deltas, mode.perFrame)
				stream += cpuTime() - c0
			}
			b.ReportMetric(float64(stream)/float64(whole), "render_amplification")
		})
	}
}

// BenchmarkFollowerBytes reports follower_bytes_ratio: the bytes of every frame
// (Seal + Tail + Full) over the bytes of the final HTML, per delta and coalesced
// (the target is ≤ 3 coalesced).
func BenchmarkFollowerBytes(b *testing.B) {
	for _, mode := range []struct {
		name     string
		perFrame int
	}{{"per-delta", 1}, {"coalesced", deltasPerTick}} {
		b.Run(mode.name, func(b *testing.B) {
			_, deltas := benchInput(b)
			var st streamStats
			for i := 0; i < b.N; i++ {
				st = streamReply(New(), deltas, mode.perFrame)
			}
			b.ReportMetric(float64(st.bytes)/float64(len(st.final)), "follower_bytes_ratio")
			b.ReportMetric(float64(st.frames), "frames")
			b.ReportMetric(float64(st.resets), "resets")
		})
	}
}

func TestBenchInputIsRealistic(t *testing.T) {
	src := sampleReply(benchSize)
	if len(src) < benchSize || len(src) > benchSize+4096 {
		t.Fatalf("sample is %d bytes", len(src))
	}
	r := New()
	want := r.Markdown(src)
	st := streamReply(r, splitDeltas(src, deltaBytes), deltasPerTick)
	if st.final != want {
		t.Fatal("coalesced stream differs from the whole render")
	}
	if st.resets != 0 {
		t.Fatalf("%d resets", st.resets)
	}
}
