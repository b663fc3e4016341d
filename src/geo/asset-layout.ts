/**
 * How a survey asset's pixels are laid out in storage: what ingest writes and every reader (the
 * tile planner, the raster engine, garbage collection) reads. One module, so the two sides cannot
 * drift apart. Pure: keys and grids, no I/O.
 *
 * Two layouts (docs/ingest.md):
 * - **single**: one grid-aligned COG for every zoom from `maxZoom` down to `minZoom`, its extent
 *   padded to whole tiles of `minZoom` (cog-grid.ts). Every asset ingested before sharding, small
 *   assets (the whole grid within one shard's size), and aligned COGs stored as they are.
 * - **sharded**: one COG per map tile of the shard zoom `S` that holds source pixels, each holding
 *   every level from the native zoom down to `S` (256 x 2^(maxZoom - S) px a side at full
 *   resolution, no padding beyond that tile), plus one small "low" COG for the zooms below `S`,
 *   laid out like a single asset. The idea is Google's TCOG layout and linz/basemaps' cogify
 *   (one COG per covering tile of a tile matrix, low zooms apart); here the covering tile matrix
 *   is the map's own, so every COG tile is still one map tile and pass-through stays pass-through.
 */
import type { Bounds, TileCoord } from './web-mercator.js';
import { boundsOverlap, resolutionAtZoom, TILE_SIZE, tileBounds } from './web-mercator.js';

/** Declared nodata of every DetailDsm COG nadir writes. */
export const DSM_NODATA = -9999;

/**
 * Imagery is stored as JPEG (YCbCr 4:2:0, as the COG driver writes it) at this quality unless
 * NADIR_INGEST_JPEG_QUALITY says otherwise. Measured on the two-CRS delivery of
 * test/ingest/sharded.test.ts against GDAL's lossless mosaic + warp: 2.37 DN mean at 90, 1.90 at 95
 * (issue 31 asks for 2), for 1.44x the bytes of 90 on the demo town (docs/ingest.md, "Accuracy against GDAL's own mosaic").
 */
export const DEFAULT_JPEG_QUALITY = 95;

/**
 * Levels a shard holds below its native zoom: a shard is 256 x 2^5 = 8,192 px a side. Warped in
 * memory that is 256 MiB (4 bytes a pixel: RGB + alpha, or Float32), which keeps a worker under
 * its 1 GB; 16,384 px would be 1 GiB a shard.
 */
export const SHARD_LEVELS = 5;

/** One COG of an asset and the zooms it serves: what the tile planner plans reads from. */
export interface AssetPart {
  /** Its key in the survey storage (storage.ts), or an older row's absolute URI. */
  uri: string;
  /** EPSG:3857 extent of its full-resolution pixels. */
  bounds: Bounds;
  width: number;
  height: number;
  minZoom: number;
  maxZoom: number;
}

/** The shards of a sharded asset, as the catalogue keeps them in the asset's document. */
export interface ShardSet {
  /** The shard zoom S: each shard is one map tile of S. */
  zoom: number;
  /** Key prefix of the shard files: shard (x, y) is `<prefix><S>/<x>/<y>.tif`. */
  prefix: string;
  /** The shards that exist, as a flat list x0, y0, x1, y1, ..., sorted by row, then column. */
  tiles: number[];
  /** The COG of the zooms below S. */
  low: AssetPart;
}

/** The shard zoom of an asset whose native zoom is `maxZoom`. */
export function shardZoomFor(maxZoom: number, levels = SHARD_LEVELS): number {
  return Math.max(0, maxZoom - levels);
}

/** The file name of a shard below the asset's prefix. */
export function shardFile(zoom: number, x: number, y: number): string {
  return `${zoom}/${x}/${y}.tif`;
}

/** A shard as a part: one map tile of the shard zoom at the native resolution. */
export function shardPart(shards: Pick<ShardSet, 'zoom' | 'prefix'>, maxZoom: number, x: number, y: number): AssetPart {
  const side = TILE_SIZE * 2 ** (maxZoom - shards.zoom);
  return {
    uri: `${shards.prefix}${shardFile(shards.zoom, x, y)}`,
    bounds: tileBounds({ z: shards.zoom, x, y }),
    width: side,
    height: side,
    minZoom: shards.zoom,
    maxZoom,
  };
}

/** Every shard of the set, as (x, y) pairs. */
export function* shardTiles(shards: Pick<ShardSet, 'tiles'>): Generator<[number, number]> {
  for (let i = 0; i + 1 < shards.tiles.length; i += 2) yield [shards.tiles[i] as number, shards.tiles[i + 1] as number];
}

/**
 * Whether the set holds shard (x, y): a binary search of the list, which ingest writes sorted by
 * row, then column (no index to build or keep per asset).
 */
export function hasShard(shards: Pick<ShardSet, 'tiles'>, x: number, y: number): boolean {
  const { tiles } = shards;
  let low = 0;
  let high = tiles.length / 2 - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    const my = tiles[2 * mid + 1] as number;
    const mx = tiles[2 * mid] as number;
    if (my === y && mx === x) return true;
    if (my < y || (my === y && mx < x)) low = mid + 1;
    else high = mid - 1;
  }
  return false;
}

/** An asset as the layout sees it: its single COG, or its shards. */
export interface LaidOutAsset extends AssetPart {
  shards?: ShardSet;
}

/**
 * The COG of a sharded asset that serves map tile `tile`: the shard under the tile at zooms from S
 * up (a tile at those zooms lies inside exactly one shard), the low COG below S. Undefined when
 * the asset has no shard there (no source pixel fell in it).
 */
export function partForTile(shards: ShardSet, maxZoom: number, tile: TileCoord): AssetPart | undefined {
  if (tile.z < shards.zoom) return shards.low;
  const shift = tile.z - shards.zoom;
  const x = Math.floor(tile.x / 2 ** shift);
  const y = Math.floor(tile.y / 2 ** shift);
  return hasShard(shards, x, y) ? shardPart(shards, maxZoom, x, y) : undefined;
}

/**
 * The COGs GDAL reads for pixels over `box` (EPSG:3857) at `resolution` metres a pixel: the single
 * COG; the low COG when the output is at most as fine as its finest level (S - 1); otherwise the
 * shards the box touches (GDAL mosaics them, each with its own overviews). Empty when the box
 * touches no shard.
 */
export function filesForBox(asset: Pick<LaidOutAsset, 'uri' | 'shards'>, box: Bounds, resolution: number): string[] {
  const { shards } = asset;
  if (!shards) return [asset.uri];
  if (resolution >= resolutionAtZoom(shards.low.maxZoom) * (1 - 1e-9)) return [shards.low.uri];
  const files: string[] = [];
  for (const [x, y] of shardTiles(shards)) {
    if (boundsOverlap(tileBounds({ z: shards.zoom, x, y }), box)) {
      files.push(`${shards.prefix}${shardFile(shards.zoom, x, y)}`);
    }
  }
  return files;
}

/** Every file of the asset (what garbage collection keeps and retires). */
export function assetFiles(asset: LaidOutAsset): string[] {
  const { shards } = asset;
  if (!shards) return [asset.uri];
  const files = [shards.low.uri];
  for (const [x, y] of shardTiles(shards)) files.push(`${shards.prefix}${shardFile(shards.zoom, x, y)}`);
  return files;
}
