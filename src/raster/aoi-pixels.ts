import type { Asset, Survey } from '../catalogue/survey.js';
import { type Aoi, aoiMercatorBounds, mercatorBoundsToLonLat } from '../geo/aoi.js';
import { boxInsideMultiPolygon, boxIntersectsMultiPolygon } from '../geo/polygon.js';
import type { Bounds } from '../geo/web-mercator.js';
import { MAX_FOOTPRINT_PIXELS } from '../ingest/footprint.js';

/**
 * Whether an image of an AOI can hold pixels of a survey asset, from the catalogue alone (no file
 * is read), so that an image of nothing is refused before anything is rendered or billed:
 * - `none`: the AOI misses the survey's footprint or the asset's extent: not one pixel;
 * - `certain`: the AOI lies inside the footprint, further from its edge than the footprint can
 *   be wrong: pixels for sure;
 * - `maybe`: near the footprint's edge; only the rendered image can tell (the engine's checkEmpty).
 *
 * The footprint is traced on the COG level nearest MAX_FOOTPRINT_PIXELS across (at most twice as
 * coarse as extent / MAX_FOOTPRINT_PIXELS) and simplified by one pixel of it, so its edge is within
 * a few of those pixels of the truth; `certain` asks for four pixels to spare. It is the same
 * footprint coverage searches test, so an AOI for which coverage lists a survey is never refused
 * here as `none`.
 */
export type AoiPixels = 'none' | 'maybe' | 'certain';

function meets(a: Bounds, b: Bounds): boolean {
  return a.minX < b.maxX && b.minX < a.maxX && a.minY < b.maxY && b.minY < a.maxY;
}

export function aoiPixels(aoi: Aoi, survey: Pick<Survey, 'footprint'>, asset: Pick<Asset, 'bounds'>): AoiPixels {
  const square = aoiMercatorBounds(aoi);
  if (!meets(square, asset.bounds) || !boxIntersectsMultiPolygon(mercatorBoundsToLonLat(square), survey.footprint)) {
    return 'none';
  }
  const extent = Math.max(asset.bounds.maxX - asset.bounds.minX, asset.bounds.maxY - asset.bounds.minY);
  const margin = (4 * 2 * extent) / MAX_FOOTPRINT_PIXELS;
  const grown = {
    minX: square.minX - margin,
    minY: square.minY - margin,
    maxX: square.maxX + margin,
    maxY: square.maxY + margin,
  };
  return boxInsideMultiPolygon(mercatorBoundsToLonLat(grown), survey.footprint) ? 'certain' : 'maybe';
}
