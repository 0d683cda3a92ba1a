package files

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/llembas/lembas/backend/attach"
	"github.com/llembas/lembas/backend/ids"
	"github.com/llembas/lembas/backend/store"
)

// deepPNG writes a real w × h PNG of 16-bit RGBA (8 bytes a pixel decoded)
// row by row, without ever holding the image: a smooth gradient, so it
// compresses to a few hundred KB as the file did.
func deepPNG(b testing.TB, w, h int) []byte {
	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(kind string, data []byte) {
		binary.Write(&out, binary.BigEndian, uint32(len(data)))
		crc := crc32.NewIEEE()
		crc.Write([]byte(kind))
		crc.Write(data)
		out.WriteString(kind)
		out.Write(data)
		binary.Write(&out, binary.BigEndian, crc.Sum32())
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 16, 6
	chunk("IHDR", ihdr)
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	raw, row := make([]byte, 8*w), make([]byte, 1+8*w)
	for y := range h {
		for x := range w {
			p := raw[8*x:]
			binary.BigEndian.PutUint16(p[0:], uint16(x*13))
			binary.BigEndian.PutUint16(p[2:], uint16(y*17))
			binary.BigEndian.PutUint16(p[4:], 0x8000)
			binary.BigEndian.PutUint16(p[6:], 0xfff0)
		}
		row[0] = 1 // Sub: each byte less the one a pixel before, nearly constant here
		for i := range raw {
			row[1+i] = raw[i]
			if i >= 8 {
				row[1+i] -= raw[i-8]
			}
		}
		zw.Write(row)
	}
	zw.Close()
	chunk("IDAT", z.Bytes())
	chunk("IEND", nil)
	return out.Bytes()
}

// rssKB reads a field of /proc/self/status (VmRSS, VmHWM) in KB.
func rssKB(b testing.TB, field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return n
		}
	}
	b.Skipf("no %s in /proc/self/status", field)
	return 0
}

// BenchmarkWorstCaseImages uploads four of the costliest images the
// limits accept (16-bit RGBA at the decode limit: 20 MP, 160 MB decoded)
// at once, from four users, and reports the process's peak RSS while they
// are processed (VmHWM, reset first through /proc/self/clear_refs).
func BenchmarkWorstCaseImages(b *testing.B) {
	lim := attach.DefaultLimits()
	px := lim.MaxPixels * 4 / 8 // MaxDecodeBytes at 8 bytes a pixel
	w := 5000
	data := deepPNG(b, w, int(px)/w)
	b.Logf("worst case: %d KB PNG, %d × %d, cost %d MB", len(data)>>10, w, int(px)/w, attach.Cost(data[:attach.PeekSize], attach.Limits{})>>20)
	s, db, owner := newService(b, Limits{MaxPending: 40})
	users := []ids.UserID{owner}
	for i := range 3 {
		u, err := db.CreateUser(context.Background(), store.NewUser{Username: fmt.Sprintf("user%d", i), DisplayName: "U"})
		if err != nil {
			b.Fatal(err)
		}
		users = append(users, ids.UserID(u.ID))
	}
	var peak int64
	for range b.N {
		runtime.GC()
		debug.FreeOSMemory()
		base := rssKB(b, "VmRSS")
		if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
			b.Skipf("cannot reset the peak RSS: %v", err)
		}
		var wg sync.WaitGroup
		for _, u := range users {
			wg.Go(func() {
				if _, err := s.Upload(context.Background(), u, "deep.png", bytes.NewReader(data)); err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
		peak = max(peak, rssKB(b, "VmHWM"))
		b.Logf("RSS before %d MB, peak %d MB", base>>10, rssKB(b, "VmHWM")>>10)
	}
	b.ReportMetric(float64(peak)/1024, "peak_rss_mb")
}
