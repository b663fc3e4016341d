/**
 * The tile planner: given a map tile and the candidate survey assets in draw order, decide, before
 * any I/O, which COG tiles to read and where each lands in the 256 x 256 output. Pure: no I/O, no
 * clock, no randomness; the executor (COG reading, masks, compositing, encoding) comes after it.
 *
 * Because ingest writes every COG on the map's own grid (docs/ingest.md), the plan is integer
 * arithmetic: at a zoom within [minZoom, maxZoom] exactly one COG tile of the level at that zoom is
 * the map tile, read whole and drawn 1:1 (`passThrough`). Below minZoom the coarsest level is
 * shrunk by 2^(minZoom - z); each of its COG tiles lands on a (256 / 2^(minZoom - z))-pixel cell of
 * the output. The idea follows linz/basemaps' `packages/tiler/src/tiler.ts` (which handles arbitrary
 * COG grids with extract/resize/crop steps); here the alignment lets us skip all of that.
 *
 * Decisions:
 * - Zooms above an asset's maxZoom are not drawn (decisions.md); the layer is skipped.
 * - Zooms below minZoom are drawn from the coarsest level down to `minZoom - maxUnderzoom`
 *   (default MAX_UNDERZOOM = 4: the shrink factor is at most 16 and a COG tile still covers a
 *   16 x 16 cell). Ingest picks minZoom so the coarsest level holds the survey in one or two tiles,
 *   so at minZoom - 4 the whole survey is at most 32 output pixels across; further out it would be
 *   a speck costing a COG open per survey per tile, so the layer is skipped ('below-min-zoom') and a
 *   tile with nothing else to draw is a 404 like any empty tile.
 * - Layers keep the caller's order (newest first, or earliest first for `mosaic=earliest`).
 */
import { type AssetPart, partForTile } from '../geo/asset-layout.js';
import { boxInsideMultiPolygon, boxIntersectsMultiPolygon, type MultiPolygon } from '../geo/polygon.js';
import {
  type Bounds,
  isValidTile,
  mercatorToLonLat,
  resolutionAtZoom,
  TILE_SIZE,
  type TileCoord,
  tileBounds,
} from '../geo/web-mercator.js';
import { assetGrid, type LevelGrid, levelGrid, type PlannableAsset } from './asset-grid.js';

export { AssetGridError, type PlannableAsset } from './asset-grid.js';

/** How many zooms below an asset's minZoom it is still drawn, by default. */
export const MAX_UNDERZOOM = 4;
/** Beyond 2^8 = 256 a COG tile would shrink below one output pixel. */
const UNDERZOOM_LIMIT = 8;

/**
 * Footprint slack. Ingest traces the footprint on the first overview level at most 1024 px across
 * (src/ingest/footprint.ts) and simplifies it by one pixel of that level, so the real mask may reach
 * about two of those pixels past the footprint. Such a pixel is at most 1/512 of the asset's larger
 * side (or one full-resolution pixel when the asset is under 1024 px), so tiles are tested against
 * the footprint grown by twice that: an edge tile holding a sliver of imagery is never dropped.
 */
export const FOOTPRINT_MARGIN_FRACTION = 1 / 256;

/** Bumped whenever the meaning of a plan changes, so ETags from an older planner are not reused. */
export const PLAN_FORMAT = 'nadir-tile-plan/1';

/** One survey asset that may be drawn into the tile. Extra fields (uri, ...) come back in the plan. */
export interface TileCandidate {
  surveyId: string;
  /** The survey's (or asset's) version: part of the ETag. */
  version: number;
  asset: PlannableAsset;
  /** The survey footprint, WGS84. Optional: without it only the asset's bounds are tested. */
  footprint?: MultiPolygon;
  /**
   * A lon/lat box known to lie inside `footprint` (the caller tested it once for a whole
   * neighbourhood of tiles): a tile inside it needs no polygon test of its own.
   */
  interior?: Bounds;
}

/** A rectangle in pixels: x right, y down. */
export interface PixelWindow {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** One COG tile to read and where it goes. */
export interface CogTileRead {
  /** Column and row in the level's tile grid (0, 0 = the COG's top-left tile). */
  col: number;
  row: number;
  /**
   * The pixels of that COG tile to use, in the tile's own 256 x 256 pixels: all of it, except at a
   * level's right or bottom edge when its size is not a multiple of 256 (never, for ingested COGs).
   */
  source: PixelWindow;
  /**
   * Where they land in the 256 x 256 output: `source` divided by the layer's `scale`. Whole pixels
   * for ingested COGs; fractional only for a partial edge tile that does not divide by the scale.
   */
  target: PixelWindow;
}

export interface PlannedLayer<C extends TileCandidate = TileCandidate> {
  /** The candidate as given (so the executor gets its uri etc. back) and its index in the input. */
  candidate: C;
  candidateIndex: number;
  /**
   * The COG to read, when the candidate's asset is sharded (geo/asset-layout.ts): the shard under
   * the tile, or the low COG. Absent for a single-COG asset: its own `uri`. `level`, `reads` and
   * the rest are in this COG's grid.
   */
  file?: string;
  /** COG image to read: overview index, 0 = full resolution (the level at `levelZoom`). */
  level: number;
  levelZoom: number;
  /** Source pixels per output pixel along each axis: 1 within the asset's zooms, 2^n below minZoom. */
  scale: number;
  /** Row-major (the TIFF's own tile order); never empty. Each may still be absent (sparse COG). */
  reads: CogTileRead[];
  /**
   * Exactly one whole COG tile maps 1:1 onto the output: if its mask is full, its JPEG bytes ARE
   * the tile (jpg/img) and need no decode or encode.
   */
  passThrough: boolean;
  /**
   * The footprint contains the whole tile (and so does the asset): the executor may stop
   * compositing after this layer once it has checked that the mask is indeed full. Always false
   * without a footprint, because an asset's extent is padded out to whole tiles.
   */
  coversTile: boolean;
}

export type SkipReason =
  | 'above-max-zoom'
  | 'below-min-zoom'
  | 'outside-asset'
  | 'outside-footprint'
  /** A sharded asset with no shard under the tile: no source pixel fell there. */
  | 'no-shard';

export interface SkippedLayer {
  surveyId: string;
  candidateIndex: number;
  reason: SkipReason;
}

export interface TilePlan<C extends TileCandidate = TileCandidate> {
  tile: TileCoord;
  /** In the caller's order. Empty: nothing to draw (404) without reading anything. */
  layers: PlannedLayer<C>[];
  /** Candidates that cannot contribute, and why (for logs and tests). */
  skipped: SkippedLayer[];
}

export interface PlanOptions {
  /** Zooms below minZoom still drawn (0..8). Default MAX_UNDERZOOM. */
  maxUnderzoom?: number;
}

/** The tile's box in lon/lat (Mercator maps axis-aligned boxes to axis-aligned boxes). */
export function lonLatBox(box: Bounds): Bounds {
  const [minX, minY] = mercatorToLonLat(box.minX, box.minY);
  const [maxX, maxY] = mercatorToLonLat(box.maxX, box.maxY);
  return { minX, minY, maxX, maxY };
}

function footprintMargin(asset: PlannableAsset): number {
  const side = Math.max(asset.bounds.maxX - asset.bounds.minX, asset.bounds.maxY - asset.bounds.minY);
  return Math.max(side * FOOTPRINT_MARGIN_FRACTION, 2 * resolutionAtZoom(asset.maxZoom));
}

function boxContains(outer: Bounds, inner: Bounds): boolean {
  return inner.minX >= outer.minX && inner.maxX <= outer.maxX && inner.minY >= outer.minY && inner.maxY <= outer.maxY;
}

function grow(box: Bounds, by: number): Bounds {
  return { minX: box.minX - by, minY: box.minY - by, maxX: box.maxX + by, maxY: box.maxY + by };
}

/** The COG tiles of `level` under the output tile, which spans `cells` x `cells` tiles at level.zoom. */
function readsFor(tile: TileCoord, level: LevelGrid, cells: number): CogTileRead[] {
  const firstX = tile.x * cells - level.originX;
  const firstY = tile.y * cells - level.originY;
  const col0 = Math.max(0, firstX);
  const col1 = Math.min(level.columns, firstX + cells);
  const row0 = Math.max(0, firstY);
  const row1 = Math.min(level.rows, firstY + cells);
  const cell = TILE_SIZE / cells;
  const reads: CogTileRead[] = [];
  for (let row = row0; row < row1; row++) {
    for (let col = col0; col < col1; col++) {
      const width = Math.min(TILE_SIZE, level.width - col * TILE_SIZE);
      const height = Math.min(TILE_SIZE, level.height - row * TILE_SIZE);
      reads.push({
        col,
        row,
        source: { x: 0, y: 0, width, height },
        target: { x: (col - firstX) * cell, y: (row - firstY) * cell, width: width / cells, height: height / cells },
      });
    }
  }
  return reads;
}

/** Whether the level's pixels cover the whole output tile. */
function levelCoversTile(tile: TileCoord, level: LevelGrid, cells: number): boolean {
  const left = (tile.x * cells - level.originX) * TILE_SIZE;
  const top = (tile.y * cells - level.originY) * TILE_SIZE;
  const size = cells * TILE_SIZE;
  return left >= 0 && top >= 0 && left + size <= level.width && top + size <= level.height;
}

/** One candidate's layer, or why it cannot contribute. */
function planLayer<C extends TileCandidate>(
  tile: TileCoord,
  box: TileBoxes,
  candidate: C,
  candidateIndex: number,
  maxUnderzoom: number,
): PlannedLayer<C> | SkipReason {
  const { shards, maxZoom } = candidate.asset;
  if (tile.z > maxZoom) return 'above-max-zoom';
  const part = shards ? partForTile(shards, maxZoom, tile) : candidate.asset;
  if (!part) return 'no-shard';
  const grid = assetGrid(part);
  const levelZoom = Math.max(tile.z, grid.minZoom);
  const shift = levelZoom - tile.z;
  if (shift > maxUnderzoom) return 'below-min-zoom';
  const cells = 2 ** shift;
  const level = levelGrid(grid, levelZoom);
  const reads = readsFor(tile, level, cells);
  if (reads.length === 0) return 'outside-asset';

  const { footprint, interior } = candidate;
  let coversTile = false;
  if (footprint && interior && boxContains(interior, box.lonLat)) {
    coversTile = levelCoversTile(tile, level, cells);
  } else if (footprint) {
    const near = lonLatBox(grow(box.mercator, footprintMargin(candidate.asset)));
    if (!boxIntersectsMultiPolygon(near, footprint)) return 'outside-footprint';
    coversTile = levelCoversTile(tile, level, cells) && boxInsideMultiPolygon(box.lonLat, footprint);
  }
  const only = reads.length === 1 ? reads[0] : undefined;
  const passThrough =
    cells === 1 && only !== undefined && only.source.width === TILE_SIZE && only.source.height === TILE_SIZE;
  const layer: PlannedLayer<C> = {
    candidate,
    candidateIndex,
    level: level.level,
    levelZoom,
    scale: cells,
    reads,
    passThrough,
    coversTile,
  };
  if (shards) layer.file = (part as AssetPart).uri;
  return layer;
}

interface TileBoxes {
  mercator: Bounds;
  lonLat: Bounds;
}

/**
 * Plans one tile. Throws RangeError for an invalid tile or option, and AssetGridError for an asset
 * that is not a grid-aligned COG (a catalogue bug worth a loud 500, not a silently missing survey).
 */
export function planTile<C extends TileCandidate>(
  tile: TileCoord,
  candidates: readonly C[],
  options: PlanOptions = {},
): TilePlan<C> {
  if (!isValidTile(tile)) throw new RangeError(`not a tile: ${tile.z}/${tile.x}/${tile.y}`);
  const maxUnderzoom = options.maxUnderzoom ?? MAX_UNDERZOOM;
  if (!Number.isInteger(maxUnderzoom) || maxUnderzoom < 0 || maxUnderzoom > UNDERZOOM_LIMIT) {
    throw new RangeError(`maxUnderzoom must be an integer in 0..${UNDERZOOM_LIMIT}, got ${maxUnderzoom}`);
  }
  const mercator = tileBounds(tile);
  const box: TileBoxes = { mercator, lonLat: lonLatBox(mercator) };
  const plan: TilePlan<C> = { tile: { z: tile.z, x: tile.x, y: tile.y }, layers: [], skipped: [] };
  for (let candidateIndex = 0; candidateIndex < candidates.length; candidateIndex++) {
    const candidate = candidates[candidateIndex] as C;
    const layer = planLayer(tile, box, candidate, candidateIndex, maxUnderzoom);
    if (typeof layer === 'string') plan.skipped.push({ surveyId: candidate.surveyId, candidateIndex, reason: layer });
    else plan.layers.push(layer);
  }
  return plan;
}

/**
 * What the tile's ETag is derived from (decisions.md), known before any pixel is read: the planner
 * format and, in draw order, each contributing layer's survey id, version and COG level. It covers
 * every layer that CAN contribute, not only those the executor ends up drawing, so it may change
 * more often than strictly needed but never too rarely. The caller adds what else the response
 * depends on (content type, format, encoder settings) and hashes the whole.
 */
export function tileEtagSeed(plan: TilePlan): string {
  const layers = plan.layers.map((layer) => [layer.candidate.surveyId, layer.candidate.version, layer.level]);
  return JSON.stringify([PLAN_FORMAT, layers]);
}
