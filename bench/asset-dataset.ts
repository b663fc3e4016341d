/**
 * The one dataset the GDAL contenders (rasterio, MapServer, gdal_translate, the nginx tile cutter)
 * read for a survey asset nadir ingested: its COG, or for a sharded asset (docs/ingest.md) a VRT
 * mosaic of its shards at full resolution, written at `vrtPath`.
 */
import gdal from 'gdal-async';
import { assetFiles, type LaidOutAsset } from '../src/geo/asset-layout.js';

export async function assetDataset(
  storage: { gdalPath(location: string): string },
  asset: Pick<LaidOutAsset, 'uri' | 'shards'>,
  vrtPath: string,
): Promise<string> {
  if (!asset.shards) return storage.gdalPath(asset.uri);
  // assetPaths lists the low COG first: the shards alone hold the full resolution.
  const vrt = await gdal.buildVRTAsync(vrtPath, assetPaths(storage, asset).slice(1));
  vrt.close();
  return vrtPath;
}

/** Every file of the asset, as GDAL paths (to check a cached survey's files are all there). */
export function assetPaths(
  storage: { gdalPath(location: string): string },
  asset: Pick<LaidOutAsset, 'uri' | 'shards'>,
) {
  return assetFiles(asset as LaidOutAsset).map((key) => storage.gdalPath(key));
}

/** assetDataset, synchronously (GDAL's own call: for set-up code that is not async). */
export function assetDatasetSync(
  storage: { gdalPath(location: string): string },
  asset: Pick<LaidOutAsset, 'uri' | 'shards'>,
  vrtPath: string,
): string {
  if (!asset.shards) return storage.gdalPath(asset.uri);
  gdal.buildVRT(vrtPath, assetPaths(storage, asset).slice(1)).close();
  return vrtPath;
}
