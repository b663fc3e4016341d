/**
 * The STAC API at /stac/v1/ (docs/gis.md "STAC API"): one `surveys` collection, an item per
 * survey. The document types these answers only as JSON objects (their schema is STAC's), so the
 * shapes below are written from docs/gis.md; the link's is the document's. Item lists are walked by
 * the server's `next` links, as STAC clients do, rather than by computing offsets: the link is the
 * API's paging contract.
 */
import { checkPoint } from './area.js';
import { NadirProtocolError, NadirUsageError } from './errors.js';
import type { components } from './generated/openapi.js';
import { type CallOptions, checkSurveyId, type Transport } from './requests.js';

/** A link of the STAC documents: the `$defs` the service's STAC answers carry (generated). */
export type StacLink = components['schemas']['StacLink'];

export interface StacLanding {
  type: 'Catalog';
  id: string;
  title?: string;
  description: string;
  stac_version: string;
  conformsTo: string[];
  links: StacLink[];
}

export interface StacCollection {
  type: 'Collection';
  id: string;
  title?: string;
  description: string;
  license: string;
  stac_version: string;
  extent: { spatial: { bbox: number[][] }; temporal: { interval: (string | null)[][] } };
  links: StacLink[];
  [extra: string]: unknown;
}

export interface StacAsset {
  href: string;
  type?: string;
  title?: string;
  roles?: string[];
  gsd?: number;
  /** Tile assets: the XYZ template (not an href: `{}` may not appear in a URI). */
  'nadir:xyz'?: string;
  'nadir:min_zoom'?: number;
  'nadir:max_zoom'?: number;
}

export interface StacItem {
  type: 'Feature';
  stac_version: string;
  id: string;
  collection: string;
  geometry: { type: string; coordinates: unknown } | null;
  bbox: number[];
  properties: {
    datetime: string | null;
    start_datetime?: string;
    end_datetime?: string;
    gsd?: number;
    'nadir:capture_date'?: string;
    'nadir:tags'?: string[];
    'nadir:timezone'?: string;
    [extra: string]: unknown;
  };
  assets: Record<string, StacAsset>;
  links: StacLink[];
}

export interface StacItemCollection {
  type: 'FeatureCollection';
  features: StacItem[];
  links: StacLink[];
  numberMatched?: number;
  numberReturned?: number;
}

export interface StacSearchOptions extends CallOptions {
  /** [west, south, east, north], WGS84. */
  bbox?: [number, number, number, number];
  /** A GeoJSON geometry; not with bbox. */
  intersects?: { type: string; coordinates: unknown };
  /** RFC 3339 instant or `start/end` interval, `..` for an open end. */
  datetime?: string;
  ids?: string[];
  /** Items per page, 1..1000 (the server's default is 10). */
  limit?: number;
  /**
   * Pages followed at most (default 1,000): past it, NadirProtocolError rather than an endless
   * walk of a server whose `next` links never end.
   */
  maxPages?: number;
}

/** How many pages a walk follows unless told otherwise. */
export const DEFAULT_MAX_PAGES = 1_000;

const DATETIME = /^(\.\.|\d{4}-\d{2}-\d{2}T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/i;

export function stacSearchParameters(options: StacSearchOptions): URLSearchParams {
  const params = new URLSearchParams();
  if (options.bbox !== undefined && options.intersects !== undefined)
    throw new NadirUsageError('bbox and intersects do not combine (STAC API)');
  if (options.bbox !== undefined) {
    const box = options.bbox;
    if (!Array.isArray(box) || box.length !== 4) throw new NadirUsageError('bbox must be [west, south, east, north]');
    const [west, south, east, north] = box;
    checkPoint({ lon: west, lat: south }, 'bbox');
    checkPoint({ lon: east, lat: north }, 'bbox');
    // The server refuses a box across the antimeridian; said here with what to do instead.
    if (west > east || south > north)
      throw new NadirUsageError('bbox must have west <= east and south <= north (split a box across 180°)');
    params.set('bbox', box.join(','));
  }
  if (options.intersects !== undefined) {
    if (typeof options.intersects?.type !== 'string')
      throw new NadirUsageError('intersects must be a GeoJSON geometry');
    params.set('intersects', JSON.stringify(options.intersects));
  }
  if (options.datetime !== undefined) {
    const parts = typeof options.datetime === 'string' ? options.datetime.split('/') : [];
    if (parts.length < 1 || parts.length > 2 || !parts.every((part) => DATETIME.test(part)) || options.datetime === '')
      throw new NadirUsageError(
        `datetime must be RFC 3339 or start/end (.. open), got ${JSON.stringify(options.datetime)}`,
      );
    params.set('datetime', options.datetime);
  }
  if (options.ids !== undefined) {
    if (!Array.isArray(options.ids) || options.ids.length === 0) throw new NadirUsageError('ids must list survey ids');
    params.set('ids', options.ids.map((id) => checkSurveyId(id, 'ids')).join(','));
  }
  if (options.limit !== undefined) {
    if (!(Number.isInteger(options.limit) && options.limit >= 1 && options.limit <= 1000))
      throw new NadirUsageError(`limit must be a whole number from 1 to 1000, got ${options.limit}`);
    params.set('limit', String(options.limit));
  }
  return params;
}

async function getJson<T>(transport: Transport, path: string, options: CallOptions): Promise<T> {
  return (await (await transport.get(path, new URLSearchParams(), true, options.signal)).json()) as T;
}

export const stacLanding = (t: Transport, o: CallOptions) => getJson<StacLanding>(t, '/stac/v1/', o);
export const stacConformance = (t: Transport, o: CallOptions) =>
  getJson<{ conformsTo: string[] }>(t, '/stac/v1/conformance', o);
export const stacCollections = (t: Transport, o: CallOptions) =>
  getJson<{ collections: StacCollection[]; links: StacLink[] }>(t, '/stac/v1/collections', o);

export function stacCollection(t: Transport, id: string, o: CallOptions): Promise<StacCollection> {
  return getJson(t, `/stac/v1/collections/${encodeURIComponent(checkSurveyId(id, 'collection'))}`, o);
}

export function stacItem(t: Transport, surveyId: string, o: CallOptions, collection = 'surveys'): Promise<StacItem> {
  const item = encodeURIComponent(checkSurveyId(surveyId));
  return getJson(
    t,
    `/stac/v1/collections/${encodeURIComponent(checkSurveyId(collection, 'collection'))}/items/${item}`,
    o,
  );
}

/** Every page from `path`, following each `next` link until there is none. */
export async function* stacPages(
  transport: Transport,
  path: string,
  options: StacSearchOptions,
): AsyncGenerator<StacItemCollection> {
  let url = path;
  let params = stacSearchParameters(options);
  const maxPages = options.maxPages ?? DEFAULT_MAX_PAGES;
  if (!Number.isInteger(maxPages) || maxPages < 1) throw new NadirUsageError('maxPages must be a whole number >= 1');
  const seen = new Set<string>();
  for (let pages = 1; ; pages++) {
    const page = itemCollection(await (await transport.get(url, params, true, options.signal)).json(), url);
    yield page;
    const next = page.links?.find((link) => link.rel === 'next');
    if (!next || page.features.length === 0) return;
    if (pages >= maxPages) {
      throw new NadirProtocolError(
        `stopped after ${maxPages} pages: the server's next links go on (raise maxPages to follow more)`,
      );
    }
    // A server repeating a link would make this loop forever; a client must not trust that it won't.
    if (seen.has(next.href)) throw new NadirUsageError("the server's next link repeats an earlier page's");
    seen.add(next.href);
    url = next.href;
    params = new URLSearchParams();
  }
}

/** `body` as an ItemCollection, or a NadirProtocolError saying what is wrong with it. */
function itemCollection(body: unknown, url: string): StacItemCollection {
  const where = url.split('?')[0];
  const wrong = (what: string) =>
    new NadirProtocolError(`the STAC page from ${where} is not an item collection: ${what}`);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw wrong('not a JSON object');
  const page = body as Record<string, unknown>;
  if (!Array.isArray(page.features)) throw wrong('"features" is not a list');
  if (page.links !== undefined) {
    if (!Array.isArray(page.links)) throw wrong('"links" is not a list');
    for (const link of page.links as unknown[]) {
      const l = link as Record<string, unknown> | null;
      if (typeof l !== 'object' || l === null || typeof l.rel !== 'string' || typeof l.href !== 'string')
        throw wrong('a link lacks "rel" or "href"');
    }
  }
  return body as StacItemCollection;
}

export async function* stacItemsOf(pages: AsyncGenerator<StacItemCollection>): AsyncGenerator<StacItem> {
  for await (const page of pages) yield* page.features;
}
