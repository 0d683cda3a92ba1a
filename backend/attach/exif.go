package attach

import (
	"bytes"
	"encoding/binary"
	"image"

	"golang.org/x/image/draw"
)

// jpegOrientation returns the EXIF orientation (1–8) of a JPEG, or 1 when it
// has none or the EXIF block cannot be read. Only the one tag is read; the
// rest of the metadata is dropped by re-encoding.
func jpegOrientation(b []byte) int {
	if len(b) < 4 || b[0] != 0xFF || b[1] != 0xD8 {
		return 1
	}
	i := 2
	for i+4 <= len(b) {
		if b[i] != 0xFF {
			return 1
		}
		marker := b[i+1]
		switch {
		case marker == 0xFF: // fill byte
			i++
			continue
		case marker == 0x01 || marker >= 0xD0 && marker <= 0xD7: // no length
			i += 2
			continue
		case marker == 0xDA || marker == 0xD9: // image data or end: no EXIF after this
			return 1
		}
		n := int(binary.BigEndian.Uint16(b[i+2:]))
		if n < 2 || i+2+n > len(b) {
			return 1
		}
		seg := b[i+4 : i+2+n]
		if marker == 0xE1 && bytes.HasPrefix(seg, []byte("Exif\x00\x00")) {
			return tiffOrientation(seg[6:])
		}
		i += 2 + n
	}
	return 1
}

// tiffOrientation reads tag 0x0112 from IFD0 of a TIFF structure (the body of
// an EXIF segment).
func tiffOrientation(t []byte) int {
	if len(t) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 1
	}
	if bo.Uint16(t[2:]) != 42 {
		return 1
	}
	ifd := int64(bo.Uint32(t[4:]))
	if ifd < 8 || ifd+2 > int64(len(t)) {
		return 1
	}
	count := int64(bo.Uint16(t[ifd:]))
	for k := int64(0); k < count; k++ {
		e := ifd + 2 + 12*k
		if e+12 > int64(len(t)) {
			return 1
		}
		const tagOrientation, typeShort = 0x0112, 3
		if bo.Uint16(t[e:]) != tagOrientation {
			continue
		}
		if bo.Uint16(t[e+2:]) != typeShort || bo.Uint32(t[e+4:]) != 1 {
			return 1
		}
		if o := int(bo.Uint16(t[e+8:])); o >= 1 && o <= 8 {
			return o
		}
		return 1
	}
	return 1
}

// orient returns m turned upright according to an EXIF orientation, at origin
// (0,0). Orientations 5–8 swap width and height.
func orient(m image.Image, o int) image.Image {
	if o < 2 || o > 8 {
		return m
	}
	src, ok := m.(*image.RGBA)
	if !ok || src.Rect.Min != (image.Point{}) {
		b := m.Bounds()
		src = image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
		draw.Draw(src, src.Rect, m, b.Min, draw.Src)
	}
	w, h := src.Rect.Dx(), src.Rect.Dy()
	dw, dh := w, h
	if o >= 5 {
		dw, dh = h, w
	}
	dst := image.NewRGBA(image.Rect(0, 0, dw, dh))
	for dy := 0; dy < dh; dy++ {
		row := dst.Pix[dy*dst.Stride : dy*dst.Stride+4*dw]
		for dx := 0; dx < dw; dx++ {
			var sx, sy int
			switch o {
			case 2: // mirrored
				sx, sy = w-1-dx, dy
			case 3: // upside down
				sx, sy = w-1-dx, h-1-dy
			case 4: // mirrored upside down
				sx, sy = dx, h-1-dy
			case 5: // transposed
				sx, sy = dy, dx
			case 6: // needs a quarter turn clockwise
				sx, sy = dy, h-1-dx
			case 7: // transversed
				sx, sy = w-1-dy, h-1-dx
			case 8: // needs a quarter turn anticlockwise
				sx, sy = w-1-dy, dx
			}
			s := sy*src.Stride + 4*sx
			copy(row[4*dx:4*dx+4], src.Pix[s:s+4])
		}
	}
	return dst
}
