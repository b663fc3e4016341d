#!/usr/bin/env bash
# npm run bench: nadir side by side with the tools people would use instead (nginx, a rasterio
# tiler, MapServer, the GDAL command line), on the same data in the same run, loopback only.
# Writes bench/results/<date>.json, docs/benchmarks.md (+ per-part pages) and PNG charts in
# docs/benchmarks/. Options go to bench/run.ts (--only tiles|coverage|raster|scale|storage, --quick,
# --profile). PostgreSQL, Redis and nginx: the scale part's throwaway servers (test/support/servers.ts).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh wrk nginx-light gunicorn python3-rasterio mapserver-bin spawn-fcgi time fonts-dejavu-core \
  postgresql-15 postgresql-15-postgis-3 redis-server
node --import tsx bench/run.ts "$@"
