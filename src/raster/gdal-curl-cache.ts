/**
 * What GDAL's /vsicurl/ and /vsis3/ remember of remote files: their size, whether they exist, the
 * ranges read. A file GDAL first tried to open while the store did not answer is remembered as not
 * existing, and stays so when the store is back ("does not exist in the file system" for a file it
 * serves again), so every download of it failed until a restart. The engine forgets a file's entry
 * when GDAL cannot open it but the store reads it (engine.ts, #open). gdal-async does not expose
 * GDAL's VSICurlPartialClearCache, so the tile-codec addon finds it in the GDAL the process loaded
 * (native/tile-codec/src/gdal_cache_binding.c).
 */
import { nativeAddon } from '../native/native-addon.js';

interface GdalCacheAddon {
  gdalCurlClearCache(prefix?: string): boolean;
}

/** Forgets what GDAL remembers of remote files whose path starts with `prefix` (all without one). */
export function forgetRemoteFiles(prefix?: string): boolean {
  try {
    return nativeAddon<GdalCacheAddon>('tile-codec').gdalCurlClearCache(prefix);
  } catch {
    return false; // no addon: GDAL keeps what it knows, as before
  }
}
