import { createHash } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type ApiKeyLookup, usageMonthOf } from '../../accounts/index.js';
import { matchesTags } from '../../catalogue/catalogue.js';
import type { TileType } from '../../catalogue/survey.js';
import type { Services } from '../../composition.js';
import { NadirError } from '../../errors.js';
import { utcDate } from '../../geo/dates.js';
import type { TileCoord } from '../../geo/web-mercator.js';
import { ENCODING_VERSION } from '../../tiles/encode.js';
import { rotationFor } from '../../tiles/panorama.js';
import { freshPlan, PlanMemo } from '../../tiles/plan-memo.js';
import { candidateOf, type TileFilter } from '../../tiles/tile-candidates.js';
import type { AssetCandidate, TileFormat } from '../../tiles/tile-renderer.js';
import { authenticate } from '../auth.js';
import { addServerTiming, timedStep } from '../request-lifecycle.js';
import { parseTileAddress, parseTileFilter } from './tile-request.js';
import {
  type LocationTileParamsSchema,
  type LocationTileQuerySchema,
  locationTileRouteSchema,
  type SurveyTileParamsSchema,
  type SurveyTileQuerySchema,
  surveyTileRouteSchema,
} from './tile-schema.js';

export const LOCATION_TILE_PATH = '/tiles/v3/:contentType/:z/:x/:file';
export const SURVEY_TILE_PATH = '/tiles/v3/surveys/:surveyId/:contentType/:z/:x/:file';

/** decisions.md: survey tiles change only on re-ingest; location tiles change with every new survey. */
const SURVEY_MAX_AGE = 86_400;
const LOCATION_MAX_AGE = 600;

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller of a tile route (set by its onRequest hook). */
    tileCaller: ApiKeyLookup | null;
  }
}

/** `"<hash>"` of what the tile is made of, computable before any pixel is read. */
function etagOf(seed: string, type: TileType, format: TileFormat): string {
  const hash = createHash('sha256').update(`${seed}|${type}|${format}|${ENCODING_VERSION}`).digest('base64url');
  return `"${hash.slice(0, 27)}"`;
}

/** RFC 9110 weak comparison, as If-None-Match uses: `W/` is ignored, `*` matches any tile. */
function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const candidate = tag.trim().replace(/^W\//, '');
    return candidate === '*' || candidate === etag;
  });
}

function cacheControl(request: FastifyRequest, maxAge: number): string {
  // A key in the Authorization header is not part of the URL, so a shared cache must not keep it.
  const sharedOk = typeof (request.query as Record<string, unknown>).apikey === 'string';
  return `${sharedOk ? 'public' : 'private'}, max-age=${maxAge}`;
}

function noImagery(reply: FastifyReply, tile: TileCoord, cacheable: string): NadirError {
  reply.header('cache-control', cacheable);
  return new NadirError('NO_IMAGERY', `No imagery for tile ${tile.z}/${tile.x}/${tile.y} with these filters`);
}

export function registerTileRoutes(app: FastifyInstance, services: Services, now: () => Date): void {
  const { accounts, catalogue, tiles, rateLimiter, tileUsage } = services;
  const plans = new PlanMemo();
  app.decorateRequest('tileCaller', null);

  /**
   * Before anything else (even parameter validation): who is asking, and is it within its rate
   * limit. So every tile answer but a 401 carries the X-RateLimit-* headers, bad requests count.
   */
  async function admit(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const caller = await authenticate(accounts, request);
    const { account, keyId } = caller;
    const decision = await rateLimiter.take(keyId, account.tileRateLimit, account.tileRateInterval, now());
    reply.headers({
      'x-ratelimit-limit': String(decision.limit),
      'x-ratelimit-remaining': String(decision.remaining),
      'x-ratelimit-reset': String(decision.resetAt),
    });
    if (!decision.allowed) {
      throw new NadirError(
        'RATE_LIMITED',
        `Tile rate limit of ${decision.limit} requests per ${account.tileRateInterval} s reached for this API key; retry after ${decision.retryAfter} s`,
        { retryAfter: decision.retryAfter },
      );
    }
    request.tileCaller = caller;
  }

  async function send(
    request: FastifyRequest,
    reply: FastifyReply,
    tile: TileCoord,
    format: TileFormat,
    type: TileType,
    candidates: AssetCandidate[],
    maxAge: number,
    /** Only a cached candidate list (location tiles) can key remembered plans. */
    remember: boolean,
  ): Promise<FastifyReply> {
    // Set only on answers that may be cached: an empty tile stays empty until the catalogue changes.
    const cacheable = cacheControl(request, maxAge);
    const memo = remember ? plans.plan(tile, candidates) : freshPlan(tile, candidates);
    const { plan } = memo;
    if (plan.layers.length === 0) throw noImagery(reply, tile, cacheable);
    const variant = `${type}.${format}`;
    let etag = memo.etags.get(variant);
    if (etag === undefined) {
      etag = etagOf(memo.seed, type, format);
      memo.etags.set(variant, etag);
    }
    reply.header('etag', etag).header('cache-control', cacheable);
    if (matchesIfNoneMatch(request.headers['if-none-match'], etag)) return reply.code(304).send();

    const abandoned = new AbortController();
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) abandoned.abort();
    });
    let rendered: Awaited<ReturnType<typeof tiles.renderer.render>>;
    try {
      rendered = await timedStep(request, 'render', () =>
        tiles.renderer.render(plan, format, rotationFor(type), abandoned.signal),
      );
    } catch (error) {
      // Nobody is listening: nothing to answer, and not a server fault worth an error line.
      if (abandoned.signal.aborted) return reply.hijack();
      reply.removeHeader('cache-control').removeHeader('etag');
      throw error;
    }
    if (!rendered) throw noImagery(reply, tile, cacheable);
    // Which path answered, for people (and benchmarks) reading Server-Timing.
    addServerTiming(request, rendered.passThrough ? 'passthrough' : 'composite', 0);
    const caller = request.tileCaller as ApiKeyLookup;
    tileUsage.count(caller.account.id, usageMonthOf(now()));
    return reply
      .header('content-type', rendered.contentType)
      .header('x-survey-ids', rendered.surveyIds.join(','))
      .send(rendered.body);
  }

  app.get(LOCATION_TILE_PATH, { schema: locationTileRouteSchema, onRequest: admit }, async (request, reply) => {
    const params = request.params as Static<typeof LocationTileParamsSchema>;
    const query = request.query as Static<typeof LocationTileQuerySchema>;
    const { tile, format } = parseTileAddress(params.z, params.x, params.file);
    const filter = parseTileFilter(params.contentType, query, () => utcDate(now()));
    const candidates = await timedStep(request, 'catalogue', () => tiles.candidates.find(tile, filter));
    return send(request, reply, tile, format, params.contentType, candidates, LOCATION_MAX_AGE, true);
  });

  app.get(SURVEY_TILE_PATH, { schema: surveyTileRouteSchema, onRequest: admit }, async (request, reply) => {
    const params = request.params as Static<typeof SurveyTileParamsSchema>;
    const query = request.query as Static<typeof SurveyTileQuerySchema>;
    const { tile, format } = parseTileAddress(params.z, params.x, params.file);
    const filter = parseTileFilter(params.contentType, query, () => utcDate(now()));
    const survey = await timedStep(request, 'catalogue', () => catalogue.get(params.surveyId));
    if (!survey) throw new NadirError('SURVEY_NOT_FOUND', `No survey with id "${params.surveyId.slice(0, 64)}"`);
    const candidate = candidateOf(survey, params.contentType);
    if (!candidate) {
      throw new NadirError('CONTENT_NOT_FOUND', `Survey ${survey.id} has no ${params.contentType} imagery`);
    }
    const candidates = surveyMatches(survey, filter) ? [candidate] : [];
    return send(request, reply, tile, format, params.contentType, candidates, SURVEY_MAX_AGE, false);
  });
}

/** The date and tag filters, applied to the one survey of the survey endpoint. */
function surveyMatches(survey: { captureDate: string; tags: string[] }, filter: TileFilter): boolean {
  if (filter.since !== undefined && survey.captureDate < filter.since) return false;
  if (filter.until !== undefined && survey.captureDate > filter.until) return false;
  return matchesTags(survey.tags, filter.tags);
}
