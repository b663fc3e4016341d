#!/usr/bin/env bash
# Runs the whole test suite as if on other days, to show that no test depends on the date it runs:
# the process clock is moved with libfaketime (Debian `faketime`, LD_PRELOAD, inherited by every
# child process: the CLI, `nadir serve`, GDAL) and the tests' own clock (test/support/clock.ts)
# starts at the same instant through NADIR_TEST_NOW. One run per date, about as long as `npm test`.
# Usage: scripts/test-dates.sh [ISO instant ...]   (default: the dates docs/testing.md names)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh chromium postgresql-15 postgresql-15-postgis-3 redis-server nginx-light faketime
lib=$(dpkg -L libfaketime | grep 'libfaketime.so.1$' | head -n 1)
instants=("$@")
[ ${#instants[@]} -gt 0 ] || instants=(2026-12-31T23:59:59Z 2028-02-29T12:00:00Z 2031-07-01T00:00:00Z)
# Each date also runs in a timezone far from UTC, where the local date differs from the UTC one.
zones=(Pacific/Kiritimati America/Adak Asia/Kolkata)
mapfile -t files < <(find test packages/*/test -name '*.test.ts' | sort)
status=0
for i in "${!instants[@]}"; do
  instant=${instants[$i]}
  zone=${zones[$((i % ${#zones[@]}))]}
  # An offset from the real clock, not a start time: with a start time every process (each CLI
  # call, each server) would start its own clock there, and a later process would stamp an
  # earlier time than the one before it.
  offset=$(($(date -d "$instant" +%s) - $(date +%s)))
  echo "test-dates: $instant in $zone (offset ${offset}s)" >&2
  if ! TZ=$zone NADIR_TEST_NOW=$instant FAKETIME="+${offset}" FAKETIME_DONT_FAKE_MONOTONIC=1 \
    LD_PRELOAD=$lib node --import tsx --test "${files[@]}" >"/tmp/nadir-test-dates-$i.log" 2>&1; then
    status=1
  fi
  grep -E '^# (tests|pass|fail)' "/tmp/nadir-test-dates-$i.log" >&2 || true
  grep -E '^not ok' "/tmp/nadir-test-dates-$i.log" >&2 || true
done
exit $status
