/**
 * What ingest writes for one asset, decided before any pixel is read (pure): one COG when the
 * asset's aligned grid fits in one shard's size, else a COG per shard holding source pixels plus
 * the low COG (geo/asset-layout.ts). The finest source decides the native zoom.
 */
import { SHARD_LEVELS, shardFile, shardZoomFor } from '../geo/asset-layout.js';
import { type CogGrid, planCogGrid } from '../geo/cog-grid.js';
import { type Bounds, ORIGIN_SHIFT, resolutionAtZoom, TILE_SIZE, tileBounds } from '../geo/web-mercator.js';

/** What the plan needs of each source: where it lands in EPSG:3857 and how fine it is. */
export interface PlannedSource {
  mercatorExtent: Bounds;
  mercatorResolution: number;
}

export interface SingleLayout {
  layout: 'single';
  grid: CogGrid;
}

export interface ShardedLayout {
  layout: 'sharded';
  /** Native zoom. */
  zoom: number;
  shardZoom: number;
  /** Shards that some source's extent touches, row-major. */
  shards: Array<{ x: number; y: number; grid: CogGrid; file: string }>;
  /** The COG of the zooms below the shard zoom. */
  low: CogGrid;
  /** The shards' extent at the native zoom. */
  bounds: Bounds;
  width: number;
  height: number;
}

export type AssetLayoutPlan = SingleLayout | ShardedLayout;

// A source edge on a tile edge up to float noise must not add a row of shards.
const EDGE_EPSILON = 1e-6;

function union(extents: Bounds[]): Bounds {
  return {
    minX: Math.min(...extents.map((e) => e.minX)),
    minY: Math.min(...extents.map((e) => e.minY)),
    maxX: Math.max(...extents.map((e) => e.maxX)),
    maxY: Math.max(...extents.map((e) => e.maxY)),
  };
}

/** The grid of shard (x, y): one map tile of the shard zoom at the native resolution. */
export function shardGrid(zoom: number, shardZoom: number, x: number, y: number): CogGrid {
  const levels = zoom - shardZoom;
  const side = TILE_SIZE * 2 ** levels;
  return {
    zoom,
    minZoom: shardZoom,
    overviewCount: levels,
    resolution: resolutionAtZoom(zoom),
    tileX: x * 2 ** levels,
    tileY: y * 2 ** levels,
    width: side,
    height: side,
    bounds: tileBounds({ z: shardZoom, x, y }),
  };
}

/** The shard tiles an EPSG:3857 extent touches. */
function shardsUnder(extent: Bounds, shardZoom: number): Array<[number, number]> {
  const span = (2 * ORIGIN_SHIFT) / 2 ** shardZoom;
  const origin = ORIGIN_SHIFT;
  const last = 2 ** shardZoom - 1;
  const x0 = Math.max(0, Math.floor((extent.minX + origin) / span + EDGE_EPSILON));
  const x1 = Math.min(last, Math.ceil((extent.maxX + origin) / span - EDGE_EPSILON) - 1);
  const y0 = Math.max(0, Math.floor((origin - extent.maxY) / span + EDGE_EPSILON));
  const y1 = Math.min(last, Math.ceil((origin - extent.minY) / span - EDGE_EPSILON) - 1);
  const tiles: Array<[number, number]> = [];
  for (let y = y0; y <= y1; y++) for (let x = x0; x <= x1; x++) tiles.push([x, y]);
  return tiles;
}

/**
 * The layout of an asset made of `sources`. `shardLevels` is the levels a shard holds below the
 * native zoom (SHARD_LEVELS; tests use fewer to shard small rasters).
 */
export function planAssetLayout(sources: readonly PlannedSource[], shardLevels = SHARD_LEVELS): AssetLayoutPlan {
  if (sources.length === 0) throw new Error('an asset needs at least one source');
  const finest = Math.min(...sources.map((s) => s.mercatorResolution));
  const extent = union(sources.map((s) => s.mercatorExtent));
  const single = planCogGrid(extent, finest);
  const side = TILE_SIZE * 2 ** shardLevels;
  const zoom = single.zoom;
  const shardZoom = shardZoomFor(zoom, shardLevels);
  // The single grid is padded to whole tiles of its coarsest zoom (up to 2x the data on each
  // axis, more across a coarse tile border): past a shard's size, shards cost less than padding.
  if ((single.width <= side && single.height <= side) || shardZoom === 0) return { layout: 'single', grid: single };

  const keys = new Set<number>();
  const tiles: Array<[number, number]> = [];
  for (const source of sources) {
    for (const [x, y] of shardsUnder(source.mercatorExtent, shardZoom)) {
      const key = y * 2 ** shardZoom + x;
      if (!keys.has(key)) {
        keys.add(key);
        tiles.push([x, y]);
      }
    }
  }
  tiles.sort((a, b) => a[1] - b[1] || a[0] - b[0]);
  const shards = tiles.map(([x, y]) => ({
    x,
    y,
    grid: shardGrid(zoom, shardZoom, x, y),
    file: shardFile(shardZoom, x, y),
  }));
  const bounds = union(shards.map((s) => s.grid.bounds));
  const resolution = resolutionAtZoom(zoom);
  return {
    layout: 'sharded',
    zoom,
    shardZoom,
    shards,
    low: planCogGrid(extent, resolutionAtZoom(shardZoom - 1)),
    bounds,
    width: Math.round((bounds.maxX - bounds.minX) / resolution),
    height: Math.round((bounds.maxY - bounds.minY) / resolution),
  };
}
