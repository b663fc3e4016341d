/**
 * The reading of a DetailDsm map tile request, `/tiles/v3/DetailDsm/{style}/{z}/{x}/{y}.png` and
 * `/tiles/v3/surveys/{surveyId}/DetailDsm/{style}/...`: the tile address by the one tile parser,
 * the survey filter by the catalogue's, the style, and the ramp's range when the caller fixes it.
 * Pure, but for `today`.
 */
import type { TagFilter } from '../catalogue/catalogue.js';
import { parseDateRange, parseTagFilter } from '../catalogue/survey-filters.js';
import { invalidParameter } from '../errors.js';
import type { TileCoord } from '../geo/web-mercator.js';
import type { HeightRange } from '../raster/index.js';
import { parseTileAddress } from '../tiles/tile-query.js';
import { HEIGHT_STYLES, type HeightStyle } from './height-styles.js';

/** Heights a ramp may be fixed to, metres: below the Dead Sea to above Everest, with margin. */
export const MIN_HEIGHT = -1000;
export const MAX_HEIGHT = 10_000;

export interface HeightTilePath {
  surveyId?: string;
  style: string;
  z: string;
  x: string;
  file: string;
}

export interface HeightTileQueryString {
  apikey?: string;
  since?: string;
  until?: string;
  include?: string;
  exclude?: string;
  /** Numbers once the route's query rules converted them. */
  min?: number | string;
  max?: number | string;
}

export interface HeightTileQuery {
  tile: TileCoord;
  style: HeightStyle;
  /** One survey's tiles; otherwise the newest heights the filters select, older ones filling gaps. */
  surveyId?: string;
  since?: string;
  until?: string;
  tags?: TagFilter;
  /** `relief`: the heights the ramp spans, when given (else the newest survey's own). */
  range?: HeightRange;
}

function height(name: string, value: number | string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !(value >= MIN_HEIGHT && value <= MAX_HEIGHT)) {
    throw invalidParameter(name, `${name} must be metres from ${MIN_HEIGHT} to ${MAX_HEIGHT}`);
  }
  return value;
}

export function parseHeightTileQuery(
  path: HeightTilePath,
  query: HeightTileQueryString,
  today: () => string,
): HeightTileQuery {
  if (!(HEIGHT_STYLES as readonly string[]).includes(path.style)) {
    throw invalidParameter('style', `style must be one of ${HEIGHT_STYLES.join(', ')}`);
  }
  const style = path.style as HeightStyle;
  const { tile, format } = parseTileAddress(path.z, path.x, path.file);
  if (format !== 'png') throw invalidParameter('format', `format must be png for DetailDsm tiles, got "${format}"`);
  const min = height('min', query.min);
  const max = height('max', query.max);
  if ((min === undefined) !== (max === undefined)) throw invalidParameter('min', 'min and max go together');
  if (min !== undefined && max !== undefined && !(max > min)) throw invalidParameter('max', 'max must be above min');
  if (min !== undefined && style !== 'relief') throw invalidParameter('min', 'min and max set the relief ramp only');
  const { since, until } = parseDateRange(query.since, query.until, today);
  const tags = parseTagFilter(query.include, query.exclude);
  const range = min !== undefined && max !== undefined ? { min, max } : undefined;
  return { tile, style, surveyId: path.surveyId, since, until, tags, range };
}
