package attach

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/llembas/lembas/backend/apperr"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func processFile(t testing.TB, name string, data []byte, lim Limits) (Result, error) {
	t.Helper()
	return Process(context.Background(), name, bytes.NewReader(data), lim)
}

// decodeOut decodes a processed image and fails the test if it is not in the
// format its MIME type says.
func decodeOut(t *testing.T, res Result) image.Image {
	t.Helper()
	var m image.Image
	var err error
	switch res.MIME {
	case "image/jpeg":
		m, err = jpeg.Decode(bytes.NewReader(res.Data))
	case "image/png":
		m, err = png.Decode(bytes.NewReader(res.Data))
	default:
		t.Fatalf("MIME = %q, want an image type", res.MIME)
	}
	if err != nil {
		t.Fatalf("decode output as %s: %v", res.MIME, err)
	}
	if b := m.Bounds(); b.Dx() != res.Width || b.Dy() != res.Height {
		t.Fatalf("output is %v, Result says %dx%d", b, res.Width, res.Height)
	}
	return m
}

type rgb struct{ r, g, b uint8 }

func at(m image.Image, x, y int) (rgb, uint8) {
	c := color.NRGBAModel.Convert(m.At(x, y)).(color.NRGBA)
	return rgb{c.R, c.G, c.B}, c.A
}

// near reports whether c is within 60 of want in every channel (JPEG and
// scaling blur colours a little).
func near(c, want rgb) bool {
	d := func(a, b uint8) int {
		if a > b {
			return int(a - b)
		}
		return int(b - a)
	}
	return d(c.r, want.r) < 60 && d(c.g, want.g) < 60 && d(c.b, want.b) < 60
}

var (
	red   = rgb{220, 20, 20}
	blue  = rgb{20, 20, 220}
	green = rgb{20, 200, 20}
)

func TestProcessImages(t *testing.T) {
	tests := []struct {
		file          string
		name          string // as uploaded; defaults to file
		lim           Limits
		mime          string
		width, height int
		alpha         bool
		// pixels to check: point → colour
		pixels map[image.Point]rgb
	}{
		{
			file: "rotated.jpg", mime: "image/jpeg", width: 80, height: 120,
			// Stored: left red, right blue, green top-left. Turned a quarter
			// clockwise: red on top, blue below, green top-right.
			pixels: map[image.Point]rgb{{40, 20}: red, {40, 100}: blue, {75, 4}: green},
		},
		{
			file: "rotated.jpg", lim: Limits{MaxImageSide: 60}, mime: "image/jpeg", width: 40, height: 60,
			pixels: map[image.Point]rgb{{20, 10}: red, {20, 50}: blue},
		},
		{file: "alpha.png", mime: "image/png", width: 300, height: 200, alpha: true},
		{file: "alpha.png", lim: Limits{MaxImageSide: 100}, mime: "image/png", width: 100, height: 67, alpha: true},
		{file: "opaque.png", mime: "image/png", width: 200, height: 100,
			pixels: map[image.Point]rgb{{5, 5}: {255, 255, 255}, {100, 50}: {0, 0, 0}}},
		{file: "anim.gif", mime: "image/png", width: 64, height: 48,
			pixels: map[image.Point]rgb{{32, 24}: {255, 0, 0}}},
		{file: "anim.webp", mime: "image/jpeg", width: 64, height: 48,
			pixels: map[image.Point]rgb{{32, 24}: {255, 0, 0}}},
		{file: "anim-alpha.webp", mime: "image/png", width: 64, height: 48, alpha: true},
		{file: "photo.webp", mime: "image/jpeg", width: 320, height: 240},
		{file: "alpha.webp", mime: "image/png", width: 300, height: 200, alpha: true},
		{file: "rotated.jpg", name: "holiday.pdf", mime: "image/jpeg", width: 80, height: 120},
	}
	for _, tt := range tests {
		name := tt.name
		if name == "" {
			name = tt.file
		}
		t.Run(tt.file+"/"+name, func(t *testing.T) {
			res, err := processFile(t, name, fixture(t, tt.file), tt.lim)
			if err != nil {
				t.Fatal(err)
			}
			if res.Kind != KindImage || res.MIME != tt.mime || res.Width != tt.width || res.Height != tt.height {
				t.Fatalf("got %v, want image %s %dx%d", res, tt.mime, tt.width, tt.height)
			}
			if res.Text != "" || res.Note != "" {
				t.Errorf("image has Text %q, Note %q", res.Text, res.Note)
			}
			m := decodeOut(t, res)
			if got := hasAlpha(m); got != tt.alpha {
				t.Errorf("output has alpha = %v, want %v", got, tt.alpha)
			}
			for p, want := range tt.pixels {
				if c, _ := at(m, p.X, p.Y); !near(c, want) {
					t.Errorf("pixel %v = %v, want about %v", p, c, want)
				}
			}
		})
	}
}

func TestImageMetadataIsDropped(t *testing.T) {
	in := fixture(t, "rotated.jpg")
	if !bytes.Contains(in, []byte("Exif")) || !bytes.Contains(in, []byte("LeakyCam")) {
		t.Fatal("fixture lost its EXIF block")
	}
	res, err := processFile(t, "rotated.jpg", in, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Exif", "LeakyCam", "GPS"} {
		if bytes.Contains(res.Data, []byte(s)) {
			t.Errorf("output still contains %q", s)
		}
	}
	if got := jpegOrientation(res.Data); got != 1 {
		t.Errorf("output orientation = %d, want 1 (none)", got)
	}
	// The only APPn segment left may be the encoder's JFIF header.
	for i := 2; i+4 <= len(res.Data) && res.Data[i] == 0xFF && res.Data[i+1] != 0xDA; {
		if m := res.Data[i+1]; m >= 0xE1 && m <= 0xEF {
			t.Errorf("output has an APP%d segment", m-0xE0)
		}
		i += 2 + (int(res.Data[i+2])<<8 | int(res.Data[i+3]))
	}
}

func TestAnimatedGIFKeepsOnlyTheFirstFrame(t *testing.T) {
	// A GIF whose second frame is damaged still works: only the first is
	// decoded.
	in := fixture(t, "anim.gif")
	second := bytes.LastIndex(in, []byte{0x2C}) // the last image descriptor
	if second < 20 {
		t.Fatal("fixture has no second frame")
	}
	broken := append(append([]byte{}, in[:second+1]...), 0xFF, 0xFF)
	res, err := processFile(t, "broken.gif", broken, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Width != 64 || res.Height != 48 {
		t.Errorf("size %dx%d, want 64x48", res.Width, res.Height)
	}
}

func TestProcessRefusals(t *testing.T) {
	alphaPNG := fixture(t, "alpha.png")
	tests := []struct {
		test string
		name string
		data []byte
		lim  Limits
		want string // in the message
	}{
		{"bomb", "bomb.png", fixture(t, "bomb.png"), Limits{}, "bomb.png is too large: 50000 × 50000 pixels (the limit is 40 megapixels)"},
		{"pixel limit", "a.png", alphaPNG, Limits{MaxPixels: 1000}, "is too large: 300 × 200 pixels"},
		{"byte limit", "a.png", alphaPNG, Limits{MaxBytes: 100}, "a.png is larger than the 100 bytes limit"},
		{"empty", "nothing.txt", nil, Limits{}, "nothing.txt is empty"},
		{"blank text", "spaces.txt", []byte(" \n\t\n"), Limits{}, "has no text in it"},
		{"binary with NUL", "blob.bin", fixture(t, "blob.bin"), Limits{}, "blob.bin is binary data, not text. " + Supported},
		{"control characters", "ctl.txt", bytes.Repeat([]byte("ab\x01\x02\x03"), 100), Limits{}, "not text"},
		{"C1 controls", "odd.txt", bytes.Repeat([]byte("ab\x81\x8d\x8f "), 100), Limits{}, "odd.txt has too many control characters to be read as text"},
		{"HEIC", "IMG_0001.HEIC", fixture(t, "photo.heic"), Limits{}, "is a HEIC image"},
		{"ZIP", "report.docx", []byte("PK\x03\x04\x14\x00\x06\x00\x08\x00\x00\x00!\x00"), Limits{}, "is a ZIP archive"},
		{"truncated PNG", "cut.png", alphaPNG[:200], Limits{}, "cut.png is not a valid PNG image"},
		{"PNG header only", "head.png", alphaPNG[:8], Limits{}, "is not a valid PNG image"},
		{"not a GIF after all", "x.gif", []byte("GIF89a\x10\x00\x10\x00\x00\x00\x00 and then nothing useful"), Limits{}, "is not a valid GIF image"},
		{"WebP without image", "x.webp", []byte("RIFF\x04\x00\x00\x00WEBP"), Limits{}, "is not a valid WebP image"},
		{"malformed PDF", "broken.pdf", fixture(t, "malformed.pdf"), Limits{}, "broken.pdf is not a valid PDF"},
		{"path in name", "../../etc/passwd.exe", fixture(t, "blob.bin"), Limits{}, "passwd.exe is binary data"},
	}
	for _, tt := range tests {
		t.Run(tt.test, func(t *testing.T) {
			res, err := processFile(t, tt.name, tt.data, tt.lim)
			if err == nil {
				t.Fatalf("accepted as %v", res)
			}
			kind, msg := apperr.Public(err)
			if kind != apperr.Invalid {
				t.Fatalf("kind %q (%v), want invalid", kind, err)
			}
			if !strings.Contains(msg, tt.want) {
				t.Errorf("message %q does not contain %q", msg, tt.want)
			}
			if strings.Contains(msg, "..") || strings.Contains(msg, "/etc") {
				t.Errorf("message %q shows the raw name", msg)
			}
		})
	}
}

func TestProcessText(t *testing.T) {
	tests := []struct {
		file    string
		name    string
		mime    string
		text    string
		contain string
	}{
		{file: "notreally.png", mime: "text/plain; charset=utf-8", text: string(fixture(t, "notreally.png"))},
		{file: "page.html", mime: "text/plain; charset=utf-8", contain: "<script>alert(document.cookie)</script>"},
		{file: "utf8bom.txt", mime: "text/plain; charset=utf-8", text: "Grüße, 世界 — UTF-8 with a BOM\n"},
		{file: "utf16le.txt", mime: "text/plain; charset=utf-16", text: "Grüße, 世界 — UTF-16 LE\n"},
		{file: "utf16be.txt", mime: "text/plain; charset=utf-16", text: "Grüße, 世界 — UTF-16 BE\n"},
		{file: "latin1.txt", mime: "text/plain; charset=windows-1252", text: "Café crème brûlée costs 5 €.\n"},
		{file: "latin1.txt", name: "main.go", mime: "text/plain; charset=windows-1252", text: "Café crème brûlée costs 5 €.\n"},
	}
	for _, tt := range tests {
		name := tt.name
		if name == "" {
			name = tt.file
		}
		t.Run(tt.file+"/"+name, func(t *testing.T) {
			in := fixture(t, tt.file)
			res, err := processFile(t, name, in, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Kind != KindText || res.MIME != tt.mime {
				t.Fatalf("got %v, want text %s", res, tt.mime)
			}
			if !bytes.Equal(res.Data, in) {
				t.Error("Data is not the file as uploaded")
			}
			if tt.text != "" && res.Text != tt.text {
				t.Errorf("Text = %q, want %q", res.Text, tt.text)
			}
			if !strings.Contains(res.Text, tt.contain) {
				t.Errorf("Text = %q, want it to contain %q", res.Text, tt.contain)
			}
			if res.Note != "" || res.Width != 0 {
				t.Errorf("unexpected Note %q or size %dx%d", res.Note, res.Width, res.Height)
			}
		})
	}
}

func TestTextIsCutOnACharacter(t *testing.T) {
	tests := []struct {
		name string
		data []byte
	}{
		{"utf-8", []byte(strings.Repeat("añ世", 2000))},
		{"windows-1252", bytes.Repeat([]byte("caf\xe9 \x80 "), 2000)},
		{"utf-16", utf16LE(strings.Repeat("añ世😀", 2000))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := processFile(t, "long.txt", tt.data, Limits{MaxTextBytes: 1001})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Text) > 1001 || len(res.Text) < 990 {
				t.Errorf("kept %d bytes of text, want just under 1001", len(res.Text))
			}
			if !utf8.ValidString(res.Text) || strings.ContainsRune(res.Text, utf8.RuneError) {
				t.Errorf("cut text is not clean UTF-8: ...%q", res.Text[len(res.Text)-10:])
			}
			if res.Note != "Only the first 1001 bytes of text was kept." {
				t.Errorf("Note = %q", res.Note)
			}
			if !bytes.Equal(res.Data, tt.data) {
				t.Error("Data was cut too; it should be the whole file")
			}
		})
	}
}

func utf16LE(s string) []byte {
	out := []byte{0xFF, 0xFE}
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			hi, lo := 0xD800+(r>>10), 0xDC00+(r&0x3FF)
			out = append(out, byte(hi), byte(hi>>8), byte(lo), byte(lo>>8))
			continue
		}
		out = append(out, byte(r), byte(r>>8))
	}
	return out
}

func TestProcessPDF(t *testing.T) {
	textPDF := fixture(t, "text.pdf")
	tests := []struct {
		name     string
		data     []byte
		lim      Limits
		contains []string
		text     string // exact, when set
		note     string
	}{
		{
			name: "text", data: textPDF,
			contains: []string{"Hello from LLeMbas.\nA second line, with café au lait.", "Page two ends here."},
		},
		{
			name: "PDF 2.0 header", data: append([]byte("%PDF-2.0"), textPDF[8:]...),
			contains: []string{"Hello from LLeMbas."},
		},
		{
			name: "cut", data: textPDF, lim: Limits{MaxTextBytes: 12},
			text: "Hello from L", note: "Only the first 12 bytes of text was kept.",
		},
		{name: "scanned", data: fixture(t, "scanned.pdf"), text: "", note: NoTextNote},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := processFile(t, tt.name+".pdf", tt.data, tt.lim)
			if err != nil {
				t.Fatal(err)
			}
			if res.Kind != KindPDF || res.MIME != "application/pdf" {
				t.Fatalf("got %v, want a PDF", res)
			}
			if !bytes.Equal(res.Data, tt.data) {
				t.Error("Data is not the PDF as uploaded")
			}
			for _, s := range tt.contains {
				if !strings.Contains(res.Text, s) {
					t.Errorf("Text = %q, want it to contain %q", res.Text, s)
				}
			}
			if tt.contains == nil && res.Text != tt.text {
				t.Errorf("Text = %q, want %q", res.Text, tt.text)
			}
			if res.Note != tt.note {
				t.Errorf("Note = %q, want %q", res.Note, tt.note)
			}
		})
	}
}

// loopingPDF is text.pdf whose cross-reference table names itself as the
// previous one: the parser reads it again and again, forever.
func loopingPDF(t testing.TB) []byte {
	in := fixture(t, "text.pdf")
	m := regexp.MustCompile(`startxref\n(\d+)`).FindSubmatch(in)
	if m == nil {
		t.Fatal("no startxref in text.pdf")
	}
	return bytes.Replace(in, []byte("trailer\n<< "), []byte("trailer\n<< /Prev "+string(m[1])+" "), 1)
}

func TestPDFTimeoutStopsTheWork(t *testing.T) {
	before := runtime.NumGoroutine()
	start := time.Now()
	_, err := processFile(t, "loop.pdf", loopingPDF(t), Limits{PDFTimeout: 200 * time.Millisecond})
	if err == nil {
		t.Fatal("a looping PDF was accepted")
	}
	if kind, msg := apperr.Public(err); kind != apperr.Invalid || !strings.Contains(msg, "loop.pdf took longer than 200ms") {
		t.Errorf("got %s %q", kind, msg)
	}
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("returned after %v, before the limit", d)
	}
	// The extraction goroutine notices the deadline at its next read and
	// ends; it must not spin on.
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines left running after the timeout (was %d)", n, before)
	}
}

func TestProcessCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, file := range []string{"text.pdf", "rotated.jpg", "latin1.txt"} {
		_, err := Process(ctx, file, bytes.NewReader(fixture(t, file)), Limits{})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: err = %v, want context.Canceled", file, err)
		}
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestProcessReadError(t *testing.T) {
	_, err := Process(context.Background(), "x.txt", failingReader{}, Limits{})
	if err == nil || !strings.Contains(err.Error(), "connection reset") || apperr.KindOf(err) != apperr.Internal {
		t.Errorf("err = %v, want the read error, internal", err)
	}
}
