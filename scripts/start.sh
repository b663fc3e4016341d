#!/usr/bin/env bash
# Runs nadir on the embedded default: SQLite and local files under ./data (NADIR_DATA_DIR),
# the generated demo town, and a demo API key printed before the server starts.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bin/nadir demo
exec bin/nadir serve
