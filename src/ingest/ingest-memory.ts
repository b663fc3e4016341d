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
