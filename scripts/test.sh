#!/usr/bin/env bash
# Every test nadir has: lint/format, type check, then the node:test suites (unit, GDAL-checked
# ingest of ../shared/realdata, CLI end to end), the service's and each workspace package's.
set -euo pipefail
cd "$(dirname "$0")/.."
# chromium: the map page tests; PostgreSQL/PostGIS, Redis and nginx: the scale-out tests start
# their own throwaway servers of these (test/support/servers.ts), never a system-wide one;
# prometheus: test/deploy/prometheus.test.ts scrapes its own servers with its own Prometheus;
# openssl: test/storage/socket-get-pool.test.ts makes its own TLS certificate.
bash scripts/setup.sh chromium postgresql-15 postgresql-15-postgis-3 redis-server nginx-light python3-owslib qgis python3-qgis prometheus openssl
node_modules/.bin/biome check .
node_modules/.bin/tsc --noEmit -p tsconfig.json
for project in packages/*/tsconfig.json; do
  node_modules/.bin/tsc --noEmit -p "$project"
done
mapfile -t files < <(find test packages/*/test -name '*.test.ts' | sort)
# A file (or a test) that hangs fails after 20 minutes instead of running into CI's limit: the
# whole suite takes about 16, and a test that stops a server bounds that stop itself.
exec node --import tsx --test --test-timeout=1200000 "${files[@]}"
