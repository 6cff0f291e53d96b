#!/usr/bin/env bash
# Install, one command at a time, only the tools the docs build and the browser tests need that this machine lacks.
#   chromium  <- Debian package `chromium`      (browser tests)
#   node, npm <- Debian packages `nodejs npm`   (docs build: require.js, widget manager, KaTeX), only when *both*
#                are missing: a Node.js from elsewhere (e.g. NodeSource) ships its own npm and conflicts with
#                Debian's `npm`, so apt is never asked for npm where `node` exists.
# Usage: tools/browsers.sh           install what is missing (root + apt), or say in one line how to
#        tools/browsers.sh --plan    print the Debian packages that would be installed here, install nothing
# With HETFL_REQUIRE_BROWSER=1 or CI=true a tool that is missing and cannot be installed is an error (exit 1);
# otherwise the browser tests skip with that line as the reason.
set -uo pipefail

plan() {
  local pkgs=()
  command -v chromium >/dev/null 2>&1 || pkgs+=(chromium)
  if ! command -v node >/dev/null 2>&1; then
    command -v npm >/dev/null 2>&1 || pkgs+=(nodejs npm)
    command -v npm >/dev/null 2>&1 && pkgs+=(nodejs)
  fi
  echo "${pkgs[@]:-}"
}

required() { [ -n "${HETFL_REQUIRE_BROWSER:-}" ] && [ "${HETFL_REQUIRE_BROWSER}" != 0 ] || [ "${CI:-}" = true ]; }

missing=$(plan)
if [ "${1:-}" = --plan ]; then echo "$missing"; exit 0; fi
if command -v node >/dev/null 2>&1 && ! command -v npm >/dev/null 2>&1; then
  msg="browsers: node is installed at $(command -v node) but npm is not: install npm from the same source as Node.js (not Debian's npm package, which conflicts with it)"
  if required; then echo "$msg" >&2; exit 1; fi
  echo "$msg"
fi
[ -z "$missing" ] && exit 0

how="install them with: sudo apt-get update && sudo apt-get install -y $missing"
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  msg="browsers: missing Debian packages: $missing; $how (root and apt are needed; the browser tests skip without them)"
  if required; then echo "$msg" >&2; exit 1; fi
  echo "$msg"; exit 0
fi
echo "browsers: installing $missing"
# shellcheck disable=SC2086  # one word per package
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null; }; then
  msg="browsers: apt-get could not install: $missing (run tools/apt_dry_run.py to see why)"
  if required; then echo "$msg" >&2; exit 1; fi
  echo "$msg"; exit 0
fi
