/**
 * The HTTP meaning of a tile answer (tile-responder.ts): ETags, Cache-Control, rate-limit headers
 * and the errors a tile request ends in after it was admitted.
 */
import { createHash } from 'node:crypto';
import type { TileType } from '../catalogue/survey.js';
import { NadirError } from '../errors.js';
import type { TileCoord } from '../geo/web-mercator.js';
import type { RateDecision } from '../limits/rate-limiter.js';
import { ENCODING_VERSION } from './encode.js';
import type { MemoPlan } from './plan-memo.js';
import type { TileFormat } from './tile-renderer.js';

/** decisions.md: survey tiles change only on re-ingest; location tiles change with every new survey. */
export const SURVEY_MAX_AGE = 86_400;
export const LOCATION_MAX_AGE = 600;

/** `"<hash>"` of what the tile is made of, computable before any pixel is read; remembered with the plan. */
export function etagOf(memo: MemoPlan, type: TileType, format: TileFormat): string {
  const variant = `${type}.${format}`;
  let etag = memo.etags.get(variant);
  if (etag === undefined) {
    const hash = createHash('sha256').update(`${memo.seed}|${variant}|${ENCODING_VERSION}`).digest('base64url');
    etag = `"${hash.slice(0, 27)}"`;
    memo.etags.set(variant, etag);
  }
  return etag;
}

/** RFC 9110 weak comparison, as If-None-Match uses: `W/` is ignored, `*` matches any tile. */
export function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const candidate = tag.trim().replace(/^W\//, '');
    return candidate === '*' || candidate === etag;
  });
}

/** A key in the Authorization header is not part of the URL, so a shared cache must not keep the tile. */
export function cacheControlOf(keyInUrl: boolean, maxAge: number): string {
  return `${keyInUrl ? 'public' : 'private'}, max-age=${maxAge}`;
}

/** The rate-limit headers as name, value, ... (what writeHead takes with the least work). */
export function rateLimitPairs(decision: RateDecision): string[] {
  return [
    'x-ratelimit-limit',
    String(decision.limit),
    'x-ratelimit-remaining',
    String(decision.remaining),
    'x-ratelimit-reset',
    String(decision.resetAt),
  ];
}

export function rateLimited(decision: RateDecision, intervalSeconds: number): NadirError {
  return new NadirError(
    'RATE_LIMITED',
    `Tile rate limit of ${decision.limit} requests per ${intervalSeconds} s reached for this API key; retry after ${decision.retryAfter} s`,
    { retryAfter: decision.retryAfter },
  );
}

export function noImagery(tile: TileCoord): NadirError {
  return new NadirError('NO_IMAGERY', `No imagery for tile ${tile.z}/${tile.x}/${tile.y} with these filters`);
}

/** What a tile request says of the caller's copy and of its key (which decides Cache-Control). */
export interface TileConditions {
  ifNoneMatch: string | undefined;
  keyInUrl: boolean;
}

/** A tile a core of its own draws (DsmChange, DetailDsm): 200 with the PNG, or 304. Headers as pairs. */
export interface DrawnTileAnswer {
  status: 200 | 304;
  headers: string[];
  body: Buffer | undefined;
}

/** A strong ETag standing for `seed`: 27 base64url characters of its SHA-256. */
export function etagOfSeed(seed: string): string {
  return `"${createHash('sha256').update(seed).digest('base64url').slice(0, 27)}"`;
}
