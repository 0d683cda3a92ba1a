// Package attach turns an uploaded file into what LLeMbas stores and sends to a
// model. It is byte-level processing only: no storage, no HTTP, no database.
//
// # Typed by bytes
//
// [Process] decides what a file is from its content, never from its name or a
// client's Content-Type: PNG, JPEG, GIF and WebP by their magic numbers, PDF by
// its header, and text by decoding it. A ".png" full of text is text; an
// ".html" upload is text too (its MIME type is text/plain, and it must be
// served with Content-Disposition: attachment and X-Content-Type-Options:
// nosniff, never rendered in our origin). Anything else is refused with an
// [apperr.Invalid] error whose message says why.
//
// # What each kind becomes
//
//   - Images are decoded (only after [image.DecodeConfig] has checked the
//     declared size against [Limits.MaxPixels], so a decompression bomb is
//     refused before any pixel buffer exists), turned upright by the JPEG EXIF
//     orientation, scaled down to [Limits.MaxImageSide] by area averaging
//     (streaming, so the decoded source is the one large buffer), and
//     re-encoded: PNG when the image has transparency or is a small lossless
//     image such as a screenshot, JPEG otherwise. Re-encoding drops EXIF, GPS,
//     ICC and every other piece of metadata. Animated GIF and WebP keep their
//     first frame, and only that frame is decoded. Peak memory is about the
//     decoded source: 1.5 bytes a pixel for a JPEG, 4 for an 8-bit PNG, 8 for
//     a 16-bit one with alpha; [Limits.MaxDecodeBytes] (160 MB by default)
//     bounds it, estimated from the header, and [Cost] tells a caller what
//     an upload will take before it is read.
//   - PDFs are stored as uploaded, and their text is extracted once, here, in
//     a goroutine bounded by [Limits.PDFTimeout] (extracting again per request
//     would let a reply change when the parser is upgraded). A PDF without text
//     (scanned pages) is accepted with [NoTextNote] in [Result.Note].
//   - Text is stored as uploaded; [Result.Text] is its content decoded from
//     UTF-8 (with or without BOM), UTF-16 with a BOM, or else Windows-1252.
//
// Extracted and decoded text is cut at [Limits.MaxTextBytes], with a note.
//
// # Names
//
// A user-supplied name is only ever shown: [DisplayName] cleans it for display
// and for Content-Disposition. Files are stored under [StorageName], which is
// random and never derived from the user's name, so no upload can choose a
// path.
//
// # Sending to a model
//
// Images go to vision models as data URIs ([ImageDataURI]); documents go as
// text in a clearly delimited block naming the file ([DocumentContext]).
package attach

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/llembas/lembas/backend/apperr"
)

// Kind is what an attachment turned out to be.
type Kind string

// The kinds [Process] accepts.
const (
	KindImage Kind = "image"
	KindPDF   Kind = "pdf"
	KindText  Kind = "text"
)

// Result is a processed upload.
type Result struct {
	Kind Kind
	// MIME is the type to store and serve Data with: image/jpeg or image/png
	// for images, application/pdf, or "text/plain; charset=…" naming the
	// encoding Data is in (text is never given an executable type, whatever
	// its name says).
	MIME string
	// Data is what to store: the re-encoded image, or the PDF or text file
	// exactly as uploaded.
	Data []byte
	// Text is the extracted (PDF) or decoded (text) content as UTF-8, at most
	// Limits.MaxTextBytes long. Empty for images.
	Text string
	// Note explains anything a person should know about Text, such as a
	// scanned PDF with no text, or text that was cut. It belongs next to the
	// file in the interface and in the model's context.
	Note string
	// Width and Height are the stored image's size in pixels (0 otherwise).
	Width, Height int
}

// Limits bound the work and memory one upload may take. A zero field takes the
// value from [DefaultLimits].
type Limits struct {
	// MaxBytes is the largest upload accepted, of any kind.
	MaxBytes int64
	// MaxPixels is the largest image accepted, as declared in its header
	// (width × height), checked before decoding.
	MaxPixels int64
	// MaxDecodeBytes bounds the memory of decoding one image, estimated
	// from its header ([Cost]): a 16-bit PNG takes 8 bytes a pixel, twice
	// an 8-bit one, so the pixel limit alone does not bound it. Zero:
	// 4 × MaxPixels, an 8-bit RGBA image at the pixel limit.
	MaxDecodeBytes int64
	// MaxImageSide is the longest side of a stored image; larger images are
	// scaled down to it.
	MaxImageSide int
	// JPEGQuality is the quality of re-encoded JPEGs (1–100).
	JPEGQuality int
	// MaxTextBytes is the most text kept from a PDF or text file, in bytes of
	// UTF-8.
	MaxTextBytes int
	// PDFTimeout bounds text extraction from one PDF.
	PDFTimeout time.Duration
}

// DefaultLimits returns the limits used where a field of [Limits] is zero.
func DefaultLimits() Limits {
	return Limits{
		MaxBytes:     32 << 20,
		MaxPixels:    40_000_000,
		MaxImageSide: 2048,
		JPEGQuality:  85,
		MaxTextBytes: 256 << 10,
		PDFTimeout:   20 * time.Second,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxBytes <= 0 {
		l.MaxBytes = d.MaxBytes
	}
	if l.MaxPixels <= 0 {
		l.MaxPixels = d.MaxPixels
	}
	if l.MaxDecodeBytes <= 0 {
		l.MaxDecodeBytes = 4 * l.MaxPixels
	}
	if l.MaxImageSide <= 0 {
		l.MaxImageSide = d.MaxImageSide
	}
	if l.JPEGQuality <= 0 || l.JPEGQuality > 100 {
		l.JPEGQuality = d.JPEGQuality
	}
	if l.MaxTextBytes <= 0 {
		l.MaxTextBytes = d.MaxTextBytes
	}
	if l.PDFTimeout <= 0 {
		l.PDFTimeout = d.PDFTimeout
	}
	return l
}

// Supported is the sentence that ends every refusal of a file's type.
const Supported = "Only images (PNG, JPEG, GIF, WebP), PDFs and text files can be attached."

// Process reads one upload from r and returns what to store. name is the
// user-supplied file name; it is used only in messages (cleaned by
// [DisplayName]) and never decides the type.
//
// Errors about the file itself (too large, unsupported type, damaged, a
// decompression bomb, a PDF that takes too long) are [apperr.Invalid] with a
// message meant for the person who uploaded it. A cancelled ctx returns its
// error, wrapped. Process never panics.
func Process(ctx context.Context, name string, r io.Reader, lim Limits) (res Result, err error) {
	defer func() {
		// A decoder that panics on a hostile file must not take the server
		// down; FuzzProcess looks for such panics without this net.
		if p := recover(); p != nil {
			res = Result{}
			err = apperr.Wrap(apperr.Invalid, fmt.Errorf("panic: %v", p),
				"%s could not be read; it may be damaged.", DisplayName(name))
		}
	}()
	return process(ctx, name, r, lim)
}

func process(ctx context.Context, name string, r io.Reader, lim Limits) (Result, error) {
	lim = lim.withDefaults()
	display := DisplayName(name)
	data, err := readLimited(r, lim.MaxBytes)
	if err != nil {
		if errors.Is(err, errTooLarge) {
			return Result{}, TooLarge(name, lim)
		}
		return Result{}, fmt.Errorf("read upload %q: %w", display, err)
	}
	if len(data) == 0 {
		return Result{}, apperr.New(apperr.Invalid, "%s is empty.", display)
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("process %q: %w", display, err)
	}

	switch f := sniff(data); f {
	case formatPNG, formatJPEG, formatGIF, formatWebP:
		return processImage(ctx, display, data, f, lim)
	case formatPDF:
		return processPDF(ctx, display, data, lim)
	}
	if res, ok, err := processText(display, data, lim); ok || err != nil {
		return res, err
	}
	return Result{}, apperr.New(apperr.Invalid, "%s %s. %s", display, describeUnsupported(data), Supported)
}

var errTooLarge = errors.New("upload too large")

// TooLarge is the refusal of an upload named name that is larger than
// lim.MaxBytes, for a caller that finds so before calling [Process].
func TooLarge(name string, lim Limits) error {
	lim = lim.withDefaults()
	return apperr.New(apperr.Invalid, "%s is larger than the %s limit.", DisplayName(name), formatBytes(lim.MaxBytes))
}

// readLimited reads all of r, or fails with errTooLarge past max bytes.
func readLimited(r io.Reader, max int64) ([]byte, error) {
	var buf bytes.Buffer
	if l, ok := r.(interface{ Len() int }); ok && int64(l.Len()) <= max {
		buf.Grow(l.Len() + bytes.MinRead) // one allocation when the size is known
	}
	n, err := buf.ReadFrom(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if n > max {
		return nil, errTooLarge
	}
	return buf.Bytes(), nil
}

type format int

const (
	formatUnknown format = iota
	formatPNG
	formatJPEG
	formatGIF
	formatWebP
	formatPDF
)

func (f format) String() string {
	switch f {
	case formatPNG:
		return "PNG"
	case formatJPEG:
		return "JPEG"
	case formatGIF:
		return "GIF"
	case formatWebP:
		return "WebP"
	case formatPDF:
		return "PDF"
	}
	return "unknown"
}

// sniff recognises the binary formats we accept by their magic numbers.
func sniff(b []byte) format {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return formatPNG
	case bytes.HasPrefix(b, []byte{0xFF, 0xD8, 0xFF}):
		return formatJPEG
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return formatGIF
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return formatWebP
	case bytes.HasPrefix(b, []byte("%PDF-")):
		return formatPDF
	}
	return formatUnknown
}

// describeUnsupported says what a refused file seems to be, as the rest of a
// sentence that starts with its name.
func describeUnsupported(b []byte) string {
	if len(b) >= 12 && string(b[4:8]) == "ftyp" {
		switch string(b[8:12]) {
		case "heic", "heix", "hevc", "heim", "heis", "mif1", "msf1":
			return "is a HEIC image, which cannot be attached yet; convert it to JPEG or PNG first"
		case "avif", "avis":
			return "is an AVIF image, which cannot be attached yet; convert it to JPEG or PNG first"
		}
	}
	switch {
	case bytes.HasPrefix(b, []byte("BM")) && len(b) > 14:
		return "is a BMP image, which cannot be attached; convert it to PNG first"
	case bytes.HasPrefix(b, []byte("II*\x00")), bytes.HasPrefix(b, []byte("MM\x00*")):
		return "is a TIFF image, which cannot be attached; convert it to PNG or JPEG first"
	case bytes.HasPrefix(b, []byte("PK\x03\x04")):
		return "is a ZIP archive (or an Office document, which is one); save it as PDF or text first"
	case bytes.HasPrefix(b, []byte{0xD0, 0xCF, 0x11, 0xE0}):
		return "is an old-style Office document; save it as PDF or text first"
	}
	ct := http.DetectContentType(b)
	switch {
	case ct == "application/octet-stream":
		return "is binary data, not text"
	case strings.HasPrefix(ct, "text/"):
		return "has too many control characters to be read as text"
	}
	return fmt.Sprintf("has an unsupported type (%s)", ct)
}

// formatBytes writes a byte count for people: "32 MB", "512 KB".
func formatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// IsImage reports whether a file starting with prefix is one of the image
// formats [Process] decodes, from its magic number alone.
func IsImage(prefix []byte) bool {
	switch sniff(prefix) {
	case formatPNG, formatJPEG, formatGIF, formatWebP:
		return true
	}
	return false
}

// CutText returns s cut to at most max bytes without splitting a rune, and
// the note saying so when it was cut ("" otherwise), as [Process] cuts text.
func CutText(s string, max int) (string, string) {
	if len(s) <= max {
		return s, ""
	}
	return cutUTF8(s, max), truncatedNote(max)
}
