package attach

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/llembas/lembas/backend/apperr"
)

// FuzzProcess feeds arbitrary bytes to process (Process without its recover,
// so that a panic in our code or a decoder shows up here). Every result must
// be within the limits; every error must be a clean invalid.
func FuzzProcess(f *testing.F) {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), ".md") {
			continue
		}
		f.Add(fixture(f, e.Name()))
	}
	f.Add(loopingPDF(f))
	f.Add([]byte("RIFF\x20\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00ANMF\x02\x00\x00\x00"))
	f.Add([]byte("\xff\xfe\x00"))

	lim := Limits{
		MaxBytes:     1 << 20,
		MaxPixels:    1 << 20,
		MaxImageSide: 64,
		MaxTextBytes: 4096,
		PDFTimeout:   time.Second,
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := process(context.Background(), "fuzz", bytes.NewReader(data), lim)
		if err != nil {
			if k := apperr.KindOf(err); k != apperr.Invalid {
				t.Fatalf("error of kind %s: %v", k, err)
			}
			return
		}
		switch res.Kind {
		case KindImage:
			if res.Width < 1 || res.Height < 1 || res.Width > lim.MaxImageSide || res.Height > lim.MaxImageSide {
				t.Fatalf("image of %dx%d", res.Width, res.Height)
			}
			if res.MIME != "image/png" && res.MIME != "image/jpeg" {
				t.Fatalf("image MIME %q", res.MIME)
			}
		case KindPDF, KindText:
			if !bytes.Equal(res.Data, data) {
				t.Fatal("Data differs from the upload")
			}
		default:
			t.Fatalf("kind %q", res.Kind)
		}
		if len(res.Text) > lim.MaxTextBytes || !utf8.ValidString(res.Text) {
			t.Fatalf("text of %d bytes, valid UTF-8 %v", len(res.Text), utf8.ValidString(res.Text))
		}
		if res.Kind == KindText && strings.ContainsRune(res.Text, 0) {
			t.Fatal("text with a NUL")
		}
	})
}

// photo makes a w×h JPEG with the detail of a photo (gradients and noise,
// which compress like one).
func photo(tb testing.TB, w, h int) []byte {
	tb.Helper()
	m := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio420)
	r := rand.New(rand.NewSource(1))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			m.Y[y*m.YStride+x] = uint8((x*255/w+y*255/h)/2) + uint8(r.Intn(24))
		}
	}
	for y := 0; y < (h+1)/2; y++ {
		for x := 0; x < (w+1)/2; x++ {
			m.Cb[y*m.CStride+x] = uint8(96 + x*64/w)
			m.Cr[y*m.CStride+x] = uint8(160 - y*64/h)
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: 88}); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkProcessPhoto is a 24-megapixel phone photo scaled to 2048 px.
// bytes/op shows the memory one upload takes: the decoded source dominates.
func BenchmarkProcessPhoto(b *testing.B) {
	data := photo(b, 6000, 4000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := Process(context.Background(), "IMG_0001.jpg", bytes.NewReader(data), Limits{})
		if err != nil || res.Width != 2048 {
			b.Fatalf("%v %v", res, err)
		}
	}
}

// BenchmarkProcessScreenshot is a 1920×1080 PNG kept at its size.
func BenchmarkProcessScreenshot(b *testing.B) {
	m := image.NewRGBA(image.Rect(0, 0, 1920, 1080))
	for y := 0; y < 1080; y++ {
		for x := 0; x < 1920; x++ {
			c := color.RGBA{240, 240, 240, 255}
			if (x/40+y/20)%7 == 0 {
				c = color.RGBA{30, 30, 30, 255}
			}
			m.SetRGBA(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, m); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Process(context.Background(), "screen.png", bytes.NewReader(data), Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}
