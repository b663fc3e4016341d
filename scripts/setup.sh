#!/usr/bin/env bash
# Installs what nadir needs, idempotently: Debian packages (GDAL for gdal-async to link against,
# plus what the tests and benchmarks use), npm packages (the service's and its workspace packages'
# under packages/), and the compiled code: the workspace packages (the map page's built page
# among them), then the CLI in dist/.
# Usage: scripts/setup.sh [extra apt packages...]
set -euo pipefail
cd "$(dirname "$0")/.."

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ]; then
  echo "nadir needs Node.js >= 20 (found $(node --version))" >&2
  exit 1
fi

packages=(libgdal-dev gdal-bin libjpeg62-turbo-dev libdeflate-dev "$@")
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "setup: installing Debian packages: ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# .npmrc makes gdal-async build against Debian's libgdal; reinstall only when the lock or a
# package.json (the root's or a workspace package's) changed.
stamp=node_modules/.nadir-lock.sha256
want=$(sha256sum package-lock.json package.json packages/*/package.json .npmrc | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: installing npm packages (first time: gdal-async and better-sqlite3 compile, a few minutes)" >&2
  # npm 11 warns that .npmrc's build flags are not its own settings; they are gdal-async's.
  # `npm install`, not `npm ci`: npm 11 writes only this platform's optional packages (biome's
  # binaries) into the lock and `npm ci` then rejects that same lock as out of sync.
  npm install --no-audit --no-fund --loglevel=error 2> >(grep -v 'Unknown \(project\|user\) config' >&2)
  echo "$want" > "$stamp"
fi

bash scripts/build-native.sh
# Project references: packages/demo-town first (the service imports its dist/), then the service;
# `tsc -b` skips a project whose sources have not changed since its last build. Then the map page
# (packages/map-page/dist/page/, what GET / serves): its build writes only files that changed.
# The same two steps as `npm run build`.
node_modules/.bin/tsc -b tsconfig.build.json
node packages/map-page/dist/build.js
