package cli

import (
	"io"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/llembas/lembas/tests/harness"
)

// BenchmarkServeStart is `lembas --serve` on a fresh data directory until
// the first byte of the app's page: process start, schema creation, key
// file, owner row, listen, first response.
func BenchmarkServeStart(b *testing.B) {
	bin := server(b)
	for b.Loop() {
		dir := b.TempDir()
		start := time.Now()
		p, base := harness.Serve(b, bin, dir)
		resp, err := http.Get(base + "/")
		if err != nil {
			b.Fatal(err)
		}
		buf := make([]byte, 1)
		resp.Body.Read(buf)
		elapsed := time.Since(start)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		b.StopTimer()
		b.ReportMetric(float64(elapsed.Microseconds())/1000, "ms/start")
		p.Kill()
		b.StartTimer()
	}
}

// BenchmarkServerBinarySize reports the size of the CGO-off server binary.
func BenchmarkServerBinarySize(b *testing.B) {
	bin := server(b)
	fi, err := os.Stat(bin)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
	}
	b.ReportMetric(float64(fi.Size())/(1<<20), "MB")
}
