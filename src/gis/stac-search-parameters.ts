const _WORLD: Bounds = { minX: -180, minY: -90, maxX: 180, maxY: 90 };
const _DAY_MS = 86_400_000;
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

import { invalidParameter } from '../errors.js';
import { daysInMonth } from '../geo/dates.js';
import type { Bounds } from '../geo/web-mercator.js';
import { type Cql2Language, type Cql2Test, compileCql2 } from './cql2.js';
import type { FieldsChoice } from './stac-fields.js';
import { bboxBoxes, boxGeometry, type SearchArea, searchAreaOf } from './stac-geometry.js';
import { QUERYABLES, SORTABLE, type SortKey } from './stac-order.js';
import { MAX_OFFSET, parsePageToken } from './stac-paging.js';
import { DEFAULT_ITEM_LIMIT, MAX_IDS, MAX_ITEM_LIMIT, type StacSearch, type TimeInterval } from './stac-search.js';

/** What a search's paging links repeat: its own parameters, never the key nor the paging ones. */
export const REPEATED_PARAMETERS = [
  'bbox',
  'intersects',
  'datetime',
  'ids',
  'collections',
  'sortby',
  'fields',
  'filter',
  'filter-lang',
  'filter-crs',
  // Not a search parameter: the area whose downloads the items' data assets are (stac-aoi-assets.ts).
  'transactionToken',
] as const;

/** The text parameters of a search, as the route's schema declares them (api/gis/stac-schema.ts). */
type StacSearchTextParameter = (typeof REPEATED_PARAMETERS)[number] | 'token';

/** The declared query parameters: one string each, and the two numbers. */
export type StacSearchQueryString = { [name in StacSearchTextParameter]?: string } & {
  limit?: number;
  offset?: number;
};

/** The one CRS a filter's geometries are in (CQL2's default): WGS84 longitude, latitude. */
export const FILTER_CRS = 'http://www.opengis.net/def/crs/OGC/1.3/CRS84';

function clip(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}...` : text);
}

/**
 * `minLon,minLat,maxLon,maxLat` (or the 3D form with heights, which are ignored). `antimeridian`:
 * minLon may be above maxLon, a box across the antimeridian (STAC API), returned as it is.
 */
export function parseBbox(text: string, antimeridian = false): Bounds {
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
  if (!antimeridian && (minX as number) > (maxX as number)) throw bad('the minimum longitude is above the maximum');
  return { minX, minY, maxX, maxY } as Bounds;
}

/** A GeoJSON geometry, as JSON text (GET) or parsed (POST); a GeometryCollection is its members. */
export function parseIntersects(text: unknown): SearchArea {
  let value = text;
  if (typeof text === 'string') {
    try {
      value = JSON.parse(text);
    } catch {
      throw invalidParameter('intersects', 'intersects must be a GeoJSON geometry written as JSON');
    }
  }
  const area = searchAreaOf(value);
  if (typeof area === 'string') throw invalidParameter('intersects', `intersects ${area}`);
  return area;
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

/** A name as an error may show it: plain names only (a hostile one is "a parameter"). */
function shownName(name: string): string | undefined {
  return /^[A-Za-z_][A-Za-z0-9_.:-]{0,40}$/.test(name) ? name : undefined;
}

/**
 * OGC API Features core: a query parameter the endpoint does not declare is a 400, not ignored
 * (a `filter` or `sortby` a server ignores answers the wrong items). Names are case-sensitive
 * (decisions.md); a pair with no name at all (`?&limit=1`) is no parameter.
 */
export function refuseUndeclared(query: Record<string, unknown>, declared: readonly string[]): void {
  for (const name of Object.keys(query)) {
    if (name === '' || declared.includes(name)) continue;
    const shown = shownName(name);
    throw invalidParameter(
      shown ?? 'a parameter',
      `${shown ? `Unknown parameter ${shown}` : 'An unknown parameter'}: this endpoint takes ${declared.join(', ')} ` +
        '(names are case-sensitive)',
    );
  }
}

/** `sortby`: GET's `-datetime,+id` (`+` may arrive as a space), or POST's `[{field, direction}]`. */
export function parseSortby(value: unknown): SortKey[] {
  const bad = (why: string) =>
    invalidParameter('sortby', `sortby ${why}; sortable fields are ${Object.keys(SORTABLE).join(', ')}`);
  let keys: SortKey[];
  if (typeof value === 'string') {
    keys = value.split(',').map((part) => {
      const desc = part.startsWith('-');
      const field = (desc || part.startsWith('+') || part.startsWith(' ') ? part.slice(1) : part).trim();
      return { field, direction: desc ? 'desc' : 'asc' };
    });
  } else if (Array.isArray(value)) {
    keys = value.map((item) => {
      const { field, direction = 'asc' } = (item ?? {}) as { field?: unknown; direction?: unknown };
      if (typeof field !== 'string' || (direction !== 'asc' && direction !== 'desc')) {
        throw bad('is a list of {"field": ..., "direction": "asc" or "desc"}');
      }
      return { field, direction };
    });
  } else {
    throw bad('is a comma list of fields, each - (descending) or + (ascending, the default) first');
  }
  if (keys.length === 0 || keys.length > 8) throw bad('names 1 to 8 fields');
  const seen = new Set<string>();
  return keys.map(({ field, direction }) => {
    const name = field.startsWith('properties.') ? field.slice('properties.'.length) : field;
    if (!Object.hasOwn(SORTABLE, name)) throw bad(`cannot sort by ${JSON.stringify(field.slice(0, 60))}`);
    if (seen.has(name)) throw bad(`names ${name} twice`);
    seen.add(name);
    return { field: name, direction };
  });
}

const MAX_FIELDS = 100;

/** `fields`: GET's `id,-geometry,properties.datetime`, or POST's `{include: [...], exclude: [...]}`. */
export function parseFields(value: unknown): FieldsChoice {
  const bad = (why: string) => invalidParameter('fields', `fields ${why}`);
  const path = (text: unknown): string => {
    if (typeof text !== 'string' || !/^[A-Za-z0-9_:@-]+(\.[A-Za-z0-9_:@-]+)*$/.test(text) || text.length > 200) {
      throw bad(`names dotted field paths (properties.datetime), got ${JSON.stringify(text)?.slice(0, 60)}`);
    }
    return text;
  };
  if (typeof value === 'string') {
    const include: string[] = [];
    const exclude: string[] = [];
    for (const part of value.split(',')) {
      if (part.trim() === '') continue;
      if (part.startsWith('-')) exclude.push(path(part.slice(1).trim()));
      else include.push(path((part.startsWith('+') ? part.slice(1) : part).trim()));
    }
    if (include.length + exclude.length > MAX_FIELDS) throw bad(`names at most ${MAX_FIELDS} fields`);
    // Only exclusions: the whole item less them; otherwise the default set, the inclusions, less the rest.
    return include.length === 0 && exclude.length > 0 ? { exclude } : { include, exclude };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw bad('is {"include": [...], "exclude": [...]} (lists of dotted field paths)');
  }
  const { include, exclude, ...rest } = value as { include?: unknown; exclude?: unknown };
  if (Object.keys(rest).length > 0) throw bad('takes only include and exclude');
  const listOf = (items: unknown, name: string) => {
    if (items === undefined || items === null) return undefined;
    if (!Array.isArray(items) || items.length > MAX_FIELDS) throw bad(`${name} is a list of at most ${MAX_FIELDS}`);
    return items.map(path);
  };
  const included = listOf(include, 'include');
  const excluded = listOf(exclude, 'exclude') ?? [];
  return !included?.length && excluded.length > 0
    ? { exclude: excluded }
    : { include: included ?? [], exclude: excluded };
}

/** `filter` in `filter-lang` (cql2-text by default on GET, cql2-json on POST), in `filter-crs` (CRS84 only). */
export function parseFilter(filter: unknown, language: unknown, crs: unknown, method: 'GET' | 'POST'): Cql2Test {
  const lang = language ?? (method === 'GET' ? 'cql2-text' : 'cql2-json');
  if (lang !== 'cql2-text' && lang !== 'cql2-json') {
    throw invalidParameter('filter-lang', 'filter-lang must be cql2-text or cql2-json');
  }
  if (crs !== undefined && crs !== FILTER_CRS) {
    throw invalidParameter('filter-crs', `filter-crs must be ${FILTER_CRS} (longitude, latitude in WGS84)`);
  }
  return compileCql2(filter, lang as Cql2Language, QUERYABLES);
}

/** The parts of a search as either method gives them, before they are checked together. */
interface SearchParts {
  bbox?: string;
  intersects?: unknown;
  datetime?: string;
  ids?: string[];
  collections?: string[];
  limit?: number;
  offset?: number;
  token?: string;
  sortby?: unknown;
  fields?: unknown;
  filter?: unknown;
  filterLang?: unknown;
  filterCrs?: unknown;
}

function searchOf(parts: SearchParts, method: 'GET' | 'POST'): StacSearch {
  if (parts.bbox !== undefined && parts.intersects !== undefined) {
    throw invalidParameter('intersects', 'give bbox or intersects, not both');
  }
  if (parts.token !== undefined && parts.offset !== undefined) {
    throw invalidParameter('offset', 'give token or offset, not both');
  }
  if ((parts.offset ?? 0) > MAX_OFFSET) {
    throw invalidParameter(
      'offset',
      `offset is at most ${MAX_OFFSET}: follow the next link, whose token pages further`,
    );
  }
  if (parts.ids && parts.ids.length > MAX_IDS) throw invalidParameter('ids', `ids names at most ${MAX_IDS} surveys`);
  if (parts.filter === undefined && (parts.filterLang !== undefined || parts.filterCrs !== undefined)) {
    throw invalidParameter(parts.filterLang !== undefined ? 'filter-lang' : 'filter-crs', 'there is no filter to read');
  }
  const box = parts.bbox === undefined ? undefined : parseBbox(parts.bbox, true);
  const boxes = box && bboxBoxes(box);
  return {
    bbox: boxes?.length === 1 ? box : undefined,
    intersects:
      parts.intersects !== undefined
        ? parseIntersects(parts.intersects)
        : boxes && boxes.length > 1
          ? boxes.map(boxGeometry)
          : undefined,
    datetime: parts.datetime === undefined ? undefined : parseDatetime(parts.datetime),
    ids: parts.ids,
    collections: parts.collections,
    filter:
      parts.filter === undefined ? undefined : parseFilter(parts.filter, parts.filterLang, parts.filterCrs, method),
    sortby: parts.sortby === undefined ? undefined : parseSortby(parts.sortby),
    fields: parts.fields === undefined ? undefined : parseFields(parts.fields),
    // STAC API: a limit above the maximum gets the maximum, not an error.
    limit: Math.min(parts.limit ?? DEFAULT_ITEM_LIMIT, MAX_ITEM_LIMIT),
    offset: parts.offset ?? 0,
    token: parts.token === undefined ? undefined : parsePageToken(parts.token),
  };
}

export function parseStacSearch(query: StacSearchQueryString): StacSearch {
  return searchOf(
    {
      bbox: query.bbox,
      intersects: query.intersects,
      datetime: query.datetime,
      ids: query.ids === undefined ? undefined : list(query.ids),
      collections: query.collections === undefined ? undefined : list(query.collections),
      limit: query.limit,
      offset: query.offset,
      token: query.token,
      sortby: query.sortby,
      fields: query.fields,
      filter: query.filter,
      filterLang: query['filter-lang'],
      filterCrs: query['filter-crs'],
    },
    'GET',
  );
}

/** The members of a POST search body (STAC API item search, and the extensions'): GET's parameters, and `next` for `token`. */
export const SEARCH_BODY_MEMBERS = [...REPEATED_PARAMETERS, 'limit', 'offset', 'token', 'next'] as const;

/**
 * A POST search body: the same search as GET's parameters, in JSON's types (`bbox` a list of
 * numbers, `ids` and `collections` lists, `intersects` and a cql2-json `filter` objects, `sortby`
 * and `fields` the extensions' objects). `next` is taken for `token`, as some clients name it.
 */
export function parseStacSearchBody(body: unknown): StacSearch {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalidParameter('body', 'The body of a POST search is a JSON object');
  }
  const b = body as Record<string, unknown>;
  refuseUndeclared(b, SEARCH_BODY_MEMBERS);
  const strings = (name: string): string[] | undefined => {
    const value = b[name];
    if (value === undefined) return undefined;
    if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
      throw invalidParameter(name, `${name} is a list of texts`);
    }
    return [...new Set(value as string[])];
  };
  const text = (name: string): string | undefined => {
    const value = b[name];
    if (value !== undefined && typeof value !== 'string') throw invalidParameter(name, `${name} is a text`);
    return value as string | undefined;
  };
  const integer = (name: string, min: number): number | undefined => {
    const value = b[name];
    if (value !== undefined && !(Number.isSafeInteger(value) && (value as number) >= min)) {
      throw invalidParameter(name, `${name} must be an integer from ${min}`);
    }
    return value as number | undefined;
  };
  const bbox = b.bbox;
  if (bbox !== undefined && (!Array.isArray(bbox) || !bbox.every((n) => typeof n === 'number' && Number.isFinite(n)))) {
    throw invalidParameter('bbox', 'bbox is a list of 4 numbers (or 6 with heights)');
  }
  if (b.token !== undefined && b.next !== undefined) throw invalidParameter('next', 'give token or next, not both');
  return searchOf(
    {
      bbox: bbox === undefined ? undefined : (bbox as number[]).join(','),
      intersects: b.intersects,
      datetime: text('datetime'),
      ids: strings('ids'),
      collections: strings('collections'),
      limit: integer('limit', 1),
      offset: integer('offset', 0),
      token: text('token') ?? text('next'),
      sortby: b.sortby,
      fields: b.fields,
      filter: b.filter,
      filterLang: b['filter-lang'],
      filterCrs: b['filter-crs'],
    },
    'POST',
  );
}
