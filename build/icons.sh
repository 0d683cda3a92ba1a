#!/usr/bin/env bash
# icons.sh — renders assets/mark.svg to the PNG icon sizes a Linux desktop
# expects (assets/icons/NxN/lembas.png). The PNGs are committed, so builds
# and packaging need no SVG renderer; run this only after changing the mark.
# Needs rsvg-convert (Debian: librsvg2-bin).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v rsvg-convert >/dev/null || { echo "icons.sh: install librsvg2-bin (rsvg-convert)" >&2; exit 1; }
for s in 16 24 32 48 64 128 256 512; do
  mkdir -p "assets/icons/${s}x${s}"
  rsvg-convert -w "$s" -h "$s" assets/mark.svg -o "assets/icons/${s}x${s}/lembas.png"
done
echo "icons.sh: wrote assets/icons/*/lembas.png"
