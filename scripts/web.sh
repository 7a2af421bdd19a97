#!/usr/bin/env bash
# Builds the web UI bundle (web/dist) that the vigil binary embeds
# (docs/web-ui.md). Installs exactly package-lock.json's npm packages with
# `npm ci`, preferring npm's cache so a second run works offline, then bundles
# with esbuild. Run it before CMake; `make build` does.
# Usage: scripts/web.sh [--require]
#   --require  fail when node/npm are missing (default: warn; the binary is
#              then built with a page saying how to build the UI)
set -euo pipefail
require=""
[ "${1:-}" = "--require" ] && require=1
web="$(cd "$(dirname "$0")/../web" && pwd)"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  msg="vigil: node and npm not found: building Vigil without its web UI (install Debian's nodejs and npm, then rerun scripts/web.sh)"
  if [ -n "$require" ]; then echo "$msg" >&2; exit 1; fi
  echo "$msg" >&2
  exit 0
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 18 ]; then
  echo "vigil: node $(node --version) is too old for the web UI build (needs 18 or newer)" >&2
  exit 1
fi

cd "$web"
# npm ci wipes node_modules, so it runs only when the lock file changed since
# the last install (the stamp is a copy of the lock it installed).
stamp=node_modules/.vigil-installed-lock
if ! cmp -s package-lock.json "$stamp" 2>/dev/null; then
  echo "vigil: installing the web UI's npm packages (package-lock.json)"
  npm ci --prefer-offline --no-audit --no-fund --loglevel=error
  cp package-lock.json "$stamp"
fi
node build.mjs
