package attach

import (
	"image"
	"image/color"
)

// PeekSize is how much of an upload [Cost] wants to see: image headers sit
// at the start (a JPEG's frame header after its metadata segments, which
// rarely pass this).
const PeekSize = 64 << 10

// pdfCost is what extracting a PDF's text is reckoned to take.
const pdfCost = 64 << 20

// Cost estimates the memory that processing an upload takes, from its
// first bytes (PeekSize of them, or the whole file when it is shorter),
// before the rest is read: for an image its decoded pixels (from the
// header: 16 bits a channel and alpha count) and the scaled copy; a fixed
// allowance for a PDF; 0 for anything else, as text is kept as uploaded.
// An image whose header is not within prefix is reckoned at the most an
// image may take.
func Cost(prefix []byte, lim Limits) int64 {
	lim = lim.withDefaults()
	f := sniff(prefix)
	switch f {
	case formatPDF:
		return pdfCost
	case formatPNG, formatJPEG, formatGIF, formatWebP:
	default:
		return 0
	}
	most := MaxCost(lim)
	data := prefix
	if f == formatWebP {
		frame, _, err := webpFirstFrame(prefix)
		if err != nil {
			return most
		}
		data = frame
	}
	cfg, err := decodeConfig(data, f)
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		return most
	}
	need := decodeBytes(cfg, data, f)
	if need > lim.MaxDecodeBytes {
		return 0 // refused from its header, before any pixel is decoded
	}
	return need + scaledBytes(cfg.Width, cfg.Height, lim.MaxImageSide)
}

// MaxCost is the most [Cost] answers: an image at MaxDecodeBytes, scaled.
func MaxCost(lim Limits) int64 {
	lim = lim.withDefaults()
	return lim.MaxDecodeBytes + scaledBytes(lim.MaxImageSide, lim.MaxImageSide, lim.MaxImageSide)
}

// scaledBytes is the RGBA copy an image of w × h is scaled (or converted)
// into, twice over for the conversions around encoding.
func scaledBytes(w, h, side int) int64 {
	if w > side || h > side {
		if w >= h {
			h, w = max(1, int(int64(h)*int64(side)/int64(w))), side
		} else {
			w, h = max(1, int(int64(w)*int64(side)/int64(h))), side
		}
	}
	return 2 * 4 * int64(w) * int64(h)
}

// decodeBytes estimates the memory Go's decoder takes for an image, from
// its header: the JPEG frame header's planes and coefficients, else the
// pixels at the size the colour model stores them (an interlaced PNG's
// passes half as much again).
func decodeBytes(cfg image.Config, data []byte, f format) int64 {
	if f == formatJPEG {
		if n := jpegDecodeBytes(data); n > 0 {
			return n
		}
	}
	n := int64(cfg.Width) * int64(cfg.Height) * halfBytesPerPixel(cfg.ColorModel, f) / 2
	if f == formatPNG && len(data) > 28 && data[28] == 1 {
		n += n / 2
	}
	return n
}

// halfBytesPerPixel is how many half bytes a pixel of the model takes in
// the image type Go's decoders return for it.
func halfBytesPerPixel(m color.Model, f format) int64 {
	if _, ok := m.(color.Palette); ok {
		return 2
	}
	switch m {
	case color.GrayModel, color.AlphaModel:
		return 2
	case color.Gray16Model, color.Alpha16Model:
		return 4
	case color.RGBAModel, color.NRGBAModel, color.CMYKModel:
		return 8
	case color.RGBA64Model, color.NRGBA64Model:
		return 16
	case color.YCbCrModel:
		if f == formatWebP {
			return 3 // always 4:2:0
		}
		return 6 // 4:4:4 at most
	case color.NYCbCrAModel:
		return 5 // 4:2:0 with full alpha
	}
	return 16
}

// deep reports a colour model of 16 bits a channel.
func deep(m color.Model) bool {
	switch m {
	case color.Gray16Model, color.Alpha16Model, color.RGBA64Model, color.NRGBA64Model:
		return true
	}
	return false
}
