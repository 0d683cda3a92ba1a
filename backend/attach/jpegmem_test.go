package attach

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/jpeg"
	"strings"
	"testing"

	"github.com/llembas/lembas/backend/apperr"
)

// progressiveHeader is a small colour JPEG made progressive in name: its
// frame header says SOF2 and w×h, and its scan is a DC-only scan. Go's
// decoder allocates a coefficient buffer for the whole image at that scan
// (4 bytes a pixel for each full-resolution component), before reading any
// image data.
func progressiveHeader(t *testing.T, w, h int) []byte {
	t.Helper()
	m := image.NewRGBA(image.Rect(0, 0, 16, 16))
	for i := range m.Pix {
		m.Pix[i] = byte(i)
	}
	m.Set(0, 0, color.RGBA{1, 2, 3, 255})
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, m, nil); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	sof := bytes.Index(b, []byte{0xFF, 0xC0})
	sos := bytes.Index(b, []byte{0xFF, 0xDA})
	if sof < 0 || sos < 0 {
		t.Fatal("no SOF0 or SOS in the encoded JPEG")
	}
	b[sof+1] = 0xC2
	binary.BigEndian.PutUint16(b[sof+5:], uint16(h))
	binary.BigEndian.PutUint16(b[sof+7:], uint16(w))
	n := int(binary.BigEndian.Uint16(b[sos+2:]))
	b[sos+2+n-2] = 0 // Se: a DC-only scan, as progressive JPEGs start
	return b
}

// The pixel limit bounds a baseline JPEG's memory (1.5 bytes a pixel), but
// a progressive one holds every DCT coefficient as well: 7.5 bytes a pixel
// for 4:2:0 colour, 15 for 4:4:4. A 25-megapixel progressive JPEG of a few
// hundred bytes, under the 40-megapixel limit, made the decoder allocate
// about 190 MB before failing on its missing data.
func TestProgressiveJPEGMemoryIsBounded(t *testing.T) {
	data := progressiveHeader(t, 5000, 5000)
	if cfg, err := jpeg.DecodeConfig(bytes.NewReader(data)); err != nil || cfg.Width != 5000 {
		t.Fatalf("crafted JPEG: %v %v", cfg, err)
	}
	var err error
	n := allocatedBy(func() { _, err = processFile(t, "big.jpg", data, Limits{}) })
	t.Logf("%d-byte JPEG: %d MB allocated, %v", len(data), n>>20, err)
	if kind, msg := apperr.Public(err); kind != apperr.Invalid || !strings.Contains(msg, "big.jpg") {
		t.Errorf("got %s %q, want invalid", kind, msg)
	}
	if n > 64<<20 {
		t.Errorf("processing allocated %d MB", n>>20)
	}
}
