/**
 * DsmChange (docs/api.md "DsmChange"): the height change between two surveys. Downloads and the
 * figures go through the imagery endpoint (client.imagery with type DsmChange), so they use the
 * AOI's transaction token like any image; this module holds what the change tiles need.
 */
import type { Aoi } from './area.js';
import { NadirUsageError } from './errors.js';
import { checkTile, type TileXYZ } from './panorama.js';
import { type DateFilters, dateFilterParameters, type TagFilters, tagFilterParameters } from './query.js';
import { checkSurveyId, checkThreshold } from './requests.js';

export interface DsmChangeFiguresRequest {
  /** The later survey. */
  after: string;
  /** The earlier survey; default: the newest earlier one with DetailDsm over the AOI. */
  baseline?: string;
  aoi: Aoi;
  /** Pixels per side: DetailDsm's native size (nativeImageSize with its GSD) counts at the survey's resolution. */
  size: number;
  /** Metres, 0..100 (server default 2). */
  threshold?: number;
}

export interface DsmChangeTileRequest extends DateFilters, TagFilters {
  tile: TileXYZ;
  /** The later survey; without it the filters choose the newest and the oldest over the tile. */
  after?: string;
  /** Needs after. */
  baseline?: string;
  /** Metres within which a change is transparent (server default 0.5). */
  threshold?: number;
}

export function dsmChangeTilePath(request: DsmChangeTileRequest): { path: string; params: URLSearchParams } {
  const { z, x, y } = checkTile(request.tile);
  const params = new URLSearchParams();
  dateFilterParameters(request, params);
  tagFilterParameters(request, params);
  // The server reads either the two surveys or the filters; given both, one would be ignored.
  if (request.after !== undefined) {
    if (params.size > 0)
      throw new NadirUsageError('after and baseline do not combine with since, until, include, exclude');
    params.set('after', checkSurveyId(request.after, 'after'));
  }
  if (request.baseline !== undefined) {
    if (request.after === undefined) throw new NadirUsageError('baseline needs after');
    params.set('baseline', checkSurveyId(request.baseline, 'baseline'));
  }
  if (request.threshold !== undefined) params.set('threshold', String(checkThreshold(request.threshold)));
  return { path: `/tiles/v3/DsmChange/${z}/${x}/${y}.png`, params };
}
