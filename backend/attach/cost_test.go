package attach

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/apperr"
)

// pngHeader is a PNG whose header declares w × h at depth bits a channel
// of colour type ct (6: RGBA, 2: RGB, 0: gray), followed by a few bytes of
// image data: Go's decoder allocates the whole image before it finds the
// data missing.
func pngHeader(t testing.TB, w, h int, depth, ct byte) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(kind string, data []byte) {
		binary.Write(&b, binary.BigEndian, uint32(len(data)))
		crc := crc32.NewIEEE()
		crc.Write([]byte(kind))
		crc.Write(data)
		b.WriteString(kind)
		b.Write(data)
		binary.Write(&b, binary.BigEndian, crc.Sum32())
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = depth, ct
	chunk("IHDR", ihdr)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(make([]byte, 64))
	zw.Close()
	chunk("IDAT", z.Bytes())
	chunk("IEND", nil)
	if cfg, err := png.DecodeConfig(bytes.NewReader(b.Bytes())); err != nil || cfg.Width != w {
		t.Fatalf("crafted PNG: %v %v", cfg, err)
	}
	return b.Bytes()
}

// A 16-bit RGBA PNG takes 8 bytes a pixel: a 310 KB one just under the
// pixel limit cost about 300 MB. It is now refused from its header.
func TestDeepPNGMemoryIsBounded(t *testing.T) {
	data := pngHeader(t, 6000, 6000, 16, 6) // 36 MP, 288 MB decoded
	var err error
	n := allocatedBy(func() { _, err = processFile(t, "deep.png", data, Limits{}) })
	t.Logf("%d-byte PNG: %d MB allocated, %v", len(data), n>>20, err)
	if kind, msg := apperr.Public(err); kind != apperr.Invalid || !strings.Contains(msg, "16 bits a channel") {
		t.Errorf("got %s %q, want invalid naming the depth", kind, msg)
	}
	if n > 64<<20 {
		t.Errorf("processing allocated %d MB", n>>20)
	}
}

func TestCostCountsDepthAndAlpha(t *testing.T) {
	lim := Limits{}
	scaled := int64(2 * 4 * 2000 * 2000)
	for _, tc := range []struct {
		name  string
		data  []byte
		bytes int64
	}{
		{"8-bit gray", pngHeader(t, 2000, 2000, 8, 0), 2000*2000*1 + scaled},
		{"8-bit RGB", pngHeader(t, 2000, 2000, 8, 2), 2000*2000*4 + scaled},
		{"16-bit gray", pngHeader(t, 2000, 2000, 16, 0), 2000*2000*2 + scaled},
		{"16-bit RGBA", pngHeader(t, 2000, 2000, 16, 6), 2000*2000*8 + scaled},
		{"over the decode limit", pngHeader(t, 6000, 6000, 16, 6), 0},
		{"text", []byte("just words"), 0},
		{"image header cut off", []byte("\x89PNG\r\n\x1a\n\x00\x00"), 160_000_000 + 2*4*2048*2048},
	} {
		if got := Cost(tc.data, lim); got != tc.bytes {
			t.Errorf("%s: cost %d, want %d", tc.name, got, tc.bytes)
		}
	}
	// What Cost says is what processing checks.
	m := image.NewNRGBA64(image.Rect(0, 0, 64, 64))
	var buf bytes.Buffer
	png.Encode(&buf, m)
	if _, err := processFile(t, "small.png", buf.Bytes(), Limits{MaxDecodeBytes: 64 * 64 * 8}); err != nil {
		t.Errorf("an image at the decode limit: %v", err)
	}
	if _, err := processFile(t, "small.png", buf.Bytes(), Limits{MaxDecodeBytes: 64*64*8 - 1}); apperr.KindOf(err) != apperr.Invalid {
		t.Errorf("an image over the decode limit: %v", err)
	}
}
