import { RASTER_TYPES, type RasterType } from '../catalogue/survey.js';
import { parseDateRange } from '../catalogue/survey-filters.js';
import { invalidParameter } from '../errors.js';
import type { Aoi } from '../geo/aoi.js';
import { parsePoint } from '../geo/point-text.js';

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
  const { since, until } = parseDateRange(query.since, query.until, today);
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
