#!/usr/bin/env bash
# mcp-everything.sh — installs the MCP reference server the tests run
# (@modelcontextprotocol/server-everything, pinned) into a cache directory
# outside the repository, once. Only the tests use it (backend/mcp starts
# it with node over streamable HTTP on a loopback port); LLeMbas never
# needs node at run time. Prints the server's entry point.
set -euo pipefail

version=2026.8.31
dir="${LEMBAS_MCP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lembas/mcp-everything-$version}"
entry="$dir/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

if [ ! -f "$entry" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "mcp-everything.sh: npm is missing (build/deps.sh test installs nodejs and npm)" >&2
    exit 1
  fi
  mkdir -p "$dir"
  echo "mcp-everything.sh: installing @modelcontextprotocol/server-everything@$version into $dir" >&2
  npm install --prefix "$dir" --no-audit --no-fund --no-save --omit=dev --loglevel=error \
    "@modelcontextprotocol/server-everything@$version" >&2
fi
echo "$entry"
