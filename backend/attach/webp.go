package attach

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// webpFirstFrame returns a still WebP the x/image decoder can read, and whether
// its data is lossy (VP8) rather than lossless (VP8L). A still WebP is returned
// as it is. An animated one (which x/image/webp cannot decode) is rebuilt as a
// still image from its first ANMF frame, so later frames are never decoded. A
// first frame smaller than the canvas is kept at its own size, not placed on
// the canvas.
func webpFirstFrame(b []byte) (still []byte, lossy bool, err error) {
	chunks, err := riffChunks(b)
	if err != nil {
		return nil, false, err
	}
	if len(chunks) == 0 {
		return nil, false, errors.New("webp: no chunks")
	}
	const animationBit = 1 << 1
	if chunks[0].id != "VP8X" || len(chunks[0].data) < 10 || chunks[0].data[0]&animationBit == 0 {
		for _, c := range chunks {
			switch c.id {
			case "VP8 ":
				return b, true, nil
			case "VP8L":
				return b, false, nil
			}
		}
		return nil, false, errors.New("webp: no image data")
	}

	for _, c := range chunks {
		if c.id != "ANMF" {
			continue
		}
		if len(c.data) < 16 {
			return nil, false, errors.New("webp: short ANMF chunk")
		}
		w := c.data[6:9]  // frame width - 1, 24-bit little-endian
		h := c.data[9:12] // frame height - 1
		frame, err := riffChunksAt(c.data, 16, len(c.data))
		if err != nil {
			return nil, false, fmt.Errorf("webp: first frame: %w", err)
		}
		var alph []byte
		for _, f := range frame {
			switch f.id {
			case "ALPH":
				alph = f.data
			case "VP8L":
				return riff(chunk{"VP8L", f.data}), false, nil
			case "VP8 ":
				if alph == nil {
					return riff(chunk{"VP8 ", f.data}), true, nil
				}
				const alphaBit = 1 << 4
				vp8x := make([]byte, 10)
				vp8x[0] = alphaBit
				copy(vp8x[4:7], w)
				copy(vp8x[7:10], h)
				return riff(chunk{"VP8X", vp8x}, chunk{"ALPH", alph}, chunk{"VP8 ", f.data}), true, nil
			}
		}
		return nil, false, errors.New("webp: first frame has no image data")
	}
	return nil, false, errors.New("webp: animation has no frames")
}

type chunk struct {
	id   string
	data []byte
}

// riffChunks lists the chunks of a RIFF WEBP file; their data alias b.
func riffChunks(b []byte) ([]chunk, error) {
	if len(b) < 12 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WEBP" {
		return nil, errors.New("webp: not a RIFF WEBP file")
	}
	end := 8 + int64(binary.LittleEndian.Uint32(b[4:]))
	if end > int64(len(b)) {
		end = int64(len(b)) // tolerate a declared size past a truncated end; the decoder decides
	}
	return riffChunksAt(b, 12, int(end))
}

func riffChunksAt(b []byte, off, end int) ([]chunk, error) {
	var out []chunk
	for off+8 <= end {
		n := int64(binary.LittleEndian.Uint32(b[off+4:]))
		if int64(off)+8+n > int64(end) {
			return nil, fmt.Errorf("webp: chunk %q runs past the end", b[off:off+4])
		}
		out = append(out, chunk{string(b[off : off+4]), b[off+8 : off+8+int(n)]})
		off += 8 + int(n) + int(n&1)
	}
	return out, nil
}

// riff writes a RIFF WEBP file made of chunks.
func riff(chunks ...chunk) []byte {
	size := 4
	for _, c := range chunks {
		size += 8 + len(c.data) + len(c.data)&1
	}
	out := make([]byte, 0, 8+size)
	out = append(out, "RIFF"...)
	out = binary.LittleEndian.AppendUint32(out, uint32(size))
	out = append(out, "WEBP"...)
	for _, c := range chunks {
		out = append(out, c.id...)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(c.data)))
		out = append(out, c.data...)
		if len(c.data)&1 == 1 {
			out = append(out, 0)
		}
	}
	return out
}
