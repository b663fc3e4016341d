/**
 * Independent arithmetic for the planner tests: map tiles and COG tiles in EPSG:3857 metres, written
 * out from the definitions rather than through src/geo or src/tiles.
 */
import { planCogGrid } from '../../src/geo/cog-grid.js';
import type { Bounds } from '../../src/geo/web-mercator.js';
import type { PlannableAsset, TileCandidate } from '../../src/tiles/planner.js';

export const HALF_WORLD = 20037508.342789244;
export const WORLD = 2 * HALF_WORLD;

/** Metres per pixel at zoom z. */
export const res = (z: number): number => WORLD / 256 / 2 ** z;

export function mapTile(z: number, x: number, y: number): Bounds {
  const span = WORLD / 2 ** z;
  return {
    minX: -HALF_WORLD + x * span,
    maxX: -HALF_WORLD + (x + 1) * span,
    maxY: HALF_WORLD - y * span,
    minY: HALF_WORLD - (y + 1) * span,
  };
}

/** The ground of pixels `window` of COG tile (col, row) of overview `level`, from the asset alone. */
export function cogPixels(
  asset: PlannableAsset,
  level: number,
  col: number,
  row: number,
  window = { x: 0, y: 0, width: 256, height: 256 },
): Bounds {
  const r = res(asset.maxZoom) * 2 ** level;
  const minX = asset.bounds.minX + (col * 256 + window.x) * r;
  const maxY = asset.bounds.maxY - (row * 256 + window.y) * r;
  return { minX, maxX: minX + window.width * r, maxY, minY: maxY - window.height * r };
}

/** Ground under output pixels `window` of tile z/x/y. */
export function outputPixels(
  z: number,
  x: number,
  y: number,
  window: { x: number; y: number; width: number; height: number },
): Bounds {
  const tile = mapTile(z, x, y);
  const r = res(z);
  const minX = tile.minX + window.x * r;
  const maxY = tile.maxY - window.y * r;
  return { minX, maxX: minX + window.width * r, maxY, minY: maxY - window.height * r };
}

/** The ground the asset's pixels cover (width x height full-resolution pixels from its corner). */
export function assetExtent(asset: PlannableAsset): Bounds {
  const r = res(asset.maxZoom);
  const { minX, maxY } = asset.bounds;
  return { minX, maxY, maxX: minX + asset.width * r, minY: maxY - asset.height * r };
}

/** Area shared by two boxes; boxes that overlap by float noise (under a micrometre) share none. */
export function intersectionArea(a: Bounds, b: Bounds): number {
  const w = Math.min(a.maxX, b.maxX) - Math.max(a.minX, b.minX);
  const h = Math.min(a.maxY, b.maxY) - Math.max(a.minY, b.minY);
  return w > 1e-6 && h > 1e-6 ? w * h : 0;
}

/** An asset as ingest would write it for `extent` at source resolution `sourceRes`. */
export function ingestedAsset(extent: Bounds, sourceRes: number): PlannableAsset {
  const grid = planCogGrid(extent, sourceRes);
  return { bounds: grid.bounds, width: grid.width, height: grid.height, minZoom: grid.minZoom, maxZoom: grid.zoom };
}

/**
 * A hand-made asset: `width` x `height` pixels at `maxZoom`, its corner at the top-left of map tile
 * (tileX, tileY) of `minZoom`.
 */
export function assetAt(
  minZoom: number,
  maxZoom: number,
  tileX: number,
  tileY: number,
  width: number,
  height: number,
): PlannableAsset {
  const corner = mapTile(minZoom, tileX, tileY);
  const r = res(maxZoom);
  const bounds = {
    minX: corner.minX,
    maxY: corner.maxY,
    maxX: corner.minX + width * r,
    minY: corner.maxY - height * r,
  };
  return { bounds, width, height, minZoom, maxZoom };
}

export function candidate(surveyId: string, asset: PlannableAsset, version = 1): TileCandidate {
  return { surveyId, version, asset };
}

/** Tile index range at zoom z overlapping `box`, grown by `ring` tiles each side. */
export function tileRange(z: number, box: Bounds, ring = 0): { x0: number; x1: number; y0: number; y1: number } {
  const span = WORLD / 2 ** z;
  const eps = 1e-9;
  return {
    x0: Math.floor((box.minX + HALF_WORLD) / span + eps) - ring,
    x1: Math.ceil((box.maxX + HALF_WORLD) / span - eps) - 1 + ring,
    y0: Math.floor((HALF_WORLD - box.maxY) / span + eps) - ring,
    y1: Math.ceil((HALF_WORLD - box.minY) / span - eps) - 1 + ring,
  };
}
