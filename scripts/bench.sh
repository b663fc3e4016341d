#!/usr/bin/env bash
# npm run bench: every benchmark, each against its named reference measured in the same run.
# Loopback only; each part stops what it starts. Figures go to docs/benchmarks-*.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
node --import tsx bench/coverage.ts
node --import tsx bench/raster.ts
