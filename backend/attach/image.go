package attach

import (
	"bytes"
	"context"
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
