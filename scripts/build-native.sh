#!/usr/bin/env bash
# Builds each native addon (native/<name>: the tile codec, the token seal) whose sources changed
# since its last successful build, so set-up stays quick; a failed build fails set-up, with the
# compiler's output.
set -euo pipefail
cd "$(dirname "$0")/.."

for dir in native/*/; do
  dir=${dir%/}
  name=$(basename "$dir")
  stamp=$dir/build/sources.sha256
  want=$(cd "$dir" && sha256sum binding.gyp src/* | sha256sum | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -f "$dir/build/Release/${name//-/_}.node" ]; then
    continue
  fi
  echo "setup: building $dir" >&2
  # node-gyp rebuild starts from an empty build/, so no stamp survives a failed build.
  if ! log=$(node_modules/.bin/node-gyp rebuild --directory "$dir" --nodedir=/usr 2>&1); then
    echo "$log" >&2
    echo "setup: building $dir failed (the tile codec needs libjpeg62-turbo-dev and libdeflate-dev, which scripts/setup.sh installs; the token seal only Node's headers)" >&2
    exit 1
  fi
  echo "$want" > "$stamp"
done
