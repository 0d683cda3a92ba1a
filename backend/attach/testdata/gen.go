//go:build ignore

// gen writes the fixtures of backend/attach that are easier to build by hand
// than with ImageMagick: run it from this directory with `go run gen.go`.
// README.md lists every fixture and how it was made.
package main

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"log"
	"math/rand"
	"os"
)

func main() {
	write("rotated.jpg", rotatedJPEG())
	write("bomb.png", bombPNG())
	write("text.pdf", textPDF())
	write("scanned.pdf", scannedPDF())
	write("malformed.pdf", []byte("%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [3 0 R"))
	write("notreally.png", []byte("This is not a picture.\nIt is plain text that someone named .png.\n"))
	write("page.html", []byte("<!doctype html>\n<html><head><title>Hi</title></head>\n<body><script>alert(document.cookie)</script><p>Hello from an HTML file.</p></body></html>\n"))
	write("utf8bom.txt", append([]byte{0xEF, 0xBB, 0xBF}, "Grüße, 世界 — UTF-8 with a BOM\n"...))
	write("utf16le.txt", utf16("Grüße, 世界 — UTF-16 LE\n", binary.LittleEndian))
	write("utf16be.txt", utf16("Grüße, 世界 — UTF-16 BE\n", binary.BigEndian))
	// Windows-1252: é=E9 è=E8 û=FB €=80.
	write("latin1.txt", []byte("Caf\xe9 cr\xe8me br\xfbl\xe9e costs 5 \x80.\n"))
	blob := make([]byte, 4096)
	rand.New(rand.NewSource(6)).Read(blob)
	blob[10] = 0
	write("blob.bin", blob)
}

func write(name string, b []byte) {
	if err := os.WriteFile(name, b, 0o644); err != nil {
		log.Fatal(err)
	}
}

// rotatedJPEG is 120×80 as stored: the left half red, the right half blue,
// a green square in the top-left corner; EXIF says orientation 6 (turn a
// quarter clockwise to view) and carries a camera make that must not survive.
func rotatedJPEG() []byte {
	m := image.NewRGBA(image.Rect(0, 0, 120, 80))
	for y := 0; y < 80; y++ {
		for x := 0; x < 120; x++ {
			c := color.RGBA{220, 20, 20, 255}
			if x >= 60 {
				c = color.RGBA{20, 20, 220, 255}
			}
			if x < 16 && y < 16 {
				c = color.RGBA{20, 200, 20, 255}
			}
			m.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, m, &jpeg.Options{Quality: 90}); err != nil {
		log.Fatal(err)
	}
	j := buf.Bytes()

	// TIFF, little-endian: IFD0 with Make (ASCII) and Orientation (SHORT).
	make_ := []byte("LeakyCam GPS 51.5N\x00")
	var t bytes.Buffer
	le := binary.LittleEndian
	t.WriteString("II")
	binary.Write(&t, le, uint16(42))
	binary.Write(&t, le, uint32(8))
	binary.Write(&t, le, uint16(2))
	valueOff := uint32(8 + 2 + 2*12 + 4)
	binary.Write(&t, le, []uint16{0x010F, 2}) // Make, ASCII
	binary.Write(&t, le, uint32(len(make_)))
	binary.Write(&t, le, valueOff)
	binary.Write(&t, le, []uint16{0x0112, 3}) // Orientation, SHORT
	binary.Write(&t, le, uint32(1))
	binary.Write(&t, le, []uint16{6, 0})
	binary.Write(&t, le, uint32(0)) // no next IFD
	t.Write(make_)

	app1 := append([]byte("Exif\x00\x00"), t.Bytes()...)
	var out bytes.Buffer
	out.Write(j[:2]) // SOI
	out.Write([]byte{0xFF, 0xE1})
	binary.Write(&out, binary.BigEndian, uint16(len(app1)+2))
	out.Write(app1)
	out.Write(j[2:])
	return out.Bytes()
}

// bombPNG declares 50000×50000 RGB pixels (7.5 GB once decoded) in a few
// dozen bytes.
func bombPNG() []byte {
	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], 50000)
	binary.BigEndian.PutUint32(ihdr[4:], 50000)
	ihdr[8], ihdr[9] = 8, 2 // 8-bit truecolour
	pngChunk(&out, "IHDR", ihdr)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(make([]byte, 1024))
	zw.Close()
	pngChunk(&out, "IDAT", z.Bytes())
	pngChunk(&out, "IEND", nil)
	return out.Bytes()
}

func pngChunk(w *bytes.Buffer, typ string, data []byte) {
	binary.Write(w, binary.BigEndian, uint32(len(data)))
	c := crc32.NewIEEE()
	c.Write([]byte(typ))
	c.Write(data)
	w.WriteString(typ)
	w.Write(data)
	binary.Write(w, binary.BigEndian, c.Sum32())
}

func utf16(s string, bo binary.AppendByteOrder) []byte {
	var out []byte
	out = bo.AppendUint16(out, 0xFEFF)
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			out = bo.AppendUint16(out, uint16(0xD800+(r>>10)))
			out = bo.AppendUint16(out, uint16(0xDC00+(r&0x3FF)))
			continue
		}
		out = bo.AppendUint16(out, uint16(r))
	}
	return out
}

// pdfFile assembles numbered objects (1-based) into a PDF with a correct
// cross-reference table; object 1 is the catalog.
func pdfFile(objs ...[]byte) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offs := make([]int, len(objs))
	for i, o := range objs {
		offs[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n", i+1)
		b.Write(o)
		b.WriteString("\nendobj\n")
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

func stream(dict string, data []byte) []byte {
	return []byte(fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data))
}

// textPDF has two pages of Helvetica text: the first with a plain content
// stream, the second compressed (FlateDecode) and using TJ with a word gap.
func textPDF() []byte {
	page1 := []byte("BT /F1 14 Tf 72 720 Td (Hello from LLeMbas.) Tj 0 -20 Td (A second line, with caf\\351 au lait.) Tj ET")
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte("BT /F1 14 Tf 72 720 Td [(Page) -300 (two) -300 (ends) -300 (here.)] TJ ET"))
	zw.Close()
	return pdfFile(
		[]byte("<< /Type /Catalog /Pages 2 0 R >>"),
		[]byte("<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>"),
		[]byte("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 6 0 R >>"),
		[]byte("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 7 0 R >>"),
		[]byte("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"),
		stream("", page1),
		stream("/Filter /FlateDecode", z.Bytes()),
	)
}

// scannedPDF is one page holding only a JPEG image, as a scanner makes it.
func scannedPDF() []byte {
	m := image.NewGray(image.Rect(0, 0, 170, 220))
	r := rand.New(rand.NewSource(1))
	for i := range m.Pix {
		m.Pix[i] = uint8(230 + r.Intn(25))
	}
	for y := 30; y < 190; y += 12 { // lines of "print"
		for x := 20; x < 150; x++ {
			if r.Intn(4) > 0 {
				m.Pix[y*m.Stride+x] = 40
			}
		}
	}
	var j bytes.Buffer
	if err := jpeg.Encode(&j, m, &jpeg.Options{Quality: 60}); err != nil {
		log.Fatal(err)
	}
	content := []byte("q 612 0 0 792 0 0 cm /Im0 Do Q")
	return pdfFile(
		[]byte("<< /Type /Catalog /Pages 2 0 R >>"),
		[]byte("<< /Type /Pages /Kids [3 0 R] /Count 1 >>"),
		[]byte("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im0 4 0 R >> >> /Contents 5 0 R >>"),
		stream("/Type /XObject /Subtype /Image /Width 170 /Height 220 /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /DCTDecode", j.Bytes()),
		stream("", content),
	)
}
