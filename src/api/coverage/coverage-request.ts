import { RASTER_TYPES, type RasterType } from '../../catalogue/survey.js';
import { invalidParameter } from '../../errors.js';
import type { Aoi } from '../../geo/aoi.js';
import { parseDateOrRelative } from '../../geo/dates.js';
import { MAX_LATITUDE } from '../../geo/web-mercator.js';
import { parseDecimal } from '../query-params.js';

/**
 * The coverage query after the schema checked types and ranges: what is left needs parsing
 * (point, comma lists, dates) or looks at two parameters at once (since <= until). Pure, so
 * every bad-input rule can be read in one place.
 */

/** Survey fields a caller may pick with `fields`; `id` is always returned. */
export const SURVEY_FIELDS = [
  'id',
  'captureDate',
  'firstPhotoTime',
  'lastPhotoTime',
  'pixelSizes',
  'tags',
  'maxZoom',
] as const;
export type SurveyField = (typeof SURVEY_FIELDS)[number];

/** The query string once fastify's schema validated it (numbers are numbers). */
export interface CoverageQueryString {
  point: string;
  radius: number;
  resources: string;
  since?: string;
  until?: string;
  filter?: 'allTypes' | 'anyTypes';
  overlap?: 'full' | 'partial';
  fields?: string;
  limit?: number;
  offset?: number;
}

export interface CoverageRequest {
  aoi: Aoi;
  types: RasterType[];
  typeMatch: 'all' | 'any';
  overlap: 'intersects' | 'full';
  since?: string;
  until?: string;
  fields: ReadonlySet<SurveyField>;
  limit: number;
  offset: number;
}

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 1000;

const ALL_FIELDS: ReadonlySet<SurveyField> = new Set(SURVEY_FIELDS);

/**
 * `today` gives a `YYYY-MM-DD` (UTC) date: relative dates count back from it. A function, as most
 * requests have no date filter and need no clock.
 */
export function parseCoverageQuery(query: CoverageQueryString, today: () => string): CoverageRequest {
  let day: string | undefined;
  // Asked once, so since and until count from the same day even across midnight.
  const once = () => {
    day ??= today();
    return day;
  };
  const since = query.since === undefined ? undefined : parseDateParameter('since', query.since, once);
  const until = query.until === undefined ? undefined : parseDateParameter('until', query.until, once);
  if (since !== undefined && until !== undefined && since > until) {
    throw invalidParameter('since', `since (${since}) is after until (${until}): no survey can match`);
  }
  return {
    aoi: { ...parsePoint(query.point), radius: query.radius },
    types: parseList('resources', query.resources, RASTER_TYPES),
    typeMatch: query.filter === 'anyTypes' ? 'any' : 'all',
    overlap: query.overlap === 'full' ? 'full' : 'intersects',
    since,
    until,
    fields: query.fields === undefined ? ALL_FIELDS : new Set(parseList('fields', query.fields, SURVEY_FIELDS)),
    limit: query.limit ?? DEFAULT_LIMIT,
    offset: query.offset ?? 0,
  };
}

/**
 * `lon,lat` in WGS84 degrees. Latitude stops at the Web Mercator limit (+-85.0511): the service
 * has imagery only in EPSG:3857, and the AOI square is not defined nearer the poles.
 */
export function parsePoint(text: string): { lon: number; lat: number } {
  const parts = text.split(',');
  const [lon, lat] = parts.map((part) => parseDecimal(part));
  if (parts.length !== 2 || lon === undefined || lat === undefined) {
    throw invalidParameter(
      'point',
      `point must be longitude,latitude in decimal degrees (e.g. -89.5417,44.1188), got ${JSON.stringify(clip(text))}`,
    );
  }
  if (!(lon >= -180 && lon <= 180)) {
    throw invalidParameter('point', `point longitude must be from -180 to 180, got ${lon}`);
  }
  if (!(lat >= -MAX_LATITUDE && lat <= MAX_LATITUDE)) {
    throw invalidParameter(
      'point',
      `point latitude must be from -${MAX_LATITUDE} to ${MAX_LATITUDE} (the Web Mercator limit), got ${lat}`,
    );
  }
  return { lon, lat };
}

/** `since`/`until`: a date or a relative age; `today` is asked only for an age. Shared by the tile routes. */
export function parseDateParameter(parameter: 'since' | 'until', text: string, today: () => string): string {
  const date = parseDateOrRelative(text.trim(), today());
  if (date === undefined) {
    throw invalidParameter(
      parameter,
      `${parameter} must be a date YYYY-MM-DD or a relative age such as 24M, 2Y or 30D, got ${JSON.stringify(clip(text))}`,
    );
  }
  return date;
}

/** A comma list of allowed names: case-sensitive (decisions.md), duplicates collapse, order kept. */
function parseList<T extends string>(parameter: string, text: string, allowed: readonly T[]): T[] {
  const items = text.split(',').map((item) => item.trim());
  const unknown = items.find((item) => !(allowed as readonly string[]).includes(item));
  if (unknown !== undefined) {
    const what = unknown === '' ? 'an empty entry' : `unknown value ${JSON.stringify(clip(unknown))}`;
    throw invalidParameter(
      parameter,
      `${parameter} must be a comma-separated list of ${allowed.join(', ')}; it has ${what}`,
    );
  }
  return [...new Set(items as T[])];
}

function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 80)}...` : text;
}
