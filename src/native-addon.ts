/**
 * nadir's native addon (native/tile-codec, built by scripts/setup.sh): the tile codec, mask
 * inflation and page-cache reads, in one binary so that set-up builds one thing. Loaded on first
 * use, so modules that never call it do not need the binary; then kept, as Node keeps any loaded
 * native module for the life of the process (a tile read calls this, and a new require per call
 * would cost more than the read).
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

// One level below the package root both as src/*.ts (tsx) and as dist/*.js (tsc).
const ADDON_PATH = fileURLToPath(new URL('../native/tile-codec/build/Release/tile_codec.node', import.meta.url));

let loaded: unknown;

/** The addon's exports, typed by the caller; a clear error when it was not built. */
export function nativeAddon<T>(): T {
  if (loaded) return loaded as T;
  try {
    loaded = createRequire(import.meta.url)(ADDON_PATH);
    return loaded as T;
  } catch (error) {
    throw new Error(
      `the native addon ${ADDON_PATH} cannot be loaded (${(error as Error).message.split('\n')[0]}); ` +
        'run scripts/setup.sh to build it',
      { cause: error },
    );
  }
}
