package attach

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"testing"
)

// exifJPEG is a fake JPEG: SOI, an APP1 EXIF segment with the given IFD0
// entries (tag, type, count, value), then SOS.
func exifJPEG(bo binary.ByteOrder, entries [][4]uint32) []byte {
	var t bytes.Buffer
	if bo == binary.LittleEndian {
		t.WriteString("II")
	} else {
		t.WriteString("MM")
	}
	binary.Write(&t, bo, uint16(42))
	binary.Write(&t, bo, uint32(8))
	binary.Write(&t, bo, uint16(len(entries)))
	for _, e := range entries {
		binary.Write(&t, bo, uint16(e[0]))
		binary.Write(&t, bo, uint16(e[1]))
		binary.Write(&t, bo, e[2])
		// A SHORT value sits in the first two bytes of the field.
		binary.Write(&t, bo, uint16(e[3]))
		binary.Write(&t, bo, uint16(0))
	}
	seg := append([]byte("Exif\x00\x00"), t.Bytes()...)
	out := []byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 4, 'J', 'F'} // a JFIF-ish APP0 first
	out = append(out, 0xFF, 0xE1, byte((len(seg)+2)>>8), byte(len(seg)+2))
	out = append(out, seg...)
	return append(out, 0xFF, 0xDA, 0, 2)
}

func TestJPEGOrientation(t *testing.T) {
	ok := exifJPEG(binary.BigEndian, [][4]uint32{{0x010F, 2, 4, 0}, {0x0112, 3, 1, 8}})
	tests := []struct {
		name string
		in   []byte
		want int
	}{
		{"fixture", fixture(t, "rotated.jpg"), 6},
		{"big-endian, second entry", ok, 8},
		{"little-endian", exifJPEG(binary.LittleEndian, [][4]uint32{{0x0112, 3, 1, 3}}), 3},
		{"out of range", exifJPEG(binary.LittleEndian, [][4]uint32{{0x0112, 3, 1, 9}}), 1},
		{"wrong type", exifJPEG(binary.LittleEndian, [][4]uint32{{0x0112, 4, 1, 6}}), 1},
		{"no orientation", exifJPEG(binary.LittleEndian, [][4]uint32{{0x010F, 2, 4, 0}}), 1},
		{"no EXIF", []byte{0xFF, 0xD8, 0xFF, 0xDA, 0, 2}, 1},
		{"not a JPEG", []byte("hello"), 1},
		{"truncated", ok[:len(ok)-12], 1},
		{"empty", nil, 1},
	}
	for _, tt := range tests {
		if got := jpegOrientation(tt.in); got != tt.want {
			t.Errorf("%s: orientation %d, want %d", tt.name, got, tt.want)
		}
	}
	for n := range len(ok) { // every truncation is safe
		jpegOrientation(ok[:n])
	}
}

func TestOrient(t *testing.T) {
	// 3×2, every pixel distinct.
	src := image.NewRGBA(image.Rect(0, 0, 3, 2))
	for y := range 2 {
		for x := range 3 {
			src.Set(x, y, color.RGBA{uint8(x), uint8(y), 0, 255})
		}
	}
	// Where the stored top-left pixel (0,0) must end up, from the EXIF
	// definitions ("the 0th row is the visual …, the 0th column is …").
	corner := map[int]image.Point{
		2: {2, 0}, // top, right
		3: {2, 1}, // bottom, right
		4: {0, 1}, // bottom, left
		5: {0, 0}, // left, top
		6: {1, 0}, // right, top
		7: {1, 2}, // right, bottom
		8: {0, 2}, // left, bottom
	}
	inverse := map[int]int{2: 2, 3: 3, 4: 4, 5: 5, 6: 8, 7: 7, 8: 6}
	for o := 2; o <= 8; o++ {
		m := orient(src, o)
		b := m.Bounds()
		wantW, wantH := 3, 2
		if o >= 5 {
			wantW, wantH = 2, 3
		}
		if b.Dx() != wantW || b.Dy() != wantH {
			t.Errorf("orientation %d: size %v, want %dx%d", o, b, wantW, wantH)
			continue
		}
		if r, g, _, _ := m.At(corner[o].X, corner[o].Y).RGBA(); r != 0 || g != 0 {
			t.Errorf("orientation %d: stored (0,0) is not at %v", o, corner[o])
		}
		back := orient(m, inverse[o]).(*image.RGBA)
		if !bytes.Equal(back.Pix, src.Pix) {
			t.Errorf("orientation %d then %d is not the identity", o, inverse[o])
		}
	}
	if orient(src, 1) != image.Image(src) {
		t.Error("orientation 1 changed the image")
	}
}
