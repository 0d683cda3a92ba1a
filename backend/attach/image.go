package attach

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"

	"golang.org/x/image/draw"
	"golang.org/x/image/webp"

	"github.com/llembas/lembas/backend/apperr"
)

// pngBudget is the largest opaque PNG kept as PNG. Screenshots and diagrams
// stay sharp under it; a photo saved as PNG is over it and becomes a JPEG.
const pngBudget = 1 << 20

// processImage checks the declared size, decodes one frame, orients, scales
// and re-encodes it.
func processImage(ctx context.Context, display string, data []byte, f format, lim Limits) (Result, error) {
	damaged := func(err error) error {
		return apperr.Wrap(apperr.Invalid, err, "%s is not a valid %s image; it may be damaged.", display, f)
	}

	lossy := f == formatJPEG
	if f == formatWebP {
		frame, isLossy, err := webpFirstFrame(data)
		if err != nil {
			return Result{}, damaged(err)
		}
		data, lossy = frame, isLossy
	}

	cfg, err := decodeConfig(data, f)
	if err != nil {
		return Result{}, damaged(err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return Result{}, damaged(fmt.Errorf("declared size %dx%d", cfg.Width, cfg.Height))
	}
	if int64(cfg.Width)*int64(cfg.Height) > lim.MaxPixels {
		return Result{}, apperr.New(apperr.Invalid,
			"%s is too large: %d × %d pixels (the limit is %.0f megapixels).",
			display, cfg.Width, cfg.Height, float64(lim.MaxPixels)/1e6)
	}

	// The pixel limit alone does not bound memory: a progressive JPEG is
	// decoded with every DCT coefficient held (4 bytes a pixel per
	// full-resolution component) besides the image, and a 16-bit PNG
	// takes 8 bytes a pixel.
	if need := decodeBytes(cfg, data, f); need > lim.MaxDecodeBytes {
		switch {
		case f == formatJPEG:
			return Result{}, apperr.New(apperr.Invalid,
				"%s is a progressive JPEG too large to read: %d × %d pixels (save it as a baseline JPEG, or smaller, first).",
				display, cfg.Width, cfg.Height)
		case deep(cfg.ColorModel):
			return Result{}, apperr.New(apperr.Invalid,
				"%s is too large to read: %d × %d pixels at 16 bits a channel would take %d MB (the limit is %d MB); save it with 8 bits a channel, or smaller, first.",
				display, cfg.Width, cfg.Height, need>>20, lim.MaxDecodeBytes>>20)
		}
		return Result{}, apperr.New(apperr.Invalid,
			"%s is too large to read: %d × %d pixels would take %d MB (the limit is %d MB); save it smaller first.",
			display, cfg.Width, cfg.Height, need>>20, lim.MaxDecodeBytes>>20)
	}

	orientation := 1
	if f == formatJPEG {
		orientation = jpegOrientation(data)
	}

	src, err := decodeFrame(data, f)
	if err != nil {
		return Result{}, damaged(err)
	}
	if b := src.Bounds(); int64(b.Dx())*int64(b.Dy()) > lim.MaxPixels || b.Empty() {
		return Result{}, damaged(fmt.Errorf("decoded size %v differs from the declared one", b))
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("process image %q: %w", display, err)
	}

	alpha := hasAlpha(src)
	// After scale, nothing refers to the full-size pixels: the collector can
	// take them back while the smaller copy is turned and encoded.
	img := orient(scale(src, lim.MaxImageSide), orientation)

	out, mime, err := encode(img, alpha, lossy, lim.JPEGQuality)
	if err != nil {
		return Result{}, fmt.Errorf("encode image %q: %w", display, err)
	}
	b := img.Bounds()
	return Result{Kind: KindImage, MIME: mime, Data: out, Width: b.Dx(), Height: b.Dy()}, nil
}

func decodeConfig(data []byte, f format) (image.Config, error) {
	r := bytes.NewReader(data)
	switch f {
	case formatPNG:
		return png.DecodeConfig(r)
	case formatJPEG:
		return jpeg.DecodeConfig(r)
	case formatGIF:
		return gif.DecodeConfig(r)
	case formatWebP:
		return webp.DecodeConfig(r)
	}
	return image.Config{}, fmt.Errorf("no decoder for %s", f)
}

// decodeFrame decodes the image, or the first frame of an animation: gif.Decode
// stops after the first frame, and webpFirstFrame has already cut a WebP down
// to its first frame.
func decodeFrame(data []byte, f format) (image.Image, error) {
	r := bytes.NewReader(data)
	switch f {
	case formatPNG:
		return png.Decode(r)
	case formatJPEG:
		return jpeg.Decode(r)
	case formatGIF:
		return gif.Decode(r)
	case formatWebP:
		return webp.Decode(r)
	}
	return nil, fmt.Errorf("no decoder for %s", f)
}

// hasAlpha reports whether any pixel of m is not fully opaque.
func hasAlpha(m image.Image) bool {
	if o, ok := m.(interface{ Opaque() bool }); ok {
		return !o.Opaque()
	}
	b := m.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if _, _, _, a := m.At(x, y).RGBA(); a != 0xffff {
				return true
			}
		}
	}
	return false
}

// scale returns m no larger than maxSide on its longest side, at origin (0,0).
// An image that needs no scaling and is already in a type the encoders handle
// directly is returned as it is (a GIF frame stays paletted, so its PNG stays
// small). Scaling works in premultiplied RGBA, which keeps the colour of
// transparent pixels from bleeding into their neighbours.
func scale(m image.Image, maxSide int) image.Image {
	b := m.Bounds()
	w, h := b.Dx(), b.Dy()
	if w > maxSide || h > maxSide {
		if w >= h {
			h = max(1, int((int64(h)*int64(maxSide)+int64(w)/2)/int64(w)))
			w = maxSide
		} else {
			w = max(1, int((int64(w)*int64(maxSide)+int64(h)/2)/int64(h)))
			h = maxSide
		}
		return areaScale(m, w, h)
	}
	if b.Min == (image.Point{}) {
		switch m.(type) {
		case *image.YCbCr, *image.RGBA, *image.NRGBA, *image.Gray, *image.Paletted:
			return m
		}
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(dst, dst.Rect, m, b.Min, draw.Src)
	return dst
}

// encode writes m as PNG when it has transparency or when a lossless source
// fits in pngBudget as PNG, and as JPEG otherwise.
func encode(m image.Image, alpha, lossy bool, quality int) ([]byte, string, error) {
	var buf bytes.Buffer
	if alpha || !lossy {
		enc := png.Encoder{CompressionLevel: png.DefaultCompression}
		if err := enc.Encode(&buf, m); err != nil {
			return nil, "", fmt.Errorf("png: %w", err)
		}
		if alpha || buf.Len() <= pngBudget {
			return buf.Bytes(), "image/png", nil
		}
		buf.Reset()
	}
	if err := jpeg.Encode(&buf, opaque(m), &jpeg.Options{Quality: quality}); err != nil {
		return nil, "", fmt.Errorf("jpeg: %w", err)
	}
	return buf.Bytes(), "image/jpeg", nil
}

// opaque returns m as the JPEG encoder should see it. Gray and YCbCr go
// through as they are; anything else is already RGBA from scale.
func opaque(m image.Image) image.Image {
	switch m.(type) {
	case *image.YCbCr, *image.Gray, *image.RGBA:
		return m
	}
	b := m.Bounds()
	dst := image.NewRGBA(b)
	draw.Draw(dst, b, &image.Uniform{C: color.White}, image.Point{}, draw.Src)
	draw.Draw(dst, b, m, b.Min, draw.Over)
	return dst
}

// jpegDecodeBytes estimates the memory Go's decoder takes for a JPEG, from
// its frame header: each component's plane (one byte a sample, in whole
// 8×8 blocks) and, for a progressive JPEG, its coefficients (a [64]int32
// a block). It answers 0 when it finds no frame header (DecodeConfig has
// already refused such a file).
func jpegDecodeBytes(b []byte) int64 {
	i := 2
	for i+4 <= len(b) {
		if b[i] != 0xFF {
			return 0
		}
		marker := b[i+1]
		switch {
		case marker == 0xFF:
			i++
			continue
		case marker == 0x01 || marker >= 0xD0 && marker <= 0xD7:
			i += 2
			continue
		case marker == 0xDA || marker == 0xD9:
			return 0
		}
		n := int(binary.BigEndian.Uint16(b[i+2:]))
		if n < 2 || i+2+n > len(b) {
			return 0
		}
		seg := b[i+4 : i+2+n]
		if marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC {
			progressive := marker == 0xC2 || marker == 0xC6 || marker == 0xCA || marker == 0xCE
			if len(seg) < 6 {
				return 0
			}
			h, w, nc := int64(binary.BigEndian.Uint16(seg[1:])), int64(binary.BigEndian.Uint16(seg[3:])), int(seg[5])
			if len(seg) < 6+3*nc {
				return 0
			}
			var hmax, vmax int64 = 1, 1
			for c := 0; c < nc; c++ {
				hmax = max(hmax, int64(seg[7+3*c]>>4))
				vmax = max(vmax, int64(seg[7+3*c]&0x0F))
			}
			mxx, myy := (w+8*hmax-1)/(8*hmax), (h+8*vmax-1)/(8*vmax)
			per := int64(64) // bytes a block of samples
			if progressive {
				per += 64 * 4
			}
			var total int64
			for c := 0; c < nc; c++ {
				hv := int64(seg[7+3*c]>>4) * int64(seg[7+3*c]&0x0F)
				total += mxx * myy * hv * per
			}
			return total
		}
		i += 2 + n
	}
	return 0
}
