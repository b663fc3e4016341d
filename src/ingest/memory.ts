import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import gdal from 'gdal-async';

/**
 * GDAL's block cache for an ingest process, in MB. GDAL's default is 5% of RAM (1.2 GB on a
 * 24 GB machine), and an ingest streams every block through it once or twice: a larger cache only
 * holds blocks that are never read again. 256 MB covers several rows of 256 x 256 tiles of the
 * widest rasters nadir is sized for (40,000 px: 157 tiles x 256 KB a row of RGBA tiles = 40 MB).
 */
export const INGEST_GDAL_CACHE_MB = 128;

/**
 * Bounds GDAL's block cache for a process that ingests (nadir ingest, nadir demo). GDAL reads the
 * setting when its cache first holds a block, so this runs before any raster is opened. An
 * explicit GDAL_CACHEMAX in the environment wins.
 */
export function boundIngestMemory(): void {
  if (process.env.GDAL_CACHEMAX) return;
  gdal.config.set('GDAL_CACHEMAX', String(INGEST_GDAL_CACHE_MB));
}

/**
 * A full garbage collection, now. For a process that has just dropped large buffers and goes on to
 * an ingest: GDAL's memory is not V8's, so an ingest allocates too little JavaScript for V8 to see
 * a reason to collect, and garbage from before it can stay resident for much of it. `nadir demo`
 * calls this between generating the town and ingesting it (the generator's height model and
 * ground, 650 MB of SharedArrayBuffers, are garbage once it returns; docs/demo.md, "Memory").
 *
 * V8 offers a collection only to a process started with --expose-gc; the flag set at run time
 * exposes `gc` to contexts made afterwards, so one is made for it and the flag is put back.
 * V8 returns the collected array buffers' memory on a background thread a moment later.
 */
export function collectGarbage(): void {
  if (typeof globalThis.gc === 'function') {
    globalThis.gc();
    return;
  }
  setFlagsFromString('--expose-gc');
  try {
    (runInNewContext('gc') as () => void)();
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}
