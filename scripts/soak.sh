#!/usr/bin/env bash
# npm run soak: issue 18's reliability figures (bench/soak/run.ts) on the compiled `nadir serve`:
# mixed traffic with RSS and descriptors sampled, and memory after a burst of large downloads
# under glibc's malloc and jemalloc. Writes bench/results/soak-<date>.json and docs/reliability.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh wrk libjemalloc2
node --import tsx bench/soak/run.ts "$@"
