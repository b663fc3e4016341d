/**
 * Checking a call's options and writing them as the API's query parameters, so a mistake is a
 * NadirUsageError naming the option before anything is sent.
 */
import { type Aoi, checkAoi, pointParameter } from './area.js';
import { NadirUsageError } from './errors.js';
import { SURVEY_FIELDS } from './generated/facts.js';
import { RASTER_TYPES, type RasterType, TILE_TYPES, type TileType } from './types.js';

const DATE_OR_AGE = /^(\d{4}-\d{2}-\d{2}|[1-9]\d*[YMD])$/;
const TAG = /^[^,\s]+$/;

export interface DateFilters {
  /** `YYYY-MM-DD` or an age such as `12M`, `2Y`, `30D` (inclusive, on the capture date). */
  since?: string;
  until?: string;
}

export interface TagFilters {
  /** Tag types (`disaster`) or `type:name` (`disaster:hurricane`). */
  include?: string[];
  exclude?: string[];
}

export interface CoverageOptions extends DateFilters {
  aoi: Aoi;
  resources: RasterType[];
  filter?: 'allTypes' | 'anyTypes';
  overlap?: 'full' | 'partial';
  fields?: (typeof SURVEY_FIELDS)[number][];
  /** Page size, 1..1000 (the service's default is 20). */
  limit?: number;
  offset?: number;
}

export function oneOf<T extends string>(name: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new NadirUsageError(`${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
  }
  return value as T;
}

export function rasterType(value: unknown, name = 'type'): RasterType {
  return oneOf(name, value, RASTER_TYPES);
}

export function tileType(value: unknown, name = 'type'): TileType {
  return oneOf(name, value, TILE_TYPES);
}

function wholeNumber(name: string, value: unknown, min: number, max: number): number {
  if (!(typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max)) {
    throw new NadirUsageError(`${name} must be a whole number from ${min} to ${max}, got ${value}`);
  }
  return value;
}

export function dateFilterParameters(filters: DateFilters, params: URLSearchParams): void {
  for (const name of ['since', 'until'] as const) {
    const value = filters[name];
    if (value === undefined) continue;
    if (typeof value !== 'string' || !DATE_OR_AGE.test(value)) {
      throw new NadirUsageError(
        `${name} must be YYYY-MM-DD or an age such as 12M, 2Y, 30D, got ${JSON.stringify(value)}`,
      );
    }
    params.set(name, value);
  }
}

export function tagFilterParameters(filters: TagFilters, params: URLSearchParams): void {
  for (const name of ['include', 'exclude'] as const) {
    const tags = filters[name];
    if (tags === undefined) continue;
    if (!Array.isArray(tags) || tags.length === 0 || tags.some((tag) => typeof tag !== 'string' || !TAG.test(tag))) {
      throw new NadirUsageError(
        `${name} must be a non-empty list of tags (type or type:name), got ${JSON.stringify(tags)}`,
      );
    }
    params.set(name, tags.join(','));
  }
}

export function coverageParameters(options: CoverageOptions): URLSearchParams {
  const aoi = checkAoi(options.aoi);
  if (!Array.isArray(options.resources) || options.resources.length === 0) {
    throw new NadirUsageError('resources must list at least one of Vert, TrueOrtho, DetailDsm');
  }
  const params = new URLSearchParams({
    point: pointParameter(aoi.point),
    radius: String(aoi.radius),
    resources: options.resources.map((type) => rasterType(type, 'resources')).join(','),
  });
  dateFilterParameters(options, params);
  if (options.filter !== undefined) params.set('filter', oneOf('filter', options.filter, ['allTypes', 'anyTypes']));
  if (options.overlap !== undefined) params.set('overlap', oneOf('overlap', options.overlap, ['full', 'partial']));
  if (options.fields !== undefined) {
    params.set('fields', options.fields.map((field) => oneOf('fields', field, SURVEY_FIELDS)).join(','));
  }
  if (options.limit !== undefined) params.set('limit', String(wholeNumber('limit', options.limit, 1, 1000)));
  if (options.offset !== undefined) {
    params.set('offset', String(wholeNumber('offset', options.offset, 0, Number.MAX_SAFE_INTEGER)));
  }
  return params;
}
