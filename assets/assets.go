// Package assets holds the artwork that Go code needs at run time: the
// window icon. The masters are the SVGs beside it; build/icons.sh renders
// the PNGs.
package assets

import _ "embed"

// Icon256 is the 256×256 application icon (PNG).
//
//go:embed icons/256x256/lembas.png
var Icon256 []byte

// Icon512 is the 512×512 application icon (PNG), for the web app manifest.
//
//go:embed icons/512x512/lembas.png
var Icon512 []byte
