import { type Bounds, nearestZoomForResolution, ORIGIN_SHIFT, resolutionAtZoom, TILE_SIZE } from './web-mercator.js';

/**
 * The EPSG:3857 pixel grid a survey asset is written on: full resolution at `zoom` on the
 * GoogleMapsCompatible grid, its extent snapped outward so that every overview level down to
 * `minZoom` also starts on a tile boundary. Then each COG tile of each level IS one map tile,
 * which is what lets the tile service pass JPEG tiles through untouched.
 */
export interface CogGrid {
  zoom: number;
  minZoom: number;
  /** Overview levels below full resolution (`zoom - minZoom`). */
  overviewCount: number;
  resolution: number;
  /** Map tile column/row of the top-left COG tile at `zoom`. */
  tileX: number;
  tileY: number;
  /** Size in pixels at full resolution (multiples of 256 x 2^overviewCount). */
  width: number;
  height: number;
  bounds: Bounds;
}

// A survey edge that lies on a tile edge up to float noise must not add a whole tile row.
const EDGE_EPSILON = 1e-6;

export function planCogGrid(extent: Bounds, sourceResolution: number): CogGrid {
  if (!(sourceResolution > 0) || !Number.isFinite(sourceResolution)) {
    throw new Error(`source resolution must be a positive number, got ${sourceResolution}`);
  }
  const zoom = nearestZoomForResolution(sourceResolution);
  const resolution = resolutionAtZoom(zoom);
  const tileSpan = TILE_SIZE * resolution;
  const firstX = Math.floor((extent.minX + ORIGIN_SHIFT) / tileSpan + EDGE_EPSILON);
  const endX = Math.ceil((extent.maxX + ORIGIN_SHIFT) / tileSpan - EDGE_EPSILON);
  const firstY = Math.floor((ORIGIN_SHIFT - extent.maxY) / tileSpan + EDGE_EPSILON);
  const endY = Math.ceil((ORIGIN_SHIFT - extent.minY) / tileSpan - EDGE_EPSILON);
  const span = Math.max(endX - firstX, endY - firstY, 1);
  // Enough overview levels that the coarsest holds the whole survey in one or two tiles.
  const overviewCount = Math.min(zoom, Math.ceil(Math.log2(span)));
  const block = 2 ** overviewCount;
  const tileX = Math.floor(firstX / block) * block;
  const tileY = Math.floor(firstY / block) * block;
  const tilesWide = Math.ceil(endX / block) * block - tileX;
  const tilesHigh = Math.ceil(endY / block) * block - tileY;
  const minX = -ORIGIN_SHIFT + tileX * tileSpan;
  const maxY = ORIGIN_SHIFT - tileY * tileSpan;
  return {
    zoom,
    minZoom: zoom - overviewCount,
    overviewCount,
    resolution,
    tileX,
    tileY,
    width: tilesWide * TILE_SIZE,
    height: tilesHigh * TILE_SIZE,
    bounds: { minX, minY: maxY - tilesHigh * tileSpan, maxX: minX + tilesWide * tileSpan, maxY },
  };
}
