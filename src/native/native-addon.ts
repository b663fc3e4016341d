/**
 * nadir's native addons (native/<name>, built by scripts/setup.sh): `tile-codec` holds the tile
 * codec, mask inflation, page-cache reads, glibc's malloc controls (raster/memory.ts) and the way
 * to GDAL's remote-file cache (raster/gdal-curl-cache.ts); `token-seal` the transaction tokens'
 * AES-256-GCM.
 * Each is loaded on first use, so modules that never call one do not need its binary; then kept,
 * as Node keeps any loaded native module for the life of the process (a tile read calls one, and a
 * new require per call would cost more than the read).
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export type NativeAddonName = 'tile-codec' | 'token-seal';

const loaded = new Map<NativeAddonName, unknown>();

/** The addon's exports, typed by the caller; a clear error when it was not built. */
export function nativeAddon<T>(name: NativeAddonName): T {
  const known = loaded.get(name);
  if (known) return known as T;
  // Two levels below the package root both as src/native/*.ts (tsx) and as dist/native/*.js (tsc).
  const path = fileURLToPath(
    new URL(`../../native/${name}/build/Release/${name.replaceAll('-', '_')}.node`, import.meta.url),
  );
  try {
    const exports = createRequire(import.meta.url)(path);
    loaded.set(name, exports);
    return exports as T;
  } catch (error) {
    throw new Error(
      `the native addon ${path} cannot be loaded (${(error as Error).message.split('\n')[0]}); ` +
        'run scripts/setup.sh to build it',
      { cause: error },
    );
  }
}
