package attach

import (
	"image"

	"golang.org/x/image/draw"
)

// areaScale shrinks src to w×h (no larger than src on either side) by area
// averaging: each output pixel is the mean of the source area it covers, with
// fractional weights at the edges. That is the standard anti-aliased
// downscale, and it streams: one source row is converted at a time, so the
// only large allocation is the result.
//
// x/image/draw's kernel scalers (CatmullRom and friends) were measured first:
// their two-pass scaler holds a float64 RGBA buffer of output width × source
// height, 262 MB for a 24-megapixel photo scaled to 2048 px, on top of the
// decoded source. ApproxBiLinear needs no buffer but samples only four source
// pixels per output pixel and aliases badly at these ratios.
func areaScale(src image.Image, w, h int) *image.RGBA {
	b := src.Bounds()
	sw, sh := b.Dx(), b.Dy()
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	xs, ys := spans(sw, w), spans(sh, h)
	norm := float32(float64(w) * float64(h) / (float64(sw) * float64(sh)))

	row := image.NewRGBA(image.Rect(0, 0, sw, 1)) // one source row, premultiplied
	hrow := make([]float32, 4*w)                  // that row, averaged across
	acc := make([]float32, 4*w)                   // the output row being built
	next := make([]float32, 4*w)                  // the share of the output row after it
	out := 0
	flush := func() {
		p := dst.Pix[out*dst.Stride : out*dst.Stride+4*w]
		for i, v := range acc {
			p[i] = clamp8(v * norm)
		}
		acc, next = next, acc
		clear(next)
		out++
	}
	for y := range sh {
		rowOf(row, src, b.Min.X, b.Min.Y+y)
		clear(hrow)
		for x, s := range xs {
			p := row.Pix[4*x : 4*x+4 : 4*x+4]
			r, g, bl, a := float32(p[0]), float32(p[1]), float32(p[2]), float32(p[3])
			q := hrow[4*s.at : 4*s.at+4 : 4*s.at+4]
			q[0] += r * s.w0
			q[1] += g * s.w0
			q[2] += bl * s.w0
			q[3] += a * s.w0
			if s.w1 > 0 {
				q = hrow[4*s.at+4 : 4*s.at+8 : 4*s.at+8]
				q[0] += r * s.w1
				q[1] += g * s.w1
				q[2] += bl * s.w1
				q[3] += a * s.w1
			}
		}
		s := ys[y]
		for s.at > out {
			flush()
		}
		for i, v := range hrow {
			acc[i] += v * s.w0
		}
		if s.w1 > 0 {
			for i, v := range hrow {
				next[i] += v * s.w1
			}
		}
	}
	for out < h {
		flush()
	}
	return dst
}

// span says where one source pixel goes when n pixels shrink to m: the output
// pixel it starts in (at), the fraction of it that falls there (w0), and the
// fraction that falls in the next output pixel (w1).
type span struct {
	at     int
	w0, w1 float32
}

func spans(n, m int) []span {
	out := make([]span, n)
	for i := range out {
		at := int(int64(i) * int64(m) / int64(n))
		edge := float64(int64(at+1)*int64(n)) / float64(m) // where output pixel at ends, in source pixels
		w0 := edge - float64(i)
		if w0 >= 1 || at+1 >= m {
			out[i] = span{at: at, w0: 1}
			continue
		}
		out[i] = span{at: at, w0: float32(w0), w1: float32(1 - w0)}
	}
	return out
}

func clamp8(v float32) uint8 {
	switch {
	case v <= 0:
		return 0
	case v >= 255:
		return 255
	}
	return uint8(v + 0.5)
}

// rowOf converts one source row, from (x0, y), into row (premultiplied
// RGBA). draw.Draw has fast paths for 8-bit images but reads 16-bit ones a
// pixel at a time through interfaces (seconds for a 20-megapixel PNG), so
// those are converted here, to the same bytes.
func rowOf(row *image.RGBA, src image.Image, x0, y int) {
	switch s := src.(type) {
	case *image.NRGBA64:
		p := s.Pix[s.PixOffset(x0, y):]
		for i := 0; i < len(row.Pix); i += 4 {
			q := p[2*i : 2*i+8 : 2*i+8]
			a := uint32(q[6])<<8 | uint32(q[7])
			row.Pix[i+0] = uint8((uint32(q[0])<<8 | uint32(q[1])) * a / 0xffff >> 8)
			row.Pix[i+1] = uint8((uint32(q[2])<<8 | uint32(q[3])) * a / 0xffff >> 8)
			row.Pix[i+2] = uint8((uint32(q[4])<<8 | uint32(q[5])) * a / 0xffff >> 8)
			row.Pix[i+3] = uint8(a >> 8)
		}
	case *image.RGBA64:
		p := s.Pix[s.PixOffset(x0, y):]
		for i := 0; i < len(row.Pix); i++ {
			row.Pix[i] = p[2*i] // the high byte of each premultiplied channel
		}
	default:
		draw.Draw(row, row.Rect, src, image.Pt(x0, y), draw.Src)
	}
}
