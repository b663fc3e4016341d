#!/usr/bin/env bash
# Every test nadir has: lint/format, type check, then the node:test suites (unit, GDAL-checked
# ingest of ../shared/realdata, CLI end to end).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh chromium
node_modules/.bin/biome check .
node_modules/.bin/tsc --noEmit -p tsconfig.json
mapfile -t files < <(find test -name '*.test.ts' | sort)
exec node --import tsx --test "${files[@]}"
