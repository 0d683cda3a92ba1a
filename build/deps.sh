#!/usr/bin/env bash
# deps.sh SET — installs the Debian/Ubuntu packages a make target needs,
# only those that are missing. SET is "desktop" (build and run the window)
# or "test" (everything the test suite drives: Chromium, Xvfb, WebKitGTK…).
set -euo pipefail

desktop=(libgtk-3-dev libwebkit2gtk-4.1-dev pkg-config gcc)
test=("${desktop[@]}" chromium xvfb x11-utils dbus openbox imagemagick fonts-dejavu-core dpkg-dev desktop-file-utils gnome-keyring libsecret-tools openssh-server zsh)

case "${1:-}" in
  desktop) want=("${desktop[@]}") ;;
  test) want=("${test[@]}") ;;
  *) echo "usage: $0 desktop|test" >&2; exit 2 ;;
esac

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "deps.sh: not a Debian-like system; install the equivalents of: ${want[*]}" >&2
  exit 0
fi

missing=()
for p in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
# Node.js runs the MCP reference server in the tests. It is asked for by
# command, not by package: a machine whose node comes from another
# packaging (with npm inside it) must not get Debian's npm, which
# conflicts with it and fails the whole install.
if [ "${1:-}" = test ]; then
  command -v node >/dev/null 2>&1 || missing+=(nodejs)
  command -v npm >/dev/null 2>&1 || missing+=(npm)
fi
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo=(sudo); else
    echo "deps.sh: missing packages and no root: apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi
echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
