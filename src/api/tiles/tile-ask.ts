/**
 * The tile lane's reading of a request (tile-lane.ts): the address, the query and the key checked as
 * the fastify routes would check them, and the plan, before anything is counted. A request the lane
 * cannot take exactly as a route would is declined (undefined) and goes to fastify.
 */
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { ApiKeyLookup } from '../../accounts/index.js';
import { TILE_TYPES, type TileType } from '../../catalogue/survey.js';
import type { Services } from '../../composition.js';
import { utcDate } from '../../geo/dates.js';
import type { TileCoord } from '../../geo/web-mercator.js';
import { freshPlan, type MemoPlan } from '../../tiles/plan-memo.js';
import { candidateOf, type TileFilter } from '../../tiles/tile-candidates.js';
import type { RenderedTile, TileFormat } from '../../tiles/tile-renderer.js';
import { apiKeyOf } from '../auth.js';
import { rawHeader } from '../raw-header.js';
import { requestIdOf } from '../request-lifecycle.js';
import { LOCATION_MAX_AGE, SURVEY_MAX_AGE, surveyMatches } from './tile-http.js';
import { parseTileAddress, parseTileFilter, plainQuery, type TileQueryString } from './tile-request.js';

const TYPES: ReadonlySet<string> = new Set(TILE_TYPES);
/** The routes' paths, within the schemas' limits (file <= 32) and find-my-way's (a parameter <= 100). */
const LOCATION_PATH = /^\/tiles\/v3\/([A-Za-z]+)\/([^/]+)\/([^/]+)\/([^/]{1,32})$/;
const SURVEY_PATH = /^\/tiles\/v3\/surveys\/([^/]{1,100})\/([A-Za-z]+)\/([^/]+)\/([^/]+)\/([^/]{1,32})$/;
const LOCATION_PARAMETERS: ReadonlySet<string> = new Set(['apikey', 'since', 'until', 'include', 'exclude', 'mosaic']);
const SURVEY_PARAMETERS: ReadonlySet<string> = new Set(['apikey', 'since', 'until', 'include', 'exclude']);

/** What the answer to a request depends on besides the key's validity and its rate limit. */
export interface TileAsk {
  /** The API key, when the URL carries it (only then can the URL stand for the request). */
  keyInUrl: string | undefined;
  type: TileType;
  tile: TileCoord;
  format: TileFormat;
  maxAge: number;
  /** The catalogue's change marker the plan was made under. */
  catalogueMarker: string;
  /** Today (UTC), when the query has dates: relative ones move at midnight. */
  day: string | undefined;
}

/**
 * A pass-through answer remembered by its URL. A map asks for the same tiles again and again
 * (every client, every pan back), and for a stored tile parsing, planning and looking up the
 * tile cost more than sending it. Only what the URL and the catalogue decide is kept: the key is
 * verified and counted against its rate limit on every request, and the entry is dropped when the
 * catalogue changes or, for dated queries, the day does. Composites are not kept: they are drawn.
 */
export interface StoredAnswer extends TileAsk {
  etag: string;
  rendered: RenderedTile;
}

/** A request the lane has taken: every check fastify would make before the handler has passed. */
export interface Taken {
  ask: TileAsk;
  started: number;
  url: string;
  requestId: string;
  caller: ApiKeyLookup;
  /** The plan, or the remembered answer that makes one unnecessary. */
  memo: MemoPlan | undefined;
  stored: StoredAnswer | undefined;
  catalogueMs: number;
}

/** A remembered answer taken for `url`. */
export function storedTaken(
  incomingId: string | undefined,
  url: string,
  stored: StoredAnswer,
  caller: ApiKeyLookup,
  started: number,
): Taken {
  const catalogueMs = performance.now() - started;
  return {
    ask: stored,
    started,
    url,
    requestId: requestIdOf(incomingId),
    caller,
    memo: undefined,
    stored,
    catalogueMs,
  };
}

/** Everything a route checks before its handler answers; undefined to decline. `now` gives today for relative dates. */
export async function takeRequest(
  services: Services,
  now: () => Date,
  request: IncomingMessage,
  url: string,
): Promise<Taken | undefined> {
  const started = performance.now();
  const queryStart = url.indexOf('?');
  const path = queryStart === -1 ? url : url.slice(0, queryStart);
  const search = queryStart === -1 ? '' : url.slice(queryStart + 1);
  const survey = SURVEY_PATH.exec(path);
  const location = survey ? null : LOCATION_PATH.exec(path);
  const match = survey ?? location;
  if (!match) return undefined;
  const [surveyId, typeText, zText, xText, file] = survey
    ? (match.slice(1) as [string, string, string, string, string])
    : ([undefined, ...match.slice(1)] as [undefined, string, string, string, string]);
  if (!TYPES.has(typeText)) return undefined;
  const type = typeText as TileType;
  const query = plainQuery(search, survey ? SURVEY_PARAMETERS : LOCATION_PARAMETERS);
  if (!query) return undefined;
  if (query.mosaic !== undefined && query.mosaic !== 'latest' && query.mosaic !== 'earliest') return undefined;
  let tile: TileCoord;
  let format: TileFormat;
  let filter: TileFilter;
  try {
    ({ tile, format } = parseTileAddress(zText, xText, file));
    filter = parseTileFilter(type, query as TileQueryString, () => utcDate(now()));
  } catch {
    return undefined;
  }
  const { accounts, catalogue, tiles } = services;
  const catalogueMarker = await tiles.candidates.marker();
  const key = apiKeyOf(query.apikey, rawHeader(request, 'authorization', true));
  const caller = key === undefined ? undefined : await accounts.lookupApiKey(key);
  if (!caller) return undefined;

  let memo: MemoPlan;
  if (surveyId === undefined) {
    memo = tiles.plans.plan(tile, await tiles.candidates.find(tile, filter));
  } else {
    const found = await catalogue.get(surveyId);
    const candidate = found ? candidateOf(found, type) : undefined;
    if (!found || !candidate) return undefined;
    memo = freshPlan(tile, surveyMatches(found, filter) ? [candidate] : []);
  }
  if (memo.plan.layers.length === 0) return undefined;
  const dated = query.since !== undefined || query.until !== undefined;
  return {
    ask: {
      keyInUrl: key === query.apikey ? key : undefined,
      type,
      tile,
      format,
      maxAge: surveyId === undefined ? LOCATION_MAX_AGE : SURVEY_MAX_AGE,
      catalogueMarker,
      day: dated ? utcDate(now()) : undefined,
    },
    started,
    url,
    requestId: requestIdOf(rawHeader(request, 'x-request-id')),
    caller,
    memo,
    stored: undefined,
    catalogueMs: performance.now() - started,
  };
}
