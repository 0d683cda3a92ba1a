// Package assets holds the artwork that Go code needs at run time: the
// window icon. The masters are the SVGs beside it; build/icons.sh renders
// the PNGs.
package assets

import _ "embed"

// Icon256 is the 256×256 application icon (PNG).
//
//go:embed icons/256x256/lembas.png
var Icon256 []byte
