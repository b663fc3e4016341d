/**
 * STAC API item search over the survey catalogue: the query parameters (`bbox`, `intersects`,
 * `datetime`, `ids`, `collections`, `limit`, `offset`) read into a search, and the search itself.
 * The catalogue answers boxes and capture dates; `intersects` (any geometry) and `datetime` (UTC
 * instants against the photo times) are exact tests made here on its candidates. Parsing is pure;
 * the search reads only through the catalogue it is given.
 */
import { compareNewestFirst, type SurveyCatalogue, type SurveyOrderKey } from '../catalogue/catalogue.js';
import type { Survey } from '../catalogue/survey.js';
import { isAfter, orderKeyOf } from '../catalogue/survey-walk.js';
import { invalidParameter } from '../errors.js';
import { daysInMonth } from '../geo/dates.js';
import { type Geometry, geometryBounds, geometryIntersectsMultiPolygon, geometryProblem } from '../geo/geometry.js';
import type { Bounds } from '../geo/web-mercator.js';
import { MAX_OFFSET, type PageToken, parsePageToken } from './stac-paging.js';

export const SURVEYS_COLLECTION = 'surveys';
export const DEFAULT_ITEM_LIMIT = 10;
export const MAX_ITEM_LIMIT = 1000;
/**
 * Surveys one page may examine with an exact test (`intersects`, `datetime`). A search whose
 * matches are rarer than that among its candidates gets a short page (even an empty one) and a
 * `next` link that resumes where it stopped: every page's cost stays bounded.
 */
export const MAX_EXAMINED = 2000;
/** Survey ids one search may name. */
export const MAX_IDS = MAX_ITEM_LIMIT;

const WORLD: Bounds = { minX: -180, minY: -90, maxX: 180, maxY: 90 };
const DAY_MS = 86_400_000;
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** The text parameters of a search, as the route's schema declares them (api/gis/stac-schema.ts). */
type StacSearchTextParameter = 'bbox' | 'intersects' | 'datetime' | 'ids' | 'collections' | 'token';

/** The declared query parameters: one string each, and the two numbers. */
export type StacSearchQueryString = { [name in StacSearchTextParameter]?: string } & {
  limit?: number;
  offset?: number;
};

/** Inclusive ISO instants; an open end is undefined. */
export interface TimeInterval {
  start?: string;
  end?: string;
}

export interface StacSearch {
  bbox?: Bounds;
  intersects?: Geometry;
  datetime?: TimeInterval;
  ids?: string[];
  collections?: string[];
  limit: number;
  offset: number;
  token?: PageToken;
}

export interface StacSearchResult {
  surveys: Survey[];
  /** Matching surveys across all pages, when known without reading them all. */
  matched?: number;
  /** The places the next and previous pages begin from, when there are such pages. */
  next?: SurveyOrderKey;
  prev?: SurveyOrderKey;
}

function clip(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}...` : text);
}

/** `minLon,minLat,maxLon,maxLat` (or the 3D form with heights, which are ignored). */
export function parseBbox(text: string): Bounds {
  const numbers = text
    .split(',')
    .map((part) => (/^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/.test(part) ? Number(part) : Number.NaN));
  const bad = (why: string) =>
    invalidParameter(
      'bbox',
      `bbox must be minLongitude,minLatitude,maxLongitude,maxLatitude in WGS84 degrees: ${why}, got ${clip(text)}`,
    );
  if (numbers.length !== 4 && numbers.length !== 6) throw bad('4 numbers (or 6 with heights)');
  if (numbers.some((n) => !Number.isFinite(n))) throw bad('every part must be a decimal number');
  const [minX, minY, maxX, maxY] = (
    numbers.length === 4 ? numbers : [numbers[0], numbers[1], numbers[3], numbers[4]]
  ) as number[];
  if (![minX, maxX].every((x) => x !== undefined && Math.abs(x) <= 180)) throw bad('longitudes run from -180 to 180');
  if (![minY, maxY].every((y) => y !== undefined && Math.abs(y) <= 90)) throw bad('latitudes run from -90 to 90');
  if ((minY as number) > (maxY as number)) throw bad('the minimum latitude is above the maximum');
  if ((minX as number) > (maxX as number))
    throw bad('boxes crossing the antimeridian are not supported, split it in two');
  return { minX, minY, maxX, maxY } as Bounds;
}

export function parseIntersects(text: string): Geometry {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalidParameter('intersects', 'intersects must be a GeoJSON geometry written as JSON');
  }
  const problem = geometryProblem(value);
  if (problem) throw invalidParameter('intersects', `intersects ${problem}`);
  return value as Geometry;
}

type Six = [number, number, number, number, number, number];

function instant(text: string): string | undefined {
  const match = RFC3339.exec(text);
  if (!match) return undefined;
  const [y, mo, d, h, mi, s] = [1, 2, 3, 4, 5, 6].map((group) => Number(match[group])) as Six;
  const real = y >= 1 && mo >= 1 && mo <= 12 && d >= 1 && d <= daysInMonth(y, mo) && h < 24 && mi < 60 && s < 60;
  const ms = Date.parse(text.toUpperCase());
  return real && Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}

/** An RFC 3339 instant, or an interval `start/end` whose open end is `..` or empty. */
export function parseDatetime(text: string): TimeInterval {
  const bad = () =>
    invalidParameter(
      'datetime',
      `datetime must be an RFC 3339 date-time (2025-10-20T14:00:00Z) or an interval start/end with .. for an open end, got ${clip(text)}`,
    );
  const parts = text.split('/');
  if (parts.length > 2) throw bad();
  if (parts.length === 1) {
    const at = instant(text);
    if (!at) throw bad();
    return { start: at, end: at };
  }
  const [from, to] = parts.map((part) => (part === '..' || part === '' ? undefined : (instant(part) ?? null)));
  if (from === null || to === null || (from === undefined && to === undefined)) throw bad();
  if (from !== undefined && to !== undefined && from > to) {
    throw invalidParameter('datetime', `datetime's start (${from}) is after its end (${to})`);
  }
  return { start: from, end: to };
}

function list(text: string): string[] {
  return [...new Set(text.split(',').map((item) => item.trim()))].filter((item) => item !== '');
}

export function parseStacSearch(query: StacSearchQueryString): StacSearch {
  if (query.bbox !== undefined && query.intersects !== undefined) {
    throw invalidParameter('intersects', 'give bbox or intersects, not both');
  }
  if (query.token !== undefined && query.offset !== undefined) {
    throw invalidParameter('offset', 'give token or offset, not both');
  }
  if ((query.offset ?? 0) > MAX_OFFSET) {
    throw invalidParameter(
      'offset',
      `offset is at most ${MAX_OFFSET}: follow the next link, whose token pages further`,
    );
  }
  const ids = query.ids === undefined ? undefined : list(query.ids);
  if (ids && ids.length > MAX_IDS) throw invalidParameter('ids', `ids names at most ${MAX_IDS} surveys`);
  return {
    bbox: query.bbox === undefined ? undefined : parseBbox(query.bbox),
    intersects: query.intersects === undefined ? undefined : parseIntersects(query.intersects),
    datetime: query.datetime === undefined ? undefined : parseDatetime(query.datetime),
    ids,
    collections: query.collections === undefined ? undefined : list(query.collections),
    // STAC API: a limit above the maximum gets the maximum, not an error.
    limit: Math.min(query.limit ?? DEFAULT_ITEM_LIMIT, MAX_ITEM_LIMIT),
    offset: query.offset ?? 0,
    token: query.token === undefined ? undefined : parsePageToken(query.token),
  };
}

/** The UTC day `days` away from an instant, within the catalogue's dates. */
function dayNear(iso: string, days: number): string | undefined {
  const ms = Date.parse(iso) + days * DAY_MS;
  const date = new Date(ms).toISOString().slice(0, 10);
  return /^\d{4}-/.test(date) && date >= '0001-01-01' && date <= '9999-12-31' ? date : undefined;
}

function photosWithin(survey: Survey, interval: TimeInterval): boolean {
  if (interval.start !== undefined && survey.lastPhotoTime < interval.start) return false;
  return !(interval.end !== undefined && survey.firstPhotoTime > interval.end);
}

/** Whether a survey passes every part of the search (the catalogue's own tests included, for `ids`). */
function matches(survey: Survey, search: StacSearch): boolean {
  if (search.intersects && !geometryIntersectsMultiPolygon(search.intersects, survey.footprint)) return false;
  if (search.datetime && !photosWithin(survey, search.datetime)) return false;
  if (search.bbox && !geometryIntersectsMultiPolygon(boxGeometry(search.bbox), survey.footprint)) return false;
  return true;
}

function boxGeometry({ minX, minY, maxX, maxY }: Bounds): Geometry {
  const ring: [number, number][] = [
    [minX, minY],
    [maxX, minY],
    [maxX, maxY],
    [minX, maxY],
    [minX, minY],
  ];
  return { type: 'Polygon', coordinates: [ring] };
}

/** The page of `sorted` (every match, newest first) that the search's token or offset asks for. */
function pageOf(sorted: Survey[], search: StacSearch): StacSearchResult {
  let from = search.offset;
  let to = from + search.limit;
  if (search.token?.direction === 'next') {
    const place = search.token.place;
    from = sorted.findIndex((survey) => isAfter(survey, place, 'newest'));
    if (from < 0) from = sorted.length;
    to = from + search.limit;
  } else if (search.token?.direction === 'prev') {
    const place = search.token.place;
    to = sorted.findIndex((survey) => !isAfter(place, survey, 'newest'));
    if (to < 0) to = sorted.length;
    from = Math.max(0, to - search.limit);
  }
  const surveys = sorted.slice(from, to);
  return {
    surveys,
    matched: sorted.length,
    next: to < sorted.length && surveys.length ? orderKeyOf(surveys.at(-1) as Survey) : undefined,
    prev: from > 0 && surveys.length ? orderKeyOf(surveys[0] as Survey) : undefined,
  };
}

/**
 * One page of the surveys the search matches, newest first (the catalogue's order), walked from
 * the token's place (catalogue.ts `walk`): what follows it, or with a `prev` token what comes
 * before it, walked backwards. How many match in all is said when it costs nothing more: with no
 * filter (the catalogue's count), for `ids`, and when one page held every match.
 */
export async function searchSurveys(
  catalogue: Pick<SurveyCatalogue, 'walk' | 'get' | 'count'>,
  search: StacSearch,
): Promise<StacSearchResult> {
  if (search.collections && !search.collections.includes(SURVEYS_COLLECTION)) return { surveys: [], matched: 0 };
  if (search.ids) {
    const found = await Promise.all(search.ids.map((id) => catalogue.get(id)));
    const surveys = found.filter((survey): survey is Survey => survey !== undefined && matches(survey, search));
    return pageOf(surveys.sort(compareNewestFirst), search);
  }
  const area = search.intersects ? geometryBounds(search.intersects) : (search.bbox ?? WORLD);
  const dates = search.datetime && {
    // captureDate is the local date: within a day of the UTC one either way.
    since: search.datetime.start === undefined ? undefined : dayNear(search.datetime.start, -1),
    until: search.datetime.end === undefined ? undefined : dayNear(search.datetime.end, 1),
  };
  const filtered = Boolean(search.intersects || search.datetime || search.bbox);
  const exact = search.intersects || search.datetime;
  const backwards = search.token?.direction === 'prev';
  const walked = await catalogue.walk({
    area,
    ...dates,
    order: backwards ? 'oldest' : 'newest',
    after: search.token?.place,
    // An offset page is the end of a longer walk.
    limit: search.offset + search.limit,
    keep: filtered ? (survey) => matches(survey, search) : undefined,
    maxExamined: exact ? MAX_EXAMINED + search.offset : undefined,
  });
  const surveys = backwards ? walked.surveys.reverse() : walked.surveys.slice(search.offset);
  const first = surveys[0];
  const last = surveys.at(-1);
  const everything = !search.token && !walked.resume;
  return {
    surveys,
    matched: !filtered ? await catalogue.count() : everything ? walked.surveys.length : undefined,
    next: backwards ? last && orderKeyOf(last) : walked.resume,
    prev: backwards ? walked.resume : first && (search.token || search.offset > 0) ? orderKeyOf(first) : undefined,
  };
}
