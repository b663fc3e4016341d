/**
 * The parts of a tile request that fastify's schema cannot check on its own: the tile address
 * `{z}/{x}/{y}.{format}`, dates (relative ones resolve against today) and tag filters. Pure.
 */
import type { TagFilter } from '../../catalogue/catalogue.js';
import type { TileType } from '../../catalogue/survey.js';
import { invalidParameter } from '../../errors.js';
import { MAX_ZOOM, type TileCoord } from '../../geo/web-mercator.js';
import type { TileFilter } from '../../tiles/tile-candidates.js';
import { TILE_FORMATS, type TileFormat } from '../../tiles/tile-renderer.js';
import { parseDateParameter } from '../coverage/coverage-request.js';

export interface TileQueryString {
  since?: string;
  until?: string;
  include?: string;
  exclude?: string;
  mosaic?: 'latest' | 'earliest';
}

export interface TileAddress {
  tile: TileCoord;
  format: TileFormat;
}

/** Same rule as the ingest manifest's tags: `type` or `type:name`. */
const TAG = /^[A-Za-z0-9_-]+(:[A-Za-z0-9_-]+)?$/;
const DIGITS = /^\d{1,10}$/;

function clip(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}...` : text);
}

function integerIn(name: string, text: string, max: number): number {
  const value = DIGITS.test(text) ? Number(text) : Number.NaN;
  if (!(value >= 0 && value <= max)) {
    throw invalidParameter(name, `${name} must be a whole number from 0 to ${max}, got ${clip(text)}`);
  }
  return value;
}

/** `z`, `x` and the last segment `{y}.{format}`; x and y must lie within 0..2^z - 1. */
export function parseTileAddress(zText: string, xText: string, file: string): TileAddress {
  const dot = file.lastIndexOf('.');
  const format = dot < 0 ? '' : file.slice(dot + 1);
  if (!(TILE_FORMATS as readonly string[]).includes(format)) {
    throw invalidParameter('format', `format must be one of ${TILE_FORMATS.join(', ')}, got ${clip(format)}`);
  }
  const z = integerIn('z', zText, MAX_ZOOM);
  const last = 2 ** z - 1;
  const x = integerIn('x', xText, last);
  const y = integerIn('y', file.slice(0, dot), last);
  return { tile: { z, x, y }, format: format as TileFormat };
}

/** A comma list of tags; empty entries and malformed tags are refused rather than ignored. */
function parseTags(name: 'include' | 'exclude', text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  const tags = text.split(',').map((tag) => tag.trim());
  const bad = tags.find((tag) => !TAG.test(tag));
  if (bad !== undefined) {
    throw invalidParameter(
      name,
      `${name} must be a tag type or type:name (letters, digits, _ and -), or a comma list of them; got ${clip(bad)}`,
    );
  }
  return [...new Set(tags)];
}

/** `today` gives the UTC date `YYYY-MM-DD` that relative ages count back from (asked only for one). */
export function parseTileFilter(type: TileType, query: TileQueryString, today: () => string): TileFilter {
  const since = query.since === undefined ? undefined : parseDateParameter('since', query.since, today);
  const until = query.until === undefined ? undefined : parseDateParameter('until', query.until, today);
  if (since !== undefined && until !== undefined && since > until) {
    throw invalidParameter('since', `since (${since}) is after until (${until}): no survey can match`);
  }
  const include = parseTags('include', query.include);
  const exclude = parseTags('exclude', query.exclude);
  const tags: TagFilter | undefined = include || exclude ? { include, exclude } : undefined;
  return { type, since, until, tags, order: query.mosaic === 'earliest' ? 'earliest' : 'newest' };
}

/**
 * The declared parameters of a plain query string as sent (the lane takes only queries that need
 * no decoding), or undefined when one is repeated and fastify must judge it.
 */
export function plainQuery(search: string, declared: ReadonlySet<string>): Record<string, string> | undefined {
  const query: Record<string, string> = {};
  if (search === '') return query;
  for (const pair of search.split('&')) {
    const equals = pair.indexOf('=');
    const name = equals === -1 ? pair : pair.slice(0, equals);
    if (!declared.has(name)) continue;
    if (Object.hasOwn(query, name)) return undefined;
    query[name] = equals === -1 ? '' : pair.slice(equals + 1);
  }
  return query;
}
