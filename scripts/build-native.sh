#!/usr/bin/env bash
# Builds the tile encoder addon (native/tile-codec) when its sources changed since the last
# successful build, so set-up stays quick; a failed build fails set-up, with the compiler's output.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=native/tile-codec
stamp=$dir/build/sources.sha256
want=$(cd "$dir" && sha256sum binding.gyp src/* | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$dir/build/Release/tile_codec.node" ]; then
  exit 0
fi

echo "setup: building $dir" >&2
# node-gyp rebuild starts from an empty build/, so no stamp survives a failed build.
if ! log=$(node_modules/.bin/node-gyp rebuild --directory "$dir" --nodedir=/usr 2>&1); then
  echo "$log" >&2
  echo "setup: building $dir failed (it needs libjpeg62-turbo-dev and libdeflate-dev, which scripts/setup.sh installs)" >&2
  exit 1
fi
echo "$want" > "$stamp"
