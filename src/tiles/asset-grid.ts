/**
 * The tile grid of one ingested COG, per overview level, in integer map-tile units.
 *
 * docs/ingest.md: an asset's COG is EPSG:3857 at the resolution of `maxZoom`, with one overview
 * per zoom down to `minZoom`, and its top-left corner on a tile boundary of `minZoom` (hence of every
 * finer zoom too). So COG tile (col, row) of the level at zoom z IS map tile
 * (originX + col, originY + row) of zoom z. Everything here is integer arithmetic once the origin
 * has been read off the asset's bounds (and checked), so the planner never accumulates float error.
 */
import type { Asset } from '../catalogue/survey.js';
import { MAX_ZOOM, ORIGIN_SHIFT, resolutionAtZoom, TILE_SIZE } from '../geo/web-mercator.js';

/** What the planner needs of an asset (the catalogue's Asset satisfies it). */
export type PlannableAsset = Pick<Asset, 'bounds' | 'width' | 'height' | 'minZoom' | 'maxZoom' | 'shards'>;

/** The asset does not describe a grid-aligned COG: a catalogue or ingest bug, not a client error. */
export class AssetGridError extends Error {
  override name = 'AssetGridError';
}

/**
 * How far (in full-resolution pixels) the asset's corner may sit from a tile corner, and its
 * extent from `width`/`height` pixels, before it counts as misaligned. Float noise in bounds
 * is ~1e-9 m; a real misalignment is at least a pixel.
 */
const PIXEL_TOLERANCE = 1e-3;

export interface AssetGrid {
  minZoom: number;
  maxZoom: number;
  /** Map tile column/row, at `minZoom`, of the COG's top-left tile. */
  originX: number;
  originY: number;
  /** Full-resolution size in pixels. */
  width: number;
  height: number;
}

/** One COG level: overview `level` (0 = full resolution) at map zoom `zoom`. */
export interface LevelGrid {
  level: number;
  zoom: number;
  /** Map tile column/row, at `zoom`, of COG tile (0, 0) of this level. */
  originX: number;
  originY: number;
  /** The level's size in pixels: full size / 2^level (whole: assetGrid checks it divides). */
  width: number;
  height: number;
  /** Number of 256 px COG tiles across and down (the last ones may be partial). */
  columns: number;
  rows: number;
}

function fail(message: string): never {
  throw new AssetGridError(message);
}

/** Reads the asset's tile origin off its bounds, checking every assumption of docs/ingest.md. */
export function assetGrid(asset: PlannableAsset): AssetGrid {
  const { bounds, width, height, minZoom, maxZoom } = asset;
  if (!Number.isInteger(minZoom) || !Number.isInteger(maxZoom) || minZoom < 0 || maxZoom > MAX_ZOOM) {
    fail(`asset zooms must be integers in 0..${MAX_ZOOM}, got minZoom ${minZoom}, maxZoom ${maxZoom}`);
  }
  if (minZoom > maxZoom) fail(`asset minZoom ${minZoom} is above its maxZoom ${maxZoom}`);
  if (!Number.isInteger(width) || !Number.isInteger(height) || width <= 0 || height <= 0) {
    fail(`asset size must be positive whole pixels, got ${width} x ${height}`);
  }
  const factor = 2 ** (maxZoom - minZoom);
  if (width % factor !== 0 || height % factor !== 0) {
    // Otherwise GDAL rounds the overview sizes up and their pixels are no longer 2^n full ones.
    fail(`asset size ${width} x ${height} does not divide by 2^(maxZoom - minZoom) = ${factor}`);
  }
  const { minX, minY, maxX, maxY } = bounds;
  if (![minX, minY, maxX, maxY].every(Number.isFinite)) fail('asset bounds must be finite numbers');
  const resolution = resolutionAtZoom(maxZoom);
  const spanX = (maxX - minX) / resolution;
  const spanY = (maxY - minY) / resolution;
  if (Math.abs(spanX - width) > PIXEL_TOLERANCE || Math.abs(spanY - height) > PIXEL_TOLERANCE) {
    fail(
      `asset bounds span ${spanX} x ${spanY} pixels at zoom ${maxZoom}, but the asset is ${width} x ${height} pixels`,
    );
  }
  // The corner in full-resolution pixels from the world's top-left corner, then in minZoom tiles.
  const pixelsPerTile = TILE_SIZE * factor;
  const cornerX = (minX + ORIGIN_SHIFT) / resolution;
  const cornerY = (ORIGIN_SHIFT - maxY) / resolution;
  const originX = Math.round(cornerX / pixelsPerTile);
  const originY = Math.round(cornerY / pixelsPerTile);
  if (
    Math.abs(cornerX - originX * pixelsPerTile) > PIXEL_TOLERANCE ||
    Math.abs(cornerY - originY * pixelsPerTile) > PIXEL_TOLERANCE
  ) {
    fail(`asset corner (${minX}, ${maxY}) is not on a tile boundary of its minZoom ${minZoom}`);
  }
  return { minZoom, maxZoom, originX, originY, width, height };
}

/** The grid of the level serving `zoom` (minZoom <= zoom <= maxZoom). */
export function levelGrid(grid: AssetGrid, zoom: number): LevelGrid {
  if (!Number.isInteger(zoom) || zoom < grid.minZoom || zoom > grid.maxZoom) {
    throw new RangeError(`zoom ${zoom} is outside the asset's levels ${grid.minZoom}..${grid.maxZoom}`);
  }
  const level = grid.maxZoom - zoom;
  const factor = 2 ** level;
  const refine = 2 ** (zoom - grid.minZoom);
  const width = grid.width / factor;
  const height = grid.height / factor;
  return {
    level,
    zoom,
    originX: grid.originX * refine,
    originY: grid.originY * refine,
    width,
    height,
    columns: Math.ceil(width / TILE_SIZE),
    rows: Math.ceil(height / TILE_SIZE),
  };
}
