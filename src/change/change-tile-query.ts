/**
 * The reading of a DsmChange tile request, `/tiles/v3/DsmChange/{z}/{x}/{y}.png`: the tile
 * address by the one tile parser, the survey filter by the catalogue's, and which surveys to
 * compare. Pure, but for `today`.
 */
import type { TagFilter } from '../catalogue/catalogue.js';
import { parseDateRange, parseTagFilter } from '../catalogue/survey-filters.js';
import { invalidParameter } from '../errors.js';
import type { TileCoord } from '../geo/web-mercator.js';
import { MAX_SURVEY_ID_LENGTH, parseTileAddress } from '../tiles/tile-query.js';

/** Default `threshold`: half a metre hides the noise of two DSMs and shows a fallen branch. */
export const DEFAULT_TILE_THRESHOLD = 0.5;
export const MAX_THRESHOLD = 100;

export interface ChangeTilePath {
  z: string;
  x: string;
  file: string;
}

export interface ChangeTileQueryString {
  apikey?: string;
  after?: string;
  baseline?: string;
  since?: string;
  until?: string;
  include?: string;
  exclude?: string;
  /** A number once the route's query rules converted it. */
  threshold?: number | string;
}

export interface ChangeTileQuery {
  tile: TileCoord;
  /** Explicit surveys: `after`, and `baseline` or the newest earlier one over the tile. */
  after?: string;
  baseline?: string;
  /** Otherwise: the newest and the oldest of the surveys with DetailDsm these select. */
  since?: string;
  until?: string;
  tags?: TagFilter;
  /** Metres: changes within +-threshold are left transparent. */
  threshold: number;
}

function surveyId(name: string, value: string | undefined): string | undefined {
  if (value !== undefined && (value === '' || value.length > MAX_SURVEY_ID_LENGTH)) {
    throw invalidParameter(name, `${name} must be a survey id of 1 to ${MAX_SURVEY_ID_LENGTH} characters`);
  }
  return value;
}

export function parseChangeTileQuery(
  path: ChangeTilePath,
  query: ChangeTileQueryString,
  today: () => string,
): ChangeTileQuery {
  const { tile, format } = parseTileAddress(path.z, path.x, path.file);
  if (format !== 'png') throw invalidParameter('format', `format must be png for DsmChange tiles, got "${format}"`);
  const after = surveyId('after', query.after);
  const baseline = surveyId('baseline', query.baseline);
  if (baseline !== undefined && after === undefined) {
    throw invalidParameter('after', 'after is required with baseline: the later of the two surveys');
  }
  const threshold = query.threshold ?? DEFAULT_TILE_THRESHOLD;
  if (typeof threshold !== 'number' || !(threshold >= 0 && threshold <= MAX_THRESHOLD)) {
    throw invalidParameter('threshold', `threshold must be metres from 0 to ${MAX_THRESHOLD}`);
  }
  const { since, until } = parseDateRange(query.since, query.until, today);
  const tags = parseTagFilter(query.include, query.exclude);
  return { tile, after, baseline, since, until, tags, threshold };
}
