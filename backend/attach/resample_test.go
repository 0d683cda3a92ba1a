package attach

import (
	"bytes"
	"image"
	"image/color"
	"math/rand/v2"
	"testing"

	"golang.org/x/image/draw"
)

func gray(w, h int, vals ...uint8) *image.Gray {
	m := image.NewGray(image.Rect(0, 0, w, h))
	copy(m.Pix, vals)
	return m
}

func TestAreaScale(t *testing.T) {
	tests := []struct {
		name string
		src  image.Image
		w, h int
		want []uint8 // red channel, row by row
	}{
		{"halve", gray(4, 2, 0, 100, 200, 40, 0, 100, 200, 40), 2, 1, []uint8{50, 120}},
		{"fractional", gray(3, 1, 0, 90, 180), 2, 1, []uint8{30, 150}},
		{"columns to one", gray(1, 3, 10, 20, 60), 1, 1, []uint8{30}},
		{"same size", gray(2, 2, 1, 2, 3, 4), 2, 2, []uint8{1, 2, 3, 4}},
		{"offset bounds", gray(4, 1, 0, 0, 200, 200).SubImage(image.Rect(2, 0, 4, 1)), 1, 1, []uint8{200}},
	}
	for _, tt := range tests {
		got := areaScale(tt.src, tt.w, tt.h)
		if b := got.Bounds(); b != image.Rect(0, 0, tt.w, tt.h) {
			t.Errorf("%s: bounds %v", tt.name, b)
			continue
		}
		for i, want := range tt.want {
			if r := got.Pix[4*i]; r != want {
				t.Errorf("%s: pixel %d = %d, want %d", tt.name, i, r, want)
			}
		}
	}
}

func TestAreaScaleKeepsTransparentColourOut(t *testing.T) {
	// Fully transparent red next to opaque blue: premultiplied averaging must
	// not turn the edge purple.
	src := image.NewNRGBA(image.Rect(0, 0, 4, 4))
	for y := range 4 {
		for x := range 4 {
			if x < 2 {
				src.SetNRGBA(x, y, color.NRGBA{255, 0, 0, 0})
			} else {
				src.SetNRGBA(x, y, color.NRGBA{0, 0, 255, 255})
			}
		}
	}
	got := areaScale(src, 3, 3)
	c := color.NRGBAModel.Convert(got.At(1, 1)).(color.NRGBA)
	if c.R > 5 || c.B < 250 || c.A < 100 || c.A > 160 {
		t.Errorf("edge pixel %v, want half-transparent blue", c)
	}
}

func TestSpansCoverEverySourcePixelOnce(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 100, 2049, 6000} {
		for _, m := range []int{1, 2, 3, 64, 2048} {
			if m > n {
				continue
			}
			total := make([]float64, m)
			for _, s := range spans(n, m) {
				total[s.at] += float64(s.w0)
				if s.w1 > 0 {
					total[s.at+1] += float64(s.w1)
				}
			}
			for i, v := range total {
				if want := float64(n) / float64(m); v < want-1e-3 || v > want+1e-3 {
					t.Fatalf("%d→%d: output %d gets %.4f source pixels, want %.4f", n, m, i, v, want)
				}
			}
		}
	}
}

// The 16-bit fast paths give the bytes draw.Draw gives.
func TestRowOfDeepImagesMatchesDraw(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, src := range []image.Image{image.NewNRGBA64(image.Rect(3, 5, 40, 9)), image.NewRGBA64(image.Rect(3, 5, 40, 9))} {
		var pix []uint8
		switch m := src.(type) {
		case *image.NRGBA64:
			pix = m.Pix
		case *image.RGBA64:
			pix = m.Pix
		}
		for i := range pix {
			pix[i] = uint8(r.IntN(256))
		}
		if m, ok := src.(*image.RGBA64); ok { // premultiplied: no channel above alpha
			for i := 0; i < len(m.Pix); i += 8 {
				a := uint16(m.Pix[i+6])<<8 | uint16(m.Pix[i+7])
				for c := 0; c < 6; c += 2 {
					v := min(uint16(m.Pix[i+c])<<8|uint16(m.Pix[i+c+1]), a)
					m.Pix[i+c], m.Pix[i+c+1] = uint8(v>>8), uint8(v)
				}
			}
		}
		b := src.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			got := image.NewRGBA(image.Rect(0, 0, b.Dx(), 1))
			want := image.NewRGBA(image.Rect(0, 0, b.Dx(), 1))
			rowOf(got, src, b.Min.X, y)
			draw.Draw(want, want.Rect, src, image.Pt(b.Min.X, y), draw.Src)
			if !bytes.Equal(got.Pix, want.Pix) {
				t.Fatalf("%T row %d:\n got %v\nwant %v", src, y, got.Pix[:16], want.Pix[:16])
			}
		}
	}
}
