/**
 * The one reading of a tile request: the path's parts (as the router found them) and the query
 * string's values into the tile, its format and the survey filter. Whatever the request schemas
 * in src/api/tiles/tile-schema.ts refuse is refused here too, so an entrance that skips them (the
 * tile lane) never takes a request the routes would turn away. Pure, but for `today`.
 */
import { TILE_TYPES, type TileType } from '../catalogue/survey.js';
import { parseDateRange, parseTagFilter } from '../catalogue/survey-filters.js';
import { invalidParameter } from '../errors.js';
import { MAX_ZOOM, type TileCoord } from '../geo/web-mercator.js';
import type { TileFilter } from './tile-candidates.js';
import { TILE_FORMATS, type TileFormat } from './tile-renderer.js';

/** The path parameters of the two tile endpoints, as routed (percent-decoded). */
export interface TilePath {
  /** Present on `/tiles/v3/surveys/{surveyId}/...`. */
  surveyId?: string;
  contentType: string;
  z: string;
  x: string;
  /** `{y}.{format}` */
  file: string;
}

/** The declared query parameters, one value each (repeats were refused before). */
export interface TileQueryString {
  apikey?: string;
  since?: string;
  until?: string;
  include?: string;
  exclude?: string;
  /** Location tiles only. */
  mosaic?: string;
}

export interface TileQuery {
  /** The survey endpoint's one survey; undefined for location tiles (every matching survey). */
  surveyId: string | undefined;
  type: TileType;
  tile: TileCoord;
  format: TileFormat;
  filter: TileFilter;
}

/** The schemas' limits (tile-schema.ts): `file` <= 32, `surveyId` <= 128 characters. */
export const MAX_FILE_LENGTH = 32;
export const MAX_SURVEY_ID_LENGTH = 128;
const MOSAICS = ['latest', 'earliest'] as const;

function clip(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}...` : text);
}

/** `text` as a whole number if it is 1 to 10 ASCII digits (no sign, space or exponent), else NaN. */
function digitsValue(text: string): number {
  if (text.length === 0 || text.length > 10) return Number.NaN;
  let value = 0;
  for (let i = 0; i < text.length; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return Number.NaN;
    value = value * 10 + digit;
  }
  return value;
}

function integerIn(name: string, text: string, max: number): number {
  // A loop, not a regular expression and Number(): three of these run for every tile request.
  const value = digitsValue(text);
  if (!(value >= 0 && value <= max)) {
    throw invalidParameter(name, `${name} must be a whole number from 0 to ${max}, got ${clip(text)}`);
  }
  return value;
}

function oneOf<T extends string>(name: string, text: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(text)) {
    throw invalidParameter(name, `${name} must be one of ${allowed.join(', ')}, got ${clip(text)}`);
  }
  return text as T;
}

function notLonger(name: string, text: string, max: number): void {
  if (text.length > max) throw invalidParameter(name, `${name} must be at most ${max} characters long`);
}

/** `z`, `x` and the last segment `{y}.{format}`; x and y must lie within 0..2^z - 1. */
export function parseTileAddress(zText: string, xText: string, file: string): { tile: TileCoord; format: TileFormat } {
  const dot = file.lastIndexOf('.');
  const format = oneOf('format', dot < 0 ? '' : file.slice(dot + 1), TILE_FORMATS);
  const z = integerIn('z', zText, MAX_ZOOM);
  // z is at most MAX_ZOOM (24) here, so a shift, not Math.pow (which `2 ** z` calls for a variable z).
  const last = (1 << z) - 1;
  const x = integerIn('x', xText, last);
  const y = integerIn('y', file.slice(0, dot), last);
  return { tile: { z, x, y }, format };
}

/** `today` gives the UTC date `YYYY-MM-DD` that relative ages count back from (asked only for one). */
export function parseTileQuery(path: TilePath, query: TileQueryString, today: () => string): TileQuery {
  const type = oneOf('contentType', path.contentType, TILE_TYPES);
  if (path.surveyId !== undefined) notLonger('surveyId', path.surveyId, MAX_SURVEY_ID_LENGTH);
  notLonger('file', path.file, MAX_FILE_LENGTH);
  // `mosaic` orders several surveys: the survey endpoint has one, and does not take the parameter.
  const mosaic =
    path.surveyId !== undefined || query.mosaic === undefined ? 'latest' : oneOf('mosaic', query.mosaic, MOSAICS);
  const { tile, format } = parseTileAddress(path.z, path.x, path.file);
  const { since, until } = parseDateRange(query.since, query.until, today);
  const tags = parseTagFilter(query.include, query.exclude);
  const filter: TileFilter = { type, since, until, tags, order: mosaic === 'earliest' ? 'earliest' : 'newest' };
  return { surveyId: path.surveyId, type, tile, format, filter };
}

/**
 * What the answer to a query depends on, as one string: the same for every request of it. Asked
 * on every tile request, so the common one (no survey id, no tags) is built without
 * JSON.stringify: its parts are checked words and numbers without spaces (dates are ISO dates by
 * now), while a survey id and tags, which may hold anything, come JSON-encoded after them.
 */
export function tileQueryKey(query: TileQuery): string {
  const { surveyId, tile, format, filter } = query;
  const { since = '-', until = '-', tags } = filter;
  const words = `${filter.type} ${tile.z} ${tile.x} ${tile.y} ${format} ${since} ${until} ${filter.order}`;
  if (surveyId === undefined && tags === undefined) return words;
  return `${words} ${JSON.stringify([surveyId ?? null, tags?.include ?? null, tags?.exclude ?? null])}`;
}
